/**
 * A bounded map that evicts the least recently used entry, with optional per-entry expiry.
 * Used for the Event recorder's aggregation cache and the metrics endpoint's
 * authentication/authorization caches: both must stay small however many keys arrive.
 */

interface Entry<V> {
  value: V;
  /** Epoch ms after which the entry is gone; Infinity when it never expires. */
  expiresAt: number;
}

/** An LRU map of at most `capacity` entries. Not safe for concurrent mutation across awaits. */
export class LruCache<K, V> {
  readonly capacity: number;
  // Map iteration order is insertion order: the first key is the least recently used.
  readonly #map = new Map<K, Entry<V>>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  /** Number of entries, including expired ones not yet looked at. */
  get size(): number {
    return this.#map.size;
  }

  /** The value, refreshing its recency; `undefined` when absent or expired at `now`. */
  get(key: K, now = 0): V | undefined {
    const e = this.#map.get(key);
    if (e === undefined) return undefined;
    this.#map.delete(key);
    if (e.expiresAt <= now) return undefined;
    this.#map.set(key, e);
    return e.value;
  }

  /** Inserts or replaces, evicting the least recently used entry when full. */
  set(key: K, value: V, expiresAt = Infinity): void {
    this.#map.delete(key);
    this.#map.set(key, { value, expiresAt });
    while (this.#map.size > this.capacity) {
      const oldest = this.#map.keys().next();
      if (oldest.done === true) break;
      this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }
}
