import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { Registry } from "prom-client";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { LeaderElector } from "./leader-election.ts";
import {
  LeaderElectionLostError,
  Manager,
  RunnableError,
  ShutdownTimeoutError,
  type CacheRunnable,
  type Server,
} from "./manager.ts";
import type { Runnable } from "./runnable.ts";
import { handleShutdownSignals } from "./signals.ts";
import { MemoryLock } from "./testing/memory-lock.ts";

/** A runnable that logs its life and stops `stopDelayMs` (fake time) after its signal. */
class Probe implements Runnable {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly log: string[];
  started = false;
  constructor(
    log: string[],
    name: string,
    opts: { leader?: boolean; clock?: FakeClock; stopDelayMs?: number; neverStops?: boolean } = {},
  ) {
    this.log = log;
    this.name = name;
    this.needLeaderElection = opts.leader ?? false;
    this.#opts = opts;
  }
  readonly #opts: { clock?: FakeClock; stopDelayMs?: number; neverStops?: boolean };
  async start(signal: AbortSignal): Promise<void> {
    this.started = true;
    this.log.push(`start ${this.name}`);
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    if (this.#opts.neverStops) await new Promise(() => {});
    if (this.#opts.stopDelayMs !== undefined) await this.#opts.clock?.sleep(this.#opts.stopDelayMs);
    this.log.push(`stop ${this.name}`);
  }
}

class FakeCache extends Probe implements CacheRunnable {
  synced = false;
  #waiters: (() => void)[] = [];
  sync(): void {
    this.synced = true;
    for (const w of this.#waiters) w();
  }
  hasSynced(): boolean {
    return this.synced;
  }
  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.#waiters.push(() => resolve(true));
      signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }
}

class FakeServer implements Server {
  readonly log: string[];
  readonly name: string;
  constructor(log: string[], name: string) {
    this.log = log;
    this.name = name;
  }
  async listen(): Promise<void> {
    this.log.push(`listen ${this.name}`);
  }
  async close(): Promise<void> {
    this.log.push(`close ${this.name}`);
  }
}

function setup(opts: { gracefulMs?: number; withElector?: boolean; lock?: MemoryLock } = {}) {
  const clock = new FakeClock();
  const lock = opts.lock ?? new MemoryLock();
  const log: string[] = [];
  const elector =
    opts.withElector === false
      ? undefined
      : new LeaderElector({
          lock,
          identity: "me",
          name: "lease",
          clock,
          registry: new Registry(),
          random: () => 0,
        });
  const mgr = new Manager({
    leaderElector: elector,
    clock,
    gracefulShutdownTimeoutMs: opts.gracefulMs ?? 30_000,
    registry: new Registry(),
  });
  return { clock, lock, log, mgr, elector };
}

/** The rejection reason of `p` once it has rejected. */
function rejection(p: Promise<unknown>): () => unknown {
  let reason: unknown;
  p.catch((e: unknown) => (reason = e));
  return () => reason;
}

function holder(lock: MemoryLock): string | undefined {
  return lock.stored?.record.holderIdentity;
}

async function ready(mgr: Manager): Promise<boolean> {
  return (await mgr.readyz.run()).every((r) => r.ok);
}

test("start order: servers, caches, then leader-gated runnables once synced and leading; stop in reverse", async () => {
  const { clock, lock, log, mgr } = setup();
  const cache = new FakeCache(log, "cache");
  const ctrl = new Probe(log, "controller", { leader: true, clock, stopDelayMs: 3_000 });
  mgr.addServer(new FakeServer(log, "probes"));
  mgr.add(ctrl);
  mgr.add(cache);
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  await clock.advance(1_000);
  assert.deepEqual(log, ["listen probes", "start cache"]);
  assert.equal(await ready(mgr), false, "not ready before caches sync");
  assert.equal(holder(lock), undefined, "no campaign before caches sync");
  cache.sync();
  await clock.advance(0);
  await mgr.elected();
  assert.deepEqual(log, ["listen probes", "start cache", "start controller"]);
  assert.equal(await ready(mgr), true);
  assert.equal(holder(lock), "me");

  stop.abort();
  await clock.advance(1_000);
  assert.equal(await ready(mgr), false, "not ready while stopping");
  assert.equal(holder(lock), "me", "the lease is held while the controller drains");
  await clock.advance(2_000);
  await run;
  assert.deepEqual(log.slice(3), ["stop controller", "stop cache", "close probes"]);
  assert.equal(holder(lock), "", "released after the controller stopped");
});

test("a follower runs caches but no controller, and is ready", async () => {
  const lock = new MemoryLock();
  lock.overwrite({
    holderIdentity: "other",
    leaseDurationSeconds: 15,
    acquireTime: 0,
    renewTime: 0,
    leaseTransitions: 0,
  });
  const { clock, log, mgr } = setup({ lock });
  const cache = new FakeCache(log, "cache");
  cache.sync();
  const ctrl = new Probe(log, "controller", { leader: true });
  mgr.add(cache);
  mgr.add(ctrl);
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  await clock.advance(10_000);
  assert.equal(ctrl.started, false);
  assert.equal(await ready(mgr), true);
  stop.abort();
  await clock.advance(0);
  await run;
  assert.deepEqual(log, ["start cache", "stop cache"]);
});

test("without leader election, controllers start once caches sync", async () => {
  const { clock, log, mgr } = setup({ withElector: false });
  const cache = new FakeCache(log, "cache");
  mgr.add(cache);
  mgr.add(new Probe(log, "controller", { leader: true }));
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  await clock.advance(0);
  assert.deepEqual(log, ["start cache"]);
  cache.sync();
  await mgr.elected();
  stop.abort();
  await clock.advance(0);
  await run;
  assert.deepEqual(log, ["start cache", "start controller", "stop controller", "stop cache"]);
});

test("controllers that outlive the graceful timeout fail the stop and keep the lease unreleased", async () => {
  const { clock, lock, log, mgr } = setup({ gracefulMs: 5_000 });
  mgr.add(new Probe(log, "stuck", { leader: true, neverStops: true }));
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  const outcome = rejection(run);
  await mgr.elected();
  stop.abort();
  await clock.advance(4_900);
  assert.ok(outcome() === undefined, "still waiting inside the grace period");
  await clock.advance(200);
  const err = outcome();
  assert.ok(err instanceof ShutdownTimeoutError, String(err));
  assert.deepEqual(err.pending, ["stuck"]);
  assert.equal(holder(lock), "me");
});

test("a lost lease rejects at once, without waiting for controllers to drain", async () => {
  const { clock, lock, log, mgr } = setup();
  const ctrl = new Probe(log, "controller", { leader: true, neverStops: true });
  mgr.add(ctrl);
  const run = mgr.start(new AbortController().signal);
  const outcome = rejection(run);
  await clock.advance(0);
  await mgr.elected();
  lock.overwrite({
    holderIdentity: "thief",
    leaseDurationSeconds: 15,
    acquireTime: clock.now(),
    renewTime: clock.now(),
    leaseTransitions: 1,
  });
  await clock.advance(2_000);
  assert.ok(outcome() instanceof LeaderElectionLostError, String(outcome()));
  assert.equal(holder(lock), "thief", "never writes over the new holder");
});

test("a lease lost while controllers drain rejects at once too", async () => {
  const { clock, lock, log, mgr } = setup();
  mgr.add(new Probe(log, "controller", { leader: true, neverStops: true }));
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  const outcome = rejection(run);
  await mgr.elected();
  stop.abort();
  await clock.advance(1_000);
  lock.overwrite({
    holderIdentity: "thief",
    leaseDurationSeconds: 15,
    acquireTime: clock.now(),
    renewTime: clock.now(),
    leaseTransitions: 1,
  });
  await clock.advance(2_000);
  assert.ok(outcome() instanceof LeaderElectionLostError, String(outcome()));
});

test("a failing runnable stops everything and the start rejects with its error", async () => {
  const { log, mgr } = setup({ withElector: false });
  const broken: Runnable = {
    name: "broken",
    start: async () => {
      await mgr.elected();
      throw new Error("boom");
    },
  };
  const ctrl = new Probe(log, "controller", { leader: true });
  mgr.add(broken);
  mgr.add(ctrl);
  await assert.rejects(
    mgr.start(new AbortController().signal),
    (err: unknown) => err instanceof RunnableError && err.runnable === "broken",
  );
  assert.deepEqual(
    log,
    ["start controller", "stop controller"],
    "the controller was stopped before start rejected",
  );
});

test("caches that never sync fail the start after the sync timeout", async () => {
  const clock = new FakeClock();
  const log: string[] = [];
  const mgr = new Manager({ clock, cacheSyncTimeoutMs: 60_000, registry: new Registry() });
  mgr.add(new FakeCache(log, "cache"));
  const ctrl = new Probe(log, "controller", { leader: true });
  mgr.add(ctrl);
  const run = mgr.start(new AbortController().signal);
  const outcome = rejection(run);
  await clock.advance(59_000);
  assert.ok(outcome() === undefined);
  await clock.advance(2_000);
  const err = outcome();
  assert.ok(err instanceof RunnableError && /did not sync/.test(err.message), String(err));
  assert.equal(ctrl.started, false);
});

test("runnables cannot be added after start, and start runs once", async () => {
  const { mgr } = setup({ withElector: false });
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  assert.throws(() => mgr.add({ name: "late", start: async () => {} }), /has started/);
  await assert.rejects(mgr.start(stop.signal), /once/);
  stop.abort();
  await run;
});

test("the first shutdown signal aborts; the second forces an exit", async () => {
  const target = new EventEmitter();
  const forced: string[] = [];
  const s = handleShutdownSignals({
    onForce: (sig) => forced.push(sig),
    target: target as unknown as NodeJS.Process,
  });
  assert.equal(s.signal.aborted, false);
  target.emit("SIGTERM", "SIGTERM");
  assert.equal(s.signal.aborted, true);
  assert.deepEqual(forced, []);
  target.emit("SIGINT", "SIGINT");
  assert.deepEqual(forced, ["SIGINT"]);
  s.dispose();
  assert.equal(target.listenerCount("SIGTERM"), 0);
  await flushMicrotasks();
});

test("a server that cannot listen fails the start and closes the servers already open", async () => {
  const { log, mgr } = setup({ withElector: false });
  mgr.addServer(new FakeServer(log, "probes"));
  mgr.addServer({
    name: "metrics",
    listen: async () => {
      throw new Error("address in use");
    },
    close: async () => {},
  });
  mgr.add(new Probe(log, "cache"));
  await assert.rejects(mgr.start(new AbortController().signal), /address in use/);
  assert.deepEqual(log, ["listen probes", "close probes"], "no runnable started");
});
