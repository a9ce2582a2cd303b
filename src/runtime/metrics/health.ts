/**
 * Named health checks, served by the probe server as `/healthz` and `/readyz` in
 * controller-runtime's format (`[+]name ok` lines with `?verbose`, `/readyz/<name>` for one
 * check, `?exclude=name` to skip one).
 */

import { systemClock, type Clock, type TimerHandle } from "../clock.ts";

/** A check passes when it returns (or resolves); it fails by throwing (or rejecting). */
export type Check = () => void | Promise<void>;

/** One check's result. */
export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** The failure message, for logs only; the HTTP answer withholds it. */
  readonly error?: string;
}

/** Thrown by {@link HealthChecks.add} for a duplicate or malformed name. */
export class HealthCheckNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HealthCheckNameError";
  }
}

/** An ordered set of named checks. */
export class HealthChecks {
  readonly #checks = new Map<string, Check>();
  readonly #timeoutMs: number;
  readonly #clock: Clock;

  /**
   * @param timeoutMs A check that takes longer fails. @default 5000
   * @param clock Time source of that limit. @default systemClock
   */
  constructor(timeoutMs = 5_000, clock: Clock = systemClock) {
    this.#timeoutMs = timeoutMs;
    this.#clock = clock;
  }

  /** Adds a check; names are URL path segments (`[a-z0-9-]`), unique within this set. */
  add(name: string, check: Check): void {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
      throw new HealthCheckNameError(`invalid check name "${name}"`);
    if (this.#checks.has(name)) throw new HealthCheckNameError(`check "${name}" already added`);
    this.#checks.set(name, check);
  }

  /** Names of the checks, in the order added. */
  names(): string[] {
    return [...this.#checks.keys()];
  }

  /** Whether a check of that name exists. */
  has(name: string): boolean {
    return this.#checks.has(name);
  }

  /**
   * Runs the checks (all, or only `only`), skipping `exclude`, concurrently. Never rejects: a
   * throwing or slow check is a failed result.
   */
  async run(opts: { only?: string; exclude?: ReadonlySet<string> } = {}): Promise<CheckResult[]> {
    const selected = [...this.#checks].filter(
      ([name]) => (opts.only === undefined || name === opts.only) && !opts.exclude?.has(name),
    );
    return Promise.all(selected.map(([name, check]) => this.#runOne(name, check)));
  }

  async #runOne(name: string, check: Check): Promise<CheckResult> {
    let timer: TimerHandle | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = this.#clock.setTimeout(
          () => reject(new Error(`check timed out after ${this.#timeoutMs} ms`)),
          this.#timeoutMs,
        );
      });
      await Promise.race([Promise.resolve().then(check), timeout]);
      return { name, ok: true };
    } catch (err) {
      return { name, ok: false, error: err instanceof Error ? err.message : String(err) };
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
  }
}

/** A check that always passes (controller-runtime's `healthz.Ping`). */
export const ping: Check = () => {};
