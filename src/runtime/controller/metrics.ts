/**
 * The controller's Prometheus metrics. Names, help texts, labels and histogram buckets are those
 * of controller-runtime (`pkg/internal/controller/metrics`), so dashboards and alerts written
 * for Go operators work unchanged.
 */
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { counter, gauge, histogram } from "../metrics/registry.ts";

/** Values of the `result` label of `controller_runtime_reconcile_total`. */
export const reconcileResultLabels = ["success", "error", "requeue", "requeue_after"] as const;

/** One of {@link reconcileResultLabels}. */
export type ReconcileResultLabel = (typeof reconcileResultLabels)[number];

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
export const reconcileTimeBuckets: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The metric families one or more controllers write to. */
export interface ControllerMetrics {
  reconcileTotal: Counter<"controller" | "result">;
  reconcileErrors: Counter<"controller">;
  terminalReconcileErrors: Counter<"controller">;
  reconcilePanics: Counter<"controller">;
  reconcileTime: Histogram<"controller">;
  maxConcurrentReconciles: Gauge<"controller">;
  activeWorkers: Gauge<"controller">;
}

/**
 * Returns the controller metric families of `registry`, registering them on first use; every
 * controller sharing a registry shares the families and is told apart by its `controller` label.
 */
export function controllerMetrics(registry: Registry): ControllerMetrics {
  return {
    reconcileTotal: counter(registry, {
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"],
    }),
    reconcileErrors: counter(registry, {
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
    }),
    terminalReconcileErrors: counter(registry, {
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames: ["controller"],
    }),
    reconcilePanics: counter(registry, {
      name: "controller_runtime_reconcile_panics_total",
      help: "Total number of reconciliation panics per controller",
      labelNames: ["controller"],
    }),
    reconcileTime: histogram(registry, {
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: [...reconcileTimeBuckets],
    }),
    maxConcurrentReconciles: gauge(registry, {
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"],
    }),
    activeWorkers: gauge(registry, {
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
    }),
  };
}

/**
 * Creates every series of one controller at its initial value (counters and histogram at 0,
 * `max_concurrent_reconciles` at the worker count, `active_workers` at 0), so a rate() or an
 * absent() alert sees the series before the first reconcile.
 */
export function initControllerMetrics(
  m: ControllerMetrics,
  controller: string,
  maxConcurrentReconciles: number,
): void {
  for (const result of reconcileResultLabels) m.reconcileTotal.inc({ controller, result }, 0);
  m.reconcileErrors.inc({ controller }, 0);
  m.terminalReconcileErrors.inc({ controller }, 0);
  m.reconcilePanics.inc({ controller }, 0);
  m.reconcileTime.zero({ controller });
  m.maxConcurrentReconciles.set({ controller }, maxConcurrentReconciles);
  m.activeWorkers.set({ controller }, 0);
}
