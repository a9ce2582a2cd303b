/**
 * The flow's hook for what wakes objects besides Kubernetes: AWS change events (src/change-events)
 * enqueue an object the moment its resource changes, and while they flow an object's safety-net
 * poll can be longer. Without the hook, objects are polled every `--poll-interval`.
 */
import type { EventSource } from "../../runtime/controller/sources.ts";
import type { ResourceType } from "../../runtime/kube/object.ts";
import type { ManagedObject } from "./driver.ts";

/** See the module comment. */
export interface ResyncHooks {
  /** The source that enqueues objects of `resource` on outside events; the kind's controller watches it. */
  source(resource: ResourceType): EventSource;
  /**
   * Whether an outside event enqueued `key` (`namespace/name`) of `resource` since it was last
   * asked; asking clears it. The reconcile then observes the resource afresh.
   */
  takeHint(resource: ResourceType, key: string): boolean;
  /** The steady poll period of `obj`, in ms, given the normal one. */
  pollIntervalMs(obj: Readonly<ManagedObject>, normalMs: number): number;
}
