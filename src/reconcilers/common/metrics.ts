/**
 * The operator's metrics about the objects it manages, beside the controller-runtime families:
 *
 * - `kubeprovisioner_managed_resources{kind,ready,synced}`: objects per kind and status of their
 *   Ready and Synced conditions (`True`, `False`, or `Unknown` when the condition is missing).
 *   Counted from the shared informer cache when scraped, so it costs nothing between scrapes and
 *   carries no per-object label; every combination of a kind is exported, zeros included, so an
 *   alert on `ready="False"` sees a series before the first failure. A kind whose cache has not
 *   synced yet is left out (its count is not known). Every replica exports it, leader or not.
 * - `kubeprovisioner_drift_repairs_total{kind,setting}`: reconciles that put a setting back
 *   because AWS differed from the spec (once per setting and reconcile, however many tags
 *   changed): drift made outside the operator, and equally a spec change being applied, since
 *   both reach AWS through the same repair. `setting` is one of the kind driver's fixed
 *   `driftSettings`; all start at 0.
 * - `kubeprovisioner_drift_reports_total{kind,setting}`: drift of a setting that the operator
 *   does not change in place (an EC2 volume's size or KMS key) found and reported, counted when
 *   the report is new (beside its `DriftNotRepaired` Event), not on every poll it lasts.
 *   `setting` is one of the driver's fixed `reportedSettings`; all start at 0.
 * - `kubeprovisioner_drifted_paths{kind}`: spec paths that differ from AWS and are reported, not
 *   repaired (`spec.driftPolicy: Report`, each object's `status.drift`, at most 32 per object),
 *   summed per kind from the informer cache when scraped; 0 for a kind with no drift.
 */
import type { Counter, Registry } from "prom-client";
import { ConditionStatus, ConditionType, getCondition } from "../../api/v1/index.ts";
import { CacheNotSyncedError } from "../../runtime/client/errors.ts";
import { counter, gauge } from "../../runtime/metrics/registry.ts";
import type { ManagedObject } from "./driver.ts";

/** Metric names, for dashboards, alerts and tests. */
export const MANAGED_METRIC_NAMES = Object.freeze({
  resources: "kubeprovisioner_managed_resources",
  driftRepairs: "kubeprovisioner_drift_repairs_total",
  driftReports: "kubeprovisioner_drift_reports_total",
  driftedPaths: "kubeprovisioner_drifted_paths",
});

/** Values of the `ready` and `synced` labels. */
const STATUSES = [ConditionStatus.True, ConditionStatus.False, ConditionStatus.Unknown] as const;
type Status = (typeof STATUSES)[number];

/** The cached objects of one kind. */
type ListCached = () => readonly Readonly<ManagedObject>[];

/** One series of a gauge counted from the cache: its labels beside `kind`, and its value. */
type Series = readonly [Readonly<Record<string, string>>, number];

/** Per registry and gauge name: the kinds the gauge counts, and how to list each one's objects. */
const sources = new WeakMap<Registry, Map<string, Map<string, ListCached>>>();

/**
 * Has the gauge `name` of `registry` (created on first use) export, per kind registered with it,
 * the series `count` makes of that kind's cached objects; a kind whose cache has not synced is
 * left out. Registering a kind again replaces its source.
 */
function cacheGauge(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  count: (objects: readonly Readonly<ManagedObject>[]) => readonly Series[],
): (kind: string, list: ListCached) => void {
  let gauges = sources.get(registry);
  if (gauges === undefined) sources.set(registry, (gauges = new Map()));
  let kinds = gauges.get(name);
  if (kinds === undefined) {
    const created = new Map<string, ListCached>();
    kinds = created;
    gauges.set(name, created);
    gauge(registry, {
      name,
      help,
      labelNames: ["kind", ...labelNames],
      collect() {
        this.reset();
        for (const [kind, listKind] of created) {
          const objects = cachedObjects(listKind);
          if (objects === undefined) continue;
          for (const [labels, value] of count(objects)) this.set({ kind, ...labels }, value);
        }
      },
    });
  }
  const registered = kinds;
  return (kind, list) => void registered.set(kind, list);
}

