/**
 * Where a `make test` run spends the machine's CPU: every process on the machine is read from
 * /proc twice a second while the run lasts, and each one's CPU time (user + system, as last read;
 * for a process already running at the start, what it spent since) is added to the kind of process
 * it is, told by its command line. A process that lives less than half a second may be missed,
 * and each one's last half second is; the sum is therefore a little under the run's real total.
 * Processes count when they spent any CPU time (the watchdogs wrapping each child spend none).
 * Linux only.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { FILE_GROUP_MODULE } from "../../test/support/runner.ts";

/** The kinds of process a run's CPU time is reported by, in the order of the report. */
export const PROCESS_KINDS = [
  "test files",
  "operators under test",
  "kube-apiserver",
  "etcd",
  "kube-controller-manager",
  "test AWS",
  "lint",
  "helm and kubectl",
  "node of the chart test",
  "test runner",
  "other",
] as const;
export type ProcessKind = (typeof PROCESS_KINDS)[number];

/** CPU seconds and how many processes, by kind. */
export type CpuByKind = Partial<Record<ProcessKind, { seconds: number; processes: number }>>;

const NODE_PARTS = new Set([
  "kubelet",
  "kube-scheduler",
  "kube-proxy",
  "containerd",
  "containerd-shim-runc-v2",
  "runc",
  "buildah",
  "crictl",
  "pause",
]);

/** The kind of a process, from its command line (`/proc/<pid>/cmdline`, split at NUL). */
export function processKind(argv: readonly string[]): ProcessKind {
  const program = path.basename(argv[0] ?? "");
  if (program === "kube-apiserver") return "kube-apiserver";
  if (program === "etcd") return "etcd";
  if (program === "kube-controller-manager") return "kube-controller-manager";
  if (program === "helm" || program === "kubectl") return "helm and kubectl";
  if (NODE_PARTS.has(program)) return "node of the chart test";
  const args = argv.slice(1);
  if (args.some((a) => a.endsWith("aws-emulator/server.py"))) return "test AWS";
  if (args.some((a) => a.endsWith("src/main.ts") || a.endsWith("/kubeprovisioner.mjs")))
    return "operators under test";
  // The test AWS's own tests (pytest) are test files too, and so is the process the runner runs
  // the unit tests in (test/support/file-group.ts).
  const testFile = (a: string): boolean => a.endsWith(".test.ts") || a.endsWith(FILE_GROUP_MODULE);
  if (args.some(testFile) || program === "pytest" || args.includes("pytest")) return "test files";
  if (args.some((a) => /(?:^|\/)(?:tsc|eslint|prettier)$/.test(a))) return "lint";
  if (args.some((a) => a.endsWith("test/support/runner.ts") || a === "--test")) return "test runner";
  return "other";
}

/** Reads the machine's processes every `intervalMs` until {@link stop}. */
export class CpuSampler {
  readonly #ticksPerSecond: number;
  readonly #intervalMs: number;
  /** By `pid:starttime`: the process's kind, its CPU ticks as last read, and as read at the start. */
  readonly #seen = new Map<string, { kind: ProcessKind; ticks: number; base: number }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: { intervalMs?: number; ticksPerSecond?: number } = {}) {
    this.#intervalMs = opts.intervalMs ?? 500;
    // USER_HZ: 100 on every Linux architecture Node runs on.
    this.#ticksPerSecond = opts.ticksPerSecond ?? 100;
  }

  start(): void {
    this.#sample(true);
    this.#timer = setInterval(() => this.#sample(), this.#intervalMs);
  }

  /** Stops sampling and returns the CPU time by kind. */
  stop(): CpuByKind {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#sample();
    const out: CpuByKind = {};
    for (const { kind, ticks, base } of this.#seen.values()) {
      if (ticks <= base) continue;
      const entry = (out[kind] ??= { seconds: 0, processes: 0 });
      entry.seconds += (ticks - base) / this.#ticksPerSecond;
      entry.processes++;
    }
    for (const entry of Object.values(out)) entry.seconds = Math.round(entry.seconds * 10) / 10;
    return out;
  }

  /** Reads every process; at the start (`first`), what each has spent so far is its base. */
  #sample(first = false): void {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        // Fields after the command name, which may hold spaces: state is field 3.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ticks = Number(fields[11]) + Number(fields[12]);
        const key = `${pid}:${fields[19]}`;
        const known = this.#seen.get(key);
        if (known !== undefined) {
          known.ticks = ticks;
          continue;
        }
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8")
          .split("\0")
          .filter((a) => a !== "");
        if (argv.length === 0) continue; // a kernel thread
        this.#seen.set(key, { kind: processKind(argv), ticks, base: first ? ticks : 0 });
      } catch {
        // the process ended between the listing and the read
      }
    }
  }
}
