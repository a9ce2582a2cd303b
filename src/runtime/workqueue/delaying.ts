import { systemClock, type Clock, type TimerHandle } from "../clock.ts";
import { WorkQueue, type WorkQueueOptions } from "./queue.ts";

/** Options of {@link DelayingQueue}: those of {@link WorkQueue}; `clock` also times the delays. */
export type DelayingQueueOptions = WorkQueueOptions;

/** Node's timers fire at once (with a warning) beyond this delay, so longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Waiting<T> {
  readonly item: T;
  /** Clock time (ms) at which the item is added to the queue. */
  due: number;
  /** Tie-breaker: among equal due times, the item scheduled first is added first. */
  seq: number;
  /** Position in the heap array, kept current by every swap. */
  index: number;
}

/**
 * A {@link WorkQueue} that can also add an item after a delay (client-go's delaying queue).
 *
 * Waiting items sit in a min-heap ordered by due time, with at most one entry per item: a
 * second `addAfter` for a waiting item keeps the earlier of the two due times. Exactly one clock
 * timer is pending while anything waits, set for the earliest due time; it is replaced only when
 * an earlier item arrives. Items due at the same time are added in the order they were
 * scheduled. Shutting down cancels the timer and drops everything still waiting.
 */
export class DelayingQueue<T> extends WorkQueue<T> {
  readonly #clock: Clock;
  /** Min-heap on (due, seq). Invariant: `#byItem.get(e.item) === e` for every entry `e`. */
  readonly #heap: Waiting<T>[] = [];
  /** The heap entry of each waiting item. */
  readonly #byItem = new Map<T, Waiting<T>>();
  #seq = 0;
  /** Invariant: set, with `#timerDue <= heap top's due`, whenever the heap is non-empty. */
  #timer: TimerHandle | undefined;
  #timerDue = Number.POSITIVE_INFINITY;

  constructor(options: DelayingQueueOptions = {}) {
    super(options);
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Adds `item` once `ms` milliseconds have passed; at once when `ms <= 0` (or is NaN). Ignored
   * while shutting down. Counted in `workqueue_retries_total`, as in client-go.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    this.metrics?.retry();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const due = this.#clock.now() + ms;
    const existing = this.#byItem.get(item);
    if (existing !== undefined) {
      if (due >= existing.due) return;
      existing.due = due;
      existing.seq = this.#seq++;
      this.#siftUp(existing.index);
    } else {
      const entry: Waiting<T> = { item, due, seq: this.#seq++, index: this.#heap.length };
      this.#heap.push(entry);
      this.#byItem.set(item, entry);
      this.#siftUp(entry.index);
    }
    this.#arm();
  }

  /** Number of items waiting for their delay to pass (not counted by {@link len}). */
  waitingLen(): number {
    return this.#heap.length;
  }

  override shutDown(): void {
    this.#stop();
    super.shutDown();
  }

  override shutDownWithDrain(): Promise<void> {
    this.#stop();
    return super.shutDownWithDrain();
  }

  #stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    this.#heap.length = 0;
    this.#byItem.clear();
  }

  /** Makes the pending timer match the earliest due item. */
  #arm(): void {
    const top = this.#heap[0];
    if (top === undefined || (this.#timer !== undefined && this.#timerDue <= top.due)) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timerDue = top.due;
    const delay = Math.min(Math.max(0, top.due - this.#clock.now()), MAX_TIMER_MS);
    this.#timer = this.#clock.setTimeout(() => this.#fire(), delay);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    for (let top = this.#heap[0]; top !== undefined && top.due <= now; top = this.#heap[0]) {
      this.#pop();
      this.#byItem.delete(top.item);
      this.add(top.item);
    }
    this.#arm();
  }

  #pop(): void {
    const last = this.#heap.pop();
    if (last === undefined || this.#heap.length === 0) return;
    this.#heap[0] = last;
    last.index = 0;
    this.#siftDown(0);
  }

  #less(a: Waiting<T>, b: Waiting<T>): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    const entry = heap[index] as Waiting<T>;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as Waiting<T>;
      if (!this.#less(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    const entry = heap[index] as Waiting<T>;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      let child = heap[left] as Waiting<T>;
      let childIndex = left;
      const rightEntry = heap[right];
      if (rightEntry !== undefined && this.#less(rightEntry, child)) {
        child = rightEntry;
        childIndex = right;
      }
      if (!this.#less(child, entry)) break;
      heap[index] = child;
      child.index = index;
      index = childIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }
}
