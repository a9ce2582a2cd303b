/**
 * Runs the operator from source (`node src/main.ts`) as a child process against the test control
 * plane and an AWS endpoint, with plain-HTTP metrics on a free port, so tests can read its
 * counters, restart it, or kill it at a chosen moment.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { metricSum } from "../../src/runtime/testing/prometheus-text.ts";
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
}

/** A running operator process. */
export interface OperatorProcess {
  readonly process: Supervised;
  readonly metricsUrl: string;
  readonly readyzUrl: string;
  /** Its log so far. */
  logs(): string;
  /**
   * The sum over the series of `name` matching every given label, 0 when none matches; rejects
   * when the operator exposes no metric `name` at all.
   */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Waits until /readyz answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** SIGKILL: no cleanup at all, like a crashed pod. */
  kill(): void;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** Starts the operator; resolves once its probes answer ready. */
export async function startOperator(opts: OperatorOptions): Promise<OperatorProcess> {
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const logFile = path.join(opts.dir, `${opts.name ?? "operator"}.log`);
  const proc = startProcess(
    process.execPath,
    [
      path.join(repoRoot, "src/main.ts"),
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
      return metricSum(await res.text(), name, labels);
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
