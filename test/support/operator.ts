/**
 * Runs the operator (from source, `node src/main.ts`, or a built bundle) as a child process against the test control
 * plane and an AWS endpoint, with plain-HTTP metrics on a free port, so tests can read its
 * counters, restart it, or kill it at a chosen moment.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { freePort, repoRoot, startProcess, waitFor, type Supervised } from "./process.ts";

/** Options of {@link startOperator}. */
export interface OperatorOptions {
  kubeconfig: string;
  /** AWS_* variables (moto's env, possibly with the endpoint of a proxy). */
  awsEnv: Record<string, string>;
  /** Folder for the log file. */
  dir: string;
  /** Extra flags, e.g. `--poll-interval=2s`. */
  args?: string[];
  /** A name for the log file. @default "operator" */
  name?: string;
  /** The program to run: the sources or a built bundle. @default "src/main.ts" */
  entry?: string;
  /** Node flags before the program, e.g. V8 heap flags. */
  nodeArgs?: string[];
}

/** A running operator process. */
export interface OperatorProcess {
  readonly process: Supervised;
  readonly metricsUrl: string;
  readonly readyzUrl: string;
  /** Its log so far. */
  logs(): string;
  /** The value of one metric series (sum over series matching every given label), 0 when absent. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Waits until /readyz answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** SIGKILL: no cleanup at all, like a crashed pod. */
  kill(): void;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** Parses one metric out of the Prometheus text format. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      got[pair[1] ?? ""] = pair[2] ?? "";
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/** Starts the operator; resolves once its probes answer ready. */
export async function startOperator(opts: OperatorOptions): Promise<OperatorProcess> {
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const logFile = path.join(opts.dir, `${opts.name ?? "operator"}.log`);
  const proc = startProcess(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      path.resolve(repoRoot, opts.entry ?? "src/main.ts"),
      `--kubeconfig=${opts.kubeconfig}`,
      "--metrics-secure=false",
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      "--log-level=debug",
      ...(opts.args ?? []),
    ],
    { logFile, env: { ...process.env, ...opts.awsEnv, AWS_EC2_METADATA_DISABLED: "true" } },
  );
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const readyzUrl = `http://127.0.0.1:${probePort}/readyz`;
  const op: OperatorProcess = {
    process: proc,
    metricsUrl,
    readyzUrl,
    logs: () => readFileSync(logFile, "utf8"),
    async metric(name, labels) {
      const res = await fetch(metricsUrl);
      return metricValue(await res.text(), name, labels);
    },
    async waitReady(timeoutMs = 30_000) {
      await waitFor(
        "operator /readyz",
        async () => {
          if (proc.proc.exitCode !== null)
            throw new Error(`operator exited with ${proc.proc.exitCode}:\n${op.logs().slice(-4000)}`);
          return (await fetch(readyzUrl)).status === 200;
        },
        timeoutMs,
      );
    },
    kill: () => {
      proc.signal("SIGKILL");
    },
    stop: () => proc.stop(),
  };
  await op.waitReady();
  return op;
}
