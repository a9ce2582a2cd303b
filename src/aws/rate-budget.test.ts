import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock, flushMicrotasks } from "../runtime/testing/fake-clock.ts";
import { RateBudget } from "./rate-budget.ts";

/** Starts `n` acquires and records, in order, which ones have resolved. */
function startMany(budget: RateBudget, n: number, signal?: AbortSignal) {
  const done: number[] = [];
  const waits: number[] = [];
  const promises = Array.from({ length: n }, (_, i) =>
    budget.acquire(signal).then((waited) => {
      done.push(i);
      waits.push(waited);
    }),
  );
  return { done, waits, promises };
}

describe("RateBudget", () => {
  it("hands out the burst at once, then one permit per 1/rate seconds", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 5, clock });
    const { done } = startMany(budget, 7);
    await flushMicrotasks();
    assert.deepEqual(done, [0, 1, 2, 3, 4]);
    await clock.advance(99);
    assert.equal(done.length, 5, "no permit before 100 ms at 10/s");
    await clock.advance(1);
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5]);
    await clock.advance(100);
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(budget.waiting, 0);
    assert.equal(clock.pendingTimers(), 0, "no timer left once nobody waits");
  });

  it("serves waiters in arrival order and reports how long each waited", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 2, burst: 1, clock });
    const { done, waits } = startMany(budget, 4);
    await clock.advance(1500);
    assert.deepEqual(done, [0, 1, 2, 3]);
    assert.deepEqual(waits, [0, 500, 1000, 1500]);
  });

  it("never hands out more than burst + rate x time over a window", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 20, burst: 10, clock });
    const { done, promises } = startMany(budget, 1000);
    await clock.advance(10_000);
    assert.ok(done.length <= 10 + 20 * 10, `${done.length} permits in 10 s`);
    assert.ok(done.length >= 10 + 20 * 10 - 1, `${done.length} permits in 10 s`);
    budget.cancelAll(new Error("test over"));
    const results = await Promise.allSettled(promises);
    assert.equal(results.filter((r) => r.status === "rejected").length, 1000 - done.length);
  });

  it("halves the rate on a throttled answer and drops the stored burst", async () => {
    const clock = new FakeClock();
    const rates: number[] = [];
    const budget = new RateBudget({
      ratePerSecond: 10,
      burst: 10,
      clock,
      onRateChange: (r) => rates.push(r),
    });
    assert.equal(budget.available, 10);
    budget.onThrottle();
    assert.equal(budget.rate, 5);
    assert.deepEqual(rates, [5]);
    assert.equal(budget.available, 0, "the burst is gone after a throttle");
    const { done } = startMany(budget, 2);
    await clock.advance(199);
    assert.equal(done.length, 0);
    await clock.advance(1);
    assert.equal(done.length, 1, "one permit per 200 ms at 5/s");
    await clock.advance(200);
    assert.equal(done.length, 2);
  });

  it("treats throttles within the cooldown as one signal", () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 16, burst: 4, decreaseCooldownMs: 1000, clock });
    budget.onThrottle();
    budget.onThrottle();
    budget.onThrottle();
    assert.equal(budget.rate, 8);
  });

  it("halves again after the cooldown and never goes below the floor", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({
      ratePerSecond: 16,
      burst: 4,
      minRatePerSecond: 1,
      decreaseCooldownMs: 1000,
      recoveryIntervalMs: 60_000,
      clock,
    });
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) {
      budget.onThrottle();
      seen.push(budget.rate);
      await clock.advance(1000);
    }
    assert.deepEqual(seen, [8, 4, 2, 1, 1, 1, 1]);
  });

  it("climbs back linearly while no throttling is seen, up to the configured rate", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({
      ratePerSecond: 10,
      burst: 5,
      recoveryStep: 1,
      recoveryIntervalMs: 2000,
      clock,
    });
    budget.onThrottle();
    assert.equal(budget.rate, 5);
    await clock.advance(1999);
    assert.equal(budget.rate, 5);
    await clock.advance(1);
    assert.equal(budget.rate, 6);
    await clock.advance(4000);
    assert.equal(budget.rate, 8);
    budget.onThrottle();
    assert.equal(budget.rate, 4, "a new throttle halves the recovered rate");
    await clock.advance(60_000);
    assert.equal(budget.rate, 10, "recovery stops at the configured rate");
  });

  it("re-times waiting callers when the rate drops", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 1, clock });
    await budget.acquire();
    const { done } = startMany(budget, 1);
    budget.onThrottle();
    await clock.advance(100);
    assert.equal(done.length, 0, "the old 100 ms spacing no longer applies");
    await clock.advance(100);
    assert.equal(done.length, 1);
  });

  it("rejects an aborted waiter without consuming a permit", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 1, clock });
    await budget.acquire();
    const ac = new AbortController();
    const aborted = budget.acquire(ac.signal);
    const next = startMany(budget, 1);
    ac.abort(new Error("shutting down"));
    await assert.rejects(aborted, /shutting down/);
    assert.equal(budget.waiting, 1);
    await clock.advance(100);
    assert.equal(next.done.length, 1, "the next waiter got the permit the aborted one would have had");
    await assert.rejects(budget.acquire(AbortSignal.abort(new Error("already"))), /already/);
  });

  it("tryAcquire takes a free permit but never jumps the queue", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 1, burst: 1, clock });
    assert.equal(budget.tryAcquire(), true);
    assert.equal(budget.tryAcquire(), false);
    const { done } = startMany(budget, 1);
    await clock.advance(999);
    assert.equal(budget.tryAcquire(), false);
    await clock.advance(1);
    assert.equal(done.length, 1);
  });

  it("cancelAll fails every waiter and stops its timer", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 1, burst: 1, clock });
    await budget.acquire();
    const a = budget.acquire();
    const b = budget.acquire();
    budget.cancelAll(new Error("closed"));
    await assert.rejects(a, /closed/);
    await assert.rejects(b, /closed/);
    assert.equal(clock.pendingTimers(), 0);
  });

  it("tells how long a new caller would wait: behind the waiters, for its cost", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 2, burst: 2, clock });
    assert.equal(budget.delayFor(), 0);
    assert.equal(budget.delayFor(3), 500, "a third permit comes after 500 ms");
    startMany(budget, 4);
    await flushMicrotasks();
    assert.equal(budget.waiting, 2);
    assert.equal(budget.delayFor(), 1500, "two waiters ahead, then its own permit");
    await clock.advance(500);
    assert.equal(budget.delayFor(), 1000);
  });

  it("books callers sent away together one permit apart, from when their permits are due", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 2, burst: 1, clock });
    startMany(budget, 3);
    await flushMicrotasks();
    assert.equal(budget.delayFor(), 1500);
    assert.deepEqual([budget.book(), budget.book(), budget.book(2)], [1500, 2000, 3000]);
    assert.equal(budget.delayFor(), 1500, "a booking takes no permit");
    // Long after the bookings a new one starts from the queue again.
    await clock.advance(10_000);
    assert.equal(budget.book(), 0);
  });

  it("serves real work before waiting polls, whatever their arrival order", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 1, pollShare: 1, clock });
    await budget.acquire();
    const order: string[] = [];
    const polls = [0, 1].map((i) => budget.acquire(undefined, "poll").then(() => order.push(`poll${i}`)));
    const works = [0, 1].map((i) => budget.acquire().then(() => order.push(`work${i}`)));
    await clock.advance(400);
    await Promise.all([...polls, ...works]);
    assert.deepEqual(order, ["work0", "work1", "poll0", "poll1"]);
  });

  it("never hands polls more than their share, while real work may take the whole rate", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 10, pollShare: 0.5, clock });
    assert.equal(budget.pollBurst, 5);
    const polls = { done: 0 };
    const pending = Array.from({ length: 500 }, () =>
      budget.acquire(undefined, "poll").then(() => polls.done++),
    );
    await clock.advance(10_000);
    // Their share of the burst, then half the rate.
    assert.ok(polls.done <= 5 + 5 * 10, `${polls.done} poll permits in 10 s`);
    assert.ok(polls.done >= 5 + 5 * 10 - 1, `${polls.done} poll permits in 10 s`);
    // Real work meanwhile gets every permit the polls leave, at once when they are there.
    const work = { done: 0 };
    const works = Array.from({ length: 50 }, () => budget.acquire().then(() => work.done++));
    const pollsBefore = polls.done;
    await clock.advance(4100);
    assert.equal(
      work.done,
      50,
      "the stored burst (less a poll's permit), then 40 in 4.1 s at the whole 10/s",
    );
    assert.ok(polls.done - pollsBefore <= 1, "no poll served while real work waits");
    await Promise.all(works);
    budget.cancelAll(new Error("test over"));
    await Promise.allSettled(pending);
  });

  it("tells a poll its wait behind every waiter and for its share; a work caller only behind work", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 4, burst: 4, pollShare: 0.5, clock });
    assert.equal(budget.delayFor(1, "poll"), 0);
    assert.equal(budget.delayFor(3, "poll"), 500, "the third poll permit comes at the share's 2/s");
    startMany(budget, 4);
    await flushMicrotasks();
    budget.acquire(undefined, "poll").catch(() => undefined);
    await flushMicrotasks();
    assert.equal(budget.delayFor(), 250, "work waits for the next permit only");
    assert.equal(budget.delayFor(1, "poll"), 500, "behind the waiting poll");
    budget.cancelAll(new Error("test over"));
  });

  it("books polls at their share's rate, apart from work bookings", () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 1, pollShare: 0.25, clock });
    budget.tryAcquire();
    assert.deepEqual(
      [budget.book(1, "poll"), budget.book(1, "poll"), budget.book(2, "poll")],
      [100, 500, 1300],
      "the first when the whole rate's next permit is due, then one poll permit per 400 ms at 2.5/s",
    );
    assert.deepEqual([budget.book(), budget.book()], [100, 200], "work books at the whole rate");
  });

  it("a throttle empties the polls' share too", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 10, pollShare: 0.5, clock });
    budget.onThrottle();
    assert.equal(budget.pollRate, 2.5);
    assert.equal(budget.tryAcquire("poll"), false);
    await clock.advance(400);
    assert.equal(budget.tryAcquire("poll"), true, "one poll permit after 400 ms at 2.5/s");
  });

  it("rejects nonsensical options", () => {
    assert.throws(() => new RateBudget({ pollShare: 0 }), RangeError);
    assert.throws(() => new RateBudget({ pollShare: 1.5 }), RangeError);
    assert.throws(() => new RateBudget({ ratePerSecond: 0 }), RangeError);
    assert.throws(() => new RateBudget({ burst: 0.5 }), RangeError);
    assert.throws(() => new RateBudget({ ratePerSecond: 1, minRatePerSecond: 2 }), RangeError);
    assert.throws(() => new RateBudget({ decreaseFactor: 1 }), RangeError);
  });
});
