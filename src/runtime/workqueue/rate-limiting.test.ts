import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { RateLimitingQueue } from "./rate-limiting.ts";
import { ItemExponentialFailureRateLimiter } from "./rate-limiters.ts";

describe("RateLimitingQueue", () => {
  it("delays each retry by the limiter's backoff and counts requeues until forget", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 10 }),
    });
    queue.addRateLimited("k");
    assert.equal(queue.numRequeues("k"), 1);
    await clock.advance(9);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.equal(queue.len(), 1);
    await queue.get();
    queue.addRateLimited("k");
    queue.done("k");
    await clock.advance(19);
    assert.equal(queue.len(), 0, "second failure waits 20 ms");
    await clock.advance(1);
    assert.equal(queue.len(), 1);
    queue.forget("k");
    assert.equal(queue.numRequeues("k"), 0);
  });

  it("uses controller-runtime's default limiter when none is given", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.addRateLimited("k");
    await clock.advance(4);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.equal(queue.len(), 1, "first failure waits 5 ms");
  });

  it("ignores addRateLimited while shutting down", () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.shutDown();
    queue.addRateLimited("k");
    assert.equal(queue.numRequeues("k"), 0);
    assert.equal(clock.pendingTimers(), 0);
  });

  it("strands a key forever when forget is called without done (documented hazard)", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.add("obj");
    assert.deepEqual(await queue.get(), { item: "obj", shutdown: false });
    queue.forget("obj"); // the reconcile "succeeded", but done is never called
    for (let i = 0; i < 100; i++) queue.add("obj");
    queue.addRateLimited("obj");
    await clock.advance(3_600_000);
    assert.equal(queue.len(), 0, "every add only marked the key dirty");
    let handedOut = false;
    const waiting = queue.get().then((r) => {
      handedOut = !r.shutdown;
      return r;
    });
    await clock.advance(3_600_000);
    await flushMicrotasks();
    assert.equal(handedOut, false, "the key is never returned again, and nothing reports it");
    queue.done("obj");
    assert.deepEqual(await waiting, { item: "obj", shutdown: false }, "only done releases it");
  });
});
