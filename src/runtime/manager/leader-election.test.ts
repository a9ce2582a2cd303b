import { test } from "node:test";
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock } from "../testing/fake-clock.ts";
import { LeaderElectionConfigError, LeaderElector, type HoldOutcome } from "./leader-election.ts";
import { MemoryLock } from "./testing/memory-lock.ts";
import { metricValue } from "../testing/prometheus-text.ts";

const LD = 15_000;
const RD = 10_000;
const RP = 2_000;

function elector(
  lock: MemoryLock,
  clock: FakeClock,
  identity: string,
  registry = new Registry(),
): LeaderElector {
  return new LeaderElector({ lock, identity, name: "lease", clock, registry, random: () => 0.5 });
}

/** Runs `p` while stepping the fake clock in `step` ms increments, up to `maxMs`. */
async function settle<T>(
  clock: FakeClock,
  p: Promise<T>,
  maxMs: number,
  step = 100,
): Promise<{ value: T; elapsed: number }> {
  const start = clock.now();
  let done: { value: T } | undefined;
  void p.then((value) => (done = { value }));
  await clock.advance(0);
  while (done === undefined && clock.now() - start < maxMs) await clock.advance(step);
  if (done === undefined) assert.fail(`not settled within ${maxMs} ms`);
  return { value: done.value, elapsed: clock.now() - start };
}

test("the first candidate creates the lease and leads; the second waits", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const reg = new Registry();
  const a = elector(lock, clock, "a", reg);
  const b = elector(lock, clock, "b", new Registry());
  assert.equal((await settle(clock, a.acquire(new AbortController().signal), 0)).value, true);
  assert.equal(lock.stored?.record.holderIdentity, "a");
  assert.equal(lock.stored?.record.leaseDurationSeconds, 15);
  assert.equal(metricValue(await reg.metrics(), "leader_election_master_status", { name: "lease" }), 1);

  const holdA = new AbortController();
  const heldA = a.hold(holdA.signal);
  const stopB = new AbortController();
  let bLeads = false;
  void b.acquire(stopB.signal).then((v) => (bLeads = v));
  await clock.advance(5 * LD);
  assert.equal(bLeads, false, "a follower never takes a lease that keeps being renewed");
  assert.equal(b.observedLeader(), "a");
  assert.equal(a.isLeader(), true);
  stopB.abort();
  holdA.abort();
  assert.equal(await heldA, "stopped");
});

test("a crashed leader is replaced within LeaseDuration + RetryPeriod of its last renewal", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const a = elector(lock, clock, "a");
  const b = elector(lock, clock, "b");
  await settle(clock, a.acquire(new AbortController().signal), 0);
  const holdA = new AbortController();
  void a.hold(holdA.signal);
  const acquired = b.acquire(new AbortController().signal);
  await clock.advance(3 * LD + 700);
  // "Crash": a stops renewing without releasing.
  holdA.abort();
  const lastRenew = lock.stored?.record.renewTime ?? 0;
  const { value } = await settle(clock, acquired, LD + 2 * RP, 50);
  assert.equal(value, true);
  assert.ok(
    clock.now() - lastRenew <= LD + RP,
    `took over ${clock.now() - lastRenew} ms after the last renewal`,
  );
  assert.ok(clock.now() - lastRenew >= LD, "never before the lease expired");
  assert.equal(lock.stored?.record.holderIdentity, "b");
  assert.equal(lock.stored?.record.leaseTransitions, 1);
});

test("expiry is judged by the follower's clock, not by the renewTime written by another machine", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  // A holder whose clock is an hour behind wrote this record just now.
  lock.overwrite({
    holderIdentity: "skewed",
    leaseDurationSeconds: 15,
    acquireTime: 0,
    renewTime: clock.now() - 3_600_000,
    leaseTransitions: 4,
  });
  const b = elector(lock, clock, "b");
  const { elapsed } = await settle(clock, b.acquire(new AbortController().signal), 2 * LD, 50);
  assert.ok(elapsed >= LD && elapsed <= LD + RP, `took over after ${elapsed} ms`);
  assert.equal(lock.stored?.record.leaseTransitions, 5);
});

