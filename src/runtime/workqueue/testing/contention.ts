import type { GetResult } from "../queue.ts";

/** The part of a queue the contention scenario drives; {@link WorkQueue} and naive FIFOs fit. */
export interface ContentionQueue<T> {
  add(item: T): void;
  get(): Promise<GetResult<T>>;
  done(item: T): void;
  shutDown(): void;
}

/** Options of {@link runContention}. */
export interface ContentionOptions {
  /**
   * Concurrent async workers.
   * @default 16
   */
  workers?: number;
  /**
   * Distinct keys.
   * @default 64
   */
  keys?: number;
  /**
   * Seed of the xorshift32 sequence that picks the key of each add (the Go benchmark uses the
   * same generator, so both see the same adds in the same order).
   * @default 0x9e3779b9
   */
  seed?: number;
  /**
   * Total adds made by the producer.
   * @default 320_000
   */
  adds?: number;
  /**
   * The producer yields to the event loop after this many adds. 32 makes client-go's queue
   * collapse 320,000 adds into about 148,500 reconciles, the figure seed 003 reports.
   * @default 32
   */
  addsPerYield?: number;
  /**
   * How a participant yields once. Each reconcile yields exactly once while holding its key.
   * @default one turn of the event loop (`setImmediate`)
   */
  yieldOnce?: () => Promise<void>;
}

/** What {@link runContention} observed. */
export interface ContentionResult {
  /** Reconciles executed (items handed to workers). */
  reconciles: number;
  /** Reconciles that started while another worker held the same key. */
  overlaps: number;
  /** Keys whose last add was not followed by a reconcile (lost updates). */
  staleKeys: number;
  /** Wall time from the first add until every worker has stopped, in ms. */
  wallMs: number;
}

/** The key index of each of `n` adds: xorshift32 from `seed`, modulo `keys`. */
export function keySequence(n: number, keys: number, seed: number): Uint32Array {
  const seq = new Uint32Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    seq[i] = x % keys;
  }
  return seq;
}

/** Yields one turn of the event loop, letting timers, I/O and other immediates run. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

let nextTurn: Promise<void> | undefined;

/**
 * Yields one turn of the event loop like {@link yieldToEventLoop}, but all callers in one turn
 * share a single `setImmediate`: each still resumes only after the loop has gone through a turn
 * (timers, I/O polling), in call order, for the cost of one immediate per turn instead of one
 * per caller. The closest JavaScript match to Go's `runtime.Gosched()`, which allocates nothing.
 */
export function coalescedYieldToEventLoop(): Promise<void> {
  nextTurn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      nextTurn = undefined;
      resolve();
    }),
  );
  return nextTurn;
}

/**
 * Runs the seed-003 concurrency scenario: a producer adds `adds` keys drawn from `keys` distinct
 * keys in a fixed pseudo-random order while `workers` async workers loop `get` → reconcile (yield once) → `done`, then
 * the queue is shut down and the workers drain it. An overlap detector counts every reconcile
 * that starts while another worker holds the same key, and a level check counts keys whose last
 * add was never followed by a reconcile. A correct work queue gives 0 of both; a plain FIFO
 * gives overlaps.
 */
export async function runContention(
  queue: ContentionQueue<string>,
  options: ContentionOptions = {},
): Promise<ContentionResult> {
  const workers = options.workers ?? 16;
  const keyCount = options.keys ?? 64;
  const adds = options.adds ?? 320_000;
  const addsPerYield = options.addsPerYield ?? 32;
  const yieldOnce = options.yieldOnce ?? yieldToEventLoop;
  const sequence = keySequence(adds, keyCount, options.seed ?? 0x9e3779b9);

  const keys = Array.from({ length: keyCount }, (_, i) => `default/object-${i}`);
  const indexOf = new Map(keys.map((k, i) => [k, i]));
  /** Workers currently inside a reconcile of each key. */
  const holders = new Int32Array(keyCount);
  /** Adds made so far when each key was last added. */
  const lastAdd = new Float64Array(keyCount);
  /** Adds made so far when a reconcile of each key last started. */
  const lastStart = new Float64Array(keyCount).fill(-1);
  let added = 0;
  let reconciles = 0;
  let overlaps = 0;

  const work = async (): Promise<void> => {
    for (;;) {
      const next = await queue.get();
      if (next.shutdown) return;
      const k = indexOf.get(next.item);
      if (k === undefined) throw new Error(`queue handed out an item never added: ${next.item}`);
      reconciles++;
      lastStart[k] = added;
      const held = holders[k] as number;
      holders[k] = held + 1;
      if (held !== 0) overlaps++;
      try {
        await yieldOnce();
      } finally {
        holders[k] = (holders[k] as number) - 1;
        queue.done(next.item);
      }
    }
  };

  const started = performance.now();
  const running = Array.from({ length: workers }, work);
  for (let i = 0; i < adds;) {
    const k = sequence[i] as number;
    lastAdd[k] = ++i;
    added = i;
    queue.add(keys[k] as string);
    if (i % addsPerYield === 0) await yieldOnce();
  }
  queue.shutDown();
  await Promise.all(running);
  const wallMs = performance.now() - started;

  let staleKeys = 0;
  for (let k = 0; k < keyCount; k++) if ((lastStart[k] as number) < (lastAdd[k] as number)) staleKeys++;
  return { reconciles, overlaps, staleKeys, wallMs };
}

/**
 * A plain FIFO with none of the work queue's bookkeeping (no dirty or processing set): what
 * "replace the work queue with a channel" gives. For showing that the overlap detector fires.
 */
export class NaiveFifo<T> implements ContentionQueue<T> {
  readonly #items: T[] = [];
  #head = 0;
  readonly #waiters: ((result: GetResult<T>) => void)[] = [];
  #closed = false;

  add(item: T): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter({ item, shutdown: false });
    else this.#items.push(item);
  }

  get(): Promise<GetResult<T>> {
    if (this.#head < this.#items.length) {
      const item = this.#items[this.#head++] as T;
      return Promise.resolve({ item, shutdown: false });
    }
    if (this.#closed) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  done(_item: T): void {}

  shutDown(): void {
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) waiter({ shutdown: true });
  }
}
