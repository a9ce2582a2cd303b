import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredTags, UID_TAG, type TagMap } from "../../aws/ownership.ts";
import {
  applyTagPlan,
  DEFAULT_TAG_POLICY,
  describeTagPlan,
  isEmptyPlan,
  isIgnoredTagKey,
  planTags,
  tagChanges,
  applyTagChanges,
  tagPlanOf,
  tagsAfter,
  desiredTagsOf,
  MAX_RESOURCE_TAGS,
  tagPolicy,
  type TagPolicy,
  type TagWriter,
} from "./tags.ts";
import { InvalidSpecError } from "./driver.ts";

const owner = { uid: "0b6c9a52", namespace: "team-a", name: "web", kind: "S3Bucket" };
const keepOthers: TagPolicy = { ...DEFAULT_TAG_POLICY, authoritative: false };
/** `--ignore-tag-prefixes=backup:,CostCenter` */
const ignoring = tagPolicy({ ignoredPrefixes: ["backup:", "CostCenter"] });

/** A writer recording its calls, in order. */
function recorder(kind: "increments" | "replace"): { calls: unknown[][]; writer: TagWriter } {
  const calls: unknown[][] = [];
  const writer: TagWriter =
    kind === "replace"
      ? { replace: async (t) => void calls.push(["replace", t]) }
      : {
          set: async (t) => void calls.push(["set", t]),
          remove: async (k) => void calls.push(["remove", k]),
        };
  return { calls, writer };
}

describe("planTags", () => {
  it("sets changed and missing keys and keeps tags other tools added when not authoritative", () => {
    const plan = planTags(
      { a: "1", b: "2", [UID_TAG]: "u" },
      { a: "1", b: "old", "aws:backup": "yes", cost: "x" },
      keepOthers,
    );
    assert.deepEqual(plan, { set: { b: "2", [UID_TAG]: "u" }, remove: [] });
  });

  it("never removes aws: keys, even when tags are authoritative", () => {
    const plan = planTags(
      { a: "1" },
      { a: "1", "aws:cloudformation:stack-name": "s", "AWS:x": "y", other: "z" },
      DEFAULT_TAG_POLICY,
    );
    assert.deepEqual(plan, { set: {}, remove: ["other"] });
    assert.equal(isIgnoredTagKey("aws:autoscaling:groupName", DEFAULT_TAG_POLICY), true);
    assert.equal(isIgnoredTagKey("team:aws", DEFAULT_TAG_POLICY), false);
  });

  it("removes stale reserved keys when foreign tags are kept", () => {
    const plan = planTags({ a: "1" }, { a: "1", foreign: "y", "compute.cloud.com/stale": "z" }, keepOthers);
    assert.deepEqual(plan, { set: {}, remove: ["compute.cloud.com/stale"] });
  });

  it("removes every extra key when tags are authoritative", () => {
    assert.deepEqual(planTags({ a: "1" }, { a: "1", foreign: "y" }, DEFAULT_TAG_POLICY).remove, ["foreign"]);
  });

  it("is empty when the resource already matches", () => {
    const want = desiredTags({ env: "prod" }, owner);
    assert.ok(isEmptyPlan(planTags(want, { ...want }, DEFAULT_TAG_POLICY)));
    assert.ok(!isEmptyPlan(planTags(want, {}, DEFAULT_TAG_POLICY)));
  });
});

