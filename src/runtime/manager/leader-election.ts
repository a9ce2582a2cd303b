/**
 * Leader election on a {@link ResourceLock} (a coordination.k8s.io/v1 Lease), with client-go's
 * algorithm: acquire when the lock is free or expired, renew every RetryPeriod, give up after
 * RenewDeadline without a successful renewal, release on graceful shutdown.
 *
 * Expiry is judged by the follower's own clock: a lease counts as expired only once
 * `leaseDurationSeconds` have passed since this process last saw the record change. Clocks of
 * different machines are never compared, so clock skew cannot hand out the lease early.
 */
import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.ts";
import { silentLogger, type Logger } from "../logging.ts";
import { defaultRegistry, gauge } from "../metrics/registry.ts";
import {
  sameRecord,
  type LeaderElectionRecord,
  type ObservedRecord,
  type ResourceLock,
} from "./lease-lock.ts";
import { httpStatusOf } from "../kube/errors.ts";

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  lock: ResourceLock;
  /** Unique per process: `hostname_uuid`. */
  identity: string;
  /** Value of the `name` label of `leader_election_master_status` (the Lease name). */
  name: string;
  /** How long followers wait, after the last change they saw, before taking over. @default 15000 */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before it gives up. @default 10000 */
  renewDeadlineMs?: number;
  /** Interval between attempts. @default 2000 */
  retryPeriodMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** @default defaultRegistry */
  registry?: Registry;
  /** Source of jitter in [0, 1). @default Math.random */
  random?: () => number;
}

/** How {@link LeaderElector.hold} ended. */
export type HoldOutcome = "stopped" | "lost";

/** Raised for inconsistent timings, as client-go's `NewLeaderElector` does. */
export class LeaderElectionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LeaderElectionConfigError";
  }
}

/**
 * One candidate in an election. Use it in three steps: {@link acquire} until leading, then
 * {@link hold} (renews) while the leader's work runs, then, after that work has stopped,
 * {@link release}. Not re-entrant: one acquire/hold/release sequence at a time.
 *
 * Caveat (as in client-go): the guarantee rests on timing. A leader that is paused for longer
 * than LeaseDuration - RenewDeadline (a GC pause, a frozen VM) can briefly overlap with its
 * successor, so the work done under the lease must stay idempotent.
 */
export class LeaderElector {
  readonly identity: string;
  readonly #lock: ResourceLock;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #status;
  readonly #name: string;

  /** Last record seen or written, and when (our clock) it last changed. */
  #observed: ObservedRecord | undefined;
  #observedAt = 0;
  #leading = false;
  /** Our clock's time at the start of the last successful acquire or renew. */
  #lastRenew = 0;

