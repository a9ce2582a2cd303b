import { KeyedBackoff } from "../backoff.ts";
import { systemClock, type Clock } from "../clock.ts";

/**
 * Decides how long an item waits before its next retry (client-go's `TypedRateLimiter`).
 * Limiters are stateful: {@link RateLimiter.when} records a failure.
 */
export interface RateLimiter<T> {
  /** Records one more failure of `item` and returns how long (ms) to wait before retrying it. */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded); its next failure starts the backoff afresh. */
  forget(item: T): void;
  /** Number of failures recorded for `item` since it was last forgotten. */
  numRequeues(item: T): number;
}

/** Options of {@link ItemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /**
   * Delay after the first failure, in ms; each further failure doubles it.
   * @default 5
   */
  baseDelayMs?: number;
  /**
   * Upper bound of the delay, in ms.
   * @default 1_000_000 (1000 s)
   */
  maxDelayMs?: number;
}

/**
 * Per-item exponential backoff: failure n (counting from 1) waits `baseDelayMs * 2^(n-1)`,
 * capped at `maxDelayMs`. With the defaults the delay is 5 ms, 10 ms, 20 ms, … and reaches the
 * 1000 s cap at failure 19, after which a failing item is retried every 16 min 40 s until it is
 * forgotten. The failure count of an item lives until {@link forget}: a caller that never
 * forgets leaks one entry per item and keeps its backoff inflated.
 */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  readonly #backoff: KeyedBackoff<T>;

  constructor(options: ItemExponentialFailureRateLimiterOptions = {}) {
    this.#backoff = new KeyedBackoff<T>({
      initialMs: options.baseDelayMs ?? 5,
      maxMs: options.maxDelayMs ?? 1_000_000,
    });
  }

  when(item: T): number {
    return this.#backoff.next(item);
  }

  forget(item: T): void {
    this.#backoff.reset(item);
  }

  numRequeues(item: T): number {
    return this.#backoff.attempts(item);
  }
}

/** Options of {@link BucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /**
   * Tokens added per second.
   * @default 10
   */
  ratePerSecond?: number;
  /**
   * Bucket size: how many retries may go out at once after a quiet period.
   * @default 100
   */
  burst?: number;
  /**
   * Time source.
   * @default systemClock
   */
  clock?: Clock;
}

/**
 * An overall token bucket shared by all items (client-go's `TypedBucketRateLimiter`, backed by
 * `golang.org/x/time/rate` reservations). The bucket starts full. Each {@link when} takes a
 * token; when none is left it reserves a future one and returns the wait until it is earned, so
 * a burst beyond `burst` is spread out at `ratePerSecond`. It tracks no items: `forget` does
 * nothing and `numRequeues` is always 0.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly #clock: Clock;
  readonly #ratePerSecond: number;
  readonly #burst: number;
  /** Tokens at `#at`; negative when future tokens are already reserved. */
  #tokens: number;
  #at: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#ratePerSecond = options.ratePerSecond ?? 10;
    this.#burst = options.burst ?? 100;
    if (!(this.#ratePerSecond > 0)) throw new RangeError("BucketRateLimiter ratePerSecond must be > 0");
    if (!(this.#burst >= 1)) throw new RangeError("BucketRateLimiter burst must be >= 1");
    this.#tokens = this.#burst;
    this.#at = this.#clock.now();
  }

  when(_item: T): number {
    const now = this.#clock.now();
    if (now > this.#at) {
      this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) * this.#ratePerSecond) / 1000);
      this.#at = now;
    }
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    return (-this.#tokens * 1000) / this.#ratePerSecond;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/**
 * Combines limiters: the wait is the longest any of them asks for, and `numRequeues` the
 * largest count any of them reports. Every limiter sees every `when` and `forget`.
 */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: readonly RateLimiter<T>[];

  constructor(limiters: readonly RateLimiter<T>[]) {
    if (limiters.length === 0) throw new RangeError("MaxOfRateLimiter needs at least one limiter");
    this.#limiters = [...limiters];
  }

  when(item: T): number {
    let longest = 0;
    for (const limiter of this.#limiters) longest = Math.max(longest, limiter.when(item));
    return longest;
  }

  forget(item: T): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let most = 0;
    for (const limiter of this.#limiters) most = Math.max(most, limiter.numRequeues(item));
    return most;
  }
}

/** Options of {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /**
   * Time source of the token bucket.
   * @default systemClock
   */
  clock?: Clock;
}

/**
 * controller-runtime's default: the longer of a per-item exponential backoff (5 ms doubling to
 * 1000 s) and an overall token bucket (10 per second, burst 100).
 */
export function defaultControllerRateLimiter<T>(
  options: DefaultControllerRateLimiterOptions = {},
): RateLimiter<T> {
  return new MaxOfRateLimiter<T>([
    new ItemExponentialFailureRateLimiter<T>({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new BucketRateLimiter<T>({ ratePerSecond: 10, burst: 100, clock: options.clock ?? systemClock }),
  ]);
}
