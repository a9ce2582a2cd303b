import { systemClock } from "../clock.ts";
import { DelayingQueue, type DelayingQueueOptions } from "./delaying.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiters.ts";

/** Options of {@link RateLimitingQueue}. */
export interface RateLimitingQueueOptions<T> extends DelayingQueueOptions {
  /**
   * Decides the delay of {@link RateLimitingQueue.addRateLimited}.
   * @default defaultControllerRateLimiter({ clock }) — max(per-item 5 ms doubling to 1000 s,
   * token bucket 10/s burst 100)
   */
  rateLimiter?: RateLimiter<T>;
}

/**
 * A {@link DelayingQueue} whose retries are delayed by a {@link RateLimiter} (client-go's
 * rate-limiting queue), the queue a controller uses.
 *
 * Caveat: {@link forget} is not the opposite of `add` and does not release the item. It only
 * clears the limiter's failure count; the worker must still call `done`. An item that is
 * forgotten but never passed to `done` stays "being processed" for ever: later adds only mark it
 * dirty, `len()` stays 0, and it is never handed out again, with no error anywhere. Call `done`
 * in a `finally` right after `get`.
 */
export class RateLimitingQueue<T> extends DelayingQueue<T> {
  readonly #rateLimiter: RateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.#rateLimiter =
      options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: options.clock ?? systemClock });
  }

  /** Adds `item` after the delay the rate limiter chooses, recording one more failure for it. */
  addRateLimited(item: T): void {
    if (this.shuttingDown()) return;
    this.addAfter(item, this.#rateLimiter.when(item));
  }

  /** Clears the failure count of `item` (after a success). Does not call `done`. */
  forget(item: T): void {
    this.#rateLimiter.forget(item);
  }

  /** Failures recorded for `item` since it was last forgotten. */
  numRequeues(item: T): number {
    return this.#rateLimiter.numRequeues(item);
  }
}
