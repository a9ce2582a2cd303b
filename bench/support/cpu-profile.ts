/**
 * Where a V8 CPU profile's busy time goes, by part of the program: the operator's own code
 * (`src/`), the AWS SDK, Node's internals (HTTP, TLS, net, streams), the garbage collector,
 * prom-client, pino, and the rest.
 *
 * Each sample is charged to the function it was taken in (self time), located by its call
 * frame: the script's URL and the 0-based line and column of the function. A script with a
 * linked source map (the bundle and each of its chunks) is read through its own map, so the
 * function's original file decides, not the bundle's layout; a script without one (the
 * sources run as they are) is its own original file. Frames with no script (V8's built-ins:
 * `JSON.parse`, regular expressions, `Array.prototype.sort`) are charged to the closest caller
 * that has one: the SDK's `JSON.parse` of a response is SDK work. "(idle)" and "(program)" (the
 * VM outside any JavaScript) are not busy and are left out.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { linkedSourceMap, type SourceMap } from "./source-map.ts";

/** The fields of a `.cpuprofile` (V8's `Profiler.Profile`) read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  /** Start and end, microseconds of the monotonic clock (`process.hrtime`'s). */
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  /** Microseconds from the previous sample (the first: from `startTime`). */
  readonly timeDeltas?: readonly number[];
}

/** The parts of the program the busy samples are split into, in the order they are reported. */
export const GROUPS = [
  "operator (src)",
  "AWS SDK",
  "Node internals",
  "GC",
  "prom-client",
  "pino",
  "other",
] as const;
export type Group = (typeof GROUPS)[number];

/** Packages counted with the SDK: its scopes, and its own dependency (the user agent parser). */
const SDK = /^(?:@aws-sdk\/|@smithy\/|@aws-crypto\/|@aws\/|bowser$)/;
/** prom-client and the packages it depends on. */
const PROM_CLIENT = new Set(["prom-client", "tdigest", "bintrees", "@opentelemetry/api"]);
/** pino and the packages it depends on. */
const PINO = new Set([
  "pino",
  "@pinojs/redact",
  "pino-std-serializers",
  "pino-abstract-transport",
  "sonic-boom",
  "thread-stream",
  "quick-format-unescaped",
  "atomic-sleep",
  "on-exit-leak-free",
  "real-require",
  "process-warning",
  "safe-stable-stringify",
  "split2",
]);

/**
 * The package of an original file: the npm package after the last `node_modules/` in its path
 * (`@scope/name` or `name`), `src` for the operator's sources, `node` for Node's own modules
 * (`node:...`, and the bundle's `builtin:` stubs that require them), and otherwise the path
 * relative to `root` (a benchmark's own files, say). Paths may be absolute or relative to a
 * bundle file (`../src/x.ts`, `../../node_modules/...`).
 */
export function packageOf(file: string, root: string): string {
  if (file.startsWith("node:") || file.startsWith("builtin:")) return "node";
  const at = file.lastIndexOf("node_modules/");
  if (at === 0 || (at > 0 && file[at - 1] === "/")) {
    const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file.slice(at));
    if (m?.[1] !== undefined) return m[1];
  }
  const rel = (path.isAbsolute(file) ? path.relative(root, file) : file).replace(/^(?:\.\.?\/)+/, "");
  return rel.startsWith("src/") ? "src" : rel;
}

/** The group a package (as {@link packageOf} names it) is reported in. */
export function groupOf(pkg: string): Group {
  if (pkg === "src") return "operator (src)";
  if (pkg === "node") return "Node internals";
  if (SDK.test(pkg)) return "AWS SDK";
  if (PROM_CLIENT.has(pkg)) return "prom-client";
  if (PINO.has(pkg)) return "pino";
  return "other";
}

/**
 * Finds the original file of a call frame's position: through the linked source map of the
 * script at `url` when it has one (read once per script), else the script's own path. Node's
 * modules (`node:...`) are their own name.
 */
export class FrameLocator {
  readonly #maps = new Map<string, SourceMap | undefined>();

  fileOf(url: string, line: number, column: number): string {
    if (!url.startsWith("file:")) return url;
    const file = fileURLToPath(url);
    let map = this.#maps.get(file);
    if (!this.#maps.has(file)) {
      try {
        map = linkedSourceMap(file);
      } catch {
        map = undefined;
      }
      this.#maps.set(file, map);
    }
    if (map === undefined) return file;
    // A bundle file's own top level (the function V8 runs to evaluate the module) holds the
    // top-level statements of every module bundled into it.
    if (line === 0 && column === 0) return "(module top level)";
    // No source for the position: code the bundler wrote itself (its banner, its helpers).
    return map.sourceAt(line, column) ?? "(bundler code)";
  }
}

