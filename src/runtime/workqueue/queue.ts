import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.ts";
import { defaultRegistry } from "../metrics/registry.ts";
import { createQueueMetrics, type QueueMetrics } from "./metrics.ts";
import { Ring } from "./ring.ts";

/** Options of {@link WorkQueue}; normalised once by the constructor. */
export interface WorkQueueOptions {
  /**
   * Name of the queue, used as both the `name` and `controller` label of the `workqueue_*`
   * metrics (controllers pass their own name). A queue without a name records no metrics.
   * @default undefined (no metrics)
   */
  name?: string;
  /**
   * Time source for metrics (and, in subclasses, for delays).
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Registry the metrics are created in, when `name` is set.
   * @default defaultRegistry
   */
  registry?: Registry;
}

/** What {@link WorkQueue.get} resolves to: an item to process, or the end of the queue. */
export type GetResult<T> = { readonly item: T; readonly shutdown: false } | { readonly shutdown: true };

const SHUTDOWN: GetResult<never> = Object.freeze({ shutdown: true });

/** Entry state bit: the item needs processing (client-go's `dirty` set). */
const DIRTY = 1;
/** Entry state bit: the item is held by a worker between `get` and `done` (client-go's `processing` set). */
const PROCESSING = 2;
/** Idle entries are swept once there are at least this many and they are half the map. */
const SWEEP_MIN_IDLE = 1024;

/**
 * The queue's record of one item. Membership of client-go's two sets is kept as two bits on one
 * record, so each operation costs one hash lookup instead of up to three.
 */
interface Entry<T> {
  readonly item: T;
  /** What `get` resolves to for this item, built once (frozen) so handing it out allocates nothing. */
  readonly result: GetResult<T>;
  /** An already resolved promise of `result`, returned by `get` when the item is ready at once. */
  readonly resolved: Promise<GetResult<T>>;
  /** `DIRTY` and/or `PROCESSING`; 0 for an idle entry kept for reuse. */
  state: number;
}

/**
 * A work queue with client-go's semantics (`k8s.io/client-go/util/workqueue`), generic over the
 * item type; controllers queue `namespace/name` keys.
 *
 * Guarantees:
 * - Fair: items are handed out in the order they became ready, and callers waiting in
 *   {@link get} are served in the order they started waiting.
 * - Stingy: an item that is already waiting is not queued a second time, however often it is
 *   added. Items are compared with `Map` semantics (SameValueZero), so use primitive keys.
 * - Single-flight: an item handed out by {@link get} is not handed out again until {@link done}
 *   is called for it. Adding it meanwhile only marks it dirty; `done` then queues it once.
 * - After {@link shutDown}, adds are ignored, items already queued are still handed out, and
 *   `get` reports `shutdown` once the queue is empty.
 *
 * Caveat: every `get` that returns an item must be followed by exactly one `done` for it, or
 * that item is never handed out again (its later adds only mark it dirty). Call `done` in a
 * `finally` right after `get`.
 *
 * `add`, `get` and `done` are O(1) amortised.
 */
