import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../testing/fake-clock.ts";
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from "./rate-limiters.ts";

describe("ItemExponentialFailureRateLimiter", () => {
  it("doubles from 5 ms and reaches the 1000 s cap at failure 19", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    const curve = Array.from({ length: 25 }, () => limiter.when("k"));
    for (let failure = 1; failure <= 18; failure++)
      assert.equal(curve[failure - 1], 5 * 2 ** (failure - 1), `failure ${failure}`);
    assert.equal(curve[17], 655_360, "failure 18 is still below the cap");
    assert.equal(curve[18], 1_000_000, "failure 19 hits 1000 s");
    assert.ok(
      curve.slice(18).every((d) => d === 1_000_000),
      "and stays there",
    );
    assert.equal(limiter.numRequeues("k"), 25);
  });

  it("tracks items independently and starts afresh after forget", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 100 });
    limiter.when("a");
    limiter.when("a");
    assert.equal(limiter.when("b"), 1);
    assert.equal(limiter.when("a"), 4);
    limiter.forget("a");
    assert.equal(limiter.numRequeues("a"), 0);
    assert.equal(limiter.when("a"), 1);
    assert.equal(limiter.numRequeues("b"), 1);
  });

  it("never overflows past the cap after many failures", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    for (let i = 0; i < 2_000; i++) limiter.when("k");
    assert.equal(limiter.when("k"), 1_000_000);
  });
});

describe("BucketRateLimiter", () => {
  it("lets a burst of 100 through at once, then spaces the rest at 10 per second", () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ clock });
    for (let i = 0; i < 100; i++) assert.equal(limiter.when(`k${i}`), 0);
    assert.equal(limiter.when("x"), 100);
    assert.equal(limiter.when("y"), 200);
    assert.equal(limiter.numRequeues("x"), 0);
  });

  it("refills at the configured rate, never above the burst", async () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ clock, ratePerSecond: 10, burst: 5 });
    for (let i = 0; i < 5; i++) limiter.when("k");
    assert.equal(limiter.when("k"), 100, "empty bucket");
    await clock.advance(1_000);
    // 10 tokens earned, minus the one reserved above, capped at the burst of 5.
    for (let i = 0; i < 5; i++) assert.equal(limiter.when("k"), 0);
    assert.equal(limiter.when("k"), 100);
    await clock.advance(3_600_000);
    for (let i = 0; i < 5; i++) assert.equal(limiter.when("k"), 0);
    assert.equal(limiter.when("k"), 100, "a long pause refills to the burst only");
  });

  it("rejects a rate or burst that would never grant a token", () => {
    assert.throws(() => new BucketRateLimiter({ ratePerSecond: 0 }), RangeError);
    assert.throws(() => new BucketRateLimiter({ burst: 0 }), RangeError);
  });
});

describe("MaxOfRateLimiter", () => {
  const fixed = (delay: number, requeues: number, forgotten: string[]): RateLimiter<string> => ({
    when: () => delay,
    forget: (item) => void forgotten.push(item),
    numRequeues: () => requeues,
  });

  it("waits as long as the slowest limiter asks and reports the largest requeue count", () => {
    const forgotten: string[] = [];
    const limiter = new MaxOfRateLimiter([
      fixed(5, 1, forgotten),
      fixed(50, 3, forgotten),
      fixed(20, 2, forgotten),
    ]);
    assert.equal(limiter.when("k"), 50);
    assert.equal(limiter.numRequeues("k"), 3);
    limiter.forget("k");
    assert.deepEqual(forgotten, ["k", "k", "k"]);
  });

  it("needs at least one limiter", () => {
    assert.throws(() => new MaxOfRateLimiter([]), RangeError);
  });
});

describe("defaultControllerRateLimiter", () => {
  it("is the longer of the per-item backoff and the overall bucket", () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>({ clock });
    assert.equal(limiter.when("a"), 5);
    assert.equal(limiter.when("a"), 10);
    for (let i = 0; i < 98; i++) limiter.when(`other-${i}`);
    assert.equal(limiter.when("fresh"), 100, "bucket exhausted: 10/s dominates a first failure");
    assert.equal(limiter.numRequeues("a"), 2);
    limiter.forget("a");
    assert.equal(limiter.numRequeues("a"), 0);
  });
});
