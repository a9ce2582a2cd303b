import type { Registry } from "prom-client";

/** Sum of the series of metric `name` in `registry` whose labels include `labels`; 0 when absent. */
export async function metricSum(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = await registry.getSingleMetric(name)?.get();
  return (m?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}
