import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Backoff } from "./backoff.ts";

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
