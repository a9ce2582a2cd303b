import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from "prom-client";

/**
 * The process-wide Prometheus registry. Every metric of the operator registers here and
 * `/metrics` serves it. Tests that need isolation pass their own {@link Registry}.
 */
export const defaultRegistry = new Registry();

/**
 * Returns the metric named in `config` from `registry`, creating it on first use. Creating the
 * same metric twice (two queues, two controllers) therefore shares one series family instead of
 * throwing prom-client's duplicate-registration error.
 */
export function counter<T extends string>(
  registry: Registry,
  config: Omit<CounterConfiguration<T>, "registers">,
): Counter<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Counter<T>;
  return new Counter<T>({ ...config, registers: [registry] });
}

/** Get-or-create for gauges; see {@link counter}. */
export function gauge<T extends string>(
  registry: Registry,
  config: Omit<GaugeConfiguration<T>, "registers">,
): Gauge<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Gauge<T>;
  return new Gauge<T>({ ...config, registers: [registry] });
}

/** Get-or-create for histograms; see {@link counter}. */
export function histogram<T extends string>(
  registry: Registry,
  config: Omit<HistogramConfiguration<T>, "registers">,
): Histogram<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Histogram<T>;
  return new Histogram<T>({ ...config, registers: [registry] });
}
