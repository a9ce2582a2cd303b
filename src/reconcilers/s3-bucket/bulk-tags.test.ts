/**
 * The S3Bucket driver with bulk tag reads (../common/tag-snapshots.ts): which reads a steady poll
 * makes, and that a stale snapshot never causes a repair.
 */
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { S3Client } from "@aws-sdk/client-s3";
import { Registry } from "prom-client";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { TagMap } from "../../aws/ownership.ts";
import { silentLogger } from "../../runtime/logging.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { applyChangeSet } from "../common/changes.ts";
import { TagSnapshots } from "../common/tag-snapshots.ts";
import { DEFAULT_TAG_POLICY, desiredTagsOf } from "../common/tags.ts";
import { context } from "../common/testing/context.ts";
import { S3BucketDriver } from "./driver.ts";
import { bucketArn, type S3BucketObject } from "./model.ts";
import { FakeS3 } from "./testing/fake-s3.ts";
import { resolveReferences } from "./references.ts";
import { bucketObject } from "./testing/objects.ts";

const NOW = Date.parse("2026-03-01T10:00:00Z");
const POLL = 300_000;
const WINDOW = 3_600_000;
const ARN = bucketArn("assets-1", "eu-west-1");

/** A bucket object Ready in eu-west-1, as the flow sees it on a steady poll. */
const obj: S3BucketObject = bucketObject(
  { tags: { team: "a" } },
  { bucketArn: ARN, region: "eu-west-1" },
  { generation: 1 },
);
const steady = context({ settled: true, poll: true });
const IN_SYNC: TagMap = desiredTagsOf(obj, "S3Bucket", DEFAULT_TAG_POLICY);

/** The spec's references, resolved as the flow resolves them (no other object in the cache). */
const refsOf = (obj: S3BucketObject) => resolveReferences(obj, {});

