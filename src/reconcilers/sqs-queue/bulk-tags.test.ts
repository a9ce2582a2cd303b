/**
 * The SqsQueue driver with bulk tag reads (../common/tag-snapshots.ts): which reads a steady poll
 * makes, and that a stale snapshot never causes a change in a plan, nor a write.
 */
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { Registry } from "prom-client";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { TagMap } from "../../aws/ownership.ts";
import { silentLogger } from "../../runtime/logging.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { applyChangeSet } from "../common/changes.ts";
import { TagSnapshots } from "../common/tag-snapshots.ts";
import { DEFAULT_TAG_POLICY, desiredTagsOf } from "../common/tags.ts";
import { context } from "../common/testing/context.ts";
import { SqsQueueDriver, type SqsQueueObject } from "./driver.ts";
import { FakeSqs } from "./testing/fake-sqs.ts";
import { resolveReferences } from "./references.ts";

const POLL = 300_000;
const WINDOW = 3_600_000;
const ARN = "arn:aws:sqs:eu-west-1:123456789012:orders";

const fake0 = new FakeSqs("eu-west-1");
const obj: SqsQueueObject = {
  apiVersion: "compute.cloud.com/v1",
  kind: "SqsQueue",
  metadata: { name: "orders", namespace: "shop", uid: "uid-q", generation: 1 },
  spec: {
    queueName: "orders",
    region: "eu-west-1",
    fifo: false,
    visibilityTimeoutSeconds: 30,
    messageRetentionSeconds: 345600,
    managementPolicy: "Full",
    driftPolicy: "Repair",
    changePolicy: "Auto",
    deletionPolicy: "Delete",
    adoptExisting: false,
    onDeletedOutOfBand: "Recreate",
    tags: { team: "a" },
  },
  status: { queueUrl: fake0.url("orders"), queueArn: ARN },
};
const steady = context({ settled: true, poll: true });
const IN_SYNC: TagMap = desiredTagsOf(obj, "SqsQueue", DEFAULT_TAG_POLICY);

/** The spec's references, resolved as the flow resolves them (no other object in the cache). */
const refsOf = (obj: SqsQueueObject) => resolveReferences(obj, {});

describe("SqsQueueDriver with bulk tag reads", () => {
  let clock: FakeClock;
  let sqs: FakeSqs;
  let index: Map<string, TagMap>;
  let driver: SqsQueueDriver;
  let snapshots: TagSnapshots;
  beforeEach(() => {
    clock = new FakeClock(1_800_000_000_000);
    sqs = new FakeSqs("eu-west-1");
    sqs.queues.set("orders", {
      attributes: {
        QueueArn: ARN,
        CreatedTimestamp: "1700000000",
        VisibilityTimeout: "30",
        MessageRetentionPeriod: "345600",
      },
      tags: { ...IN_SYNC },
    });
    index = new Map([[ARN, { ...IN_SYNC }]]);
    snapshots = new TagSnapshots({
      kind: "SqsQueue",
      sweep: async () => new Map(index),
      clock,
      maxAgeMs: POLL,
      windowMs: WINDOW,
      logger: silentLogger,
      registry: new Registry(),
    });
    driver = new SqsQueueDriver({
      aws: { client: (() => sqs as unknown as SQSClient) as AwsClientSource["client"] },
      tagSnapshots: snapshots,
    });
  });
  const ops = (): string[] => sqs.calls.map((c) => c.op);
  /** A poll period later, the sweep a poll starts (polls never wait for one) has ended. */
  const swept = async (): Promise<void> => {
    await clock.advance(POLL);
    await snapshots.lookup("eu-west-1", ARN);
    await snapshots.idle();
  };
  const poll = async () => {
    const obs = await driver.observe(obj, steady);
    assert.ok(obs.exists);
    const set = await driver.plan(obj, obs, steady, refsOf(obj));
    await applyChangeSet(set, steady);
    return { obs, changes: set.changes };
  };

  it("reads only the attributes (whether the queue exists) once the tags were read directly", async () => {
    await poll();
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags"]);
    sqs.calls.length = 0;
    await clock.advance(POLL);
    await swept();
    const { obs, changes } = await poll();
    assert.deepEqual(ops(), ["GetQueueAttributes"]);
    assert.equal(obs.resource.tagsFromSnapshot, true);
    assert.deepEqual(changes, []);
  });

  it("does not repair on a stale snapshot: the tags are re-read directly and found in sync", async () => {
    await poll();
    index.set(ARN, { ...IN_SYNC, team: "old" });
    sqs.calls.length = 0;
    await swept();
    const { changes } = await poll();
    assert.deepEqual(changes, []);
    assert.deepEqual(sqs.mutations(), []);
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags"]);
  });

  it("repairs real drift from the direct re-read, then reads directly within the window", async () => {
    await poll();
    sqs.queues.get("orders")!.tags.team = "changed";
    index.set(ARN, { ...IN_SYNC, team: "changed" });
    sqs.calls.length = 0;
    await swept();
    const { changes } = await poll();
    assert.equal(changes.length, 1);
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags", "TagQueue"]);
    sqs.calls.length = 0;
    await clock.advance(POLL);
    await swept();
    assert.equal((await poll()).obs.resource.tagsFromSnapshot, undefined, "own write: read directly");
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags"]);
  });

  it("plans from the direct re-read, not from the snapshot's stale value", async () => {
    await poll();
    sqs.queues.get("orders")!.tags.team = "changed";
    index.set(ARN, { ...IN_SYNC, team: "old" });
    await swept();
    const obs = await driver.observe(obj, steady);
    assert.ok(obs.exists && obs.resource.tagsFromSnapshot === true);
    sqs.calls.length = 0;
    const set = await driver.plan(obj, obs, steady, refsOf(obj));
    assert.deepEqual(ops(), ["ListQueueTags"], "a plan reads, never writes");
    assert.deepEqual(
      set.changes.map((c) => [c.path, c.observed, c.desired]),
      [["spec.tags.team", "changed", "a"]],
    );
  });

  it("reads directly a queue recreated under the same ARN since its last direct read", async () => {
    await poll();
    sqs.queues.get("orders")!.attributes.CreatedTimestamp = "1750000000";
    sqs.queues.get("orders")!.tags = { other: "x" }; // the index still has the old queue's tags
    sqs.calls.length = 0;
    await swept();
    const obs = await driver.observe(obj, steady);
    assert.ok(obs.exists);
    assert.equal(obs.ownership, "foreign");
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags"]);
  });

  it("reads directly a queue the snapshot does not name", async () => {
    await poll();
    index.clear();
    sqs.calls.length = 0;
    await swept();
    assert.equal((await poll()).obs.resource.tagsFromSnapshot, undefined);
    assert.deepEqual(ops(), ["GetQueueAttributes", "ListQueueTags"]);
  });
});
