import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callsAnswering } from "../testing/bucket-calls.ts";
import { lifecycleRules, type LifecycleRule } from "./lifecycle-rules.ts";

describe("lifecycle rules as S3 takes and gives them", () => {
  const rule = (over: Partial<LifecycleRule>): LifecycleRule => ({
    id: "r",
    enabled: true,
    prefix: "",
    tags: {},
    objectSizeGreaterThan: undefined,
    objectSizeLessThan: undefined,
    expirationDays: 30,
    noncurrentVersionExpirationDays: undefined,
    abortIncompleteMultipartUploadDays: undefined,
    transitions: [],
    noncurrentTransitions: [],
    notInSpec: [],
    configMinimumObjectSize: undefined,
    ...over,
  });
  const filterOf = async (r: LifecycleRule) => {
    const { s3, calls } = callsAnswering();
    await lifecycleRules.write(s3, [r]);
    const input = calls[0]?.input as { LifecycleConfiguration: { Rules: { Filter: unknown }[] } };
    return input.LifecycleConfiguration.Rules[0]?.Filter;
  };

  it("sends one criterion on its own and joins two or more with And, as S3 requires", async () => {
    assert.deepEqual(await filterOf(rule({})), { Prefix: "" });
    assert.deepEqual(await filterOf(rule({ prefix: "logs/" })), { Prefix: "logs/" });
    assert.deepEqual(await filterOf(rule({ tags: { tier: "cold" } })), {
      Tag: { Key: "tier", Value: "cold" },
    });
    assert.deepEqual(await filterOf(rule({ prefix: "logs/", tags: { tier: "cold" } })), {
      And: { Prefix: "logs/", Tags: [{ Key: "tier", Value: "cold" }] },
    });
    assert.deepEqual(await filterOf(rule({ tags: { a: "1", b: "2" } })), {
      And: {
        Tags: [
          { Key: "a", Value: "1" },
          { Key: "b", Value: "2" },
        ],
      },
    });
  });

  it("sends one size condition on its own, and a size with another condition inside And", async () => {
    assert.deepEqual(await filterOf(rule({ objectSizeGreaterThan: 0 })), { ObjectSizeGreaterThan: 0 });
    assert.deepEqual(await filterOf(rule({ objectSizeLessThan: 1024 })), { ObjectSizeLessThan: 1024 });
    assert.deepEqual(await filterOf(rule({ objectSizeGreaterThan: 10, objectSizeLessThan: 20 })), {
      And: { ObjectSizeGreaterThan: 10, ObjectSizeLessThan: 20 },
    });
    assert.deepEqual(await filterOf(rule({ prefix: "logs/", objectSizeLessThan: 1024 })), {
      And: { Prefix: "logs/", ObjectSizeLessThan: 1024 },
    });
    assert.deepEqual(await filterOf(rule({ tags: { tier: "cold" }, objectSizeGreaterThan: 2 ** 40 })), {
      And: { Tags: [{ Key: "tier", Value: "cold" }], ObjectSizeGreaterThan: 2 ** 40 },
    });
  });

  it("removes the whole configuration for no rules, since S3 takes no empty one", async () => {
    const { s3, calls } = callsAnswering();
    await lifecycleRules.write(s3, []);
    assert.deepEqual(calls, [{ op: "DeleteBucketLifecycle", input: { Bucket: "b" } }]);
  });

  it("reads the size conditions at the top of the filter and inside And", async () => {
    const { s3 } = callsAnswering({
      Rules: [
        { ID: "big", Status: "Enabled", Filter: { ObjectSizeGreaterThan: 500 }, Expiration: { Days: 1 } },
        {
          ID: "range",
          Status: "Enabled",
          Filter: { And: { Prefix: "p/", ObjectSizeGreaterThan: 1, ObjectSizeLessThan: 9 } },
          Expiration: { Days: 1 },
        },
      ],
    });
    assert.deepEqual(
      (await lifecycleRules.read(s3)).map((r) => [
        r.id,
        r.prefix,
        r.objectSizeGreaterThan,
        r.objectSizeLessThan,
      ]),
      [
        ["big", "", 500, undefined],
        ["range", "p/", 1, 9],
      ],
    );
  });

  it("reads a tag alone or under And, with the prefix of either form", async () => {
    const { s3 } = callsAnswering({
      Rules: [
        {
          ID: "one",
          Status: "Enabled",
          Filter: { Tag: { Key: "tier", Value: "cold" } },
          Expiration: { Days: 5 },
        },
        {
          ID: "two",
          Status: "Enabled",
          Filter: { And: { Prefix: "logs/", Tags: [{ Key: "a", Value: "1" }] } },
          NoncurrentVersionTransitions: [{ NoncurrentDays: 30, StorageClass: "GLACIER" }],
        },
      ],
    });
    assert.deepEqual(
      (await lifecycleRules.read(s3)).map((r) => [r.id, r.prefix, r.tags, r.noncurrentTransitions]),
      [
        ["one", "", { tier: "cold" }, []],
        ["two", "logs/", { a: "1" }, [{ days: 30, storageClass: "GLACIER" }]],
      ],
    );
  });

  it("names what a rule does that the spec cannot ask for, and keeps a dated transition out of transitions", async () => {
    const { s3 } = callsAnswering({
      Rules: [
        {
          ID: "dated",
          Status: "Enabled",
          Filter: { Prefix: "" },
          Expiration: { Date: new Date("2027-01-01T00:00:00Z") },
          Transitions: [
            { Date: new Date("2026-12-31T00:00:00Z"), StorageClass: "GLACIER" },
            { Days: 30, StorageClass: "STANDARD_IA" },
          ],
        },
        {
          ID: "markers",
          Status: "Enabled",
          Filter: { Prefix: "" },
          Expiration: { ExpiredObjectDeleteMarker: true },
          NoncurrentVersionExpiration: { NoncurrentDays: 30, NewerNoncurrentVersions: 3 },
        },
        { ID: "plain", Status: "Enabled", Filter: { Prefix: "" }, Expiration: { Days: 9 } },
      ],
    });
    const rules = await lifecycleRules.read(s3);
    assert.deepEqual(
      rules.map((r) => [r.id, r.notInSpec, r.transitions]),
      [
        [
          "dated",
          ["expires objects on a date", "moves objects on a date"],
          [{ days: 30, storageClass: "STANDARD_IA" }],
        ],
        [
          "markers",
          ["keeps a number of newer noncurrent versions", "removes expired object delete markers"],
          [],
        ],
        ["plain", [], []],
      ],
    );
    // The export leaves such rules unmanaged, naming each, since adopting them would remove it.
    const spec = lifecycleRules.specOf(rules, { region: "us-east-1", refOf: () => undefined });
    assert.deepEqual(spec.fields, {});
    assert.deepEqual(spec.omitted, [
      "lifecycleRules: rule dated expires objects on a date, moves objects on a date (spec.lifecycleRules left unset: it has neither dates nor noncurrent version counts)",
      "lifecycleRules: rule markers keeps a number of newer noncurrent versions, removes expired object delete markers (spec.lifecycleRules left unset: it has neither dates nor noncurrent version counts)",
    ]);
    // A managed rule does none of it: the difference is drift, and a plan shows it.
    const desired = lifecycleRules.desired(
      { lifecycleRules: [{ id: "plain", enabled: true, expirationDays: 9 }] } as never,
      {} as never,
    );
    assert.deepEqual(desired?.[0]?.notInSpec, []);
    assert.deepEqual(lifecycleRules.items?.list(rules.slice(0, 1))[0]?.[1], {
      id: "dated",
      enabled: true,
      transitions: [{ days: 30, storageClass: "STANDARD_IA" }],
      notInSpec: ["expires objects on a date", "moves objects on a date"],
    });
  });

  it("keeps the configuration's minimum object size to transition in a write of the spec's rules", async () => {
    const { s3 } = callsAnswering({
      TransitionDefaultMinimumObjectSize: "varies_by_storage_class",
      Rules: [
        {
          ID: "cold",
          Status: "Enabled",
          Filter: { Prefix: "" },
          Transitions: [{ Days: 30, StorageClass: "GLACIER" }],
        },
      ],
    });
    const have = await lifecycleRules.read(s3);
    assert.deepEqual(
      have.map((r) => r.configMinimumObjectSize),
      ["varies_by_storage_class"],
    );
    const want = lifecycleRules.completed?.([rule({ id: "cold", expirationDays: 90 })], have) ?? [];
    const written = callsAnswering();
    await lifecycleRules.write(written.s3, want);
    assert.equal(written.calls[0]?.input["TransitionDefaultMinimumObjectSize"], "varies_by_storage_class");
    // The export writes the rules and names the size, which adopting keeps.
    const spec = lifecycleRules.specOf(have, { region: "us-east-1", refOf: () => undefined });
    assert.equal((spec.fields["lifecycleRules"] as unknown[]).length, 1);
    assert.deepEqual(spec.omitted, [
      "lifecycleRules: the configuration's minimum object size to transition, varies_by_storage_class (kept as it is when managed)",
    ]);
    // A bucket without a configuration gets S3's default: nothing is sent.
    const fresh = callsAnswering();
    await lifecycleRules.write(fresh.s3, lifecycleRules.completed?.([rule({})], []) ?? []);
    assert.equal(fresh.calls[0]?.input["TransitionDefaultMinimumObjectSize"], undefined);
  });

  it("shows a rule in a plan as spec.lifecycleRules writes it, leaving out what the spec leaves out", () => {
    const r = rule({
      id: "logs",
      prefix: "logs/",
      transitions: [{ days: 30, storageClass: "GLACIER" }],
      noncurrentTransitions: [{ days: 7, storageClass: "STANDARD_IA" }],
    });
    assert.deepEqual(lifecycleRules.items?.list([r]), [
      [
        "logs",
        {
          id: "logs",
          enabled: true,
          prefix: "logs/",
          expirationDays: 30,
          transitions: [{ days: 30, storageClass: "GLACIER" }],
          noncurrentVersionTransitions: [{ noncurrentDays: 7, storageClass: "STANDARD_IA" }],
        },
      ],
    ]);
    assert.equal(lifecycleRules.toSpec([]), undefined, "no rules: the bucket has none");
  });
});
