import { test } from "node:test";
import assert from "node:assert/strict";
import { LruCache } from "./lru.ts";

test("evicts the least recently used entry when full", () => {
  const c = new LruCache<string, number>(2);
  c.set("a", 1);
  c.set("b", 2);
  assert.equal(c.get("a"), 1); // a is now the most recent
  c.set("c", 3);
  assert.equal(c.get("b"), undefined);
  assert.equal(c.get("a"), 1);
  assert.equal(c.get("c"), 3);
  assert.equal(c.size, 2);
});

test("expired entries read as absent and are dropped", () => {
  const c = new LruCache<string, number>(10);
  c.set("a", 1, 100);
  assert.equal(c.get("a", 99), 1);
  assert.equal(c.get("a", 100), undefined);
  assert.equal(c.size, 0);
});

test("capacity must be a positive integer", () => {
  assert.throws(() => new LruCache(0), RangeError);
});
