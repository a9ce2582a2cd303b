import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../testing/fake-clock.ts";
import { DelayingQueue } from "./delaying.ts";
import type { GetResult } from "./queue.ts";

async function drain<T>(queue: DelayingQueue<T>): Promise<T[]> {
  const out: T[] = [];
  while (queue.len() > 0) {
    const next = await queue.get();
    assert.equal(next.shutdown, false);
    const item = (next as Extract<GetResult<T>, { shutdown: false }>).item;
    out.push(item);
    queue.done(item);
  }
  return out;
}

describe("DelayingQueue", () => {
  it("adds items when they fall due, earliest first, equal due times in scheduling order", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("late", 300);
    queue.addAfter("early", 100);
    queue.addAfter("tie-1", 200);
    queue.addAfter("tie-2", 200);
    await clock.advance(99);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.deepEqual(await drain(queue), ["early"]);
    await clock.advance(100);
    assert.deepEqual(await drain(queue), ["tie-1", "tie-2"]);
    await clock.advance(100);
    assert.deepEqual(await drain(queue), ["late"]);
    assert.equal(queue.waitingLen(), 0);
  });

  it("keeps exactly one clock timer pending however many items wait", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<number>({ clock });
    for (let i = 0; i < 1_000; i++) queue.addAfter(i, 10 + ((i * 7919) % 1000));
    assert.equal(queue.waitingLen(), 1_000);
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextDue(), clock.now() + 10);
    await clock.advance(500);
    assert.equal(clock.pendingTimers(), 1, "re-armed for the next due item");
    await clock.advance(600);
    assert.equal(queue.len(), 1_000);
    assert.equal(clock.pendingTimers(), 0, "no timer once nothing waits");
  });

  it("lets an earlier addAfter replace a later one, and ignores a later one", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    const start = clock.now();
    queue.addAfter("k", 1_000);
    queue.addAfter("k", 100);
    assert.equal(queue.waitingLen(), 1, "one entry per item");
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextDue(), start + 100, "the timer moved to the earlier due time");
    queue.addAfter("k", 5_000);
    assert.equal(clock.nextDue(), start + 100, "a later addAfter does not postpone");
    await clock.advance(100);
    assert.deepEqual(await drain(queue), ["k"]);
    await clock.advance(10_000);
    assert.equal(queue.len(), 0, "the replaced later entry does not fire");
  });

  it("adds at once when the delay is zero, negative or NaN", () => {
    const queue = new DelayingQueue<string>({ clock: new FakeClock() });
    queue.addAfter("zero", 0);
    queue.addAfter("negative", -5);
    queue.addAfter("nan", Number.NaN);
    assert.equal(queue.len(), 3);
    assert.equal(queue.waitingLen(), 0);
  });

  it("cancels its timer and drops waiting items on shutDown", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("a", 100);
    queue.addAfter("b", 200);
    queue.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(queue.waitingLen(), 0);
    queue.addAfter("c", 50);
    assert.equal(clock.pendingTimers(), 0, "addAfter while shutting down is ignored");
    await clock.advance(1_000);
    assert.equal(queue.len(), 0);
    assert.deepEqual(await queue.get(), { shutdown: true });
  });

  it("cancels its timer on shutDownWithDrain", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("a", 100);
    await queue.shutDownWithDrain();
    assert.equal(clock.pendingTimers(), 0);
  });

  it("re-arms delays beyond the platform timer limit instead of firing early", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    const limit = 2 ** 31 - 1;
    queue.addAfter("far", limit + 1_000);
    await clock.advance(limit);
    assert.equal(queue.len(), 0);
    assert.equal(clock.pendingTimers(), 1);
    await clock.advance(1_000);
    assert.equal(queue.len(), 1);
  });

  it("does not re-add an item that is already queued, and re-queues a held one on done", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.add("k");
    queue.addAfter("k", 10);
    await clock.advance(10);
    assert.equal(queue.len(), 1, "stingy");
    const next = await queue.get();
    assert.deepEqual(next, { item: "k", shutdown: false });
    queue.addAfter("k", 10);
    await clock.advance(10);
    assert.equal(queue.len(), 0, "held, so only marked dirty");
    queue.done("k");
    assert.equal(queue.len(), 1);
  });
});
