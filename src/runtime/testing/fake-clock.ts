import { sleepWith, type Clock, type TimerHandle } from "../clock.ts";

interface FakeTimer {
  id: number;
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * A manually stepped clock for unit tests. Timers fire, in due order, only inside
 * {@link FakeClock.advance}; nothing ever waits on real time.
 */
export class FakeClock implements Clock {
  #now: number;
  #timers = new Map<number, FakeTimer>();
  #nextId = 1;
  #seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { id, due: this.#now + Math.max(0, ms), seq: this.#seq++, fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle.id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /** Due time of the earliest pending timer, if any. */
  nextDue(): number | undefined {
    let min: number | undefined;
    for (const t of this.#timers.values()) if (min === undefined || t.due < min) min = t.due;
    return min;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (including timers
   * scheduled by fired callbacks), and lets promise continuations run between firings.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      let next: FakeTimer | undefined;
      for (const t of this.#timers.values()) {
        if (
          t.due <= target &&
          (next === undefined || t.due < next.due || (t.due === next.due && t.seq < next.seq))
        ) {
          next = t;
        }
      }
      if (next === undefined) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

/** Lets pending promise callbacks run (several turns, for chained continuations). */
export async function flushMicrotasks(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
}