  constructor(opts: LeaderElectorOptions) {
    this.#lock = opts.lock;
    this.identity = opts.identity;
    this.#name = opts.name;
    this.#leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).child({
      component: "leader-election",
      lease: opts.lock.describe(),
    });
    this.#random = opts.random ?? Math.random;
    if (this.identity === "") throw new LeaderElectionConfigError("identity must not be empty");
    if (this.#leaseDurationMs <= this.#renewDeadlineMs) {
      throw new LeaderElectionConfigError("leaseDuration must be greater than renewDeadline");
    }
    if (this.#renewDeadlineMs <= 1.2 * this.#retryPeriodMs) {
      throw new LeaderElectionConfigError("renewDeadline must be greater than 1.2 x retryPeriod");
    }
    this.#status = gauge(opts.registry ?? defaultRegistry, {
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      labelNames: ["name"],
    });
    this.#status.set({ name: this.#name }, 0);
  }

  /** Whether this process currently holds the lease (as of its last successful renewal). */
  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder in the last record seen, or `undefined` when none was seen or it was released. */
  observedLeader(): string | undefined {
    const h = this.#observed?.record.holderIdentity;
    return h === undefined || h === "" ? undefined : h;
  }

  /**
   * Retries every RetryPeriod (slightly jittered, never longer) until this process holds the
   * lease. A follower also wakes exactly when the lease it watches would expire, so a crashed
   * leader is replaced within LeaseDuration + RetryPeriod of its last renewal.
   * @returns true once leading; false when `signal` aborted first.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    this.#log.info({ identity: this.identity }, "attempting to acquire leader lease");
    while (!signal.aborted) {
      const started = this.#clock.now();
      let ok = false;
      try {
        ok = await this.#attempt(signal, this.#renewDeadlineMs);
      } catch (err) {
        if (signal.aborted) break;
        this.#log.warn({ err }, "error acquiring leader lease");
      }
      if (ok) {
        this.#becameLeader(started);
        return true;
      }
      try {
        await this.#clock.sleep(this.#nextAcquireDelay(), signal);
      } catch {
        break;
      }
    }
    return false;
  }

  /**
   * Renews the lease every RetryPeriod while this process leads. Resolves `"lost"` as soon as
   * another holder is seen in the record or RenewDeadline passes without a successful renewal;
   * resolves `"stopped"` when `signal` aborts (the lease is then still held: call
   * {@link release} once the leader's work has stopped).
   */
  async hold(signal: AbortSignal): Promise<HoldOutcome> {
    if (!this.#leading) return "lost";
    for (;;) {
      const deadline = this.#lastRenew + this.#renewDeadlineMs;
      const wait = Math.min(this.#retryPeriodMs, Math.max(0, deadline - this.#clock.now()));
      try {
        await this.#clock.sleep(wait, signal);
      } catch {
        return "stopped";
      }
      const started = this.#clock.now();
      if (started >= deadline) return this.#lost(`no successful renewal within ${this.#renewDeadlineMs} ms`);
      let ok = false;
      try {
        ok = await this.#attempt(signal, deadline - started);
      } catch (err) {
        if (signal.aborted) return "stopped";
        this.#log.warn({ err }, "error renewing leader lease");
      }
      if (ok) {
        this.#lastRenew = started;
        continue;
      }
      if (signal.aborted) return "stopped";
      const holder = this.observedLeader();
      if (holder !== undefined && holder !== this.identity)
        return this.#lost(`lease taken over by ${holder}`);
    }
  }

  /**
   * Gives the lease up so a follower takes over at its next attempt instead of waiting for
   * expiry: clears the holder and sets leaseDurationSeconds to 1, like client-go's
   * ReleaseOnCancel. Call only after the work done under the lease has stopped.
   * @returns whether a release was written.
   */
  async release(timeoutMs = this.#renewDeadlineMs): Promise<boolean> {
    const wasLeading = this.#leading;
    this.#setLeading(false);
    const timeout = withTimeout(this.#clock, new AbortController().signal, timeoutMs);
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        let current = this.#observed;
        if (attempt > 0 || current === undefined) current = await this.#lock.get(timeout.signal);
        if (current === undefined || current.record.holderIdentity !== this.identity) return false;
        const now = this.#clock.now();
        const rec: LeaderElectionRecord = {
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: current.record.leaseTransitions,
        };
        try {
          const rv = await this.#lock.update(rec, current.resourceVersion, timeout.signal);
          this.#observe({ record: rec, resourceVersion: rv });
          this.#log.info("released leader lease");
          return true;
        } catch (err) {
          if (httpStatusOf(err) !== 409) throw err;
        }
      }
      return false;
    } catch (err) {
      this.#log.warn(
        { err, wasLeading },
        "could not release leader lease; followers will wait for it to expire",
      );
      return false;
    } finally {
      timeout.dispose();
    }
  }

  /**
   * A liveness check in the spirit of client-go's HealthzAdaptor: fails when this process
   * believes it leads but has not renewed for longer than LeaseDuration + `toleranceMs`, which
   * means its renew loop is wedged.
   */
  check(toleranceMs = 20_000): void {
    if (!this.#leading) return;
    const overdue = this.#clock.now() - this.#lastRenew - this.#leaseDurationMs;
    if (overdue > toleranceMs)
      throw new Error(`leader lease not renewed for ${overdue} ms past its duration`);
  }

  /** One acquire-or-renew attempt (client-go's tryAcquireOrRenew). True when we hold the lease. */
  async #attempt(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const timeout = withTimeout(this.#clock, signal, Math.max(1, timeoutMs));
    try {
      return await this.#tryAcquireOrRenew(timeout.signal);
    } finally {
      timeout.dispose();
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    const durationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    const mine = this.#observed;
    // Fast path: the leader updates from its own last write and skips the GET.
    if (this.#leading && mine !== undefined && mine.record.holderIdentity === this.identity) {
      const rec: LeaderElectionRecord = {
        ...mine.record,
        renewTime: now,
        leaseDurationSeconds: durationSeconds,
      };
      try {
        const rv = await this.#lock.update(rec, mine.resourceVersion, signal);
        this.#observe({ record: rec, resourceVersion: rv });
        return true;
      } catch (err) {
        if (httpStatusOf(err) !== 409) throw err;
        // Someone else wrote the lease: read it to learn who.
      }
    }
    const current = await this.#lock.get(signal);
    if (current === undefined) {
      const rec: LeaderElectionRecord = {
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      };
      try {
        const rv = await this.#lock.create(rec, signal);
        this.#observe({ record: rec, resourceVersion: rv });
        return true;
      } catch (err) {
        if (httpStatusOf(err) === 409) return false;
        throw err;
      }
    }
    this.#observe(current);
    const holder = current.record.holderIdentity;
    if (holder !== "" && holder !== this.identity && this.#leaseValid(now)) return false;
    const rec: LeaderElectionRecord =
      holder === this.identity
        ? { ...current.record, renewTime: now, leaseDurationSeconds: durationSeconds }
        : {
            holderIdentity: this.identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: current.record.leaseTransitions + 1,
          };
    try {
      const rv = await this.#lock.update(rec, current.resourceVersion, signal);
      this.#observe({ record: rec, resourceVersion: rv });
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 409) return false;
      throw err;
    }
  }

  /** Records what we saw; the expiry clock restarts only when the record itself changed. */
  #observe(seen: ObservedRecord): void {
    const before = this.#observed;
    if (before === undefined || !sameRecord(before.record, seen.record)) {
      this.#observedAt = this.#clock.now();
      const prevHolder = before?.record.holderIdentity ?? "";
      const holder = seen.record.holderIdentity;
      if (holder !== prevHolder && holder !== "" && holder !== this.identity) {
        this.#log.info({ leader: holder }, "new leader observed");
      }
    }
    this.#observed = seen;
  }

  #leaseDurationOfObserved(): number {
    const s = this.#observed?.record.leaseDurationSeconds ?? 0;
    return s > 0 ? s * 1000 : this.#leaseDurationMs;
  }

  #leaseValid(now: number): boolean {
    return this.#observedAt + this.#leaseDurationOfObserved() > now;
  }

  #nextAcquireDelay(): number {
    const interval = this.#retryPeriodMs * (1 - 0.2 * this.#random());
    const holder = this.observedLeader();
    if (holder === undefined || holder === this.identity) return interval;
    const untilExpiry = this.#observedAt + this.#leaseDurationOfObserved() - this.#clock.now() + 1;
    return Math.max(0, Math.min(interval, untilExpiry));
  }

  #becameLeader(at: number): void {
    this.#lastRenew = at;
    this.#setLeading(true);
    this.#log.info({ identity: this.identity }, "acquired leader lease");
  }

  #lost(why: string): HoldOutcome {
    this.#setLeading(false);
    this.#log.error({ reason: why }, "leader lease lost");
    return "lost";
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    this.#status.set({ name: this.#name }, leading ? 1 : 0);
  }
}

/** `signal` combined with a timeout on `clock`; call `dispose` to cancel the timer. */
function withTimeout(
  clock: Clock,
  signal: AbortSignal,
  ms: number,
): { signal: AbortSignal; dispose: () => void } {
  const ctrl = new AbortController();
  const handle = clock.setTimeout(() => ctrl.abort(new Error(`timed out after ${ms} ms`)), ms);
  return { signal: AbortSignal.any([signal, ctrl.signal]), dispose: () => clock.clearTimeout(handle) };
}
