/**
 * The flow's hook for what wakes objects besides Kubernetes: AWS change events (src/change-events)
 * enqueue an object the moment its resource changes, and while they flow an object's safety-net
 * poll can be longer. Without the hook, objects are polled every `--poll-interval`.
 */
import type { EventSource } from "../../runtime/controller/sources.ts";
import type { ResourceType } from "../../runtime/kube/object.ts";
import type { ManagedObject } from "./driver.ts";

/** What a change event said about the latest change of a resource (a CloudTrail record's fields). */
export interface ChangeHint {
  /** Who made it: the caller's ARN (CloudTrail userIdentity.arn), else its principal ID. */
  readonly caller?: string | undefined;
  /** The API call (CloudTrail eventName). */
  readonly eventName?: string | undefined;
  /** When (the event's time), in ms since the epoch. */
  readonly timeMs?: number | undefined;
}

/** See the module comment. */
export interface ResyncHooks {
  /** The source that enqueues objects of `resource` on outside events; the kind's controller watches it. */
  source(resource: ResourceType): EventSource;
  /**
   * Whether an outside event enqueued `key` (`namespace/name`) of `resource` since it was last
   * asked (undefined: none), with what the latest one said; asking clears it. The reconcile then
   * observes the resource afresh.
   */
  takeHint(resource: ResourceType, key: string): ChangeHint | undefined;
  /** The steady poll period of `obj`, in ms, given the normal one. */
  pollIntervalMs(obj: Readonly<ManagedObject>, normalMs: number): number;
}
