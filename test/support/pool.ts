/** Bounded concurrency for tests and benchmarks: many requests, a fixed number in flight. */

/** Runs `fn` over `items`, at most `width` at a time, each item once, in order of start. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  fn: (t: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}
