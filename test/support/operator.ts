/**
 * Runs the operator (the program under test, ./operator-program.ts, or another entry) as a child process
 * against the test control plane, so tests can read its metrics and JSON log lines, signal it,
 * restart it, or kill it at a chosen moment. The one way every integration test starts the real CLI.
 *
 * Unless the caller's flags say otherwise it gets: the given kubeconfig (or, with `inCluster`, the
 * in-cluster configuration a pod has, ./service-account-namespace.ts), plain-HTTP metrics and
 * probes on free loopback ports, and debug logging. The caller's flags come last, so they win.
 * The child's environment is this process's without any `KUBEPROVISIONER_*` variable or
 * `KUBERNETES_SERVICE_HOST` (a developer's settings never leak into a test), plus `env`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { metricSum } from "../../src/runtime/testing/prometheus-text.ts";
import { repoRoot, startProcess, waitFor, WAIT_MS, type Supervised } from "./process.ts";
import { JsonLogTail, type LogLine } from "./json-log.ts";
import { operatorProgram } from "./operator-program.ts";
import { inServiceAccountNamespace } from "./service-account-namespace.ts";

export type { LogLine } from "./json-log.ts";

/** Options of {@link startOperator}. */
export interface OperatorOptions {
  kubeconfig: string;
  /**
   * Run as in a pod instead: no `--kubeconfig`; `KUBERNETES_SERVICE_HOST` and `_PORT` name
   * `server`'s host and port, and `serviceAccountDir` is mounted at the in-cluster path (a
   * private mount namespace: needs root).
   */
  inCluster?: { server: string; serviceAccountDir: string };
  /** Folder for the log file. */
  dir: string;
  /** A name for the log file and for messages. @default "operator" */
  name?: string;
  /** Extra flags, e.g. `--poll-interval=2s`; they override the defaults. */
  args?: string[];
  /** Extra environment, e.g. moto's AWS_* variables. */
  env?: Record<string, string>;
  /** The program to run: the sources or a built bundle. @default operatorProgram() */
  entry?: string;
  /** Node flags before the program, e.g. V8 heap flags. */
  nodeArgs?: string[];
  /** Resolve only once /readyz answers 200. @default true */
  waitReady?: boolean;
}

