import type { Counter, Histogram, Registry } from "prom-client";
import { counter, histogram } from "../metrics/registry.ts";

/** client-go's request latency buckets (k8s.io/component-base/metrics/prometheus/restclient). */
export const REST_LATENCY_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** The REST client's metrics, named and labelled as client-go registers them. */
export interface RestMetrics {
  /** Every request, watches included. `code` is the HTTP status or `<error>` without a response. */
  readonly requests: Counter<"code" | "method" | "host">;
  /** Time to the complete response body; watches are not observed (they are long-lived). */
  readonly duration: Histogram<"verb" | "host">;
}

/** Gets or creates the REST metrics in `registry`. */
export function restMetrics(registry: Registry): RestMetrics {
  return {
    requests: counter(registry, {
      name: "rest_client_requests_total",
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
      labelNames: ["code", "method", "host"],
    }),
    duration: histogram(registry, {
      name: "rest_client_request_duration_seconds",
      help: "Request latency in seconds. Broken down by verb, and host.",
      labelNames: ["verb", "host"],
      buckets: [...REST_LATENCY_BUCKETS],
    }),
  };
}
