/**
 * Resource use of a running process from /proc: resident set size now and at its peak, and CPU
 * time. Benchmarks read the operator's node process, which runs under hack/watchdog.sh.
 */
import { readFileSync } from "node:fs";

/** One reading of a process. */
export interface ProcStats {
  /** Resident set size now, MiB. */
  rssMiB: number;
  /** Peak resident set size since the process started (VmHWM), MiB. */
  peakRssMiB: number;
  /** User + system CPU time, seconds. */
  cpuSeconds: number;
}

const TICKS_PER_SECOND = 100;

/** Reads the stats of `pid`. */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may hold spaces) in /proc/<pid>/stat; utime and stime
  // are the 14th and 15th fields overall.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(rest[11]) + Number(rest[12]);
  return {
    rssMiB: kib("VmRSS") / 1024,
    peakRssMiB: kib("VmHWM") / 1024,
    cpuSeconds: ticks / TICKS_PER_SECOND,
  };
}

/** The pid of the first child of `parent` whose command line contains `needle`. */
export function childPid(parent: number, needle: string): number {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").trim().split(/\s+/);
  for (const c of children) {
    if (c === "") continue;
    const cmd = readFileSync(`/proc/${c}/cmdline`, "utf8");
    if (cmd.includes(needle)) return Number(c);
  }
  throw new Error(`no child of ${parent} runs ${needle}`);
}
