/**
 * `make bench-test-loop`: how long `make test` takes, as a user of the repository waits for it.
 *
 * Method: `make test` runs `--runs` times one after another, each timed from its start to its
 * exit (wall clock, lint and the test AWS's own tests included). A warm run is one in this
 * checkout with its tools and node_modules in place. With `--first`, each run is in a fresh clone
 * of HEAD instead (no node_modules, no bin/), with the per-user tool cache kept: what CI pays on a
 * machine that has built the tools before. Each run's output goes to a log in the temporary
 * folder; its test counts are the runner's summary, and its slowest files the timing table's
 * (test/support/file-timings-reporter.ts), and the machine's CPU time during it by kind of process
 * (./cpu.ts). Appends a session to `bench/results/test-loop.json` under `--label`; README's cost
 * figures are the latest sessions' (test/lint/docs-facts.test.ts).
 *
 * `--checkout DIR` runs the warm runs in another checkout (a `git worktree` of an earlier commit,
 * with its node_modules and tools in place), so that two commits are compared in one session on
 * one machine; the session records that checkout's commit.
 *
 *   node bench/test-loop/runs.ts [--runs 3] [--first] [--label after] [--concurrency N] [--checkout DIR]
 */
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../../test/support/process.ts";
import { CpuSampler } from "./cpu.ts";
import { parseRunSummary, type TestLoopResults, type TestLoopRun } from "./results.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    first: { type: "boolean", default: false },
    label: { type: "string", default: "current" },
    concurrency: { type: "string" },
    checkout: { type: "string" },
  },
});
if (values.first && values.checkout !== undefined) throw new Error("--checkout is for warm runs");
const checkout = values.checkout !== undefined ? path.resolve(values.checkout) : repoRoot;
const RESULTS = path.join(repoRoot, "bench/results/test-loop.json");
const log = (msg: string): void => {
  process.stderr.write(`[test-loop ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
  cwd: checkout,
  encoding: "utf8",
}).trim();

/** Runs `make test` in `cwd`, its output to `logFile`; resolves with its wall time and exit code. */
function makeTest(cwd: string, logFile: string, timings: string): Promise<{ seconds: number; code: number }> {
  const args = [
    "test",
    ...(values.concurrency !== undefined ? [`TEST_CONCURRENCY=${values.concurrency}`] : []),
  ];
  const out = createWriteStream(logFile);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn("make", args, {
      cwd,
      env: { ...process.env, TEST_TIMINGS_FILE: timings },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on("error", reject);
    child.on("close", (code) => {
      out.end();
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, code: code ?? 1 });
    });
  });
}

const runs: TestLoopRun[] = [];
for (let i = 0; i < Number(values.runs); i++) {
  const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-test-loop-"));
  const cwd = values.first ? path.join(work, "clone") : checkout;
  if (values.first) execFileSync("git", ["clone", "--quiet", repoRoot, cwd]);
  const logFile = path.join(work, "make-test.log");
  const timings = path.join(work, "timings.json");
  log(`run ${i + 1}/${values.runs}${values.first ? " (fresh clone)" : ""}: log in ${logFile}`);
  const sampler = new CpuSampler();
  sampler.start();
  const { seconds, code } = await makeTest(cwd, logFile, timings);
  const cpu = sampler.stop();
  const summary = parseRunSummary(readFileSync(logFile, "utf8"));
  const files = existsSync(timings)
    ? (JSON.parse(readFileSync(timings, "utf8")) as { files: { file: string; seconds: number }[] }).files
    : [];
  const run: TestLoopRun = {
    seconds: Math.round(seconds),
    exitCode: code,
    ...summary,
    slowestFiles: files.slice(0, 5).map((f) => ({ file: f.file, seconds: Math.round(f.seconds) })),
    loadAfter: os.loadavg()[0] ?? 0,
    cpu,
  };
  runs.push(run);
  const cpuSeconds = Object.values(cpu).reduce((sum, k) => sum + k.seconds, 0);
  log(
    `run ${i + 1}: ${run.seconds} s, exit ${code}, ${run.tests} tests, ${run.failed} failed, ` +
      `${Math.round(cpuSeconds)} CPU-s`,
  );
}

const previous: TestLoopResults = existsSync(RESULTS)
  ? (JSON.parse(readFileSync(RESULTS, "utf8")) as TestLoopResults)
  : { sessions: [] };
previous.sessions.push({
  label: values.label,
  kind: values.first ? "first" : "warm",
  commit,
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? "",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: execFileSync(path.join(repoRoot, "bin/node"), ["--version"], { encoding: "utf8" }).trim(),
  },
  ...(values.concurrency !== undefined ? { concurrency: Number(values.concurrency) } : {}),
  runs,
});
writeFileSync(RESULTS, `${JSON.stringify(previous, null, 2)}\n`);
log(`wrote ${path.relative(repoRoot, RESULTS)}`);
if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