describe("ignored prefixes (--ignore-tag-prefixes)", () => {
  it("never removes a tag under an ignored prefix, whatever its case, and always keeps aws:", () => {
    const plan = planTags(
      { a: "1" },
      { a: "1", "backup:plan": "daily", costcenter: "42", "aws:x": "y", other: "z" },
      ignoring,
    );
    assert.deepEqual(plan, { set: {}, remove: ["other"] });
    assert.deepEqual(ignoring.ignoredPrefixes, ["aws:", "backup:", "CostCenter"]);
    assert.deepEqual(tagPolicy({ ignoredPrefixes: ["AWS:"] }).ignoredPrefixes, ["aws:"]);
  });

  it("never overwrites such a tag's value, and writes it only where it is missing", () => {
    assert.deepEqual(planTags({ "backup:plan": "weekly" }, { "backup:plan": "daily" }, ignoring), {
      set: {},
      remove: [],
    });
    assert.deepEqual(planTags({ "backup:plan": "weekly" }, {}, ignoring), {
      set: { "backup:plan": "weekly" },
      remove: [],
    });
  });

  it("hands a replacing writer the ignored tags with their current values, so S3 keeps them", async () => {
    const actual: TagMap = { "backup:plan": "daily", gone: "x", "aws:cf": "s" };
    const { calls, writer } = recorder("replace");
    await applyTagPlan(planTags({ a: "1", "backup:plan": "weekly" }, actual, ignoring), actual, writer);
    assert.deepEqual(calls, [["replace", { a: "1", "backup:plan": "daily" }]]);
  });
});

describe("desiredTagsOf and default tags (--default-tags)", () => {
  const obj = (tags?: TagMap) => ({
    metadata: { uid: owner.uid, namespace: owner.namespace, name: owner.name },
    spec: {
      region: "us-east-1",
      tags,
      deletionPolicy: "Delete" as const,
      adoptExisting: false,
      onDeletedOutOfBand: "Recreate" as const,
    },
  });
  const defaults = tagPolicy({ defaultTags: { team: "platform", env: "prod" } });

  it("merges the default tags under spec.tags (the spec wins) and adds the ownership tags", () => {
    const tags = desiredTagsOf(obj({ env: "dev", app: "web" }), "S3Bucket", defaults);
    assert.deepEqual(tags, desiredTags({ team: "platform", env: "dev", app: "web" }, owner));
    assert.deepEqual(desiredTagsOf(obj(), "S3Bucket", DEFAULT_TAG_POLICY), desiredTags({}, owner));
  });

  it("refuses more than AWS's 50 tags per resource, naming how many of the object's own fit", () => {
    const ownership = Object.keys(desiredTagsOf(obj(), "S3Bucket", DEFAULT_TAG_POLICY)).length;
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    const fits = MAX_RESOURCE_TAGS - ownership - 2;
    assert.equal(Object.keys(desiredTagsOf(obj(many(fits)), "S3Bucket", defaults)).length, MAX_RESOURCE_TAGS);
    // A default tag the object overrides takes no extra place.
    assert.equal(
      Object.keys(desiredTagsOf(obj({ ...many(fits), env: "dev" }), "S3Bucket", defaults)).length,
      MAX_RESOURCE_TAGS - 0,
    );
    assert.throws(
      () => desiredTagsOf(obj(many(fits + 1)), "S3Bucket", defaults),
      (err: unknown) =>
        err instanceof InvalidSpecError &&
        err.reason === "TooManyTags" &&
        err.message.includes(`2 default tags`) &&
        err.message.includes(`at most ${fits} keys of its own, it holds ${fits + 1}`),
    );
  });
});

describe("applyTagPlan", () => {
  const actual: TagMap = { a: "0", gone: "x", "aws:cf": "s" };
  const plan = planTags({ a: "1", b: "2" }, actual, DEFAULT_TAG_POLICY);

  it("sets before it removes, and reports the resulting tags", async () => {
    const { calls, writer } = recorder("increments");
    const after = await applyTagPlan(plan, actual, writer);
    assert.deepEqual(calls, [
      ["set", { a: "1", b: "2" }],
      ["remove", ["gone"]],
    ]);
    assert.deepEqual(after, { a: "1", "aws:cf": "s", b: "2" });
    assert.deepEqual(after, tagsAfter(actual, plan));
  });

  it("hands a replacing writer the whole set without the keys only AWS writes", async () => {
    const { calls, writer } = recorder("replace");
    await applyTagPlan(plan, actual, writer);
    assert.deepEqual(calls, [["replace", { a: "1", b: "2" }]]);
  });

  it("makes no call for an empty plan, and only the calls a plan needs", async () => {
    const { calls, writer } = recorder("increments");
    await applyTagPlan(planTags({ a: "1" }, { a: "1" }, DEFAULT_TAG_POLICY), { a: "1" }, writer);
    await applyTagPlan(planTags({}, { x: "1" }, DEFAULT_TAG_POLICY), { x: "1" }, writer);
    assert.deepEqual(calls, [["remove", ["x"]]]);
  });
});

