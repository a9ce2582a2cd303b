/**
 * A memory cgroup for a benchmark's operator, so that it sizes its heap ceiling from the limit
 * at start (src/heap/ceiling.ts) as it does in a pod. This machine mounts the memory controller
 * as cgroup v1 (its cgroup2 mount has none; see test/integration/heap-cgroup.test.ts), so the
 * cgroup is made below this process's own in the v1 memory hierarchy.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const MiB = 2 ** 20;

/** The directory of this process's cgroup in the v1 memory hierarchy. */
export function ownMemoryCgroup(): string {
  const line = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .find((l) => l.split(":")[1]?.split(",").includes("memory"));
  if (line === undefined) throw new Error("no cgroup v1 memory hierarchy");
  return path.join("/sys/fs/cgroup/memory", line.slice(line.indexOf(":", line.indexOf(":") + 1) + 1));
}

/** A memory cgroup made by {@link memoryCgroup}. */
export interface MemoryCgroup {
  readonly dir: string;
  readonly limitMiB: number;
  /** A numeric control file of the cgroup, such as `memory.usage_in_bytes` or `memory.failcnt`. */
  read(file: string): number;
  /** Usage now and at its peak (`memory.max_usage_in_bytes`), MiB, and `memory.failcnt`. */
  usage(): { usageMiB: number; peakMiB: number; failcnt: number };
  /** Processes the OOM killer killed in the cgroup (`oom_kill` of `memory.oom_control`). */
  oomKills(): number;
  /**
   * Runs `spawn` with this process inside the cgroup, so the children it starts begin (and stay)
   * there; this process leaves again once `spawn` settles.
   */
  inside<T>(spawn: () => Promise<T>): Promise<T>;
  /** Removes the cgroup; a no-op while a process is still inside. */
  remove(): void;
}

/** Makes the cgroup `name` below this process's own, limited to `limitMiB`. */
export function memoryCgroup(name: string, limitMiB: number): MemoryCgroup {
  const parent = ownMemoryCgroup();
  const dir = path.join(parent, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "memory.limit_in_bytes"), String(limitMiB * MiB));
  const read = (file: string): number => Number(readFileSync(path.join(dir, file), "utf8").trim());
  return {
    dir,
    limitMiB,
    read,
    usage: () => ({
      usageMiB: read("memory.usage_in_bytes") / MiB,
      peakMiB: read("memory.max_usage_in_bytes") / MiB,
      failcnt: read("memory.failcnt"),
    }),
    oomKills: () =>
      Number(/^oom_kill (\d+)$/m.exec(readFileSync(path.join(dir, "memory.oom_control"), "utf8"))?.[1] ?? 0),
    async inside(spawn) {
      writeFileSync(path.join(dir, "cgroup.procs"), String(process.pid));
      try {
        return await spawn();
      } finally {
        writeFileSync(path.join(parent, "cgroup.procs"), String(process.pid));
      }
    },
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        /* a process is still inside */
      }
    },
  };
}
