/**
 * The manager: starts and stops everything the process runs, in controller-runtime's order.
 *
 * Start: HTTP servers listen; caches (and other runnables without leader election) start on
 * every replica and must sync; then, once this replica leads (or at once without leader
 * election), the leader-gated runnables (controllers) start.
 *
 * Graceful stop (the `signal` passed to {@link Manager.start} aborts): readiness fails, the
 * controllers stop taking work and finish in-flight reconciles, then the lease is released, then
 * caches and other runnables stop, then the servers close. All of it within one
 * gracefulShutdownTimeout.
 *
 * Lost lease: everything is aborted and {@link Manager.start} rejects with
 * {@link LeaderElectionLostError} at once, without waiting for anything; the caller must exit
 * the process non-zero immediately, so no reconcile ever runs without the lease.
 */
import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.ts";
import { silentLogger, type Logger } from "../logging.ts";
import { HealthChecks, ping } from "../metrics/health.ts";
import { defaultRegistry } from "../metrics/registry.ts";
import type { LeaderElector } from "./leader-election.ts";
import type { Runnable } from "./runnable.ts";

/** A runnable holding an informer cache: it gates the controllers until it has synced. */
export interface CacheRunnable extends Runnable {
  /** Resolves once the initial lists are in the cache (or `signal` aborted). */
  waitForCacheSync(signal: AbortSignal): Promise<unknown>;
  hasSynced(): boolean;
}

/** A server the manager opens first and closes last (probe and metrics endpoints). */
export interface Server {
  readonly name: string;
  /** Resolves once listening; rejects when the address cannot be bound. */
  listen(): Promise<void>;
  /** Stops accepting connections and resolves once open requests have ended. */
  close(): Promise<void>;
}

/** Options of {@link Manager}. */
export interface ManagerOptions {
  /** When set, leader-gated runnables start only while this elector holds the lease. */
  leaderElector?: LeaderElector | undefined;
  /** Budget of a graceful stop, from the stop signal to the last runnable stopped. @default 30000 */
  gracefulShutdownTimeoutMs?: number;
  /** How long caches may take to sync before the start fails. @default 120000 */
  cacheSyncTimeoutMs?: number;
  /** @default silentLogger */
  logger?: Logger;
  /** @default systemClock */
  clock?: Clock;
  /** @default defaultRegistry */
  registry?: Registry;
}

/** The lease was lost: the process must exit non-zero at once. */
export class LeaderElectionLostError extends Error {
  constructor() {
    super("leader election lost");
    this.name = "LeaderElectionLostError";
  }
}

/** Runnables did not stop within the graceful shutdown timeout. */
export class ShutdownTimeoutError extends Error {
  readonly pending: readonly string[];
  constructor(timeoutMs: number, pending: readonly string[]) {
    super(`runnables still running ${timeoutMs} ms after the stop signal: ${pending.join(", ")}`);
    this.name = "ShutdownTimeoutError";
    this.pending = pending;
  }
}

/** A runnable failed, or caches did not sync; the manager stopped everything. */
export class RunnableError extends Error {
  readonly runnable: string;
  constructor(runnable: string, message: string, cause?: unknown) {
    super(`${runnable}: ${message}`, { cause });
    this.name = "RunnableError";
    this.runnable = runnable;
  }
}

interface Running {
  readonly runnable: Runnable;
  readonly done: Promise<void>;
  finished: boolean;
}

function isCache(r: Runnable): r is CacheRunnable {
  const c = r as Partial<CacheRunnable>;
  return typeof c.waitForCacheSync === "function" && typeof c.hasSynced === "function";
}

/** Owns the process's runnables and servers; see the module comment for the order of things. */
export class Manager {
  /** Liveness checks (`/healthz`); `ping` is added, and `leader-election` with an elector. */
  readonly healthz = new HealthChecks();
  /** Readiness checks (`/readyz`); `informer-sync` and `shutdown` are added. */
  readonly readyz = new HealthChecks();
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock: Clock;

  readonly #elector: LeaderElector | undefined;
  readonly #gracefulMs: number;
  readonly #cacheSyncMs: number;
  readonly #servers: Server[] = [];
  readonly #runnables: Runnable[] = [];
  #started = false;
  #stopping = false;
  #electedResolve!: () => void;
  readonly #elected = new Promise<void>((resolve) => (this.#electedResolve = resolve));

