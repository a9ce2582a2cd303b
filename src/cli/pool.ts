/** Work over a list of indices, a bounded number at a time, as the commands read AWS. */

/**
 * Runs `task` for each index from 0 to `count` - 1, at most `width` at once, in index order of
 * start; resolves when every task has ended, rejects with the first task's error.
 */
export async function inPool(
  count: number,
  width: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}