/** The split of a profile's busy samples. */
export interface BusyShares {
  /** Samples counted as busy (in the window, outside "(idle)" and "(program)"). */
  readonly busySamples: number;
  /** Per group, percent of the busy samples, every group present, one decimal. */
  readonly percent: Record<Group, number>;
  /** The packages with the most busy samples, percent, one decimal (Node's modules by name). */
  readonly topPackages: Record<string, number>;
}

/**
 * Splits the busy samples of `profile` by {@link GROUPS}. With `window` (monotonic-clock
 * microseconds, as the profile's own times), only the samples taken within it count.
 */
export function busyShares(
  profile: CpuProfile,
  opts: {
    readonly root: string;
    readonly locator?: FrameLocator;
    readonly window?: { readonly fromUs: number; readonly toUs: number };
    readonly top?: number;
  },
): BusyShares {
  const locator = opts.locator ?? new FrameLocator();
  const parent = new Map<number, number>();
  for (const nd of profile.nodes) for (const c of nd.children ?? []) parent.set(c, nd.id);
  const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  /** Per node id: the package charged, or null for samples that are not busy. */
  const charged = new Map<number, { pkg: string; detail: string; group: Group } | null>();
  const chargeOf = (id: number): { pkg: string; detail: string; group: Group } | null => {
    const known = charged.get(id);
    if (known !== undefined) return known;
    let out: { pkg: string; detail: string; group: Group } | null;
    const f = byId.get(id)?.callFrame;
    if (f === undefined || f.functionName === "(idle)" || f.functionName === "(program)") out = null;
    else if (f.functionName === "(garbage collector)") out = { pkg: "(gc)", detail: "(gc)", group: "GC" };
    else {
      // A frame without a script is charged to its closest caller with one.
      let at: number | undefined = id;
      let frame = f;
      while (frame.url === "" && at !== undefined) {
        at = parent.get(at);
        const up = at === undefined ? undefined : byId.get(at)?.callFrame;
        if (up === undefined || up.functionName === "(root)") break;
        frame = up;
      }
      if (frame.url === "") out = { pkg: "(V8 built-ins)", detail: "(V8 built-ins)", group: "other" };
      else {
        const file = locator.fileOf(frame.url, frame.lineNumber, frame.columnNumber);
        const pkg = packageOf(file, opts.root);
        out = { pkg, detail: pkg === "node" ? file.replace(/^builtin:/, "node:") : pkg, group: groupOf(pkg) };
      }
    }
    charged.set(id, out);
    return out;
  };

  const groups = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  const packages = new Map<string, number>();
  let busy = 0;
  let t = profile.startTime;
  const samples = profile.samples ?? [];
  for (const [i, id] of samples.entries()) {
    t += profile.timeDeltas?.[i] ?? 0;
    if (opts.window !== undefined && (t < opts.window.fromUs || t > opts.window.toUs)) continue;
    const c = chargeOf(id);
    if (c === null) continue;
    groups[c.group]++;
    packages.set(c.detail, (packages.get(c.detail) ?? 0) + 1);
    busy++;
  }
  const pct = (v: number): number => (busy === 0 ? 0 : Math.round((1000 * v) / busy) / 10);
  return {
    busySamples: busy,
    percent: Object.fromEntries(GROUPS.map((g) => [g, pct(groups[g])])) as Record<Group, number>,
    topPackages: Object.fromEntries(
      [...packages]
        .sort((a, b) => b[1] - a[1])
        .slice(0, opts.top ?? 15)
        .map(([k, v]) => [k, pct(v)]),
    ),
  };
}

/**
 * The profile of the process image that ran longest among the `.cpuprofile` files in `dir`.
 * `--cpu-prof` writes one per image: the operator replaces itself once at start to set its heap
 * ceiling (src/heap/ceiling.ts), and the image before that writes a profile of its first
 * fraction of a second as well.
 */
export function longestProfile(dir: string): { file: string; profile: CpuProfile } | undefined {
  let best: { file: string; profile: CpuProfile } | undefined;
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
    const file = path.join(dir, name);
    const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    if (
      best === undefined ||
      profile.endTime - profile.startTime > best.profile.endTime - best.profile.startTime
    )
      best = { file, profile };
  }
  return best;
}
