/**
 * A client-side request budget for one AWS service in one region: a token bucket whose refill
 * rate adapts to throttling (additive increase, multiplicative decrease). The SDK middleware in
 * middleware.ts takes one token before every HTTP attempt and reports throttled answers back.
 *
 * A caller that should not wait long (a reconcile holding a worker) asks {@link RateBudget.delayFor}
 * first; when the wait is too long it {@link RateBudget.book}s a later slot and comes back then.
 * Slots are one permit apart, so callers sent away together return spread out at the budget's
 * rate.
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
}

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
 * Guarantees: waiters are served in arrival order; over any window the number of permits handed
 * out is at most `burst` plus the integral of the rate; a throttled answer lowers the rate at once
 * (at most once per cooldown) and drops the stored burst, so the next calls are spaced at the
 * new rate; the rate climbs back linearly while no throttling is seen.
 *
 * Caveat: waiting is in-process only; several operator replicas (only the leader reconciles) or
 * other clients on the same account share AWS's limit without sharing this budget.
 */
export class RateBudget {
  readonly maxRate: number;
  readonly burst: number;
  readonly minRate: number;
  readonly #decreaseFactor: number;
  readonly #cooldownMs: number;
  readonly #recoveryStep: number;
  readonly #recoveryIntervalMs: number;
  readonly #clock: Clock;
  readonly #onRateChange: ((rate: number) => void) | undefined;

  // Invariants: 0 <= #tokens <= burst; minRate <= #rate <= maxRate; #waiters is non-empty only
  // while #tokens < 1 (pump() drains it otherwise); #timer is set iff #waiters is non-empty.
  #tokens: number;
  #rate: number;
  #lastRefill: number;
  /** Start of the current quiet period; recovery steps are counted from here. */
  #recoveryAnchor: number;
  #lastDecrease = Number.NEGATIVE_INFINITY;
  readonly #waiters: Waiter[] = [];
  #timer: TimerHandle | undefined;
  /** The latest booked slot (ms on the clock); see {@link book}. */
  #horizon = Number.NEGATIVE_INFINITY;

  constructor(options: RateBudgetOptions = {}) {
    const rate = options.ratePerSecond ?? 10;
    const burst = options.burst ?? 20;
    const minRate = options.minRatePerSecond ?? Math.min(0.5, rate);
    const factor = options.decreaseFactor ?? 0.5;
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`ratePerSecond must be > 0, got ${rate}`);
    if (!(burst >= 1)) throw new RangeError(`burst must be >= 1, got ${burst}`);
    if (!(minRate > 0) || minRate > rate)
      throw new RangeError(`minRatePerSecond must be in (0, ${rate}], got ${minRate}`);
    if (!(factor > 0 && factor < 1)) throw new RangeError(`decreaseFactor must be in (0, 1), got ${factor}`);
    this.maxRate = rate;
    this.burst = burst;
    this.minRate = minRate;
    this.#decreaseFactor = factor;
    this.#cooldownMs = options.decreaseCooldownMs ?? 1000;
    this.#recoveryStep = options.recoveryStep ?? rate / 10;
    this.#recoveryIntervalMs = options.recoveryIntervalMs ?? 2000;
    if (!(this.#recoveryStep > 0)) throw new RangeError(`recoveryStep must be > 0`);
    if (!(this.#recoveryIntervalMs > 0)) throw new RangeError(`recoveryIntervalMs must be > 0`);
    this.#clock = options.clock ?? systemClock;
    this.#onRateChange = options.onRateChange;
    this.#tokens = burst;
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

  /** Number of callers waiting for a permit. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Takes one permit, waiting for it if none is available. Resolves with the milliseconds spent
   * waiting (0 when a permit was free). Rejects with the signal's reason when `signal` aborts
   * first; the permit is then not consumed.
   */
  acquire(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve(0);
    }
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, enqueuedAt: this.#clock.now(), signal, onAbort: undefined };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(signal.reason as Error);
          this.#schedule();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
      this.#schedule();
    });
  }

  /** Takes a permit only if one is free right now and nobody is waiting. */
  tryAcquire(): boolean {
    this.#refill();
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
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
    this.#setRate(Math.max(this.minRate, this.#rate * this.#decreaseFactor));
    this.#schedule();
  }

  /** How long a caller arriving now would wait for `cost` permits (behind every waiter), in ms. */
  delayFor(cost = 1): number {
    this.#refill();
    return Math.max(0, ((this.#waiters.length + cost - this.#tokens) * 1000) / this.#rate);
  }

  /**
   * Books a slot for a caller that will not wait {@link delayFor} now, and returns how long until
   * it, in ms: no earlier than the permits are due, and `cost` refill intervals after the
   * previous booking, so callers sent away together come back one permit apart instead of all
   * at once. A booking takes no permit: the caller acquires when it comes back.
   */
  book(cost = 1): number {
    const now = this.#clock.now();
    const slot = Math.max(now + this.delayFor(cost), this.#horizon + (cost * 1000) / this.#rate);
    this.#horizon = slot;
    return slot - now;
  }

  /** Rejects every waiter with `reason` and stops the timer. Later acquires work normally. */
  cancelAll(reason: unknown): void {
    const waiters = this.#waiters.splice(0);
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

  /** Hands permits to waiters in order while tokens last, then arms the timer for the next one. */
  #pump(): void {
    this.#refill();
    const now = this.#clock.now();
    while (this.#waiters.length > 0 && this.#tokens >= 1) {
      const w = this.#waiters.shift();
      if (w === undefined) break;
      this.#tokens -= 1;
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
    if (this.#waiters.length === 0) return;
    this.#refill();
    if (this.#tokens >= 1) {
      this.#timer = this.#clock.setTimeout(() => this.#fire(), 0);
      return;
    }
    const ms = Math.max(1, Math.ceil(((1 - this.#tokens) * 1000) / this.#rate));
    this.#timer = this.#clock.setTimeout(() => this.#fire(), ms);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#pump();
  }
}
