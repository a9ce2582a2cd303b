import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.ts";
import { counter, gauge, histogram } from "../metrics/registry.ts";

/**
 * Work queue metrics under controller-runtime's names, labels and buckets
 * (`sigs.k8s.io/controller-runtime/pkg/metrics/workqueue.go`), so dashboards and alerts written
 * for Go operators read ours unchanged. Both `name` and `controller` carry the queue's name, as
 * controller-runtime sets them; `workqueue_depth` also carries controller-runtime's `priority`
 * label, always empty here because these queues have no priorities (an empty label is the same
 * as no label to Prometheus).
 */

/** controller-runtime's histogram buckets for queue and work durations: 1e-8 s to 1e3 s, ×10. */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);

const LABELS = ["name", "controller"] as const;
type Label = (typeof LABELS)[number];
type DepthLabel = Label | "priority";

/**
 * What a queue reports, per item. Implemented by {@link createQueueMetrics}; a queue without a
 * name holds none and skips every call.
 */
export interface QueueMetrics<T> {
  /** An item became dirty (counted once until it is handed out). */
  add(item: T): void;
  /** An item was handed to a worker. */
  get(item: T): void;
  /** A worker finished an item. */
  done(item: T): void;
  /** An item was scheduled again through `addAfter` (includes rate-limited retries). */
  retry(): void;
  /** The queue is shut down and idle: stop reporting in-flight work for it. */
  close(): void;
}

interface Instruments {
  depth: Gauge<DepthLabel>;
  adds: Counter<Label>;
  latency: Histogram<Label>;
  workDuration: Histogram<Label>;
  unfinished: Gauge<Label>;
  longestRunning: Gauge<Label>;
  retries: Counter<Label>;
}

/** Live queues per registry, read by the scrape-time collectors of the in-flight gauges. */
const liveQueues = new WeakMap<Registry, Set<PrometheusQueueMetrics<unknown>>>();
/** Queue names whose series were created at zero, per registry (a second queue of the same name must not reset them). */
const initialisedNames = new WeakMap<Registry, Set<string>>();

function instruments(registry: Registry): Instruments {
  let live = liveQueues.get(registry);
  if (live === undefined) {
    live = new Set();
    liveQueues.set(registry, live);
  }
  const queues = live;
  return {
    depth: gauge<DepthLabel>(registry, {
      name: "workqueue_depth",
      help: "Current depth of workqueue by workqueue and priority",
      labelNames: ["name", "controller", "priority"],
    }),
    adds: counter<Label>(registry, {
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: LABELS,
    }),
    latency: histogram<Label>(registry, {
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: LABELS,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
    }),
    workDuration: histogram<Label>(registry, {
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
      labelNames: LABELS,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
    }),
    unfinished: gauge<Label>(registry, {
      name: "workqueue_unfinished_work_seconds",
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: LABELS,
      collect() {
        for (const q of queues) q.reportInFlight();
      },
    }),
    longestRunning: gauge<Label>(registry, {
      name: "workqueue_longest_running_processor_seconds",
      help: "How many seconds has the longest running processor for workqueue been running.",
      labelNames: LABELS,
      collect() {
        for (const q of queues) q.reportInFlight();
      },
    }),
    retries: counter<Label>(registry, {
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: LABELS,
    }),
  };
}

/** Options of {@link createQueueMetrics}. */
export interface QueueMetricsOptions {
  /** Queue (and controller) name, the value of both the `name` and `controller` labels. */
  name: string;
  /**
   * Time source. With {@link systemClock}, durations use the monotonic high-resolution timer
   * instead, so sub-millisecond queue and work durations land in the right bucket.
   * @default systemClock
   */
  clock?: Clock;
  /** Registry the metrics live in. */
  registry: Registry;
}

/**
 * Creates the metrics of one named queue. The series are created (at zero) immediately, so they
 * are visible before the first add. `workqueue_unfinished_work_seconds` and
 * `workqueue_longest_running_processor_seconds` are computed when the registry is scraped, from
 * the start times of the items being processed; no timer runs.
 */
