/**
 * The test runner of the suites that start processes (`make test`, `make test-integration`,
 * `make test-e2e`): Node's own (`node:test`'s `run()`, with the global setup of global-setup.ts,
 * the spec reporter and the table of the slowest files), fed the test files longest first.
 *
 * `node --test` runs files in name order, so a long file that sorts late starts late and the run
 * ends with one or two files running on an otherwise idle machine. Here each file's duration in
 * the last run that ran it (kept in `--durations`, a JSON file under node_modules/.cache) orders
 * the next run, longest first; a file never timed goes first, by how long its folder's files
 * usually take (the end-to-end, fault and integration suites before the unit tests). Which files
 * run, and how each runs, is the same as under `node --test`, with one difference: every file's
 * process loads file-end.ts, so it ends a few seconds after its tests have ended even when a test
 * or hook that timed out left work running (a cluster it was starting, a build), stopping every
 * child process it started; the run always goes on to its summary.
 *
 * The files of `--one-process` globs (the unit tests, which start no process) run together in one
 * process (file-group.ts) beside the others, instead of a process each: 1,234 unit tests took
 * 13 CPU-s that way against 44 with a process per file, most of it each process's start.
 *
 *   node test/support/runner.ts --concurrency=5 --timeout=300000 [--durations=FILE]
 *     [--one-process=<glob>]... <glob>...
 */
import { globSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { parseArgs } from "node:util";
import { fileTimings, type FileTiming } from "./file-timings-reporter.ts";
import { repoRoot } from "./process.ts";

/** The module every file's process loads: it ends the process once the file's tests have ended. */
const FILE_END = path.join(repoRoot, "test/support/file-end.ts");

/**
 * The module that runs the `--one-process` files in its process, relative to the repository. It
 * imports this one, not the other way round: a test file that imports the runner must not import
 * the group's module, which is still evaluating in the group's process.
 */
export const FILE_GROUP_MODULE = "test/support/file-group.ts";

/** The environment variable the runner names the group's files in: a JSON array of absolute paths. */
export const FILE_GROUP_ENV = "KUBEPROVISIONER_TEST_FILE_GROUP";

/** The group's files, as the runner wrote them in {@link FILE_GROUP_ENV}; an unset variable is an empty group. */
export function groupFiles(value: string | undefined): string[] {
  if (value === undefined) return [];
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed) || !parsed.every((f) => typeof f === "string" && path.isAbsolute(f)))
    throw new Error(`${FILE_GROUP_ENV} must be a JSON array of absolute paths`);
  return parsed as string[];
}

/** Where a file never timed goes, by folder: the longer a folder's files usually take, the earlier. */
const UNTIMED_ORDER = ["test/e2e/", "test/faults/", "test/cluster/", "test/integration/"];

/** Seconds by file (relative to the repository), as the last run that ran each file took. */
export type Durations = Record<string, number>;

/**
 * `files` (relative to the repository) in the order to start them: never-timed files first, by
 * {@link UNTIMED_ORDER} and then by name; then the timed ones, longest first.
 */
export function startOrder(files: readonly string[], durations: Durations): string[] {
  const folderRank = (f: string): number => {
    const i = UNTIMED_ORDER.findIndex((prefix) => f.startsWith(prefix));
    return i < 0 ? UNTIMED_ORDER.length : i;
  };
  const untimed = files
    .filter((f) => durations[f] === undefined)
    .sort((a, b) => folderRank(a) - folderRank(b) || a.localeCompare(b));
  const timed = files
    .filter((f) => durations[f] !== undefined)
    .sort((a, b) => (durations[b] ?? 0) - (durations[a] ?? 0) || a.localeCompare(b));
  return [...untimed, ...timed];
}

/** The durations of `timings` merged over `previous`: a file this run ran takes its new figure. */
export function mergeDurations(previous: Durations, timings: readonly FileTiming[]): Durations {
  const out: Durations = { ...previous };
  for (const t of timings) out[t.file] = Math.round(t.seconds * 10) / 10;
  return out;
}

function readDurations(file: string | undefined): Durations {
  if (file === undefined) return {};
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { files?: Durations };
    return parsed.files ?? {};
  } catch {
    return {};
  }
}

/** Writes `timings` to `file`, merged over the earlier runs' figures there. */
function recordDurations(file: string, timings: readonly FileTiming[]): void {
  if (timings.length === 0) return;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify({ files: mergeDurations(readDurations(file), timings) }, null, 2)}\n`,
  );
}

/** What a run is given: the files (absolute, in start order) and how to run them. */
export interface RunnerOptions {
  readonly files: readonly string[];
  readonly concurrency: number;
  /** Every test's and hook's limit, in milliseconds. */
  readonly timeout?: number;
  /** The global setup module, or none (a run of files that lease nothing). */
  readonly globalSetupPath?: string;
  readonly signal?: AbortSignal;
}

/** Runs the files with node:test's `run()`, as the runner runs them; returns its event stream. */
export function runFiles(opts: RunnerOptions): ReturnType<typeof run> {
  // `globalSetupPath` (Node 24) is not in @types/node's RunOptions yet.
  const options: NonNullable<Parameters<typeof run>[0]> & { globalSetupPath?: string } = {
    files: [...opts.files],
    concurrency: opts.concurrency,
    execArgv: ["--import", FILE_END],
    ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    ...(opts.globalSetupPath !== undefined ? { globalSetupPath: opts.globalSetupPath } : {}),
    ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
  };
  return run(options);
}

/** The files (relative to the repository, `/`-separated, each once) that `patterns` match. */
function filesOf(patterns: readonly string[]): string[] {
  return [
    ...new Set(
      patterns.flatMap((pattern) =>
        globSync(pattern, { cwd: repoRoot }).map((f) => f.split(path.sep).join("/")),
      ),
    ),
  ];
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: {
      concurrency: { type: "string", default: "1" },
      timeout: { type: "string" },
      durations: { type: "string" },
      "one-process": { type: "string", multiple: true, default: [] },
    },
    allowPositionals: true,
  });
  const group = filesOf(values["one-process"]).sort();
  const files = filesOf(positionals).filter((f) => !group.includes(f));
  if (group.length > 0) {
    // Every file's process inherits the runner's environment: the group's process reads it there.
    process.env[FILE_GROUP_ENV] = JSON.stringify(group.map((f) => path.join(repoRoot, f)));
    files.push(FILE_GROUP_MODULE);
  }
  const ordered = startOrder(files, readDurations(values.durations));
  const stream = runFiles({
    files: ordered.map((f) => path.join(repoRoot, f)),
    concurrency: Number(values.concurrency),
    ...(values.timeout !== undefined ? { timeout: Number(values.timeout) } : {}),
    globalSetupPath: path.join(repoRoot, "test/support/global-setup.ts"),
  });
  stream.on("test:fail", () => {
    process.exitCode = 1;
  });
  stream.compose(new spec()).pipe(process.stdout);
  const durations = values.durations;
  stream
    .compose(
      fileTimings((timings) => {
        if (durations !== undefined) recordDurations(durations, timings);
      }),
    )
    .pipe(process.stdout);
}