/** A running operator process. */
export interface OperatorProcess {
  readonly name: string;
  readonly process: Supervised;
  readonly logFile: string;
  /** The port it serves its probes on, from its "listening" log line; throws before that line. */
  readonly probePort: number;
  /** `undefined` when the caller chose the metrics address itself; throws before it listens. */
  readonly metricsUrl: string | undefined;
  readonly readyzUrl: string;
  /** Its log so far, as written. */
  logText(): string;
  /** Every JSON line logged so far. */
  logLines(): LogLine[];
  /** Waits for a line whose `msg` equals `msg` and returns it. */
  waitForLog(msg: string, timeoutMs?: number): Promise<LogLine>;
  /** The leader-election identity, from the first election log line. */
  identity(timeoutMs?: number): Promise<string>;
  /**
   * The sum over the series of `name` matching every given label, 0 when none matches; rejects
   * when the operator exposes no metric `name` at all.
   */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Waits until /readyz answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Sends `signal` to the node process itself (not its watchdog), as the kubelet would. */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL: no cleanup at all, like a crashed pod. */
  kill(): void;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** Starts the operator; by default resolves once its probes answer ready. */
export async function startOperator(opts: OperatorOptions): Promise<OperatorProcess> {
  const name = opts.name ?? "operator";
  const args = opts.args ?? [];
  const has = (flag: string): boolean => args.some((a) => a === flag || a.startsWith(`${flag}=`));
  const ownMetrics = !has("--metrics-bind-address");
  const logFile = path.join(opts.dir, `${name}.log`);
  // The log is appended to by every process of this name: the ports are read from this one's
  // lines, after those of the earlier ones.
  const tail = new JsonLogTail(logFile);
  const ownFrom = tail.count();
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: "true" };
  for (const k of Object.keys(env)) if (k.startsWith("KUBEPROVISIONER_")) delete env[k];
  delete env.KUBERNETES_SERVICE_HOST;
  const entry = opts.entry !== undefined ? path.resolve(repoRoot, opts.entry) : operatorProgram();
  const argv = [
    ...(opts.nodeArgs ?? []),
    entry,
    ...(opts.inCluster === undefined ? [`--kubeconfig=${opts.kubeconfig}`] : []),
    // Port 0: the operator binds a port the kernel picks and logs it, so no other process can
    // take the port between choosing and binding it.
    ...(ownMetrics ? ["--metrics-secure=false", "--metrics-bind-address=127.0.0.1:0"] : []),
    "--health-probe-bind-address=127.0.0.1:0",
    "--log-level=debug",
    ...args,
  ];
  let run = { file: process.execPath, args: argv };
  if (opts.inCluster !== undefined) {
    const server = new URL(opts.inCluster.server);
    env.KUBERNETES_SERVICE_HOST = server.hostname.replace(/^\[(.*)\]$/, "$1");
    env.KUBERNETES_SERVICE_PORT = server.port || "443";
    delete env.KUBECONFIG;
    run = inServiceAccountNamespace(opts.inCluster.serviceAccountDir, process.execPath, argv);
  }
  const proc = startProcess(run.file, run.args, { logFile, env: { ...env, ...opts.env } });
  const logText = (): string => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  const logLines = (): LogLine[] => [...tail.lines()];
  const ports = new Map<string, number>();
  /** The port this process's server `component` logged it listens on, once it has. */
  const boundPort = (component: string): number | undefined => {
    const known = ports.get(component);
    if (known !== undefined) return known;
    for (const l of tail.since(ownFrom)) {
      const address = l.address;
      if (l.msg !== "listening" || l.component !== component) continue;
      if (typeof address !== "object" || address === null || !("port" in address)) continue;
      if (typeof address.port !== "number") continue;
      ports.set(component, address.port);
      return address.port;
    }
    return undefined;
  };
  const requirePort = (component: string): number => {
    const port = boundPort(component);
    if (port === undefined) throw new Error(`${name}: ${component} is not listening yet`);
    return port;
  };
  let pid: number | undefined;
  const nodePid = (): number => {
    if (pid !== undefined) return pid;
    const supervisor = proc.proc.pid;
    if (supervisor === undefined) throw new Error(`${name} has no pid`);
    const children = execFileSync("pgrep", ["-P", String(supervisor)], { encoding: "utf8" })
      .split("\n")
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
    const nodeChild = children.find((c) => readFileSync(`/proc/${c}/cmdline`, "utf8").includes(entry));
    if (nodeChild === undefined) throw new Error(`${name}: node child of ${supervisor} not found`);
    pid = nodeChild;
    return pid;
  };
  const op: OperatorProcess = {
    name,
    process: proc,
    logFile,
    get probePort() {
      return requirePort("health-probes");
    },
    get metricsUrl() {
      return ownMetrics ? `http://127.0.0.1:${requirePort("metrics-server")}/metrics` : undefined;
    },
    get readyzUrl() {
      return `http://127.0.0.1:${requirePort("health-probes")}/readyz`;
    },
    logText: () => logText(),
    logLines,
    async waitForLog(msg, timeoutMs = WAIT_MS) {
      let found: LogLine | undefined;
      await waitFor(
        `${name}: log "${msg}"`,
        async () => {
          found = tail.lines().find((l) => l.msg === msg);
          if (found === undefined && proc.proc.exitCode !== null)
            throw new Error(`${name} exited with ${proc.proc.exitCode}; see ${logFile}`);
          return found !== undefined;
        },
        timeoutMs,
        50,
      );
      return found as LogLine;
    },
    async identity(timeoutMs) {
      const line = await op.waitForLog("attempting to acquire leader lease", timeoutMs);
      if (typeof line.identity !== "string")
        throw new Error(`${name}: no identity in ${JSON.stringify(line)}`);
      return line.identity;
    },
    async metric(metric, labels) {
      const url = op.metricsUrl;
      if (url === undefined) throw new Error(`${name}: metrics are served where the test's flags said`);
      const res = await fetch(url);
      return metricSum(await res.text(), metric, labels);
    },
    async waitReady(timeoutMs = WAIT_MS) {
      await waitFor(
        `${name} /readyz`,
        async () => {
          if (proc.proc.exitCode !== null)
            throw new Error(`${name} exited with ${proc.proc.exitCode}:\n${logText().slice(-4000)}`);
          const port = boundPort("health-probes");
          return port !== undefined && (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
        },
        timeoutMs,
      );
    },
    signal(sig) {
      process.kill(nodePid(), sig);
    },
    kill: () => {
      proc.signal("SIGKILL");
    },
    stop: () => proc.stop(),
  };
  if (opts.waitReady ?? true) await op.waitReady();
  return op;
}
