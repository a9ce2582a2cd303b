/**
 * S3Bucket lifecycle rules with tag filters (alone, or joined with a prefix and other tags by
 * S3's And), object size filters (alone, as a range, or with a prefix or a tag, inside And) and
 * noncurrent version transitions, against the test AWS: written at creation in the shape S3
 * takes (a Filter holds one condition; two or more go inside And, which the test AWS does not
 * enforce for sizes, so the shape read back is asserted), never re-sent at rest, repaired on
 * drift with an Updated Event naming lifecycleRules, and left alone once the spec drops them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GetBucketLifecycleConfigurationCommand,
  PutBucketLifecycleConfigurationCommand,
} from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const rules = [
  {
    id: "cold-logs",
    prefix: "logs/",
    tags: { tier: "cold" },
    noncurrentVersionTransitions: [
      { noncurrentDays: 90, storageClass: "GLACIER" },
      { noncurrentDays: 30, storageClass: "STANDARD_IA" },
    ],
    noncurrentVersionExpirationDays: 365,
  },
  { id: "two-tags", tags: { team: "data", temp: "yes" }, expirationDays: 10 },
  { id: "one-tag", tags: { scratch: "true" }, expirationDays: 5 },
  { id: "uploads", abortIncompleteMultipartUploadDays: 7 },
];

describe("S3Bucket lifecycle rules with tag filters and noncurrent version transitions", () => {
  const env = new S3Env("s3-lifecycle-filters").hooks();
  const lifecycle = async () =>
    (await env.s3().send(new GetBucketLifecycleConfigurationCommand({ Bucket: "tiers" }))).Rules ?? [];

  it("creates the rules with their filters as S3 takes them", async () => {
    await env.create("tiers", { bucketName: "tiers", versioning: true, lifecycleRules: rules });
    await env.waitReady("tiers");
    const got = await lifecycle();
    const byId = (id: string) => got.find((r) => r.ID === id);
    assert.deepEqual(byId("cold-logs")?.Filter?.And, {
      Prefix: "logs/",
      Tags: [{ Key: "tier", Value: "cold" }],
    });
    assert.deepEqual(
      byId("cold-logs")?.NoncurrentVersionTransitions?.map((t) => [t.NoncurrentDays, t.StorageClass]),
      [
        [30, "STANDARD_IA"],
        [90, "GLACIER"],
      ],
    );
    assert.equal(byId("cold-logs")?.NoncurrentVersionExpiration?.NoncurrentDays, 365);
    assert.deepEqual(byId("two-tags")?.Filter?.And?.Tags, [
      { Key: "team", Value: "data" },
      { Key: "temp", Value: "yes" },
    ]);
    assert.deepEqual(byId("one-tag")?.Filter?.Tag, { Key: "scratch", Value: "true" });
    assert.equal(byId("uploads")?.AbortIncompleteMultipartUpload?.DaysAfterInitiation, 7);
  });

  it("makes no Kubernetes write and no mutating AWS call at rest", async () => {
    await env.waitEvent("tiers", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetBucketLifecycleConfiguration");
    await env.patch("tiers", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketLifecycleConfiguration") > reads, "the rules were read again");
  });

  it("repairs a changed tag filter and a dropped noncurrent transition with an Updated Event", async () => {
    const current = await lifecycle();
    const puts = env.proxy.count("PutBucketLifecycleConfiguration");
    await env.s3().send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: "tiers",
        LifecycleConfiguration: {
          Rules: current.map((r) =>
            r.ID === "cold-logs"
              ? {
                  ...r,
                  Filter: { And: { Prefix: "logs/", Tags: [{ Key: "tier", Value: "warm" }] } },
                  NoncurrentVersionTransitions: [{ NoncurrentDays: 30, StorageClass: "STANDARD_IA" }],
                }
              : r,
          ),
        },
      }),
    );
    await waitFor(
      "the filter repaired",
      async () => {
        const r = (await lifecycle()).find((x) => x.ID === "cold-logs");
        return r?.Filter?.And?.Tags?.[0]?.Value === "cold" && r.NoncurrentVersionTransitions?.length === 2;
      },
      WAIT_MS,
      200,
    );
    assert.equal(env.proxy.count("PutBucketLifecycleConfiguration"), puts + 1);
    await waitFor(
      "an Updated Event naming lifecycleRules",
      async () =>
        (await env.events("tiers")).some(
          (e) => e.reason === "Updated" && /lifecycleRules: changed cold-logs/.test(e.message ?? ""),
        ),
      15_000,
      150,
    );
  });

  it("creates size filters as S3 takes them, and repairs a changed size", async () => {
    const sizeRules = [
      { id: "big", objectSizeGreaterThan: 1_048_576, transitions: [{ days: 30, storageClass: "GLACIER" }] },
      { id: "small", objectSizeLessThan: 131_072, expirationDays: 7 },
      { id: "range", objectSizeGreaterThan: 0, objectSizeLessThan: 54_975_581_388_800, expirationDays: 90 },
      { id: "small-logs", prefix: "logs/", objectSizeLessThan: 1024, expirationDays: 1 },
      { id: "big-cold", tags: { tier: "cold" }, objectSizeGreaterThan: 5_000_000, expirationDays: 365 },
    ];
    await env.create("sizes", { bucketName: "sizes", lifecycleRules: sizeRules });
    await env.waitReady("sizes");
    const read = async () =>
      (await env.s3().send(new GetBucketLifecycleConfigurationCommand({ Bucket: "sizes" }))).Rules ?? [];
    const filters = Object.fromEntries((await read()).map((r) => [r.ID, r.Filter]));
    assert.deepEqual(filters, {
      big: { ObjectSizeGreaterThan: 1_048_576 },
      small: { ObjectSizeLessThan: 131_072 },
      range: { And: { ObjectSizeGreaterThan: 0, ObjectSizeLessThan: 54_975_581_388_800 } },
      "small-logs": { And: { Prefix: "logs/", ObjectSizeLessThan: 1024 } },
      "big-cold": { And: { Tags: [{ Key: "tier", Value: "cold" }], ObjectSizeGreaterThan: 5_000_000 } },
    });

    await env.waitEvent("sizes", "Normal", "Created");
    await env.waitReconciles(1);
    const mutations = env.mutations();
    await env.patch("sizes", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.deepEqual(env.mutations(), mutations, "no write at rest");

    const repairs = () =>
      env.op.metric("kubeprovisioner_drift_repairs_total", { kind: "S3Bucket", setting: "lifecycleRules" });
    const before = await repairs();
    const current = await read();
    await env.s3().send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: "sizes",
        LifecycleConfiguration: {
          Rules: current.map((r) =>
            r.ID === "small-logs"
              ? { ...r, Filter: { And: { Prefix: "logs/", ObjectSizeLessThan: 4096 } } }
              : r,
          ),
        },
      }),
    );
    await waitFor(
      "the size repaired",
      async () => (await read()).find((r) => r.ID === "small-logs")?.Filter?.And?.ObjectSizeLessThan === 1024,
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming lifecycleRules",
      async () =>
        (await env.events("sizes")).some(
          (e) => e.reason === "Updated" && /lifecycleRules: changed small-logs/.test(e.message),
        ),
      15_000,
      150,
    );
    assert.equal(await repairs(), before + 1);
    await env.delete("sizes");
    await env.waitGone("sizes");
  });

  it("neither reads nor touches the rules once the spec drops them", async () => {
    await env.patch("tiers", { spec: { lifecycleRules: null } });
    await waitFor(
      "the spec without lifecycleRules observed",
      async () => {
        const obj = await env.get("tiers");
        return obj?.status?.observedGeneration === obj?.metadata.generation;
      },
      WAIT_MS,
      200,
    );
    await env.waitReconciles(1);
    await env.s3().send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: "tiers",
        LifecycleConfiguration: {
          Rules: [
            {
              ID: "theirs",
              Status: "Enabled",
              Filter: { Tag: { Key: "k", Value: "v" } },
              Expiration: { Days: 1 },
            },
          ],
        },
      }),
    );
    const counts = () =>
      ["GetBucketLifecycleConfiguration", "PutBucketLifecycleConfiguration", "DeleteBucketLifecycle"].map(
        (op) => env.proxy.count(op),
      );
    const before = counts();
    await env.waitReconciles(3, "requeue_after");
    assert.deepEqual(counts(), before);
    assert.deepEqual(
      (await lifecycle()).map((r) => r.ID),
      ["theirs"],
    );
  });
});
