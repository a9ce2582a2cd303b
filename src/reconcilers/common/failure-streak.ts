/**
 * When a retryable failure has lasted long enough to be worth telling the user about. A throttled
 * or transient AWS call that the next retry heals must not reach the object: recording it flips
 * `Synced` to False and the next success flips it back, two status writes and two watch events
 * for every watcher, for nothing. So failures are counted per object key, and one is reported
 * only once it persists: at least {@link FailureStreakOptions.minFailures} consecutive failed
 * reconciles of the key, the first of them at least {@link FailureStreakOptions.minDurationMs}
 * ago. Any reconcile that ends without a failure ends the streak. Kept in memory only: after a
 * restart a failure that still persists is reported again after one more streak.
 */
import type { Clock } from "../../runtime/clock.ts";

/** Options of {@link FailureStreaks}. */
export interface FailureStreakOptions {
  clock: Clock;
  /** Consecutive failed reconciles before a failure is reported. @default 3 */
  minFailures?: number;
  /** Time since the first failure of the streak before a failure is reported, in ms. @default 30_000 */
  minDurationMs?: number;
}

/** Per-key runs of consecutive failed reconciles. */
export class FailureStreaks {
  readonly #clock: Clock;
  readonly #minFailures: number;
  readonly #minDurationMs: number;
  readonly #streaks = new Map<string, { failures: number; since: number }>();

  constructor(opts: FailureStreakOptions) {
    this.#clock = opts.clock;
    this.#minFailures = opts.minFailures ?? 3;
    this.#minDurationMs = opts.minDurationMs ?? 30_000;
    if (!Number.isInteger(this.#minFailures) || this.#minFailures < 1)
      throw new RangeError(`minFailures must be an integer >= 1, got ${this.#minFailures}`);
    if (!(this.#minDurationMs >= 0))
      throw new RangeError(`minDurationMs must be >= 0, got ${this.#minDurationMs}`);
  }

  /** Counts one more failed reconcile of `key`; true once the failure has persisted. */
  fail(key: string): boolean {
    const now = this.#clock.now();
    const streak = this.#streaks.get(key) ?? { failures: 0, since: now };
    streak.failures += 1;
    this.#streaks.set(key, streak);
    return streak.failures >= this.#minFailures && now - streak.since >= this.#minDurationMs;
  }

  /** A reconcile of `key` ended without a failure (or the object is gone). */
  reset(key: string): void {
    this.#streaks.delete(key);
  }

  /** Keys currently failing (for tests and leak checks). */
  size(): number {
    return this.#streaks.size;
  }
}