/**
 * Has the `kubeprovisioner_managed_resources` gauge of `registry` count the objects of `kind`
 * that `list` returns (the shared cache of that kind). Registering a kind again replaces its
 * source.
 */
export function countManagedResources(registry: Registry, kind: string, list: ListCached): void {
  cacheGauge(
    registry,
    MANAGED_METRIC_NAMES.resources,
    "Managed objects per kind and status of their Ready and Synced conditions, from the informer cache.",
    ["ready", "synced"],
    (objects) => {
      const counts = countByConditions(objects);
      return STATUSES.flatMap((ready) =>
        STATUSES.map((synced): Series => [{ ready, synced }, counts.get(`${ready}/${synced}`) ?? 0]),
      );
    },
  )(kind, list);
}

/**
 * Has the `kubeprovisioner_drifted_paths` gauge of `registry` sum the `status.drift` entries of
 * the objects of `kind` that `list` returns. Registering a kind again replaces its source.
 */
export function countDriftedPaths(registry: Registry, kind: string, list: ListCached): void {
  cacheGauge(
    registry,
    MANAGED_METRIC_NAMES.driftedPaths,
    "Spec paths that differ from AWS and are reported, not repaired (driftPolicy Report), per kind, from the informer cache.",
    [],
    (objects) => [[{}, objects.reduce((n, obj) => n + (obj.status?.drift?.length ?? 0), 0)]],
  )(kind, list);
}

/** The cached objects `list` returns, or undefined while the cache has not synced. */
function cachedObjects(list: ListCached): readonly Readonly<ManagedObject>[] | undefined {
  try {
    return list();
  } catch (err) {
    if (err instanceof CacheNotSyncedError) return undefined;
    throw err;
  }
}

/** Counts per `ready/synced` pair. */
function countByConditions(objects: readonly Readonly<ManagedObject>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const obj of objects) {
    const key = `${statusOf(obj, ConditionType.Ready)}/${statusOf(obj, ConditionType.Synced)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function statusOf(obj: Readonly<ManagedObject>, type: string): Status {
  const status = getCondition(obj.status?.conditions, type)?.status;
  return status === ConditionStatus.True || status === ConditionStatus.False
    ? status
    : ConditionStatus.Unknown;
}

/** Counts repaired and reported drift of one kind; see the module comment. */
export class DriftRepairMetrics {
  readonly #counter: Counter<"kind" | "setting">;
  readonly #reports: Counter<"kind" | "setting">;
  readonly #kind: string;

  /** Creates the series of every repaired and every reported setting of `kind` at 0. */
  constructor(
    registry: Registry,
    kind: string,
    settings: readonly string[],
    reported: readonly string[] = [],
  ) {
    this.#counter = counter(registry, {
      name: MANAGED_METRIC_NAMES.driftRepairs,
      help: "Reconciles that repaired drift of a setting in AWS, per kind and setting.",
      labelNames: ["kind", "setting"],
    });
    this.#reports = counter(registry, {
      name: MANAGED_METRIC_NAMES.driftReports,
      help: "Drift of a setting not changed in place, found and reported (once per new report), per kind and setting.",
      labelNames: ["kind", "setting"],
    });
    this.#kind = kind;
    for (const setting of settings) this.#counter.inc({ kind, setting }, 0);
    for (const setting of reported) this.#reports.inc({ kind, setting }, 0);
  }

  /** Records one reconcile that put `setting` back. */
  repaired(setting: string): void {
    this.#counter.inc({ kind: this.#kind, setting });
  }

  /** Records a new report of drift in `setting`, left as it is. */
  reported(setting: string): void {
    this.#reports.inc({ kind: this.#kind, setting });
  }
}
