/**
 * The SqsQueue reconciler end to end: the operator (the program under test) against a real
 * kube-apiserver and moto, with every AWS call going through a counting proxy. Lifecycle:
 * create, a no-op second reconcile, drift repair, out-of-band deletion (Recreate and Report),
 * delete, Retain, and a FIFO queue outside us-east-1.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DeleteQueueCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

describe("SqsQueue reconciler: lifecycle", () => {
  const env = new SqsEnv("sqs-lifecycle").hooks();

  it("creates the queue and reports Ready with the status columns filled", async () => {
    await env.create("orders", { queueName: "orders", visibilityTimeoutSeconds: 45, tags: { env: "prod" } });
    const obj = await env.waitReady("orders");
    const q = await env.queue("orders");
    assert.equal(obj.status?.queueUrl, q.url);
    assert.equal(obj.status?.queueArn, "arn:aws:sqs:us-east-1:123456789012:orders");
    assert.equal(obj.status?.state, "Available");
    assert.equal(obj.status?.createAttempt, 1);
    assert.equal(q.attributes.VisibilityTimeout, "45");
    assert.equal(q.attributes.MessageRetentionPeriod, "345600");
    assert.equal(q.tags.env, "prod");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], obj.metadata.uid);
    assert.equal(q.tags[OWNERSHIP_TAGS.kind], "SqsQueue");
    assert.equal(env.proxy.count("CreateQueue"), 1);
    const { stdout } = await env.cp.kubectl(["get", "sqsq", "orders", "-n", env.ns, "--no-headers"]);
    const cols = stdout.trim().split(/\s+/);
    assert.deepEqual(cols.slice(0, 4), ["orders", "orders", "Available", q.url]);
    assert.equal(cols[4], "True");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitReady("orders");
    await env.waitEvent("orders", "Normal", "Created", 10_000);
    await env.waitReconciles(1); // any write from the create has settled
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetQueueAttributes");
    const bumped = await env.patch("orders", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    const after = await env.get("orders");
    assert.equal(after?.metadata.resourceVersion, bumped.metadata.resourceVersion, "the object was written");
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetQueueAttributes") > reads, "the no-op reconciles looked at the queue");
  });

  it("repairs attribute and tag drift, and applies spec changes", async () => {
    const repairs = (setting: string): Promise<number> =>
      env.op.metric("kubeprovisioner_drift_repairs_total", { kind: "SqsQueue", setting });
    const before = {
      visibility: await repairs("visibilityTimeoutSeconds"),
      tags: await repairs("tags"),
      retention: await repairs("messageRetentionSeconds"),
    };
    const { url } = await env.queue("orders");
    await env
      .sqs()
      .send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "5" } }));
    await env.sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { rogue: "1", env: "dev" } }));
    await env.sqs().send(new UntagQueueCommand({ QueueUrl: url, TagKeys: [OWNERSHIP_TAGS.name] }));
    await waitFor(
      "drift repaired",
      async () => {
        const q = await env.queue("orders");
        return (
          q.attributes.VisibilityTimeout === "45" &&
          q.tags.env === "prod" &&
          !("rogue" in q.tags) &&
          q.tags[OWNERSHIP_TAGS.name] === "orders"
        );
      },
      WAIT_MS,
      200,
    );
    await env.waitEvent("orders", "Normal", "Updated"); // Events are written asynchronously, after the status
    // The metric counts each repaired setting; the untouched retention period was not repaired.
    assert.ok((await repairs("visibilityTimeoutSeconds")) > before.visibility);
    assert.ok((await repairs("tags")) > before.tags);
    assert.equal(await repairs("messageRetentionSeconds"), before.retention);
    assert.equal(
      await env.op.metric("kubeprovisioner_managed_resources", {
        kind: "SqsQueue",
        ready: "True",
        synced: "True",
      }),
      1,
      "the Ready queue is counted from the cache",
    );
    await env.patch("orders", { spec: { messageRetentionSeconds: 600, tags: { env: "prod", team: "a" } } });
    await waitFor(
      "spec change applied",
      async () => {
        const q = await env.queue("orders");
        return q.attributes.MessageRetentionPeriod === "600" && q.tags.team === "a";
      },
      WAIT_MS,
      200,
    );
    // Status, Ready and Synced all say which spec they describe: the patched generation.
    const patched = await env.waitUntil(
      "orders",
      "status of the new generation",
      (o) => o !== undefined && o.status?.observedGeneration === o.metadata.generation,
    );
    const generation = patched?.metadata.generation;
    assert.ok(generation !== undefined && generation >= 2, `generation ${generation}`);
    assert.equal(cond(patched, "Synced")?.status, "True");
    assert.equal(cond(patched, "Synced")?.observedGeneration, generation);
    assert.equal(cond(patched, "Ready")?.observedGeneration, generation);
  });

  it("recreates a queue deleted out of band, with a Warning Event", async () => {
    const before = await env.waitReady("orders");
    await env.sqs().send(new DeleteQueueCommand({ QueueUrl: before.status?.queueUrl }));
    const obj = await env.waitUntil(
      "orders",
      "recreated",
      (o) => o?.status?.createAttempt === 2 && ready(o)?.status === "True",
    );
    await env.waitEvent("orders", "Warning", "DeletedOutOfBand"); // Events are written asynchronously, after the status
    const q = await env.queue("orders");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], obj?.metadata.uid);
    assert.equal(q.attributes.MessageRetentionPeriod, "600");
  });

  it("only reports an out-of-band deletion when onDeletedOutOfBand is Report", async () => {
    await env.create("reported", { queueName: "reported", onDeletedOutOfBand: "Report" });
    const obj = await env.waitReady("reported");
    await env.sqs().send(new DeleteQueueCommand({ QueueUrl: obj.status?.queueUrl }));
    await env.waitUntil("reported", "DeletedOutOfBand", (o) => ready(o)?.reason === "DeletedOutOfBand");
    await env.waitEvent("reported", "Warning", "DeletedOutOfBand", 10_000);
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    await env.waitReconciles(3); // several polls later: not recreated, and no repeated Event or status write
    assert.equal(await env.queueExists("reported"), false);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.equal((await env.get("reported"))?.status?.createAttempt, 1);
  });

  it("deletes the queue, then releases the object", async () => {
    await env.delete("reported");
    const deletes = env.proxy.count("DeleteQueue");
    await env.delete("orders");
    await env.waitGone("orders");
    assert.equal(await env.queueExists("orders"), false);
    assert.equal(env.proxy.count("DeleteQueue"), deletes + 1);
    await env.waitGone("reported");
  });

  it("leaves the queue in AWS with deletionPolicy Retain", async () => {
    await env.create("kept", { queueName: "kept", deletionPolicy: "Retain" });
    await env.waitReady("kept");
    const deletes = env.proxy.count("DeleteQueue");
    await env.delete("kept");
    await env.waitGone("kept");
    assert.equal(await env.queueExists("kept"), true);
    assert.equal(env.proxy.count("DeleteQueue"), deletes);
  });

  it("creates a FIFO queue in a region other than us-east-1", async () => {
    const region = "ap-southeast-2";
    await env.create("fifo", { queueName: "events.fifo", fifo: true, region, visibilityTimeoutSeconds: 90 });
    const obj = await env.waitReady("fifo");
    assert.equal(obj.status?.queueArn, `arn:aws:sqs:${region}:123456789012:events.fifo`);
    const q = await env.queue("events.fifo", region);
    assert.equal(q.attributes.FifoQueue, "true");
    assert.equal(q.attributes.VisibilityTimeout, "90");
    assert.equal(await env.queueExists("events.fifo", "us-east-1"), false);
    await env.delete("fifo");
    await env.waitGone("fifo");
    assert.equal(await env.queueExists("events.fifo", region), false);
  });
});
