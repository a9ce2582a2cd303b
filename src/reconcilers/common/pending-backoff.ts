/**
 * Poll intervals for resources in transition (EC2 `pending`, `stopping`, `shutting-down`): short
 * at first, doubling per consecutive pending observation up to a cap, per object key. Kept in
 * memory only: after a restart polling starts short again, which is what one wants.
 */

/** Options of {@link PendingBackoff}. */
export interface PendingBackoffOptions {
  /** First interval in ms. @default 2000 */
  initialMs?: number;
  /** Largest interval in ms. @default 30000 */
  maxMs?: number;
}

/** Per-key doubling intervals for polling transitions. */
export class PendingBackoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #steps = new Map<string, number>();

  constructor(opts: PendingBackoffOptions = {}) {
    this.#initial = opts.initialMs ?? 2000;
    this.#max = opts.maxMs ?? 30_000;
    if (!(this.#initial > 0) || !(this.#max >= this.#initial)) {
      throw new RangeError(
        `PendingBackoff: need 0 < initialMs <= maxMs, got ${this.#initial} and ${this.#max}`,
      );
    }
  }

  /** The interval before the next poll of `key`; each call doubles the following one. */
  next(key: string): number {
    const step = this.#steps.get(key) ?? 0;
    this.#steps.set(key, step + 1);
    return Math.min(this.#max, this.#initial * 2 ** Math.min(step, 30));
  }

  /** The resource settled (or the object is gone): the next transition starts short again. */
  reset(key: string): void {
    this.#steps.delete(key);
  }

  /** Keys currently backing off (for tests and leak checks). */
  size(): number {
    return this.#steps.size;
  }
}