describe("S3BucketDriver with bulk tag reads", () => {
  let clock: FakeClock;
  let s3: FakeS3;
  let index: Map<string, TagMap>;
  let sweeps: number;
  let snapshots: TagSnapshots;
  let driver: S3BucketDriver;
  beforeEach(() => {
    clock = new FakeClock(NOW);
    s3 = new FakeS3(NOW);
    s3.buckets.set("assets-1", {
      region: "eu-west-1",
      tags: { ...IN_SYNC },
      versioning: undefined,
      versions: [],
    });
    index = new Map([[ARN, { ...IN_SYNC }]]);
    sweeps = 0;
    snapshots = new TagSnapshots({
      kind: "S3Bucket",
      sweep: async () => {
        sweeps++;
        return new Map(index);
      },
      clock,
      maxAgeMs: POLL,
      windowMs: WINDOW,
      logger: silentLogger,
      registry: new Registry(),
    });
    driver = new S3BucketDriver({
      aws: { client: (() => s3 as unknown as S3Client) as AwsClientSource["client"] },
      clock,
      tagSnapshots: snapshots,
    });
  });
  const ops = (): string[] => s3.calls.map((c) => c.op);
  /** A poll period later, the sweep a poll starts (polls never wait for one) has ended. */
  const swept = async (): Promise<void> => {
    await clock.advance(POLL);
    await snapshots.lookup("eu-west-1", ARN);
    await snapshots.idle();
  };
  /** One poll as the flow makes it: observe, plan for the resource observed, apply the plan. */
  const poll = async (ctx = steady) => {
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    return { obs, changes: await applyChangeSet(await driver.plan(obj, obs, ctx, refsOf(obj)), ctx) };
  };

  it("reads the tags directly on the first steady poll, then from the snapshot with the versioning read as the existence check", async () => {
    await poll();
    assert.deepEqual(ops(), ["GetBucketVersioning", "GetBucketTagging"]);
    s3.calls.length = 0;
    await clock.advance(POLL);
    await swept();
    const { obs, changes } = await poll();
    assert.deepEqual(ops(), ["GetBucketVersioning"], "one S3 call: no tag read");
    assert.equal(obs.resource.tagsFromSnapshot, true);
    assert.equal(obs.ownership, "owned");
    assert.deepEqual(changes, []);
    assert.equal(sweeps, 1);
  });

  it("never uses the snapshot outside a steady poll", async () => {
    await poll(); // the direct read
    s3.calls.length = 0;
    for (const ctx of [
      context({ settled: false }),
      context({ settled: true, changeHinted: true }),
      context({ settled: true }),
    ]) {
      await poll(ctx);
      assert.deepEqual(ops(), ["GetBucketTagging", "GetBucketVersioning"]);
      s3.calls.length = 0;
    }
    assert.equal(sweeps, 0);
  });

  it("does not take existence from the snapshot: a bucket gone from S3 is absent whatever the snapshot says", async () => {
    await poll();
    s3.buckets.delete("assets-1");
    await swept();
    assert.deepEqual(await driver.observe(obj, steady), { exists: false });
  });

  it("does not repair on a stale snapshot: the tags are re-read directly and found in sync", async () => {
    await poll();
    index.set(ARN, { ...IN_SYNC, team: "old" }); // the index still shows an earlier tag set
    s3.calls.length = 0;
    await swept();
    const { obs, changes } = await poll();
    assert.equal(obs.resource.tagsFromSnapshot, true);
    assert.deepEqual(changes, []);
    assert.deepEqual(s3.mutations(), [], "no PutBucketTagging");
    assert.deepEqual(
      ops(),
      ["GetBucketVersioning", "GetBucketTagging"],
      "the direct re-read before any repair",
    );
  });

  it("repairs drift the snapshot shows from the direct re-read, and reads directly after its own write", async () => {
    await poll();
    s3.buckets.get("assets-1")!.tags = { ...IN_SYNC, team: "changed", extra: "x" };
    index.set(ARN, { ...IN_SYNC, team: "changed" }); // the index lags behind the second change
    s3.calls.length = 0;
    await swept();
    const { changes } = await poll();
    assert.deepEqual(
      changes.map((c) => c.description),
      ["tags: set team", "tags: removed extra"],
      "repaired from the direct answer, not the snapshot",
    );
    assert.deepEqual(s3.buckets.get("assets-1")?.tags, IN_SYNC);
    assert.deepEqual(ops(), ["GetBucketVersioning", "GetBucketTagging", "PutBucketTagging"]);
    // The index still shows the drift: within the window after the write, no decision from it.
    s3.calls.length = 0;
    await clock.advance(POLL);
    await swept();
    const next = await poll();
    assert.equal(next.obs.resource.tagsFromSnapshot, undefined);
    assert.deepEqual(next.changes, []);
    assert.deepEqual(ops(), ["GetBucketVersioning", "GetBucketTagging"]);
  });

  it("re-reads directly before repairing another setting, and retries when the bucket is no longer this object's", async () => {
    await poll();
    s3.buckets.get("assets-1")!.tags = { other: "owner" }; // the bucket was re-tagged; the index lags
    s3.buckets.get("assets-1")!.versioning = "Enabled";
    const versioned = { ...obj, spec: { ...obj.spec, versioning: false } };
    s3.calls.length = 0;
    await swept();
    const obs = await driver.observe(versioned, steady);
    assert.ok(obs.exists && obs.resource.tagsFromSnapshot === true);
    await assert.rejects(driver.plan(versioned, obs, steady, refsOf(versioned)), {
      name: "BucketTagsChangedError",
    });
    assert.deepEqual(s3.mutations(), [], "no write to a bucket that is not this object's");
    s3.calls.length = 0;
    const again = await driver.observe(versioned, steady);
    assert.ok(again.exists);
    assert.equal(again.resource.tagsFromSnapshot, undefined, "the retry reads directly");
    assert.equal(again.ownership, "foreign");
  });

  it("reads directly a bucket the snapshot does not name, and one whose snapshot tags are not this object's", async () => {
    await poll();
    index.delete(ARN);
    s3.calls.length = 0;
    await swept();
    assert.equal((await poll()).obs.resource.tagsFromSnapshot, undefined);
    assert.deepEqual(ops(), ["GetBucketVersioning", "GetBucketTagging"]);
    index.set(ARN, { other: "owner" });
    await clock.advance(POLL);
    s3.calls.length = 0;
    await swept();
    const { obs } = await poll();
    assert.equal(obs.resource.tagsFromSnapshot, undefined);
    assert.equal(obs.ownership, "owned", "judged from the direct read");
    assert.deepEqual(ops(), ["GetBucketVersioning", "GetBucketTagging"]);
  });
});
