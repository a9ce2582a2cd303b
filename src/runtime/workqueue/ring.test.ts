import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ring } from "./ring.ts";

describe("Ring", () => {
  it("returns elements in insertion order across growth and wrap-around", () => {
    const ring = new Ring<number>(2);
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 7; i++) ring.push(next++);
      for (let i = 0; i < 5; i++) out.push(ring.shift() as number);
    }
    while (ring.size > 0) out.push(ring.shift() as number);
    assert.deepEqual(
      out,
      Array.from({ length: next }, (_, i) => i),
    );
  });

  it("returns undefined when empty and counts its elements", () => {
    const ring = new Ring<string>();
    assert.equal(ring.shift(), undefined);
    ring.push("a");
    ring.push("b");
    assert.equal(ring.size, 2);
    ring.clear();
    assert.equal(ring.size, 0);
    assert.equal(ring.shift(), undefined);
    ring.push("c");
    assert.equal(ring.shift(), "c");
  });
});
