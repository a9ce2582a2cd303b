/**
 * Work queues with client-go semantics: a fair, stingy, single-flight {@link WorkQueue}, a
 * {@link DelayingQueue} with `addAfter`, a {@link RateLimitingQueue} with retries, the rate
 * limiters, and controller-runtime's `workqueue_*` metrics.
 */
export { WorkQueue, type GetResult, type WorkQueueOptions } from "./queue.ts";
export { DelayingQueue, type DelayingQueueOptions } from "./delaying.ts";
export { RateLimitingQueue, type RateLimitingQueueOptions } from "./rate-limiting.ts";
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type BucketRateLimiterOptions,
  type DefaultControllerRateLimiterOptions,
  type ItemExponentialFailureRateLimiterOptions,
  type RateLimiter,
} from "./rate-limiters.ts";
export {
  WORKQUEUE_DURATION_BUCKETS,
  createQueueMetrics,
  type QueueMetrics,
  type QueueMetricsOptions,
} from "./metrics.ts";
