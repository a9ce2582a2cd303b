import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { flushMicrotasks } from "../testing/fake-clock.ts";
import { WorkQueue, type GetResult } from "./queue.ts";
import { NaiveFifo, runContention } from "./testing/contention.ts";

/** Tracks whether a promise has settled, without waiting on it. */
function watch<T>(promise: Promise<T>): { readonly settled: boolean; readonly value: T | undefined } {
  const state: { settled: boolean; value: T | undefined } = { settled: false, value: undefined };
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

async function take<T>(queue: WorkQueue<T>): Promise<T> {
  const next = await queue.get();
  assert.equal(next.shutdown, false, "expected an item, got shutdown");
  return (next as Extract<GetResult<T>, { shutdown: false }>).item;
}

describe("WorkQueue", () => {
  it("collapses 100,000 adds of one key into length 1", () => {
    const queue = new WorkQueue<string>();
    for (let i = 0; i < 100_000; i++) queue.add("default/target");
    assert.equal(queue.len(), 1);
  });

  it("turns 200 adds of a held key into length 0 while held, 1 after done, and exactly one more get", async () => {
    const queue = new WorkQueue<string>();
    queue.add("default/target");
    const held = await take(queue);
    for (let i = 0; i < 200; i++) queue.add("default/target");
    assert.equal(queue.len(), 0, "adds while held go to dirty, not the queue");
    queue.done(held);
    assert.equal(queue.len(), 1, "done re-queues the key once");
    assert.equal(await take(queue), "default/target");
    queue.done("default/target");
    assert.equal(queue.len(), 0);
    const another = watch(queue.get());
    await flushMicrotasks();
    assert.equal(another.settled, false, "no second get for the 200 adds");
    queue.shutDown();
    await flushMicrotasks();
    assert.deepEqual(another.value, { shutdown: true });
  });

  it("hands items out in the order they became ready", async () => {
    const queue = new WorkQueue<string>();
    for (const k of ["a", "b", "c", "a", "d"]) queue.add(k);
    assert.deepEqual(
      [await take(queue), await take(queue), await take(queue), await take(queue)],
      ["a", "b", "c", "d"],
    );
  });

  it("keeps FIFO order across ring-buffer growth and wrap-around", async () => {
    const queue = new WorkQueue<number>();
    const out: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 100; i++) queue.add(round * 100 + i);
      for (let i = 0; i < 60; i++) out.push(await take(queue));
    }
    while (queue.len() > 0) out.push(await take(queue));
    assert.deepEqual(
      out,
      Array.from({ length: 500 }, (_, i) => i),
    );
  });

  it("serves waiting callers in the order they started waiting", async () => {
    const queue = new WorkQueue<string>();
    const first = watch(queue.get());
    const second = watch(queue.get());
    const third = watch(queue.get());
    queue.add("x");
    queue.add("y");
    await flushMicrotasks();
    assert.deepEqual(first.value, { item: "x", shutdown: false });
    assert.deepEqual(second.value, { item: "y", shutdown: false });
    assert.equal(third.settled, false);
    queue.add("x");
    await flushMicrotasks();
    assert.equal(third.settled, false, "x is held by the first caller, so it is only marked dirty");
    queue.done("x");
    await flushMicrotasks();
    assert.deepEqual(third.value, { item: "x", shutdown: false });
  });

  it("collapses adds made in one synchronous run into one hand-out, even while a caller waits", async () => {
    const queue = new WorkQueue<string>();
    const waiting = watch(queue.get());
    queue.add("k");
    queue.add("k");
    queue.add("k");
    assert.equal(queue.len(), 1, "the item stays queued until the run ends");
    await flushMicrotasks();
    assert.deepEqual(waiting.value, { item: "k", shutdown: false });
    queue.done("k");
    assert.equal(queue.len(), 0, "three adds, one reconcile");
  });

  it("makes a caller that arrives while others wait queue behind them", async () => {
    const queue = new WorkQueue<string>();
    const first = watch(queue.get());
    queue.add("x");
    const second = watch(queue.get());
    await flushMicrotasks();
    assert.deepEqual(first.value, { item: "x", shutdown: false }, "the longest waiting caller gets x");
    assert.equal(second.settled, false);
    queue.add("y");
    await flushMicrotasks();
    assert.deepEqual(second.value, { item: "y", shutdown: false });
  });

  it("hands queued items to waiting callers before releasing them on shutDown", async () => {
    const queue = new WorkQueue<string>();
    const first = watch(queue.get());
    const second = watch(queue.get());
    queue.add("x");
    queue.shutDown();
    await flushMicrotasks();
    assert.deepEqual(first.value, { item: "x", shutdown: false });
    assert.deepEqual(second.value, { shutdown: true });
  });

  it("ignores done for an item that is not being processed", async () => {
    const queue = new WorkQueue<string>();
    queue.done("never-added");
    queue.add("a");
    queue.done("a");
    assert.equal(queue.len(), 1, "done on a queued item does not queue it twice");
    await take(queue);
    queue.done("a");
    queue.done("a");
    queue.add("a");
    assert.equal(queue.len(), 1);
  });

  it("hands out again an item whose record was swept after many distinct keys", async () => {
    const queue = new WorkQueue<number>();
    for (let i = 0; i < 5_000; i++) {
      queue.add(i);
      queue.done(await take(queue));
    }
    queue.add(0);
    queue.add(4_999);
    assert.equal(queue.len(), 2);
    assert.equal(await take(queue), 0);
    assert.equal(await take(queue), 4_999);
  });

  it("after shutDown ignores adds, still hands out queued items, then reports shutdown", async () => {
    const queue = new WorkQueue<string>();
    queue.add("a");
    queue.add("b");
    queue.shutDown();
    queue.add("c");
    assert.equal(queue.shuttingDown(), true);
    assert.equal(queue.len(), 2);
    assert.equal(await take(queue), "a");
    assert.equal(await take(queue), "b");
    assert.deepEqual(await queue.get(), { shutdown: true });
    assert.deepEqual(await queue.get(), { shutdown: true });
  });

  it("releases every waiting caller with shutdown", async () => {
    const queue = new WorkQueue<string>();
    const waiting = [watch(queue.get()), watch(queue.get())];
    queue.shutDown();
    await flushMicrotasks();
    for (const w of waiting) assert.deepEqual(w.value, { shutdown: true });
  });

  it("re-queues an item added while held even after shutDown, so the holder can finish it", async () => {
    const queue = new WorkQueue<string>();
    queue.add("a");
    await take(queue);
    queue.add("a");
    queue.shutDown();
    queue.done("a");
    assert.equal(await take(queue), "a");
    queue.done("a");
    assert.deepEqual(await queue.get(), { shutdown: true });
  });

  it("shutDownWithDrain resolves only when every handed-out item is done", async () => {
    const queue = new WorkQueue<string>();
    queue.add("a");
    queue.add("b");
    await take(queue);
    await take(queue);
    const drained = watch(queue.shutDownWithDrain());
    queue.done("a");
    await flushMicrotasks();
    assert.equal(drained.settled, false, "b is still being processed");
    queue.done("b");
    await flushMicrotasks();
    assert.equal(drained.settled, true);
  });

  it("shutDownWithDrain resolves at once when nothing is being processed", async () => {
    const queue = new WorkQueue<string>();
    await queue.shutDownWithDrain();
    assert.equal(queue.shuttingDown(), true);
  });

  it("shutDown releases a pending drain without waiting for in-flight items", async () => {
    const queue = new WorkQueue<string>();
    queue.add("a");
    await take(queue);
    const drained = watch(queue.shutDownWithDrain());
    await flushMicrotasks();
    assert.equal(drained.settled, false);
    queue.shutDown();
    await flushMicrotasks();
    assert.equal(drained.settled, true);
  });
});

describe("WorkQueue under contention (seed 003)", () => {
  it("never lets 16 async workers hold one of 64 keys at once over 320,000 adds", async () => {
    const result = await runContention(new WorkQueue<string>(), { workers: 16, keys: 64, adds: 320_000 });
    assert.equal(result.overlaps, 0);
    assert.equal(result.staleKeys, 0, "every key's last add is followed by a reconcile");
    assert.ok(
      result.reconciles > 64 && result.reconciles < 320_000,
      `adds collapse into fewer reconciles (${result.reconciles})`,
    );
  });

  it("the same detector catches overlaps on a naive FIFO", async () => {
    const result = await runContention(new NaiveFifo<string>(), { workers: 16, keys: 64, adds: 320_000 });
    assert.equal(result.reconciles, 320_000, "a FIFO without dirty/processing sets never collapses");
    assert.ok(result.overlaps > 0, "two workers held one key at once");
  });
});