export class WorkQueue<T> {
  /**
   * The record of every item that is dirty or processing, plus idle records (state 0) kept for
   * reuse until {@link WorkQueue.#sweep} drops them. client-go's `dirty` set is the entries with
   * `DIRTY`, its `processing` set the entries with `PROCESSING`.
   * Invariant: an entry with `DIRTY` and without `PROCESSING` is in `#queue`; an entry with both
   * is held by a worker and waits for `done` to put it in `#queue`; an entry without `DIRTY` is
   * not in `#queue`.
   */
  readonly #entries = new Map<T, Entry<T>>();
  /**
   * Entries ready to hand out, oldest first.
   * Invariant: every element has state exactly `DIRTY` (dirty and not processing) and occurs once.
   */
  readonly #queue = new Ring<Entry<T>>();
  /**
   * Callers of `get` waiting for an item, oldest first.
   * Invariant: non-empty only while the queue is not shutting down, and while `#queue` is empty
   * or `#dispatchScheduled` is set.
   */
  readonly #waiters = new Ring<(result: GetResult<T>) => void>(4);
  /**
   * Whether a microtask will hand queued entries to waiters. Entries stay in `#queue` until the
   * end of the current synchronous run, so further adds of the same item in that run still
   * collapse into it, as in client-go where an item leaves the queue only when a worker runs.
   */
  #dispatchScheduled = false;
  readonly #dispatch = (): void => {
    this.#dispatchScheduled = false;
    this.#serveWaiters();
  };
  /** Number of entries with `PROCESSING`: items handed out and not yet passed to `done`. */
  #processing = 0;
  /** Number of entries with state 0. */
  #idle = 0;
  /** Callers of `shutDownWithDrain` waiting for `#processing` to reach 0. */
  #drainers: (() => void)[] = [];
  #shuttingDown = false;

  /** Metrics sink, or `undefined` for a queue without a name. Subclasses report retries here. */
  protected readonly metrics: QueueMetrics<T> | undefined;

  constructor(options: WorkQueueOptions = {}) {
    this.metrics =
      options.name === undefined
        ? undefined
        : createQueueMetrics<T>({
            name: options.name,
            clock: options.clock ?? systemClock,
            registry: options.registry ?? defaultRegistry,
          });
  }

  /**
   * Marks `item` as needing processing. Does nothing if it is already waiting or the queue is
   * shutting down; if it is being processed, it is queued again when `done` is called.
   */
  add(item: T): void {
    if (this.#shuttingDown) return;
    let entry = this.#entries.get(item);
    if (entry === undefined) {
      const result: GetResult<T> = Object.freeze({ item, shutdown: false as const });
      entry = { item, state: DIRTY, result, resolved: Promise.resolve(result) };
      this.#entries.set(item, entry);
    } else if (entry.state & DIRTY) {
      return;
    } else {
      if (entry.state === 0) this.#idle--;
      entry.state |= DIRTY;
    }
    this.metrics?.add(item);
    if (entry.state === DIRTY) this.#ready(entry);
  }

  /**
   * Resolves with the next item, waiting until there is one, and marks it as being processed.
   * Resolves `{ shutdown: true }` once the queue is shutting down and empty; a worker should
   * then stop. Every item received must be passed to {@link done}.
   */
  get(): Promise<GetResult<T>> {
    if (this.#waiters.size === 0) {
      const entry = this.#queue.shift();
      if (entry !== undefined) {
        this.#handOut(entry);
        return entry.resolved;
      }
      if (this.#shuttingDown) return Promise.resolve(SHUTDOWN);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * Marks `item` as no longer being processed. If it was added while being processed, it is
   * queued again (once). Calling `done` for an item that is not being processed does nothing.
   */
  done(item: T): void {
    const entry = this.#entries.get(item);
    if (entry === undefined || !(entry.state & PROCESSING)) return;
    entry.state &= ~PROCESSING;
    this.#processing--;
    this.metrics?.done(item);
    if (entry.state === DIRTY) this.#ready(entry);
    else if (++this.#idle >= SWEEP_MIN_IDLE && this.#idle * 2 >= this.#entries.size) this.#sweep();
    if (this.#processing === 0 && this.#shuttingDown) this.#onIdle();
  }

  /** Number of items ready to hand out. Items added while being processed are not counted. */
  len(): number {
    return this.#queue.size;
  }

  /**
   * Stops accepting items. Items already queued are still handed out; waiting and later `get`
   * calls report `shutdown` once the queue is empty. Also releases pending
   * {@link shutDownWithDrain} calls without waiting for in-flight items.
   */
  shutDown(): void {
    this.#beginShutdown();
    this.#releaseDrainers();
    if (this.#processing === 0) this.metrics?.close();
  }

  /**
   * Like {@link shutDown}, but resolves only when every item handed out so far has been passed
   * to `done`. Workers must keep calling `get` and `done` meanwhile, or this never resolves.
   */
  shutDownWithDrain(): Promise<void> {
    this.#beginShutdown();
    if (this.#processing === 0) {
      this.metrics?.close();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#drainers.push(resolve));
  }

  /** Whether {@link shutDown} or {@link shutDownWithDrain} has been called. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Queues an entry that just became exactly `DIRTY`, and wakes waiting callers after this run. */
  #ready(entry: Entry<T>): void {
    this.#queue.push(entry);
    if (this.#waiters.size > 0 && !this.#dispatchScheduled) {
      this.#dispatchScheduled = true;
      queueMicrotask(this.#dispatch);
    }
  }

  /** Hands queued entries to waiting callers, longest waiting first. */
  #serveWaiters(): void {
    while (this.#queue.size > 0) {
      const waiter = this.#waiters.shift();
      if (waiter === undefined) return;
      waiter(this.#handOut(this.#queue.shift() as Entry<T>));
    }
  }

  /** Moves an entry that just left `#queue` from dirty to processing. */
  #handOut(entry: Entry<T>): GetResult<T> {
    entry.state = PROCESSING;
    this.#processing++;
    this.metrics?.get(entry.item);
    return entry.result;
  }

  /** Drops idle entries; amortised O(1) because it runs only when they are half the map. */
  #sweep(): void {
    for (const [item, entry] of this.#entries) if (entry.state === 0) this.#entries.delete(item);
    this.#idle = 0;
  }

  #beginShutdown(): void {
    this.#shuttingDown = true;
    this.#serveWaiters();
    for (let w = this.#waiters.shift(); w !== undefined; w = this.#waiters.shift()) w(SHUTDOWN);
  }

  #onIdle(): void {
    this.#releaseDrainers();
    this.metrics?.close();
  }

  #releaseDrainers(): void {
    const drainers = this.#drainers;
    this.#drainers = [];
    for (const resolve of drainers) resolve();
  }
}
