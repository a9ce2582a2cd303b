/**
 * The change-event metrics, per queue (its URL):
 *
 * - `kubeprovisioner_change_events_received_total{queue}`: messages received.
 * - `kubeprovisioner_change_events_matched_total{queue,kind}`: events that enqueued objects of a kind.
 * - `kubeprovisioner_change_events_dropped_total{queue,reason}`: messages deleted without
 *   enqueueing anything, by reason ({@link DROP_REASONS}).
 * - `kubeprovisioner_change_events_lag_seconds{queue}`: from the change (the event's `time`) to
 *   its objects being enqueued.
 * - `kubeprovisioner_change_events_queue_healthy{queue}`: 1 while the queue is read, 0 while it
 *   cannot be (then the normal poll applies).
 * - `kubeprovisioner_change_events_receive_errors_total{queue,code}`: failed reads, by AWS code.
 */
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { counter, gauge, histogram } from "../runtime/metrics/registry.ts";

/** Why a message was dropped. */
export const DROP_REASONS = [
  /** Not JSON, or not an EventBridge event. */
  "malformed",
  /** An event of a service or type no kind reads. */
  "unsupported",
  /** A call the operator itself made. */
  "own_call",
  /** About a resource no object owns. */
  "unowned",
  /** Received too often without its objects being enqueued (their controller was not running). */
  "undeliverable",
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** The metric families, registered once per registry. */
export class ChangeEventMetrics {
  readonly received: Counter<"queue">;
  readonly matched: Counter<"queue" | "kind">;
  readonly dropped: Counter<"queue" | "reason">;
  readonly lag: Histogram<"queue">;
  readonly healthy: Gauge<"queue">;
  readonly receiveErrors: Counter<"queue" | "code">;

  constructor(registry: Registry) {
    this.received = counter(registry, {
      name: "kubeprovisioner_change_events_received_total",
      help: "Change-event messages received from the queue.",
      labelNames: ["queue"],
    });
    this.matched = counter(registry, {
      name: "kubeprovisioner_change_events_matched_total",
      help: "Change events that enqueued objects of a kind.",
      labelNames: ["queue", "kind"],
    });
    this.dropped = counter(registry, {
      name: "kubeprovisioner_change_events_dropped_total",
      help: "Change-event messages deleted without enqueueing anything, by reason.",
      labelNames: ["queue", "reason"],
    });
    this.lag = histogram(registry, {
      name: "kubeprovisioner_change_events_lag_seconds",
      help: "From a change in AWS (the event's time) to its objects being enqueued.",
      labelNames: ["queue"],
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
    });
    this.healthy = gauge(registry, {
      name: "kubeprovisioner_change_events_queue_healthy",
      help: "1 while the change-event queue is read (polls stretch to --poll-interval-with-events), 0 while it cannot be.",
      labelNames: ["queue"],
    });
    this.receiveErrors = counter(registry, {
      name: "kubeprovisioner_change_events_receive_errors_total",
      help: "Failed reads of the change-event queue, by AWS error code.",
      labelNames: ["queue", "code"],
    });
  }

  /** Starts every series of `queue` at 0. */
  init(queue: string, kinds: readonly string[]): void {
    this.received.inc({ queue }, 0);
    for (const kind of kinds) this.matched.inc({ queue, kind }, 0);
    for (const reason of DROP_REASONS) this.dropped.inc({ queue, reason }, 0);
    this.healthy.set({ queue }, 0);
  }
}