describe("describeTagPlan", () => {
  it("words a plan the same way for every kind", () => {
    assert.equal(
      describeTagPlan({ set: { a: "1", b: "2" }, remove: ["other"] }),
      "tags: set a, b; removed other",
    );
    assert.equal(describeTagPlan({ set: {}, remove: ["x"] }), "tags: removed x");
  });
});

describe("tagChanges and applyTagChanges", () => {
  const incr = { actions: { set: "ec2:CreateTags", remove: "ec2:DeleteTags" } } as const;

  it("lists one change per key with its path, values and action, and nothing when in sync", () => {
    assert.deepEqual(tagChanges({ a: "1" }, { a: "1" }, DEFAULT_TAG_POLICY, incr), []);
    const uid = { [UID_TAG]: "u-1" };
    const changes = tagChanges(
      { team: "a", "app.kubernetes.io/name": "x", ...uid },
      { team: "b", stray: "1" },
      DEFAULT_TAG_POLICY,
      { ...incr, own: { tags: { team: "a", "app.kubernetes.io/name": "x" }, field: "spec.tags" } },
    );
    assert.deepEqual(
      changes.map((c) => [c.path, c.observed, c.desired, c.actions, c.ownership === true, c.description]),
      [
        [
          'spec.tags["app.kubernetes.io/name"]',
          undefined,
          "x",
          ["ec2:CreateTags"],
          false,
          "tags: set app.kubernetes.io/name",
        ],
        [
          `tags[${JSON.stringify(UID_TAG)}]`,
          undefined,
          "u-1",
          ["ec2:CreateTags"],
          true,
          `tags: set ${UID_TAG}`,
        ],
        ["spec.tags.team", "b", "a", ["ec2:CreateTags"], false, "tags: set team"],
        ["spec.tags.stray", "1", undefined, ["ec2:DeleteTags"], false, "tags: removed stray"],
      ],
    );
    assert.ok(changes.every((c) => c.group === "tags" && c.setting === "tags" && c.disruption === "none"));
  });

  it("names a whole-set writer's one action, and default tags under tags", () => {
    const policy = tagPolicy({ defaultTags: { cost: "c1" } });
    const changes = tagChanges({ cost: "c1" }, {}, policy, { actions: { replace: "s3:PutBucketTagging" } });
    assert.deepEqual(
      changes.map((c) => [c.path, c.actions]),
      [["tags.cost", ["s3:PutBucketTagging"]]],
    );
  });

  it("writes exactly the keys it is given", async () => {
    const changes = tagChanges({ a: "1", [UID_TAG]: "u" }, { b: "2" }, DEFAULT_TAG_POLICY, {
      ...incr,
      own: { tags: { a: "1" }, field: "spec.tags" },
    });
    const ownership = changes.filter((c) => c.ownership === true);
    assert.deepEqual(tagPlanOf(ownership), { set: { [UID_TAG]: "u" }, remove: [] });
    const { calls, writer } = recorder("increments");
    assert.deepEqual(await applyTagChanges(ownership, { b: "2" }, writer), { b: "2", [UID_TAG]: "u" });
    assert.deepEqual(calls, [["set", { [UID_TAG]: "u" }]]);
    const all = recorder("increments");
    await applyTagChanges(changes, { b: "2" }, all.writer);
    assert.deepEqual(all.calls, [
      ["set", { a: "1", [UID_TAG]: "u" }],
      ["remove", ["b"]],
    ]);
  });
});