  constructor(opts: ManagerOptions = {}) {
    this.#elector = opts.leaderElector;
    this.#gracefulMs = opts.gracefulShutdownTimeoutMs ?? 30_000;
    this.#cacheSyncMs = opts.cacheSyncTimeoutMs ?? 120_000;
    this.logger = (opts.logger ?? silentLogger).child({ component: "manager" });
    this.clock = opts.clock ?? systemClock;
    this.registry = opts.registry ?? defaultRegistry;
    this.healthz.add("ping", ping);
    const elector = this.#elector;
    if (elector !== undefined) this.healthz.add("leader-election", () => elector.check());
    this.readyz.add("informer-sync", () => {
      const pending = this.#runnables.filter((r) => isCache(r) && !r.hasSynced()).map((r) => r.name);
      if (pending.length > 0) throw new Error(`caches not synced: ${pending.join(", ")}`);
    });
    this.readyz.add("shutdown", () => {
      if (this.#stopping) throw new Error("shutting down");
    });
  }

  /** Adds a runnable; leader-gated when `needLeaderElection` is true. Only before {@link start}. */
  add(runnable: Runnable): void {
    if (this.#started) throw new Error(`cannot add ${runnable.name}: the manager has started`);
    this.#runnables.push(runnable);
  }

  /** Adds a server, opened before any runnable starts. Only before {@link start}. */
  addServer(server: Server): void {
    if (this.#started) throw new Error(`cannot add ${server.name}: the manager has started`);
    this.#servers.push(server);
  }

  /** Resolves once the leader-gated runnables have been started (never, on a follower). */
  elected(): Promise<void> {
    return this.#elected;
  }

  /**
   * Runs until `signal` aborts, then stops gracefully and resolves.
   * @throws LeaderElectionLostError at once when the lease is lost.
   * @throws ShutdownTimeoutError when runnables outlive the graceful timeout (the lease is then
   *   not released: followers wait for it to expire, as nothing proves the work has stopped).
   * @throws RunnableError when a runnable fails or caches do not sync; everything is stopped.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error("the manager can be started once");
    this.#started = true;
    const log = this.logger;

    let fail!: (err: Error) => void;
    const failed = new Promise<Error>((resolve) => (fail = resolve));
    let lostResolve!: () => void;
    const lost = new Promise<void>((resolve) => (lostResolve = resolve));
    let fatal: Error | undefined;
    const onFatal = (err: Error): void => {
      if (err instanceof LeaderElectionLostError) lostResolve();
      if (fatal !== undefined) return;
      fatal = err;
      fail(err);
    };

    const opened: Server[] = [];
    try {
      for (const s of this.#servers) {
        await s.listen();
        opened.push(s);
        log.info({ server: s.name }, "server listening");
      }
    } catch (err) {
      await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
      throw err;
    }

    const background = new AbortController();
    const leaderWork = new AbortController();
    const holdCtl = new AbortController();
    const stopAll = (): void => {
      leaderWork.abort();
      holdCtl.abort();
      background.abort();
    };
    const running: Running[] = [];
    const launch = (r: Runnable, sig: AbortSignal): void => {
      const entry: Running = {
        runnable: r,
        finished: false,
        done: Promise.resolve()
          .then(() => r.start(sig))
          .then(
            () => {
              entry.finished = true;
              if (!sig.aborted) log.info({ runnable: r.name }, "runnable returned before the stop signal");
            },
            (err: unknown) => {
              entry.finished = true;
              if (!sig.aborted) onFatal(new RunnableError(r.name, "failed", err));
              else log.error({ err, runnable: r.name }, "runnable failed while stopping");
            },
          ),
      };
      running.push(entry);
    };

    const background_ = this.#runnables.filter((r) => r.needLeaderElection !== true);
    const gated = this.#runnables.filter((r) => r.needLeaderElection === true);
    for (const r of background_) launch(r, background.signal);
    log.info({ runnables: background_.map((r) => r.name) }, "caches and background runnables started");

    let holding: Promise<unknown> = Promise.resolve();
    const leaderPath = async (): Promise<void> => {
      await this.#waitForCaches(background.signal);
      if (this.#elector !== undefined) {
        const leading = await this.#elector.acquire(leaderWork.signal);
        if (!leading) return;
        holding = this.#elector.hold(holdCtl.signal).then((outcome) => {
          if (outcome === "lost") onFatal(new LeaderElectionLostError());
        });
      }
      if (leaderWork.signal.aborted) return;
      for (const r of gated) launch(r, leaderWork.signal);
      log.info({ runnables: gated.map((r) => r.name) }, "leader-gated runnables started");
      this.#electedResolve();
    };
    leaderPath().catch((err: unknown) => onFatal(err instanceof Error ? err : new Error(String(err))));

    const stopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    const first = await Promise.race([stopped.then(() => undefined), failed]);

    this.#stopping = true;
    if (first instanceof LeaderElectionLostError) {
      log.error("leader election lost; stopping without waiting");
      stopAll();
      throw first;
    }
    if (first !== undefined) log.error({ err: first }, "stopping after a fatal error");
    else log.info("stop signal received; stopping");

    const deadline = this.clock.now() + this.#gracefulMs;
    // 1. Controllers stop taking work; in-flight reconciles finish.
    leaderWork.abort();
    const gatedRunning = running.filter((e) => e.runnable.needLeaderElection === true);
    const gatedDone = await this.#waitUntil(
      gatedRunning.map((e) => e.done),
      deadline,
      lost,
    );
    if (this.#elector !== undefined && gatedRunning.length > 0 && !this.#elector.isLeader()) {
      // The lease was lost while controllers were draining: nothing more may run.
      stopAll();
      throw new LeaderElectionLostError();
    }
    // 2. Release the lease, only once nothing works under it any more.
    holdCtl.abort();
    await holding;
    if (this.#elector?.isLeader() === true) {
      if (gatedDone) await this.#elector.release();
      else log.warn("not releasing the lease: controllers did not stop in time");
    }
    // 3. Caches and other runnables, then the servers.
    background.abort();
    await this.#waitUntil(
      running.map((e) => e.done),
      deadline,
    );
    const pending = running.filter((e) => !e.finished).map((e) => e.runnable.name);
    await Promise.all(
      this.#servers.map((s) =>
        s.close().catch((err: unknown) => log.warn({ err, server: s.name }, "closing server")),
      ),
    );
    if (fatal !== undefined) throw fatal;
    if (pending.length > 0) throw new ShutdownTimeoutError(this.#gracefulMs, pending);
    log.info("stopped");
  }

  async #waitForCaches(signal: AbortSignal): Promise<void> {
    const caches = this.#runnables.filter(isCache);
    if (caches.length === 0) return;
    const timeout = new AbortController();
    const handle = this.clock.setTimeout(() => timeout.abort(), this.#cacheSyncMs);
    const both = AbortSignal.any([signal, timeout.signal]);
    try {
      await Promise.all(caches.map((c) => c.waitForCacheSync(both)));
    } finally {
      this.clock.clearTimeout(handle);
    }
    if (signal.aborted) return;
    const unsynced = caches.filter((c) => !c.hasSynced()).map((c) => c.name);
    if (unsynced.length > 0) {
      throw new RunnableError(unsynced.join(", "), `caches did not sync within ${this.#cacheSyncMs} ms`);
    }
    this.logger.info("caches synced");
  }

  /** Whether all `promises` settled before `deadline` (or before `abandon` resolved). */
  async #waitUntil(
    promises: Promise<void>[],
    deadline: number,
    abandon?: Promise<unknown>,
  ): Promise<boolean> {
    let handle: ReturnType<Clock["setTimeout"]> | undefined;
    const timedOut = new Promise<false>((resolve) => {
      handle = this.clock.setTimeout(() => resolve(false), Math.max(0, deadline - this.clock.now()));
    });
    const all = Promise.all(promises).then(() => true);
    const racers: Promise<boolean>[] = [all, timedOut];
    if (abandon !== undefined) racers.push(abandon.then(() => false));
    try {
      return await Promise.race(racers);
    } finally {
      if (handle !== undefined) this.clock.clearTimeout(handle);
    }
  }
}
