/**
 * A client-side request budget for one AWS service in one region: a token bucket whose refill
 * rate adapts to throttling (additive increase, multiplicative decrease). The SDK middleware in
 * middleware.ts takes one token before every HTTP attempt and reports throttled answers back.
 *
 * A caller that should not wait long (a reconcile holding a worker) asks {@link RateBudget.delayFor}
 * first; when the wait is too long it {@link RateBudget.book}s a later slot and comes back then.
 * Slots are one permit apart, so callers sent away together return spread out at the budget's
 * rate.
 *
 * Two lanes draw on the same bucket. Real work (the default lane) may use the whole rate and is
 * always served first. Polls (the safety-net re-observation of converged objects) are served only
 * while no real work waits, and only from their share of the rate: a second bucket filled at
 * `pollShare` × the rate, which every poll permit also takes from. Polls booked for later are
 * spaced at that share's rate.
 */

import { systemClock, type Clock, type TimerHandle } from "../runtime/clock.ts";

/** Options for {@link RateBudget}. All rates are in permits (HTTP attempts) per second. */
export interface RateBudgetOptions {
  /** The rate when AWS is not throttling, and the ceiling recovery climbs back to. @default 10 */
  ratePerSecond?: number;
  /** Bucket capacity: how many calls may go out at once after a quiet period. @default 20 */
  burst?: number;
  /** The floor multiplicative decrease never goes below. @default 0.5 */
  minRatePerSecond?: number;
  /** Factor applied to the rate on a throttled answer. @default 0.5 */
  decreaseFactor?: number;
  /**
   * Minimum time between two decreases. Requests already in flight when AWS starts throttling
   * come back throttled together; they count as one signal. @default 1000
   */
  decreaseCooldownMs?: number;
  /** Permits per second added back after each quiet {@link recoveryIntervalMs}. @default ratePerSecond / 10 */
  recoveryStep?: number;
  /** Length of the quiet period (no throttled answer) that earns one recovery step. @default 2000 */
  recoveryIntervalMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /** Called with the new rate whenever it changes (decrease or recovery). */
  onRateChange?: (ratePerSecond: number) => void;
  /**
   * The share of the rate (and of the burst) polls may take, in (0, 1]; real work may always use
   * the whole rate. @default 1
   */
  pollShare?: number;
  /** How logs name the budget (`s3/us-east-1/s3`). @default "" */
  name?: string;
}

/**
 * Which share of a budget a call draws on: `work` (a create, a spec change, a deletion, a
 * pending resource) may use the whole rate and goes first; `poll` only its share, behind work.
 */
export type BudgetLane = "work" | "poll";

