/**
 * The memory limit of the container the process runs in, read the way the kernel exposes it:
 * `/proc/self/cgroup` names the process's cgroup in each hierarchy, `/proc/self/mountinfo` says
 * where each hierarchy is mounted, and the limit file is `memory.max` (cgroup v2) or
 * `memory.limit_in_bytes` (cgroup v1, the `memory` controller) in the process's cgroup, or in
 * the nearest ancestor visible in the mount that sets one (a nested cgroup inherits the tightest
 * limit above it).
 *
 * Pure parsing lives in {@link parseProcCgroup}, {@link parseMountInfo} and {@link parseLimit};
 * {@link memoryLimit} reads the files through a small reader, so fixture directories can stand
 * in for /proc and /sys in tests.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

/** One line of /proc/self/cgroup: `hierarchy-ID:controller-list:cgroup-path`. */
export interface CgroupEntry {
  readonly hierarchy: string;
  /** The controllers of a v1 hierarchy (`memory`, `cpu,cpuacct`); empty for the v2 hierarchy. */
  readonly controllers: readonly string[];
  readonly path: string;
}

/** One cgroup mount from /proc/self/mountinfo. */
export interface CgroupMount {
  readonly version: 1 | 2;
  /** The cgroup path inside the hierarchy that the mount shows at its mount point. */
  readonly root: string;
  readonly mountPoint: string;
  /** The controllers a v1 mount carries (its super options); empty for v2. */
  readonly controllers: readonly string[];
}

/** A memory limit found, and where. */
export interface MemoryLimit {
  readonly bytes: number;
  readonly version: 1 | 2;
  /** The limit file it was read from. */
  readonly file: string;
}

/** Limits at or above this are "no limit": cgroup v1 writes the largest page-aligned int64. */
const UNLIMITED_FLOOR = 2 ** 62;

/** Parses /proc/self/cgroup. Malformed lines are skipped. */
export function parseProcCgroup(text: string): CgroupEntry[] {
  const out: CgroupEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const list = line.slice(first + 1, second);
    out.push({
      hierarchy: line.slice(0, first),
      controllers: list === "" ? [] : list.split(","),
      path: line.slice(second + 1),
    });
  }
  return out;
}

/**
 * Parses /proc/self/mountinfo for cgroup mounts. Each line: `id parent major:minor root
 * mount-point options [optional fields...] - fstype source super-options` (proc(5)); paths
 * escape space, tab, newline and backslash as octal (`\040`).
 */
export function parseMountInfo(text: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    const sep = fields.indexOf("-");
    if (sep < 6) continue;
    const fstype = fields[sep + 1];
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fstype === "cgroup2") {
      out.push({ version: 2, root: unescape(root), mountPoint: unescape(mountPoint), controllers: [] });
    } else if (fstype === "cgroup") {
      const superOptions = (fields[sep + 3] ?? "").split(",");
      out.push({
        version: 1,
        root: unescape(root),
        mountPoint: unescape(mountPoint),
        controllers: superOptions,
      });
    }
  }
  return out;
}

function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * The value of a limit file: a byte count, or undefined for none (`max` in cgroup v2, the
 * near-2^63 sentinel in cgroup v1, an empty or unreadable value).
 */
export function parseLimit(text: string): number | undefined {
  const value = text.trim();
  if (value === "" || value === "max") return undefined;
  if (!/^[0-9]+$/.test(value)) return undefined;
  const bytes = Number(value);
  return bytes > 0 && bytes < UNLIMITED_FLOOR ? bytes : undefined;
}

/** Reads a file's text, or undefined when it cannot be read. */
export type FileReader = (file: string) => string | undefined;

const readFromDisk: FileReader = (file) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

/** Where {@link memoryLimit} reads from; defaults to the process's own /proc files. */
export interface CgroupSources {
  read?: FileReader;
  procCgroup?: string;
  mountInfo?: string;
}

/**
 * The tightest memory limit on the process's cgroup and its ancestors, cgroup v2 first, then
 * the v1 `memory` controller; undefined when neither sets one (or neither is mounted).
 */
export function memoryLimit(sources: CgroupSources = {}): MemoryLimit | undefined {
  const read = sources.read ?? readFromDisk;
  const cgroups = parseProcCgroup(read(sources.procCgroup ?? "/proc/self/cgroup") ?? "");
  const mounts = parseMountInfo(read(sources.mountInfo ?? "/proc/self/mountinfo") ?? "");
  const unified = cgroups.find((c) => c.hierarchy === "0" && c.controllers.length === 0);
  const v1 = cgroups.find((c) => c.controllers.includes("memory"));
  const found: MemoryLimit[] = [];
  if (unified !== undefined) {
    for (const m of mounts.filter((m) => m.version === 2)) {
      const hit = tightest(read, m, unified.path, "memory.max", 2);
      if (hit !== undefined) found.push(hit);
    }
  }
  if (v1 !== undefined) {
    for (const m of mounts.filter((m) => m.version === 1 && m.controllers.includes("memory"))) {
      const hit = tightest(read, m, v1.path, "memory.limit_in_bytes", 1);
      if (hit !== undefined) found.push(hit);
    }
  }
  return found.reduce<MemoryLimit | undefined>(
    (a, b) => (a === undefined || b.bytes < a.bytes ? b : a),
    undefined,
  );
}

/**
 * The smallest limit in `file` from the cgroup at `cgroupPath` up to the mount's root, as seen
 * through mount `m`. A container usually sees its own cgroup as the mount's root (cgroup
 * namespaces), so the path is taken relative to the mount's root; a path outside the mount's
 * root is looked for at the mount point itself.
 */
function tightest(
  read: FileReader,
  m: CgroupMount,
  cgroupPath: string,
  file: string,
  version: 1 | 2,
): MemoryLimit | undefined {
  const root = m.root === "/" ? "" : m.root;
  let rel: string;
  if (cgroupPath === m.root || cgroupPath.startsWith(`${root}/`)) rel = cgroupPath.slice(root.length);
  else rel = "";
  let best: MemoryLimit | undefined;
  for (let dir = path.posix.join(m.mountPoint, rel); ; dir = path.posix.dirname(dir)) {
    const full = path.posix.join(dir, file);
    const text = read(full);
    const bytes = text !== undefined ? parseLimit(text) : undefined;
    if (bytes !== undefined && (best === undefined || bytes < best.bytes))
      best = { bytes, version, file: full };
    if (dir === m.mountPoint || dir === "/" || !dir.startsWith(m.mountPoint)) break;
  }
  return best;
}
