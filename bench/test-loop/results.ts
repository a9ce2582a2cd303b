/**
 * The records of `make bench-test-loop` (bench/results/test-loop.json) and what is read from
 * them: a run's test counts from the runner's summary, and the figures README states for a
 * session (its fastest and slowest run, and how many tests ran).
 */
import type { CpuByKind } from "./cpu.ts";

/** One timed `make test`. */
export interface TestLoopRun {
  /** Wall time from start to exit, lint and the test AWS's own tests included. */
  seconds: number;
  exitCode: number;
  tests: number;
  failed: number;
  /** The node test runner's own duration of the suite (after lint and pytest). */
  suiteSeconds: number;
  slowestFiles: { file: string; seconds: number }[];
  /** One-minute load average right after the run (absent in runs timed by hand with `time make test`). */
  loadAfter?: number;
  /** CPU seconds the machine spent during the run, by kind of process (./cpu.ts; absent in older runs). */
  cpu?: CpuByKind;
}

export interface TestLoopSession {
  label: string;
  /** `warm`: this checkout, tools and node_modules in place; `first`: a fresh clone, tools cached. */
  kind: "warm" | "first";
  commit: string;
  date: string;
  machine: { cpus: number; model: string; memoryGiB: number; node: string };
  concurrency?: number;
  runs: TestLoopRun[];
}

export interface TestLoopResults {
  sessions: TestLoopSession[];
}

/**
 * The counts of the node test runner's last summary in `output` (the suite's: lint's own unit
 * tests print one earlier).
 * @throws Error when the output has no summary (the run ended before the suite).
 */
export function parseRunSummary(output: string): Pick<TestLoopRun, "tests" | "failed" | "suiteSeconds"> {
  const last = (name: string): number | undefined => {
    const all = [...output.matchAll(new RegExp(`^ℹ ${name} ([0-9.]+)$`, "gm"))];
    const m = all.at(-1);
    return m === undefined ? undefined : Number(m[1]);
  };
  const tests = last("tests");
  const failed = last("fail");
  const duration = last("duration_ms");
  if (tests === undefined || failed === undefined || duration === undefined)
    throw new Error("the output has no test runner summary: the run ended before the suite");
  return { tests, failed, suiteSeconds: Math.round(duration / 1000) };
}

/** `m min s s`, as README writes a duration. */
export function minutesSeconds(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * README's figures for the latest session of `kind`: `<fastest> to <slowest>` (or the one run's
 * time), and the test counts of its runs (`<least>–<most>`, or one number).
 * @throws Error when no session of that kind is recorded.
 */
export function costFigures(
  results: TestLoopResults,
  kind: TestLoopSession["kind"],
): { time: string; tests: string } {
  const session = results.sessions.findLast((s) => s.kind === kind);
  if (session === undefined || session.runs.length === 0) throw new Error(`no ${kind} session is recorded`);
  const times = session.runs.map((r) => r.seconds);
  const counts = session.runs.map((r) => r.tests);
  const range = (lo: string, hi: string, sep: string): string => (lo === hi ? lo : `${lo}${sep}${hi}`);
  const fmt = (n: number): string => n.toLocaleString("en-US");
  return {
    time: range(minutesSeconds(Math.min(...times)), minutesSeconds(Math.max(...times)), " to "),
    tests: range(fmt(Math.min(...counts)), fmt(Math.max(...counts)), "–"),
  };
}