export function createQueueMetrics<T>(options: QueueMetricsOptions): QueueMetrics<T> {
  return new PrometheusQueueMetrics<T>(options);
}

class PrometheusQueueMetrics<T> implements QueueMetrics<T> {
  readonly #now: () => number;
  readonly #live: Set<PrometheusQueueMetrics<unknown>>;
  readonly #labels: Record<Label, string>;
  readonly #depth: ReturnType<Gauge<DepthLabel>["labels"]>;
  readonly #adds: ReturnType<Counter<Label>["labels"]>;
  readonly #latency: ReturnType<Histogram<Label>["labels"]>;
  readonly #workDuration: ReturnType<Histogram<Label>["labels"]>;
  readonly #retries: ReturnType<Counter<Label>["labels"]>;
  readonly #unfinished: Gauge<Label>;
  readonly #longestRunning: Gauge<Label>;
  /** When each dirty item was first added; removed when it is handed out. Times in ms. */
  readonly #addedAt = new Map<T, number>();
  /** When each item being processed was handed out; removed by done. Times in ms. */
  readonly #startedAt = new Map<T, number>();

  constructor(options: QueueMetricsOptions) {
    const clock = options.clock ?? systemClock;
    this.#now = clock === systemClock ? () => performance.now() : () => clock.now();
    const m = instruments(options.registry);
    this.#labels = { name: options.name, controller: options.name };
    this.#depth = m.depth.labels({ ...this.#labels, priority: "" });
    this.#adds = m.adds.labels(this.#labels);
    this.#latency = m.latency.labels(this.#labels);
    this.#workDuration = m.workDuration.labels(this.#labels);
    this.#retries = m.retries.labels(this.#labels);
    this.#unfinished = m.unfinished;
    this.#longestRunning = m.longestRunning;
    let names = initialisedNames.get(options.registry);
    if (names === undefined) {
      names = new Set();
      initialisedNames.set(options.registry, names);
    }
    if (!names.has(options.name)) {
      names.add(options.name);
      this.#depth.set(0);
      m.latency.zero(this.#labels);
      m.workDuration.zero(this.#labels);
      this.#adds.inc(0);
      this.#retries.inc(0);
      this.#unfinished.set(this.#labels, 0);
      this.#longestRunning.set(this.#labels, 0);
    }
    this.#live = liveQueues.get(options.registry) ?? new Set();
    this.#live.add(this as PrometheusQueueMetrics<unknown>);
  }

  add(item: T): void {
    this.#adds.inc();
    this.#depth.inc();
    if (!this.#addedAt.has(item)) this.#addedAt.set(item, this.#now());
  }

  get(item: T): void {
    const now = this.#now();
    this.#depth.dec();
    const added = this.#addedAt.get(item);
    if (added !== undefined) {
      this.#latency.observe((now - added) / 1000);
      this.#addedAt.delete(item);
    }
    this.#startedAt.set(item, now);
  }

  done(item: T): void {
    const started = this.#startedAt.get(item);
    if (started === undefined) return;
    this.#workDuration.observe((this.#now() - started) / 1000);
    this.#startedAt.delete(item);
  }

  retry(): void {
    this.#retries.inc();
  }

  close(): void {
    if (!this.#live.delete(this as PrometheusQueueMetrics<unknown>)) return;
    this.#unfinished.set(this.#labels, 0);
    this.#longestRunning.set(this.#labels, 0);
  }

  /** Sets the two in-flight gauges from the items being processed right now. */
  reportInFlight(): void {
    const now = this.#now();
    let total = 0;
    let longest = 0;
    for (const started of this.#startedAt.values()) {
      const age = now - started;
      total += age;
      if (age > longest) longest = age;
    }
    this.#unfinished.set(this.#labels, total / 1000);
    this.#longestRunning.set(this.#labels, longest / 1000);
  }
}
