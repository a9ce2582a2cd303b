/**
 * Reads metrics out of the Prometheus text exposition format, as `/metrics` serves it and
 * `Registry.metrics()` renders it. The one metrics reader of the tests: unit tests read their
 * registry, integration tests scrape the operator process. Not for production use.
 */
import type { Registry } from "prom-client";

/** One series: the sample name (with `_bucket`/`_sum`/`_count` for histograms), labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * The samples of `text`, and the sample names its `# TYPE` lines declare. With `only`, the samples
 * of that sample name alone: the other sample lines are skipped unparsed, which a test polling one
 * counter of a large exposition needs (parsing every line took a tenth to a sixth of the CPU time
 * of an integration test file).
 */
export function parseMetrics(text: string, only?: string): { samples: Sample[]; declared: Set<string> } {
  const samples: Sample[] = [];
  const declared = new Set<string>();
  for (const line of text.split("\n")) {
    const type = line.startsWith("# TYPE ") ? /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line) : null;
    if (type !== null) {
      const [, family = "", kind] = type;
      declared.add(family);
      if (kind === "histogram" || kind === "summary")
        for (const suffix of ["_bucket", "_sum", "_count"]) declared.add(family + suffix);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    if (only !== undefined && !isSampleOf(line, only)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/.exec(line);
    if (m === null) throw new Error(`not a Prometheus text sample: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ""] = (pair[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1] ?? "", labels, value: parseValue(m[3] ?? "") });
  }
  return { samples, declared };
}

/** Whether sample line `line` is of sample name `name` (the name ends at `{` or a space). */
function isSampleOf(line: string, name: string): boolean {
  const next = line[name.length];
  return line.startsWith(name) && (next === "{" || next === " ");
}

/**
 * The series named `name` whose labels include every one of `labels`.
 * @throws Error when `text` declares no metric `name` at all: a misspelt or unregistered name
 * must fail the test, not read as "no series".
 */
export function metricSamples(text: string, name: string, labels: Record<string, string> = {}): Sample[] {
  const { samples, declared } = parseMetrics(text, name);
  if (!declared.has(name)) throw new Error(`no metric ${name} is exposed`);
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/**
 * The sum of the series {@link metricSamples} selects; `undefined` when none matches (a
 * labelled metric nothing has touched yet).
 */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const matching = metricSamples(text, name, labels);
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

/** {@link metricValue}, reading no series as 0 (for counters, where "never counted" is zero). */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return metricValue(text, name, labels) ?? 0;
}

/** {@link metricSum} over what `registry` exposes now. */
export async function registrySum(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return metricSum(await registry.metrics(), name, labels);
}

/** {@link metricSamples} over what `registry` exposes now. */
export async function registrySamples(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<Sample[]> {
  return metricSamples(await registry.metrics(), name, labels);
}

/** {@link metricValue} over what `registry` exposes now. */
export async function registryValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  return metricValue(await registry.metrics(), name, labels);
}

function parseValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}
