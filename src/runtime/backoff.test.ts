import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Backoff, KeyedBackoff, KeyedLadder, exponentialDelay, ladderStep } from "./backoff.ts";

describe("Backoff", () => {
  it("doubles from 800 ms and stops at 30 s without jitter", () => {
    const b = new Backoff({ random: () => 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  it("stretches each delay by at most the jitter fraction and never exceeds the cap", () => {
    const b = new Backoff({ random: () => 0.999 });
    const delays = Array.from({ length: 10 }, () => b.next());
    assert.ok(delays[0] !== undefined && delays[0] > 800 && delays[0] < 1200);
    for (const d of delays) assert.ok(d >= 800 && d <= 30000, String(d));
    assert.equal(delays.at(-1), 30000);
  });

  it("starts over after reset", () => {
    const b = new Backoff({ random: () => 0 });
    b.next();
    b.next();
    assert.equal(b.failures, 2);
    b.reset();
    assert.equal(b.failures, 0);
    assert.equal(b.next(), 800);
  });
});

describe("exponentialDelay", () => {
  it("multiplies by the factor per attempt and stops at the cap, even when the power overflows", () => {
    const curve = { initialMs: 5, maxMs: 1_000 };
    assert.deepEqual(
      [0, 1, 2, 7, 8].map((n) => exponentialDelay(n, curve)),
      [5, 10, 20, 640, 1_000],
    );
    assert.equal(exponentialDelay(5_000, curve), 1_000);
    assert.equal(exponentialDelay(2, { initialMs: 100, maxMs: 10_000, factor: 3 }), 900);
    assert.equal(exponentialDelay(5_000, { initialMs: 0, maxMs: 0 }), 0);
  });
});

describe("KeyedBackoff", () => {
  it("counts attempts per key and starts a key afresh after reset", () => {
    const b = new KeyedBackoff<string>({ initialMs: 2_000, maxMs: 30_000 });
    assert.deepEqual(
      Array.from({ length: 6 }, () => b.next("a")),
      [2_000, 4_000, 8_000, 16_000, 30_000, 30_000],
    );
    assert.equal(b.next("b"), 2_000);
    assert.equal(b.attempts("a"), 6);
    assert.equal(b.size(), 2);
    b.reset("a");
    assert.equal(b.attempts("a"), 0);
    assert.equal(b.size(), 1);
    assert.equal(b.next("a"), 2_000);
    assert.equal(b.attempts("b"), 1);
  });

  it("refuses a curve whose cap is below its start", () => {
    assert.throws(() => new KeyedBackoff({ initialMs: 10, maxMs: 5 }), RangeError);
    assert.throws(() => new KeyedBackoff({ initialMs: -1, maxMs: 5 }), RangeError);
    assert.throws(() => new Backoff({ initialMs: 10, maxMs: 5 }), RangeError);
  });
});

describe("ladderStep and KeyedLadder", () => {
  const curve = { initialMs: 10, maxMs: 60 };

  it("steps up the curve for failures at or after their retry, and holds the retry for one that comes sooner", () => {
    let now = 0;
    const ladder = new KeyedLadder<string>(curve, () => now);
    const seen: Array<[number, number]> = [];
    const fail = (at: number): void => {
      now = at;
      seen.push([at, ladder.next("k")]);
    };
    fail(0); // due at 10
    fail(4); // early: 6 left, no step
    fail(10); // due: next step, 20
    fail(30); // due: 40
    fail(70); // due: capped at 60
    assert.deepEqual(seen, [
      [0, 10],
      [4, 6],
      [10, 20],
      [30, 40],
      [70, 60],
    ]);
    assert.equal(ladder.steps("k"), 4);
    ladder.reset("k");
    now = 71;
    assert.equal(ladder.next("k"), 10, "afresh after a reset");
  });

  it("keeps a position unchanged for an early failure", () => {
    const first = ladderStep(undefined, 100, curve);
    assert.deepEqual(first, { position: { steps: 1, due: 110 }, delay: 10 });
    const early = ladderStep(first.position, 109, curve);
    assert.deepEqual(early, { position: first.position, delay: 1 });
  });
});
