import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import type { AwsClientSource } from "../aws/clients.ts";
import { parseQueueAddress } from "../aws/queue-address.ts";
import { silentLogger } from "../runtime/logging.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { QueueConsumer } from "./consumer.ts";
import { ChangeEventMetrics } from "./metrics.ts";

/** One ReceiveMessage the test answers by hand. */
interface PendingReceive {
  answer(messages: readonly unknown[]): void;
  fail(err: Error): void;
}

/** An SQS client whose queue check answers at once and whose receives wait for the test. */
function manualSqs(receives: PendingReceive[], arrived: () => void): AwsClientSource {
  const client = {
    send: (cmd: { constructor: { name: string } }) => {
      if (cmd.constructor.name !== "ReceiveMessageCommand") return Promise.resolve({});
      return new Promise((resolve, reject) => {
        receives.push({ answer: (m) => resolve({ Messages: m }), fail: reject });
        arrived();
      });
    },
  };
  return { client: () => client } as unknown as AwsClientSource;
}

/** Resolves once `n` receives are waiting for an answer. */
function receivesWaiting(receives: PendingReceive[], n: number, arrivals: (() => void)[]): Promise<void> {
  if (receives.length >= n) return Promise.resolve();
  return new Promise((resolve) => {
    arrivals.push(() => {
      if (receives.length >= n) resolve();
    });
  });
}

describe("QueueConsumer", () => {
  it("stays unhealthy when a receive sent before a failure answers after it", async () => {
    const receives: PendingReceive[] = [];
    const arrivals: (() => void)[] = [];
    const health: boolean[] = [];
    const clock = new FakeClock();
    const consumer = new QueueConsumer({
      address: parseQueueAddress("https://sqs.us-east-1.amazonaws.com/123456789012/events"),
      aws: manualSqs(receives, () => arrivals.forEach((f) => f())),
      handle: () => ({ outcome: "enqueued" }),
      onHealth: (healthy) => health.push(healthy),
      metrics: new ChangeEventMetrics(new Registry()),
      logger: silentLogger,
      clock,
      receivers: 2,
    });
    const stop = new AbortController();
    const running = consumer.run(stop.signal);
    await receivesWaiting(receives, 2, arrivals);
    assert.deepEqual(health, [true], "the queue check made it healthy");

    // The queue goes away: the second receiver's read fails, while the first one's long poll,
    // sent before, is still open and then answers empty.
    const [early, failing] = receives;
    failing?.fail(new Error("AWS.SimpleQueueService.NonExistentQueue"));
    await new Promise((r) => setImmediate(r));
    assert.equal(consumer.healthy, false);
    early?.answer([]);
    await receivesWaiting(receives, 3, arrivals);
    assert.equal(consumer.healthy, false, "a read sent before the failure proves nothing");
    assert.deepEqual(health, [true, false]);

    // A read sent after the failure that succeeds makes it healthy again.
    receives[2]?.answer([]);
    await receivesWaiting(receives, 4, arrivals);
    assert.equal(consumer.healthy, true);
    assert.deepEqual(health, [true, false, true]);

    stop.abort();
    for (const r of receives.slice(3)) r.answer([]);
    await clock.advance(60_000);
    await running;
  });
});
