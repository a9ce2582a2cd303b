import type { Clock } from "../clock.ts";
import type { Logger } from "../logging.ts";

/** Options of {@link RepeatedFailureLog}. */
export interface RepeatedFailureLogOptions {
  log: Logger;
  clock: Clock;
  /** The message of a failure's line, e.g. `list failed`. */
  message: string;
  /** The message of the recovery's line, e.g. `list succeeded again`. */
  recoveredMessage: string;
  /** How often the same failure is logged again while it repeats. @default 300_000 */
  repeatIntervalMs?: number;
}

/**
 * The log lines of one retry loop's failures (a reflector's list or watch), so that a failure
 * that repeats for hours (a revoked token, a missing permission) is logged once and then summed
 * up every `repeatIntervalMs`, not once per retry:
 *
 * - the first failure, and each failure unlike the one before (another error type or message), is
 *   logged at once, at warn;
 * - the same failure again is logged at most once per `repeatIntervalMs`, with `repeated`: how
 *   many failures that line stands for;
 * - the first success after a failure is logged once, at info, with the number of failures.
 */
export class RepeatedFailureLog {
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #message: string;
  readonly #recoveredMessage: string;
  readonly #intervalMs: number;
  #last: { key: string; loggedAt: number; unlogged: number } | undefined;
  #failures = 0;

  constructor(opts: RepeatedFailureLogOptions) {
    this.#log = opts.log;
    this.#clock = opts.clock;
    this.#message = opts.message;
    this.#recoveredMessage = opts.recoveredMessage;
    this.#intervalMs = opts.repeatIntervalMs ?? 300_000;
  }

  /** Failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** One more failure: `err` with the line's other `fields`. */
  failed(err: unknown, fields: Record<string, unknown> = {}): void {
    this.#failures++;
    const key = err instanceof Error ? `${err.name}\0${err.message}` : String(err);
    const now = this.#clock.now();
    const last = this.#last;
    if (last !== undefined && last.key === key && now - last.loggedAt < this.#intervalMs) {
      last.unlogged++;
      return;
    }
    const repeated = last !== undefined && last.key === key ? last.unlogged + 1 : 1;
    this.#last = { key, loggedAt: now, unlogged: 0 };
    this.#log.warn(
      { err, ...fields, failures: this.#failures, ...(repeated > 1 ? { repeated } : {}) },
      this.#message,
    );
  }

  /** The step succeeded: logs the recovery once if it had failed. */
  succeeded(): void {
    if (this.#failures === 0) return;
    this.#log.info({ failures: this.#failures }, this.#recoveredMessage);
    this.#failures = 0;
    this.#last = undefined;
  }
}
