/**
 * The work queue as the controller sees it, and the default one it builds.
 */
import type { Registry } from "prom-client";
import type { Clock } from "../clock.ts";
import { RateLimitingQueue } from "../workqueue/rate-limiting.ts";

/** What `get` resolves to: a key to process, or the end of the queue. */
export type QueueGetResult =
  { readonly item: string; readonly shutdown: false } | { readonly shutdown: true };

/**
 * The rate-limiting work queue operations a controller uses, over `namespace/name` keys.
 * Required semantics (client-go): stingy, fair, single-flight per key (an add while a key is held
 * marks it dirty; `done` requeues it once); after `shutDown` adds are ignored; `shutDownWithDrain`
 * resolves once no key is held.
 */
export interface ControllerQueue {
  add(item: string): void;
  addAfter(item: string, ms: number): void;
  addRateLimited(item: string): void;
  forget(item: string): void;
  get(): Promise<QueueGetResult>;
  done(item: string): void;
  len(): number;
  shutDown(): void;
  shutDownWithDrain(): Promise<void>;
}

/** Options of {@link newControllerQueue}. */
export interface ControllerQueueOptions {
  /** The queue's metric name (the controller's name). */
  name: string;
  clock: Clock;
  registry: Registry;
}

/**
 * The queue a controller builds when none is injected: a {@link RateLimitingQueue} with
 * `defaultControllerRateLimiter()` (max of per-key 5 ms doubling to 1000 s and a 10/s burst 100
 * token bucket), reporting `workqueue_*` metrics under the controller's name.
 */
export function newControllerQueue(opts: ControllerQueueOptions): ControllerQueue {
  return new RateLimitingQueue<string>({ name: opts.name, clock: opts.clock, registry: opts.registry });
}
