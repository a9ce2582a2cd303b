/**
 * Time, injected. Every component that waits or measures takes a {@link Clock} so unit tests can
 * step a {@link FakeClock} instead of sleeping.
 */

/** Opaque handle returned by {@link Clock.setTimeout}. */
export interface TimerHandle {
  readonly id: number;
}

/** A source of time and timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after at least `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; cancelling a fired or unknown timer does nothing. */
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms` milliseconds, or rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

let nextSystemTimerId = 1;

/** The wall clock, backed by Node timers. Timers do not keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = { id: nextSystemTimerId++ };
    const t = setTimeout(
      () => {
        systemTimers.delete(handle.id);
        fn();
      },
      Math.max(0, ms),
    );
    t.unref();
    systemTimers.set(handle.id, t);
    return handle;
  },
  clearTimeout(handle) {
    const t = systemTimers.get(handle.id);
    if (t !== undefined) {
      clearTimeout(t);
      systemTimers.delete(handle.id);
    }
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};

const systemTimers = new Map<number, NodeJS.Timeout>();

/** Implements {@link Clock.sleep} on top of any clock's timers. */
export function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
