/**
 * Runs the real CLI (`node src/main.ts`) as a child process against the test control plane, and
 * reads its JSON log lines. Shared by the manager-* and metrics-* integration tests.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ControlPlane } from "../support/envtest.ts";
import { freePort, repoRoot, startProcess, waitFor, type Supervised } from "../support/process.ts";

/** One parsed JSON log line. */
export interface LogLine {
  msg?: string;
  level?: number;
  identity?: string;
  [key: string]: unknown;
}

/** A running operator process. */
export interface Operator {
  readonly name: string;
  readonly proc: Supervised;
  readonly logFile: string;
  readonly probePort: number;
  /** Every JSON line logged so far. */
  logs(): LogLine[];
  /** Waits for a line whose `msg` equals `msg` and returns it. */
  waitForLog(msg: string, timeoutMs?: number): Promise<LogLine>;
  /** The leader-election identity, from the first election log line. */
  identity(timeoutMs?: number): Promise<string>;
  /** PID of the node process itself (the supervisor's child). */
  nodePid(): number;
  /** Sends `signal` to the node process. */
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts `node src/main.ts` with the admin kubeconfig (unless `--kubeconfig` is in `args`),
 * a free probe port and metrics disabled unless `args` say otherwise.
 */
export async function startOperator(
  cp: ControlPlane,
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Operator> {
  const probePort = await freePort();
  const logFile = path.join(cp.dir, `${name}.log`);
  const has = (flag: string): boolean => args.some((a) => a === flag || a.startsWith(`${flag}=`));
  const fullArgs = [
    path.join(repoRoot, "src/main.ts"),
    ...(has("--kubeconfig") ? [] : [`--kubeconfig=${cp.kubeconfigPath}`]),
    ...(has("--health-probe-bind-address") ? [] : [`--health-probe-bind-address=127.0.0.1:${probePort}`]),
    ...(has("--metrics-bind-address") ? [] : ["--metrics-bind-address=0"]),
    ...args,
  ];
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of Object.keys(childEnv))
    if (k.startsWith("KUBEPROVISIONER_") && !(k in env)) delete childEnv[k];
  delete childEnv.KUBERNETES_SERVICE_HOST;
  const proc = startProcess(process.execPath, fullArgs, { logFile, env: childEnv });
  const logs = (): LogLine[] => {
    let text: string;
    try {
      text = readFileSync(logFile, "utf8");
    } catch {
      return [];
    }
    const out: LogLine[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // a line still being written
      }
    }
    return out;
  };
  let pid: number | undefined;
  const op: Operator = {
    name,
    proc,
    logFile,
    probePort,
    logs,
    async waitForLog(msg, timeoutMs = 30_000) {
      let found: LogLine | undefined;
      await waitFor(
        `${name}: log "${msg}"`,
        async () => {
          if (proc.proc.exitCode !== null && found === undefined) {
            found = logs().find((l) => l.msg === msg);
            if (found === undefined)
              throw new Error(`${name} exited with ${proc.proc.exitCode}; see ${logFile}`);
          }
          found = logs().find((l) => l.msg === msg);
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
    nodePid() {
      if (pid !== undefined) return pid;
      const supervisor = proc.proc.pid;
      if (supervisor === undefined) throw new Error(`${name} has no pid`);
      const children = execFileSync("pgrep", ["-P", String(supervisor)], { encoding: "utf8" })
        .split("\n")
        .map((s) => Number(s.trim()))
        .filter((n) => n > 0);
      const nodeChild = children.find((c) =>
        readFileSync(`/proc/${c}/cmdline`, "utf8").includes("src/main.ts"),
      );
      if (nodeChild === undefined) throw new Error(`${name}: node child of ${supervisor} not found`);
      pid = nodeChild;
      return pid;
    },
    kill(signal) {
      process.kill(op.nodePid(), signal);
    },
  };
  return op;
}

/** Status code of `GET http://127.0.0.1:<port><path>`, or 0 when nothing answers. */
export async function httpStatus(port: number, urlPath: string): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

/** The Lease's holder, or undefined when the Lease does not exist. */
export async function leaseHolder(
  cp: ControlPlane,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const res = await cp.request("GET", `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET lease: ${res.status} ${res.text}`);
  return (res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? "";
}

/** Creates a namespace (ignoring AlreadyExists). */
export async function ensureNamespace(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name },
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`creating namespace ${name}: ${res.text}`);
}
