/**
 * Prometheus metrics for AWS API traffic, recorded by the SDK middleware in middleware.ts for
 * every HTTP attempt of every call made through {@link AwsClients}.
 */

import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { counter, defaultRegistry, gauge, histogram } from "../runtime/metrics/registry.ts";
import type { AwsService } from "./service.ts";

/** Metric names, for dashboards and tests. */
export const AWS_METRIC_NAMES = Object.freeze({
  requests: "aws_api_requests_total",
  duration: "aws_api_request_duration_seconds",
  budgetWait: "aws_api_rate_budget_wait_seconds",
  budgetRate: "aws_api_rate_budget_permits_per_second",
  budgetDeferrals: "aws_api_rate_budget_deferrals_total",
});

/** The `code` label value of a successful request. */
export const OK_CODE = "OK";

/** Options for {@link AwsMetrics}. */
export interface AwsMetricsOptions {
  /** @default defaultRegistry */
  registry?: Registry;
}

/**
 * The AWS metric families on one registry. Creating two instances on the same registry shares
 * the families (get-or-create), so several client factories in one process add up.
 *
 * Semantics:
 * - `aws_api_requests_total{service,region,operation,code}` counts HTTP attempts (an SDK retry is a
 *   second request, as client-go counts them) plus calls that failed before any request left
 *   the process (missing credentials, bad endpoint); `code` is `OK` or the code from
 *   {@link classifyAwsError} (`RequestLimitExceeded`, `NoSuchBucket`, `TimeoutError`, ...).
 * - `aws_api_request_duration_seconds{service,region,operation}` is the latency of one attempt,
 *   from signing to the parsed response; time spent waiting for the rate budget is not included.
 * - `region` is the region of the client that sent the request. Clients exist only for valid
 *   region names that objects ask for, so the label is bounded by the regions in use.
 * - `aws_api_rate_budget_wait_seconds{service,region,budget}` is the time an attempt waited for
 *   its permits of one budget (`budget`: the service for S3 and SQS, the action for EC2, e.g.
 *   `RunInstances`, and `RunInstances/instances` for its instance bucket).
 * - `aws_api_rate_budget_permits_per_second{service,region,budget}` is the budget's current rate.
 * - `aws_api_rate_budget_deferrals_total{service,region,budget}` counts calls not sent because
 *   the budget would have held them too long (each booked a later slot; NoPermitYetError).
 *   They are not counted in `aws_api_requests_total`.
 */
export class AwsMetrics {
  readonly requests: Counter<"service" | "region" | "operation" | "code">;
  readonly duration: Histogram<"service" | "region" | "operation">;
  readonly budgetWait: Histogram<"service" | "region" | "budget">;
  readonly budgetRate: Gauge<"service" | "region" | "budget">;
  readonly budgetDeferrals: Counter<"service" | "region" | "budget">;

  constructor(options: AwsMetricsOptions = {}) {
    const registry = options.registry ?? defaultRegistry;
    this.requests = counter(registry, {
      name: AWS_METRIC_NAMES.requests,
      help: "AWS API requests by service, region, operation and result code (OK or the AWS error code).",
      labelNames: ["service", "region", "operation", "code"],
    });
    this.duration = histogram(registry, {
      name: AWS_METRIC_NAMES.duration,
      help: "Latency of one AWS API request attempt in seconds, excluding rate-budget waits.",
      labelNames: ["service", "region", "operation"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
    this.budgetWait = histogram(registry, {
      name: AWS_METRIC_NAMES.budgetWait,
      help: "Time an AWS API request waited for the client-side rate budget, in seconds.",
      labelNames: ["service", "region", "budget"],
      buckets: [0, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
    this.budgetRate = gauge(registry, {
      name: AWS_METRIC_NAMES.budgetRate,
      help: "Current client-side rate budget for AWS API requests, in permits per second.",
      labelNames: ["service", "region", "budget"],
    });
    this.budgetDeferrals = counter(registry, {
      name: AWS_METRIC_NAMES.budgetDeferrals,
      help: "AWS API calls not sent because the client-side rate budget would have held them too long; each booked a later slot.",
      labelNames: ["service", "region", "budget"],
    });
  }

  /** Records one finished attempt (or one call that never reached the wire). */
  observeRequest(
    service: AwsService,
    region: string,
    operation: string,
    code: string,
    seconds: number | undefined,
  ): void {
    this.requests.inc({ service, region, operation, code });
    if (seconds !== undefined) this.duration.observe({ service, region, operation }, seconds);
  }

  /** Records how long one attempt waited for a permit. */
  observeBudgetWait(service: AwsService, region: string, budget: string, seconds: number): void {
    this.budgetWait.observe({ service, region, budget }, seconds);
  }

  /** Counts one call deferred by a budget. */
  observeBudgetDeferral(service: AwsService, region: string, budget: string): void {
    this.budgetDeferrals.inc({ service, region, budget });
  }

  /** Publishes the current budget rate. */
  setBudgetRate(service: AwsService, region: string, budget: string, permitsPerSecond: number): void {
    this.budgetRate.set({ service, region, budget }, permitsPerSecond);
  }
}
