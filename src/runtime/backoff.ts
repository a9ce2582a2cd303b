/**
 * Exponential backoff, the one rule behind every "wait longer after each failure" in the
 * operator: the reflector's reconnect loop ({@link Backoff}), the work queue's per-item retry
 * delay (`ItemExponentialFailureRateLimiter`), the flow's poll of a resource in transition
 * (`PendingBackoff`) and the access-retry ladders of the flow and of the AwsAccount checks
 * ({@link ladderStep}). Attempt n (counting from 0) waits `initialMs * factor^n`, capped at `maxMs`.
 */

/** The shape of one exponential curve. */
export interface ExponentialCurve {
  /** Delay of the first attempt, in ms (>= 0). */
  readonly initialMs: number;
  /** Upper bound of every delay, in ms (>= initialMs). */
  readonly maxMs: number;
  /** Growth per attempt (>= 1). @default 2 */
  readonly factor?: number;
}

/**
 * The delay of attempt `attempt` (0 for the first) on `curve`: `initialMs * factor^attempt`,
 * never above `maxMs`. Safe for any attempt count: a power that overflows yields the cap.
 */
export function exponentialDelay(attempt: number, curve: ExponentialCurve): number {
  if (curve.initialMs === 0) return 0;
  const delay = curve.initialMs * (curve.factor ?? 2) ** attempt;
  return delay > curve.maxMs ? curve.maxMs : delay;
}

/** @throws RangeError unless 0 <= initialMs <= maxMs and factor >= 1. */
export function validateCurve(curve: ExponentialCurve, owner: string): void {
  const factor = curve.factor ?? 2;
  if (!(curve.initialMs >= 0) || !(curve.maxMs >= curve.initialMs) || !(factor >= 1)) {
    throw new RangeError(
      `${owner}: need 0 <= initialMs <= maxMs and factor >= 1, got ${curve.initialMs}, ${curve.maxMs} and ${factor}`,
    );
  }
}

/**
 * Per-key exponential backoff: each {@link next} of a key returns the delay of its next attempt
 * and counts one more; {@link reset} forgets the key. Keys live until reset, so a caller that
 * never resets keeps one entry per key.
 */
export class KeyedBackoff<K> {
  readonly #curve: ExponentialCurve;
  readonly #attempts = new Map<K, number>();

  constructor(curve: ExponentialCurve) {
    validateCurve(curve, "KeyedBackoff");
    this.#curve = { ...curve };
  }

  /** Counts one more attempt of `key` and returns how long (ms) to wait before it. */
  next(key: K): number {
    const attempt = this.#attempts.get(key) ?? 0;
    this.#attempts.set(key, attempt + 1);
    return exponentialDelay(attempt, this.#curve);
  }

  /** Forgets `key`: its next attempt starts the curve afresh. */
  reset(key: K): void {
    this.#attempts.delete(key);
  }

  /** Attempts counted for `key` since it was last reset. */
  attempts(key: K): number {
    return this.#attempts.get(key) ?? 0;
  }

  /** Keys currently backing off. */
  size(): number {
    return this.#attempts.size;
  }
}

/**
 * Where a key stands on a retry ladder: the steps it has taken, and when (ms on the caller's
 * clock) the retry the last step scheduled is due.
 */
export interface LadderPosition {
  readonly steps: number;
  readonly due: number;
}

/**
 * One more failure of a key at `position` (undefined: none yet), at `now`: the new position and
 * the delay before the next attempt. A failure takes the next step of `curve` only when it ran at
 * or after the retry the last step scheduled. One that ran sooner (the key was looked at again for
 * another reason: a change, a poll that was already due) leaves the position as it is and returns
 * the time left until that retry, so a failure seen twice in one period never skips a step.
 */
export function ladderStep(
  position: LadderPosition | undefined,
  now: number,
  curve: ExponentialCurve,
): { position: LadderPosition; delay: number } {
  if (position !== undefined && now < position.due) return { position, delay: position.due - now };
  const steps = position?.steps ?? 0;
  const delay = exponentialDelay(steps, curve);
  return { position: { steps: steps + 1, due: now + delay }, delay };
}

/**
 * Per-key retry ladders ({@link ladderStep}): {@link next} records a failure of a key and returns
 * the delay of its next attempt; {@link reset} forgets the key after a success.
 */
export class KeyedLadder<K> {
  readonly #curve: ExponentialCurve;
  readonly #now: () => number;
  readonly #positions = new Map<K, LadderPosition>();

  constructor(curve: ExponentialCurve, now: () => number) {
    validateCurve(curve, "KeyedLadder");
    this.#curve = { ...curve };
    this.#now = now;
  }

  /** Records a failure of `key` now and returns how long (ms) to wait before its next attempt. */
  next(key: K): number {
    const { position, delay } = ladderStep(this.#positions.get(key), this.#now(), this.#curve);
    this.#positions.set(key, position);
    return delay;
  }

  /** Forgets `key`: its next failure starts the curve afresh. */
  reset(key: K): void {
    this.#positions.delete(key);
  }

  /** Steps taken by `key` since it was last reset. */
  steps(key: K): number {
    return this.#positions.get(key)?.steps ?? 0;
  }
}

/** Options of {@link Backoff}. */
export interface BackoffOptions {
  /** First delay. @default 800 */
  initialMs?: number;
  /** Upper bound of any delay, jitter included. @default 30_000 */
  maxMs?: number;
  /** Growth per failure. @default 2 */
  factor?: number;
  /**
   * Each delay is stretched by up to this fraction, at random, so that many clients that failed
   * together do not retry together. @default 0.5
   */
  jitter?: number;
  /** Source of randomness in [0, 1). @default Math.random */
  random?: () => number;
}

/**
 * Jittered exponential backoff for one reconnect loop (client-go's reflector uses 800 ms to
 * 30 s). Delays stay within [initialMs, maxMs]. Not shared between loops: one instance per loop.
 */
export class Backoff {
  readonly #curve: ExponentialCurve;
  readonly #jitter: number;
  readonly #random: () => number;
  #failures = 0;

  constructor(opts: BackoffOptions = {}) {
    this.#curve = { initialMs: opts.initialMs ?? 800, maxMs: opts.maxMs ?? 30_000, factor: opts.factor ?? 2 };
    validateCurve(this.#curve, "Backoff");
    this.#jitter = opts.jitter ?? 0.5;
    this.#random = opts.random ?? Math.random;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const base = exponentialDelay(this.#failures, this.#curve);
    this.#failures++;
    return Math.min(this.#curve.maxMs, base * (1 + this.#jitter * this.#random()));
  }

  /** Forgets the failures (after a healthy period). */
  reset(): void {
    this.#failures = 0;
  }

  /** Failures since the last reset. */
  get failures(): number {
    return this.#failures;
  }
}
