import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WorkQueue } from "../queue.ts";
import { coalescedYieldToEventLoop, keySequence, runContention, yieldToEventLoop } from "./contention.ts";

describe("contention harness", () => {
  for (const [name, yieldOnce] of [
    ["yieldToEventLoop", yieldToEventLoop],
    ["coalescedYieldToEventLoop", coalescedYieldToEventLoop],
  ] as const) {
    it(`${name} resumes every caller only after an event-loop turn`, async () => {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      const seen: boolean[] = [];
      await Promise.all([
        yieldOnce().then(() => seen.push(turned)),
        yieldOnce().then(() => seen.push(turned)),
      ]);
      assert.deepEqual(seen, [true, true]);
      turned = false;
      setImmediate(() => {
        turned = true;
      });
      await yieldOnce();
      assert.equal(turned, true, "a yield made after a turn waits for the next one");
    });
  }

  it("finds no overlaps on the work queue with coalesced yields either", async () => {
    const result = await runContention(new WorkQueue<string>(), {
      adds: 64_000,
      yieldOnce: coalescedYieldToEventLoop,
    });
    assert.equal(result.overlaps, 0);
    assert.equal(result.staleKeys, 0);
  });

  it("draws the same key sequence as the Go benchmark's xorshift32", () => {
    assert.deepEqual(Array.from(keySequence(10, 64, 0x9e3779b9)), [25, 62, 58, 53, 31, 55, 16, 63, 57, 56]);
  });
});
