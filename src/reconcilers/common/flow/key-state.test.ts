import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../../../runtime/testing/fake-clock.ts";
import { ACCESS_RETRY_MAX_MS, accessRetryCurve, KeyStates, RESUME_GRACE_MS } from "./key-state.ts";

describe("KeyStates", () => {
  it("doubles transition polls up to the cap and starts afresh once settled", () => {
    const keys = new KeyStates({ clock: new FakeClock(), pendingInitialMs: 1000, pendingMaxMs: 3000 });
    assert.deepEqual(
      [1, 2, 3].map(() => keys.nextPendingPoll("a")),
      [1000, 2000, 3000],
    );
    assert.equal(keys.nextPendingPoll("b"), 1000, "each key has its own curve");
    keys.settled("a");
    assert.equal(keys.nextPendingPoll("a"), 1000);
  });

  it("looks at a blocked deletion from 5 s doubling to 5 min", () => {
    const keys = new KeyStates({ clock: new FakeClock() });
    const looks = Array.from({ length: 8 }, () => keys.nextBlockedLook("a"));
    assert.deepEqual(looks, [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    keys.unblocked("a");
    assert.equal(keys.nextBlockedLook("a"), 5000);
  });

  it("retries a failure of access from the poll period doubling to an hour, per key, afresh after a success", async () => {
    const clock = new FakeClock();
    const keys = new KeyStates({ clock });
    const retries: number[] = [];
    for (let i = 0; i < 7; i++) {
      retries.push(keys.nextAccessRetry("a"));
      await clock.advance(retries.at(-1) ?? 0);
    }
    const min = 60_000;
    assert.deepEqual(retries, [5 * min, 10 * min, 20 * min, 40 * min, 60 * min, 60 * min, 60 * min]);
    assert.equal(keys.nextAccessRetry("b"), 5 * min, "each key has its own curve");
    assert.ok(keys.remembers("a"), "a key backing off is not done: its next reconcile is work, not a poll");
    keys.accessRestored("a");
    assert.equal(keys.nextAccessRetry("a"), 5 * min);
    keys.accessRestored("a");
    keys.accessRestored("b");
    assert.equal(keys.size(), 0, "nothing is kept once the retries end");
  });

  it("starts access retries at the configured poll period, and never below it", async () => {
    assert.deepEqual(accessRetryCurve(2000), { initialMs: 2000, maxMs: ACCESS_RETRY_MAX_MS });
    assert.deepEqual(accessRetryCurve(7_200_000), { initialMs: 7_200_000, maxMs: 7_200_000 });
    const clock = new FakeClock();
    const keys = new KeyStates({ clock, accessRetry: accessRetryCurve(2000) });
    const retries: number[] = [];
    for (let i = 0; i < 3; i++) {
      retries.push(keys.nextAccessRetry("a"));
      await clock.advance(retries.at(-1) ?? 0);
    }
    assert.deepEqual(retries, [2000, 4000, 8000]);
    assert.throws(
      () => new KeyStates({ clock: new FakeClock(), accessRetry: { initialMs: 0, maxMs: 1 } }),
      RangeError,
    );
  });

  it("takes a step of the access ladder only for a failure at or after its retry, not for one that came sooner", async () => {
    const clock = new FakeClock();
    const keys = new KeyStates({ clock, accessRetry: accessRetryCurve(5000) });
    assert.equal(keys.nextAccessRetry("a"), 5000);
    assert.equal(keys.nextAccessRetry("a"), 5000, "enqueued again while it ran: the same retry");
    await clock.advance(1000);
    assert.equal(keys.nextAccessRetry("a"), 4000, "a poll that was already due: the retry stays");
    await clock.advance(4000);
    assert.equal(keys.nextAccessRetry("a"), 10_000, "at its retry: the next step");
    await clock.advance(9999);
    assert.equal(keys.nextAccessRetry("a"), 1, "a millisecond early: still that retry");
    await clock.advance(1);
    assert.equal(keys.nextAccessRetry("a"), 20_000);
    keys.accessRestored("a");
    assert.equal(keys.size(), 0);
    assert.equal(keys.nextAccessRetry("a"), 5000, "after a success the ladder starts afresh at once");
  });

  it("reports a failure once it persisted for enough reconciles and time, until the streak ends", async () => {
    const clock = new FakeClock();
    const keys = new KeyStates({ clock, minFailures: 2, minDurationMs: 10_000 });
    assert.equal(keys.failed("a"), false);
    assert.equal(keys.failed("a"), false, "two failures, but not yet 10 s");
    await clock.advance(10_000);
    assert.equal(keys.failed("a"), true);
    keys.streakEnded("a");
    assert.equal(keys.failed("a"), false, "a new streak");
  });

  it("resumes a deferred create once, only for the same version and before the slot's grace ends", async () => {
    const clock = new FakeClock();
    const keys = new KeyStates({ clock });
    keys.deferCreate("a", "7", 1000);
    assert.equal(keys.resumesCreate("a", "8"), false, "the object changed");
    assert.equal(keys.resumesCreate("a", "7"), false, "used up");
    keys.deferCreate("a", "7", 1000);
    assert.equal(keys.resumesCreate("a", "7"), true);
    keys.deferCreate("a", "7", 1000);
    await clock.advance(1000 + RESUME_GRACE_MS + 1);
    assert.equal(keys.resumesCreate("a", "7"), false, "the slot is long past");
    keys.deferCreate("a", undefined, 1000);
    assert.equal(keys.resumesCreate("a", undefined), false, "no version, no deferral");
  });

  it("forgets everything about a key at once, and keeps no record with nothing in it", () => {
    const keys = new KeyStates({ clock: new FakeClock() });
    keys.nextPendingPoll("a");
    keys.nextBlockedLook("a");
    keys.failed("a");
    keys.deferCreate("a", "1", 10);
    keys.nextAccessRetry("a");
    keys.nextPendingPoll("b");
    assert.equal(keys.size(), 2);
    keys.forget("a");
    assert.equal(keys.size(), 1);
    assert.equal(keys.nextPendingPoll("a"), 2000, "the curve starts afresh");
    assert.equal(keys.nextBlockedLook("a"), 5000);
    assert.equal(keys.resumesCreate("a", "1"), false);
    keys.settled("a");
    keys.unblocked("a");
    keys.settled("b");
    assert.equal(keys.size(), 0, "settled keys leave nothing behind");
  });

  it("refuses a transition curve that is not 0 < initial <= max", () => {
    assert.throws(() => new KeyStates({ clock: new FakeClock(), pendingInitialMs: 0 }), RangeError);
    assert.throws(
      () => new KeyStates({ clock: new FakeClock(), pendingInitialMs: 10, pendingMaxMs: 5 }),
      RangeError,
    );
    assert.throws(() => new KeyStates({ clock: new FakeClock(), minFailures: 0 }), RangeError);
  });
});
