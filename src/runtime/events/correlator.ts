/**
 * Decides what happens to each Event before it is written, in the spirit of client-go's
 * EventCorrelator: identical repeats update one Event (count + lastTimestamp) instead of creating
 * new ones, and a per-object token bucket stops a hot loop from flooding the API server.
 */
import { LruCache } from "../lru.ts";

/** The identity of an Event for aggregation: who reports, about what, and what it says. */
export interface EventIdentity {
  readonly component: string;
  readonly object: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
  };
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** An Event already written: its name and what it counts so far. */
export interface AggregatedEvent {
  readonly name: string;
  readonly namespace: string;
  readonly count: number;
  readonly firstTimestamp: number;
  readonly lastTimestamp: number;
}

/** What to do with one occurrence. */
export type Correlation =
  | { readonly action: "create"; readonly key: string }
  | { readonly action: "patch"; readonly key: string; readonly previous: AggregatedEvent }
  | { readonly action: "drop" };

/** Options of {@link EventCorrelator}. */
export interface EventCorrelatorOptions {
  /** Distinct Events remembered for aggregation. @default 4096 */
  cacheSize?: number;
  /** A repeat later than this after the previous occurrence starts a new Event. @default 600000 */
  aggregationWindowMs?: number;
  /** Events an object may get in a burst, per reporting component. @default 25 */
  burst?: number;
  /** One more Event is allowed every this many ms once the burst is spent. @default 300000 */
  refillIntervalMs?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Aggregation and spam filtering; pure bookkeeping, no I/O. Time is passed in. */
export class EventCorrelator {
  readonly #events: LruCache<string, AggregatedEvent>;
  readonly #buckets: LruCache<string, Bucket>;
  readonly #windowMs: number;
  readonly #burst: number;
  readonly #refillMs: number;

  constructor(opts: EventCorrelatorOptions = {}) {
    const size = opts.cacheSize ?? 4096;
    this.#events = new LruCache(size);
    this.#buckets = new LruCache(size);
    this.#windowMs = opts.aggregationWindowMs ?? 600_000;
    this.#burst = opts.burst ?? 25;
    this.#refillMs = opts.refillIntervalMs ?? 300_000;
  }

  /**
   * Classifies one occurrence at time `now`: `drop` when the object's bucket is empty, `patch`
   * when an identical Event was written within the window, else `create`. Every occurrence that
   * is not dropped takes a token, repeats included, as in client-go.
   */
  correlate(ev: EventIdentity, now: number): Correlation {
    if (!this.#take(`${ev.component}\u0000${objectKey(ev)}`, now)) return { action: "drop" };
    const key = eventKey(ev);
    const previous = this.#events.get(key, now);
    return previous === undefined ? { action: "create", key } : { action: "patch", key, previous };
  }

  /** Remembers the Event as written (created or patched) at `now`. */
  written(key: string, ev: AggregatedEvent, now: number): void {
    this.#events.set(key, ev, now + this.#windowMs);
  }

  /** Forgets an Event, e.g. after the server said it no longer exists. */
  forget(key: string): void {
    this.#events.delete(key);
  }

  #take(key: string, now: number): boolean {
    const b = this.#buckets.get(key) ?? { tokens: this.#burst, updatedAt: now };
    const refill = Math.floor((now - b.updatedAt) / this.#refillMs);
    if (refill > 0) {
      b.tokens = Math.min(this.#burst, b.tokens + refill);
      b.updatedAt += refill * this.#refillMs;
    }
    if (b.tokens >= this.#burst) b.updatedAt = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.#buckets.set(key, b);
    return allowed;
  }
}

function objectKey(ev: EventIdentity): string {
  const o = ev.object;
  return [o.apiVersion, o.kind, o.namespace, o.name, o.uid].join("\u0000");
}

function eventKey(ev: EventIdentity): string {
  return [ev.component, objectKey(ev), ev.type, ev.reason, ev.message].join("\u0000");
}