interface Waiter {
  resolve: (waitedMs: number) => void;
  reject: (reason: unknown) => void;
  enqueuedAt: number;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * An AIMD token bucket.
 *
 * Guarantees: waiters of one lane are served in arrival order, work waiters before poll waiters;
 * over any window the number of permits handed out is at most `burst` plus the integral of the
 * rate, and the number handed to polls at most `pollShare` of both; a throttled answer lowers the
 * rate (and with it the polls' share) at once
 * (at most once per cooldown) and drops the stored burst, so the next calls are spaced at the
 * new rate; the rate climbs back linearly while no throttling is seen.
 *
 * Caveat: waiting is in-process only; several operator replicas (only the leader reconciles) or
 * other clients on the same account share AWS's limit without sharing this budget.
 */
export class RateBudget {
  /** How logs name the budget. */
  readonly name: string;
  readonly maxRate: number;
  readonly burst: number;
  readonly minRate: number;
  /** The share of the rate polls may take (see {@link RateBudgetOptions.pollShare}). */
  readonly pollShare: number;
  /** Capacity of the polls' bucket: their share of the burst, at least one permit. */
  readonly pollBurst: number;
  readonly #decreaseFactor: number;
  readonly #cooldownMs: number;
  readonly #recoveryStep: number;
  readonly #recoveryIntervalMs: number;
  readonly #clock: Clock;
  readonly #onRateChange: ((rate: number) => void) | undefined;

  // Invariants: 0 <= #tokens <= burst; 0 <= #pollTokens <= pollBurst; minRate <= #rate <= maxRate;
  // #waiters is non-empty only while #tokens < 1, #pollWaiters only while #waiters is non-empty or
  // #tokens < 1 or #pollTokens < 1 (pump() drains them otherwise); #timer is set iff either is
  // non-empty.
  #tokens: number;
  #pollTokens: number;
  #rate: number;
  #lastRefill: number;
  /** Start of the current quiet period; recovery steps are counted from here. */
  #recoveryAnchor: number;
  #lastDecrease = Number.NEGATIVE_INFINITY;
  /** Real work waiting, in arrival order. */
  readonly #waiters: Waiter[] = [];
  /** Polls waiting, in arrival order; served only once no work waits. */
  readonly #pollWaiters: Waiter[] = [];
  #timer: TimerHandle | undefined;
  /** The latest booked slot of each lane (ms on the clock); see {@link book}. */
  #horizon = Number.NEGATIVE_INFINITY;
  #pollHorizon = Number.NEGATIVE_INFINITY;

  constructor(options: RateBudgetOptions = {}) {
    const rate = options.ratePerSecond ?? 10;
    const burst = options.burst ?? 20;
    const minRate = options.minRatePerSecond ?? Math.min(0.5, rate);
    const factor = options.decreaseFactor ?? 0.5;
    const share = options.pollShare ?? 1;
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`ratePerSecond must be > 0, got ${rate}`);
    if (!(burst >= 1)) throw new RangeError(`burst must be >= 1, got ${burst}`);
    if (!(minRate > 0) || minRate > rate)
      throw new RangeError(`minRatePerSecond must be in (0, ${rate}], got ${minRate}`);
    if (!(factor > 0 && factor < 1)) throw new RangeError(`decreaseFactor must be in (0, 1), got ${factor}`);
    if (!(share > 0 && share <= 1)) throw new RangeError(`pollShare must be in (0, 1], got ${share}`);
    this.name = options.name ?? "";
    this.maxRate = rate;
    this.burst = burst;
    this.minRate = minRate;
    this.pollShare = share;
    this.pollBurst = Math.max(1, burst * share);
    this.#decreaseFactor = factor;
    this.#cooldownMs = options.decreaseCooldownMs ?? 1000;
    this.#recoveryStep = options.recoveryStep ?? rate / 10;
    this.#recoveryIntervalMs = options.recoveryIntervalMs ?? 2000;
    if (!(this.#recoveryStep > 0)) throw new RangeError(`recoveryStep must be > 0`);
    if (!(this.#recoveryIntervalMs > 0)) throw new RangeError(`recoveryIntervalMs must be > 0`);
    this.#clock = options.clock ?? systemClock;
    this.#onRateChange = options.onRateChange;
    this.#tokens = burst;
    this.#pollTokens = this.pollBurst;
    this.#rate = rate;
    this.#lastRefill = this.#clock.now();
    this.#recoveryAnchor = this.#lastRefill;
  }

  /** The current refill rate in permits per second. */
  get rate(): number {
    this.#refill();
    return this.#rate;
  }

  /** Whole permits available right now. */
  get available(): number {
    this.#refill();
    return Math.floor(this.#tokens);
  }

  /** The rate polls may draw at now: their share of the current rate. */
  get pollRate(): number {
    return this.rate * this.pollShare;
  }

  /** Number of callers waiting for a permit, in both lanes. */
  get waiting(): number {
    return this.#waiters.length + this.#pollWaiters.length;
  }

  /**
   * Takes one permit of `lane`, waiting for it if none is available. Resolves with the
   * milliseconds spent waiting (0 when a permit was free). Rejects with the signal's reason when
   * `signal` aborts first; the permit is then not consumed.
   */
  acquire(signal?: AbortSignal, lane: BudgetLane = "work"): Promise<number> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    this.#refill();
    if (this.#free(lane)) {
      this.#take(lane);
      return Promise.resolve(0);
    }
    const queue = lane === "poll" ? this.#pollWaiters : this.#waiters;
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, enqueuedAt: this.#clock.now(), signal, onAbort: undefined };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason as Error);
          this.#schedule();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      queue.push(waiter);
      this.#schedule();
    });
  }

  /** Whether a caller of `lane` arriving now gets a permit at once. */
  #free(lane: BudgetLane): boolean {
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    return lane === "work" || (this.#pollWaiters.length === 0 && this.#pollTokens >= 1);
  }

  /** Takes one permit of `lane`: a poll permit also takes one of the polls' share. */
  #take(lane: BudgetLane): void {
    this.#tokens -= 1;
    if (lane === "poll") this.#pollTokens -= 1;
  }

  /** Takes a permit of `lane` only if one is free right now and nobody of the lane is waiting. */
  tryAcquire(lane: BudgetLane = "work"): boolean {
    this.#refill();
    if (!this.#free(lane)) return false;
    this.#take(lane);
    return true;
  }

  /**
   * Reports a throttled answer: multiplies the rate by the decrease factor (not below the
   * floor, at most once per cooldown), empties the stored burst and restarts the quiet period.
   */
  onThrottle(): void {
    this.#refill();
    const now = this.#clock.now();
    this.#recoveryAnchor = now;
    if (now - this.#lastDecrease < this.#cooldownMs) return;
    this.#lastDecrease = now;
    this.#tokens = Math.min(this.#tokens, 0);
    this.#pollTokens = Math.min(this.#pollTokens, 0);
    this.#setRate(Math.max(this.minRate, this.#rate * this.#decreaseFactor));
    this.#schedule();
  }

  /**
   * How long a caller of `lane` arriving now would wait for `cost` permits, in ms: real work
   * behind every work waiter; a poll behind every waiter of both lanes, and for its share.
   */
  delayFor(cost = 1, lane: BudgetLane = "work"): number {
    this.#refill();
    if (lane === "work")
      return Math.max(0, ((this.#waiters.length + cost - this.#tokens) * 1000) / this.#rate);
    const ahead = this.#waiters.length + this.#pollWaiters.length;
    const whole = ((ahead + cost - this.#tokens) * 1000) / this.#rate;
    const share =
      ((this.#pollWaiters.length + cost - this.#pollTokens) * 1000) / (this.#rate * this.pollShare);
    return Math.max(0, whole, share);
  }

  /**
   * Books a slot of `lane` for a caller that will not wait {@link delayFor} now, and returns how
   * long until it, in ms: no earlier than the permits are due, and `cost` refill intervals (of
   * the lane's rate) after the lane's previous booking, so callers sent away together come back
   * one permit apart instead of all at once. A booking takes no permit: the caller acquires when
   * it comes back.
   */
  book(cost = 1, lane: BudgetLane = "work"): number {
    const now = this.#clock.now();
    const due = now + this.delayFor(cost, lane);
    if (lane === "poll") {
      this.#pollHorizon = Math.max(due, this.#pollHorizon + (cost * 1000) / (this.#rate * this.pollShare));
      return this.#pollHorizon - now;
    }
    this.#horizon = Math.max(due, this.#horizon + (cost * 1000) / this.#rate);
    return this.#horizon - now;
  }

  /** Rejects every waiter with `reason` and stops the timer. Later acquires work normally. */
  cancelAll(reason: unknown): void {
    const waiters = [...this.#waiters.splice(0), ...this.#pollWaiters.splice(0)];
    this.#schedule();
    for (const w of waiters) {
      if (w.onAbort !== undefined) w.signal?.removeEventListener("abort", w.onAbort);
      w.reject(reason);
    }
  }

  #setRate(rate: number): void {
    if (rate === this.#rate) return;
    this.#rate = rate;
    this.#onRateChange?.(rate);
  }

  /** Adds the tokens earned since the last refill, then applies any recovery steps earned. */
  #refill(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#lastRefill;
    if (elapsed > 0) {
      this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.#rate) / 1000);
      this.#pollTokens = Math.min(
        this.pollBurst,
        this.#pollTokens + (elapsed * this.#rate * this.pollShare) / 1000,
      );
      this.#lastRefill = now;
    }
    if (this.#rate < this.maxRate) {
      const steps = Math.floor((now - this.#recoveryAnchor) / this.#recoveryIntervalMs);
      if (steps > 0) {
        this.#recoveryAnchor += steps * this.#recoveryIntervalMs;
        this.#setRate(Math.min(this.maxRate, this.#rate + steps * this.#recoveryStep));
      }
    } else {
      this.#recoveryAnchor = now;
    }
  }

  /**
   * Hands permits to waiters in order while tokens last, work first, polls while their share
   * lasts too, then arms the timer for the next one.
   */
  #pump(): void {
    this.#refill();
    const now = this.#clock.now();
    for (;;) {
      const lane: BudgetLane = this.#waiters.length > 0 ? "work" : "poll";
      const queue = lane === "work" ? this.#waiters : this.#pollWaiters;
      if (queue.length === 0 || this.#tokens < 1 || (lane === "poll" && this.#pollTokens < 1)) break;
      const w = queue.shift();
      if (w === undefined) break;
      this.#take(lane);
      if (w.onAbort !== undefined) w.signal?.removeEventListener("abort", w.onAbort);
      w.resolve(now - w.enqueuedAt);
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#waiters.length === 0 && this.#pollWaiters.length === 0) return;
    this.#refill();
    // Time until the next waiter's permits are there: the whole rate's, and for a poll its share's.
    let due = Math.max(0, ((1 - this.#tokens) * 1000) / this.#rate);
    if (this.#waiters.length === 0)
      due = Math.max(due, ((1 - this.#pollTokens) * 1000) / (this.#rate * this.pollShare));
    const ms = due <= 0 ? 0 : Math.max(1, Math.ceil(due));
    this.#timer = this.#clock.setTimeout(() => this.#fire(), ms);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#pump();
  }
}
