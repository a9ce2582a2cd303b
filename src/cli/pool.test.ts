import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inPool } from "./pool.ts";

describe("inPool", () => {
  it("runs every index once, starting them in order, never more than the width at once", async () => {
    const started: number[] = [];
    let running = 0;
    let peak = 0;
    await inPool(10, 3, async (i) => {
      started.push(i);
      running++;
      peak = Math.max(peak, running);
      // Later indices end sooner, so the order of ends differs from that of starts.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (i % 2 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      running--;
    });
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(peak, 3);
  });

  it("starts nothing for no work and rejects with a task's error", async () => {
    let calls = 0;
    await inPool(0, 4, async () => {
      calls++;
    });
    assert.equal(calls, 0);
    await assert.rejects(
      inPool(5, 2, async (i) => {
        if (i === 3) throw new Error("task 3 failed");
      }),
      /task 3 failed/,
    );
  });
});
