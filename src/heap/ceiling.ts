/**
 * The V8 heap ceiling from the container's memory limit. V8 fixes its old-space limit when the
 * isolate is created (`v8.setFlagsFromString("--max-old-space-size=…")` later changes nothing
 * that `v8.getHeapStatistics().heap_size_limit` reports), so the entry point replaces the process
 * once, at start, with itself plus `--max-old-space-size` ({@link heapReexec}; `process.execve`:
 * same PID, no parent left behind, signals reach the operator as before). It does so only when
 * neither NODE_OPTIONS nor the command line sets a ceiling already, and only when a limit is
 * found: an explicit flag always wins, and without a limit V8's own default stays.
 *
 * The ceiling leaves room outside the JS heap for what is not in it: Node and V8 themselves,
 * compiled code, the young generation, sockets and TLS buffers. Measured on the bundle, that part
 * is 70–100 MiB of RSS (BENCHMARKS.md: RSS minus heapTotal, idle and at 5,150 objects), so the
 * reserve is the larger of 96 MiB and a quarter of the limit.
 */
import { memoryLimit, type CgroupSources, type MemoryLimit } from "./cgroup.ts";

const MiB = 1024 * 1024;
/** Memory kept outside the JS heap, at least. */
export const OFF_HEAP_RESERVE_MIB = 96;
/** The smallest ceiling set; below it the limit is too small to run in at all. */
export const MIN_HEAP_CEILING_MIB = 32;
/** Set in the replaced process's environment: the limit it was sized from, for the start log. */
export const HEAP_SIZED_ENV = "KUBEPROVISIONER_HEAP_SIZED_FROM";

/** The old-space ceiling, in MiB, for a container memory limit of `limitBytes`. */
export function heapCeilingMiB(limitBytes: number): number {
  const limitMiB = limitBytes / MiB;
  const reserve = Math.max(OFF_HEAP_RESERVE_MIB, limitMiB / 4);
  return Math.max(MIN_HEAP_CEILING_MIB, Math.floor(limitMiB - reserve));
}

/** Whether V8 options (`NODE_OPTIONS` or the node command line) already set an old-space ceiling. */
export function setsHeapCeiling(options: readonly string[]): boolean {
  return options.some((o) => /^--max[-_]old[-_]space[-_]size(?:[-_]percentage)?(?:=|$)/.test(o));
}

/** What the process runs as and with. */
export interface ProcessView {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The replacement command: the same program with `--max-old-space-size` from the limit. */
export interface HeapReexec {
  readonly file: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly ceilingMiB: number;
  readonly limit: MemoryLimit;
}

/**
 * The command that replaces this process to size its heap from the memory limit, or undefined
 * when none is needed: a ceiling is set already, the process was sized once, or no limit is
 * found.
 */
export function heapReexec(proc: ProcessView, cgroups: CgroupSources = {}): HeapReexec | undefined {
  if (proc.env[HEAP_SIZED_ENV] !== undefined) return undefined;
  const nodeOptions = (proc.env.NODE_OPTIONS ?? "").split(/\s+/).filter((o) => o !== "");
  if (setsHeapCeiling(nodeOptions) || setsHeapCeiling(proc.execArgv)) return undefined;
  const limit = memoryLimit(cgroups);
  if (limit === undefined) return undefined;
  const ceilingMiB = heapCeilingMiB(limit.bytes);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(proc.env)) if (v !== undefined) env[k] = v;
  env[HEAP_SIZED_ENV] = `${limit.bytes}`;
  return {
    file: proc.execPath,
    args: [proc.execPath, ...proc.execArgv, `--max-old-space-size=${ceilingMiB}`, ...proc.argv.slice(1)],
    env,
    ceilingMiB,
    limit,
  };
}

/**
 * Replaces the process as {@link heapReexec} says, when it says so (`process.execve`, Node ≥
 * 22.15 and 23.11; on older Node, or where it is missing, the process carries on unsized).
 * Returns only when it did not replace the process.
 */
export function sizeHeapFromMemoryLimit(): void {
  const execve = (
    process as { execve?: (file: string, args: string[], env: Record<string, string>) => never }
  ).execve;
  if (typeof execve !== "function") return;
  const plan = heapReexec(process);
  if (plan === undefined) return;
  execve.call(process, plan.file, plan.args, plan.env);
}

/** The heap ceiling in effect, and the memory limit it was sized from (for the start log). */
export function heapSizing(
  ceilingBytes: number,
  env: Readonly<Record<string, string | undefined>>,
): { ceilingMiB: number; memoryLimitMiB?: number } {
  const sized = env[HEAP_SIZED_ENV];
  const ceilingMiB = Math.round(ceilingBytes / MiB);
  return sized !== undefined && /^[0-9]+$/.test(sized)
    ? { ceilingMiB, memoryLimitMiB: Math.floor(Number(sized) / MiB) }
    : { ceilingMiB };
}
