/**
 * Waiting for what the process wrote to its standard output and error to leave it. Node writes
 * to a pipe asynchronously: what the reader has not taken yet waits in the stream, and
 * `process.exit` drops it. A command that prints a long report (an export's skipped resources)
 * to a slow reader lost its tail, the summary line included, until it waited here first.
 */

/** Resolves once each stream has handed everything written to it so far to the system. */
export function drained(...streams: readonly NodeJS.WritableStream[]): Promise<void> {
  return Promise.all(
    streams.map(
      // Writes leave in order: the callback of an empty write runs after every earlier one's.
      (s) => new Promise<void>((resolve) => s.write("", () => resolve())),
    ),
  ).then(() => undefined);
}
