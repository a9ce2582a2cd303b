/**
 * High-throughput FIFO queues against moto: deduplicationScope and fifoThroughputLimit are sent
 * with CreateQueue, never re-sent while SQS reports them unchanged, repaired with an Updated Event
 * naming the attribute when changed out of band, and left alone once removed from the spec. moto
 * does not enforce the pair rule SQS applies (perMessageGroupId only with messageGroup scope);
 * admission does (api-admission.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const HIGH = { deduplicationScope: "messageGroup", fifoThroughputLimit: "perMessageGroupId" } as const;

describe("SqsQueue high-throughput FIFO: deduplicationScope and fifoThroughputLimit", () => {
  const env = new SqsEnv("sqs-throughput").hooks();
  const updates = async (): Promise<string[]> =>
    (await env.events("orders")).filter((e) => e.reason === "Updated").map((e) => e.message);

  it("creates the queue with both attributes", async () => {
    await env.create("orders", { queueName: "orders.fifo", fifo: true, ...HIGH });
    await env.waitReady("orders");
    const q = await env.queue("orders.fifo");
    assert.equal(q.attributes.DeduplicationScope, "messageGroup");
    assert.equal(q.attributes.FifoThroughputLimit, "perMessageGroupId");
  });

  it("makes no write when nothing changed", async () => {
    await env.waitEvent("orders", "Normal", "Created");
    await env.waitPolls(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.waitPolls(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("repairs both when changed out of band, with an Updated Event naming them", async () => {
    const { url } = await env.queue("orders.fifo");
    await env.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { FifoThroughputLimit: "perQueue", DeduplicationScope: "queue" },
      }),
    );
    await waitFor(
      "both repaired",
      async () => {
        const a = (await env.queue("orders.fifo")).attributes;
        return a.DeduplicationScope === "messageGroup" && a.FifoThroughputLimit === "perMessageGroupId";
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming both",
      async () =>
        (await updates()).some(
          (m) =>
            /DeduplicationScope queue -> messageGroup/.test(m) &&
            /FifoThroughputLimit perQueue -> perMessageGroupId/.test(m),
        ),
      15_000,
      150,
    );
    assert.equal(ready(await env.get("orders"))?.status, "True");
  });

  it("leaves both alone once removed from the spec", async () => {
    const patched = await env.patch("orders", {
      spec: { deduplicationScope: null, fifoThroughputLimit: null },
    });
    await env.waitUntil(
      "orders",
      "the removal reconciled",
      (o) => o?.status?.observedGeneration === patched.metadata.generation,
    );
    const before = (await updates()).length;
    const { url } = await env.queue("orders.fifo");
    await env.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { FifoThroughputLimit: "perQueue", DeduplicationScope: "queue" },
      }),
    );
    await env.waitPolls(2);
    const a = (await env.queue("orders.fifo")).attributes;
    assert.equal(a.DeduplicationScope, "queue", "not managed once unset");
    assert.equal(a.FifoThroughputLimit, "perQueue", "not managed once unset");
    assert.equal((await updates()).length, before, "no Updated Event");
  });
});
