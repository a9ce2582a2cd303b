/**
 * The credentials of one assumed role: obtained with AssumeRole on first use, kept, and obtained
 * again before they expire. Concurrent callers share one AssumeRole call; a failed call is not
 * kept (the next caller tries again).
 */
import type { Clock } from "../runtime/clock.ts";

/** Temporary credentials with their expiry. */
export interface SessionCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

/** Options of {@link RoleSession}. */
export interface RoleSessionOptions {
  /** Assumes the role (sts:AssumeRole). */
  assume: () => Promise<SessionCredentials>;
  clock: Clock;
  /**
   * Credentials are renewed this long before they expire, in ms, but never later than halfway
   * through their lifetime. The SDK asks again 5 minutes before the expiry it was handed, so
   * the margin must exceed that. @default 600_000
   */
  refreshBeforeMs?: number;
}

/** See the module comment. */
export class RoleSession {
  readonly #assume: () => Promise<SessionCredentials>;
  readonly #clock: Clock;
  readonly #refreshBeforeMs: number;
  #current: { creds: SessionCredentials; obtainedAt: number } | undefined;
  #inFlight: Promise<SessionCredentials> | undefined;

  constructor(opts: RoleSessionOptions) {
    this.#assume = opts.assume;
    this.#clock = opts.clock;
    this.#refreshBeforeMs = opts.refreshBeforeMs ?? 600_000;
    if (!(this.#refreshBeforeMs > 0))
      throw new RangeError(`refreshBeforeMs must be > 0, got ${this.#refreshBeforeMs}`);
  }

  /** Valid credentials: the kept ones, unless they are due for renewal. */
  credentials(): Promise<SessionCredentials> {
    const cur = this.#current;
    if (
      cur !== undefined &&
      !renewalDue(cur.creds.expiration.getTime(), cur.obtainedAt, this.#clock.now(), this.#refreshBeforeMs)
    ) {
      return Promise.resolve(cur.creds);
    }
    this.#inFlight ??= this.#renew();
    return this.#inFlight;
  }

  /** When the kept credentials are due for renewal (ms since the epoch), or undefined if none are kept. */
  renewsAt(): number | undefined {
    const cur = this.#current;
    if (cur === undefined) return undefined;
    return renewalTime(cur.creds.expiration.getTime(), cur.obtainedAt, this.#refreshBeforeMs);
  }

  async #renew(): Promise<SessionCredentials> {
    try {
      const obtainedAt = this.#clock.now();
      const creds = await this.#assume();
      this.#current = { creds, obtainedAt };
      return creds;
    } finally {
      this.#inFlight = undefined;
    }
  }
}

/** When credentials obtained at `obtainedAt` and expiring at `expiresAt` are renewed. */
export function renewalTime(expiresAt: number, obtainedAt: number, refreshBeforeMs: number): number {
  const lifetime = Math.max(0, expiresAt - obtainedAt);
  return expiresAt - Math.min(refreshBeforeMs, lifetime / 2);
}

/** Whether such credentials are due for renewal at `now`. */
export function renewalDue(
  expiresAt: number,
  obtainedAt: number,
  now: number,
  refreshBeforeMs: number,
): boolean {
  return now >= renewalTime(expiresAt, obtainedAt, refreshBeforeMs);
}