test("a released lease is taken over within one RetryPeriod", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const a = elector(lock, clock, "a");
  const b = elector(lock, clock, "b");
  await settle(clock, a.acquire(new AbortController().signal), 0);
  const holdA = new AbortController();
  const heldA = a.hold(holdA.signal);
  const acquired = b.acquire(new AbortController().signal);
  await clock.advance(4_300);
  holdA.abort();
  assert.equal(await heldA, "stopped");
  assert.equal(await a.release(), true);
  assert.equal(a.isLeader(), false);
  assert.equal(lock.stored?.record.holderIdentity, "");
  assert.equal(lock.stored?.record.leaseDurationSeconds, 1);
  const { value, elapsed } = await settle(clock, acquired, RP, 10);
  assert.equal(value, true);
  assert.ok(elapsed <= RP, `took ${elapsed} ms`);
});

test("release does nothing when another process holds the lease", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const a = elector(lock, clock, "a");
  await settle(clock, a.acquire(new AbortController().signal), 0);
  lock.overwrite({
    holderIdentity: "z",
    leaseDurationSeconds: 15,
    acquireTime: 1,
    renewTime: 1,
    leaseTransitions: 9,
  });
  assert.equal(await a.release(), false);
  assert.equal(lock.stored?.record.holderIdentity, "z");
});

test("another holder overwriting the lease is noticed at the next renewal and reported as lost", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const reg = new Registry();
  const a = elector(lock, clock, "a", reg);
  await settle(clock, a.acquire(new AbortController().signal), 0);
  const held = a.hold(new AbortController().signal);
  await clock.advance(RP * 2 + 500);
  lock.overwrite({
    holderIdentity: "intruder",
    leaseDurationSeconds: 15,
    acquireTime: clock.now(),
    renewTime: clock.now(),
    leaseTransitions: 1,
  });
  const { value, elapsed } = await settle<HoldOutcome>(clock, held, RD, 10);
  assert.equal(value, "lost");
  assert.ok(elapsed <= RP, `noticed after ${elapsed} ms`);
  assert.equal(a.isLeader(), false);
  assert.equal(metricValue(await reg.metrics(), "leader_election_master_status", { name: "lease" }), 0);
});

test("renewal failures shorter than RenewDeadline are ridden out; longer ones lose the lease at the deadline", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const a = elector(lock, clock, "a");
  await settle(clock, a.acquire(new AbortController().signal), 0);
  const held = a.hold(new AbortController().signal);
  let outcome: HoldOutcome | undefined;
  void held.then((o) => (outcome = o));
  lock.failures = 3; // three failed renewals: 6 s < RenewDeadline
  await clock.advance(4 * RP + 100);
  assert.equal(outcome, undefined);
  assert.equal(a.isLeader(), true);
  const lastRenew = lock.stored?.record.renewTime ?? 0;
  lock.failures = 1_000;
  const { value } = await settle(clock, held, 2 * RD, 10);
  assert.equal(value, "lost");
  const gaveUpAfter = clock.now() - lastRenew;
  assert.ok(gaveUpAfter >= RD && gaveUpAfter < RD + RP, `gave up ${gaveUpAfter} ms after the last renewal`);
  assert.ok(gaveUpAfter < LD, "the leader stops before any follower may take over");
});

test("only one of several simultaneous candidates wins", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const electors = ["a", "b", "c", "d"].map((id) => elector(lock, clock, id));
  const results = electors.map((e) => {
    let won = false;
    void e.acquire(new AbortController().signal).then((v) => (won = v));
    return () => won;
  });
  await clock.advance(3 * RP);
  assert.equal(results.filter((r) => r()).length, 1);
  assert.equal(electors.filter((e) => e.isLeader()).length, 1);
});

test("inconsistent timings are refused", () => {
  const lock = new MemoryLock();
  assert.throws(
    () =>
      new LeaderElector({
        lock,
        identity: "a",
        name: "l",
        leaseDurationMs: 10_000,
        renewDeadlineMs: 10_000,
        registry: new Registry(),
      }),
    LeaderElectionConfigError,
  );
  assert.throws(
    () =>
      new LeaderElector({
        lock,
        identity: "a",
        name: "l",
        renewDeadlineMs: 2_000,
        retryPeriodMs: 2_000,
        registry: new Registry(),
      }),
    LeaderElectionConfigError,
  );
  assert.throws(
    () => new LeaderElector({ lock, identity: "", name: "l", registry: new Registry() }),
    LeaderElectionConfigError,
  );
});

test("the health check fails only when the leader's renewals are wedged", async () => {
  const clock = new FakeClock();
  const lock = new MemoryLock();
  const a = elector(lock, clock, "a");
  a.check();
  await settle(clock, a.acquire(new AbortController().signal), 0);
  a.check();
  await clock.advance(LD + 20_001); // no hold() running: nothing renews
  assert.throws(() => a.check(), /not renewed/);
});
