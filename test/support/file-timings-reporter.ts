/**
 * A node:test reporter that prints, once the run is over, the slowest test files and how long
 * each took (its process, from start to end: hooks, the back ends it started and every test),
 * so that the file that made a run slower is visible in the run's own output. The test runner
 * (runner.ts) runs it beside the spec reporter.
 *
 * With TEST_TIMINGS_FILE set, every file's duration is also written there as JSON
 * (`{ "files": [{ "file", "seconds", "passed" }] }`, slowest first).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { TestEvent } from "node:test/reporters";

/** How many files the table lists. */
export const SLOWEST = 15;

/** One test file's run. */
export interface FileTiming {
  /** Relative to the working directory. */
  file: string;
  seconds: number;
  passed: boolean;
}

/** The table the reporter prints: the `count` slowest of `timings`, and the files' total. */
export function timingTable(timings: readonly FileTiming[], count = SLOWEST): string {
  const slowest = [...timings].sort((a, b) => b.seconds - a.seconds).slice(0, count);
  const total = timings.reduce((sum, t) => sum + t.seconds, 0);
  const width = Math.max(...slowest.map((t) => t.file.length), 4);
  const lines = slowest.map(
    (t) => `  ${t.seconds.toFixed(1).padStart(7)} s  ${t.file.padEnd(width)}${t.passed ? "" : "  (failed)"}`,
  );
  return [
    `slowest ${slowest.length} of ${timings.length} test files (sum of all files ${total.toFixed(0)} s):`,
    ...lines,
    "",
  ].join("\n");
}

/** The timing of a whole test file, when `event` is a file's own completion; else undefined. */
export function fileTimingOf(event: TestEvent): FileTiming | undefined {
  if (event.type !== "test:complete") return undefined;
  const { data } = event;
  // A file's own test is the one named after the file (as the runner was given it), at the top.
  if (data.nesting !== 0 || data.file === undefined || path.resolve(data.name) !== data.file)
    return undefined;
  return {
    file: path.relative(process.cwd(), data.file),
    seconds: data.details.duration_ms / 1000,
    passed: data.details.passed,
  };
}

/**
 * The reporter: collects each file's own completion event and prints {@link timingTable} at the
 * end, after handing the timings to `onEnd`.
 */
export function fileTimings(
  onEnd: (timings: readonly FileTiming[]) => void = () => undefined,
): (source: AsyncIterable<TestEvent>) => AsyncGenerator<string> {
  return async function* (source) {
    const timings: FileTiming[] = [];
    for await (const event of source) {
      const timing = fileTimingOf(event);
      if (timing !== undefined) timings.push(timing);
    }
    if (timings.length === 0) return;
    onEnd(timings);
    const out = process.env.TEST_TIMINGS_FILE;
    if (out !== undefined && out !== "") {
      const files = [...timings].sort((a, b) => b.seconds - a.seconds);
      writeFileSync(out, `${JSON.stringify({ files }, null, 2)}\n`);
    }
    yield `\n${timingTable(timings)}`;
  };
}
