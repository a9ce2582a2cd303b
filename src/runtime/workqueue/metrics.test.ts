import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { FakeClock } from "../testing/fake-clock.ts";
import { registrySamples, registryValue } from "../testing/prometheus-text.ts";
import { WORKQUEUE_DURATION_BUCKETS } from "./metrics.ts";
import { WorkQueue } from "./queue.ts";
import { RateLimitingQueue } from "./rate-limiting.ts";

async function value(registry: Registry, name: string, queue: string): Promise<number | undefined> {
  return registryValue(registry, name, { name: queue });
}

describe("work queue metrics", () => {
  it("records adds, depth, queue and work durations, and retries under controller-runtime's names", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const queue = new RateLimitingQueue<string>({ name: "ec2instance", clock, registry });

    queue.add("a");
    queue.add("a");
    queue.add("b");
    assert.equal(
      await value(registry, "workqueue_adds_total", "ec2instance"),
      2,
      "stingy adds are not counted",
    );
    assert.equal(await value(registry, "workqueue_depth", "ec2instance"), 2);

    await clock.advance(2_000);
    await queue.get();
    assert.equal(await value(registry, "workqueue_depth", "ec2instance"), 1);
    await clock.advance(3_000);
    await queue.get();
    await clock.advance(1_000);
    queue.done("a");

    assert.equal(await registryValue(registry, "workqueue_queue_duration_seconds_sum"), 2 + 5);
    assert.equal(await registryValue(registry, "workqueue_queue_duration_seconds_count"), 2);
    assert.equal(await registryValue(registry, "workqueue_work_duration_seconds_sum"), 4);

    queue.addRateLimited("c");
    queue.addAfter("d", 0);
    assert.equal(
      await value(registry, "workqueue_retries_total", "ec2instance"),
      2,
      "every addAfter counts, as in client-go",
    );

    for (const s of await registrySamples(registry, "workqueue_adds_total"))
      assert.deepEqual(s.labels, { name: "ec2instance", controller: "ec2instance" });
    for (const s of await registrySamples(registry, "workqueue_depth")) {
      assert.deepEqual(s.labels, { name: "ec2instance", controller: "ec2instance", priority: "" });
    }
  });

  it("computes unfinished work and the longest running processor at scrape time", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const queue = new WorkQueue<string>({ name: "s3bucket", clock, registry });
    queue.add("a");
    queue.add("b");
    await queue.get();
    await clock.advance(3_000);
    await queue.get();
    await clock.advance(1_000);
    assert.equal(await value(registry, "workqueue_unfinished_work_seconds", "s3bucket"), 4 + 1);
    assert.equal(await value(registry, "workqueue_longest_running_processor_seconds", "s3bucket"), 4);
    assert.equal(clock.pendingTimers(), 0, "no timer keeps these gauges up to date");
    queue.done("a");
    await clock.advance(1_000);
    assert.equal(await value(registry, "workqueue_unfinished_work_seconds", "s3bucket"), 2);
    queue.done("b");
    assert.equal(await value(registry, "workqueue_longest_running_processor_seconds", "s3bucket"), 0);
  });

  it("zeroes the in-flight gauges once a shut-down queue is idle", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const queue = new WorkQueue<string>({ name: "sqsqueue", clock, registry });
    queue.add("a");
    await queue.get();
    const drained = queue.shutDownWithDrain();
    await clock.advance(5_000);
    assert.equal(await value(registry, "workqueue_unfinished_work_seconds", "sqsqueue"), 5);
    queue.done("a");
    await drained;
    await clock.advance(5_000);
    assert.equal(await value(registry, "workqueue_unfinished_work_seconds", "sqsqueue"), 0);
  });

  it("keeps one series per queue name in a shared registry, starting at zero", async () => {
    const registry = new Registry();
    const first = new WorkQueue<string>({ name: "first", clock: new FakeClock(), registry });
    new WorkQueue<string>({ name: "second", clock: new FakeClock(), registry });
    first.add("x");
    assert.equal(await value(registry, "workqueue_adds_total", "first"), 1);
    assert.equal(await value(registry, "workqueue_adds_total", "second"), 0);
    assert.equal(await value(registry, "workqueue_retries_total", "second"), 0);
  });

  it("does not reset the series of an earlier queue with the same name", async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const first = new WorkQueue<string>({ name: "same", clock, registry });
    first.add("a");
    await first.get();
    first.done("a");
    new WorkQueue<string>({ name: "same", clock, registry });
    assert.equal(await value(registry, "workqueue_adds_total", "same"), 1);
    assert.equal(await registryValue(registry, "workqueue_work_duration_seconds_count"), 1);
  });

  it("uses controller-runtime's buckets, 1e-8 s to 1000 s by factors of 10", async () => {
    assert.deepEqual(
      WORKQUEUE_DURATION_BUCKETS,
      [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000],
    );
    const registry = new Registry();
    new WorkQueue<string>({ name: "q", registry });
    const les = (await registrySamples(registry, "workqueue_work_duration_seconds_bucket")).map((s) =>
      s.labels.le === "+Inf" ? "+Inf" : Number(s.labels.le),
    );
    assert.deepEqual(les, [...WORKQUEUE_DURATION_BUCKETS, "+Inf"]);
  });

  it("records nothing for a queue without a name", async () => {
    const registry = new Registry();
    const queue = new RateLimitingQueue<string>({ registry, clock: new FakeClock() });
    queue.add("a");
    await queue.get();
    queue.done("a");
    queue.addRateLimited("a");
    assert.deepEqual(await registry.getMetricsAsJSON(), []);
  });
});
