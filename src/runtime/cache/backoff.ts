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
 * Jittered exponential backoff for reconnect loops (client-go's reflector uses 800 ms to 30 s).
 * Delays stay within [initialMs, maxMs]. Not shared between loops: one instance per loop.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #failures = 0;

  constructor(opts: BackoffOptions = {}) {
    this.#initial = opts.initialMs ?? 800;
    this.#max = opts.maxMs ?? 30_000;
    this.#factor = opts.factor ?? 2;
    this.#jitter = opts.jitter ?? 0.5;
    this.#random = opts.random ?? Math.random;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const base = Math.min(this.#max, this.#initial * this.#factor ** this.#failures);
    this.#failures++;
    return Math.min(this.#max, base * (1 + this.#jitter * this.#random()));
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
