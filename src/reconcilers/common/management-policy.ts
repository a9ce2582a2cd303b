/**
 * `spec.managementPolicy`, for every kind alike. `Full` (the default) is the managed flow.
 * `ObserveOnly` makes the object a read-only view of an existing resource: the flow observes it
 * through the driver's ordinary read path (the same calls a managed poll makes, never update)
 * and reports what it found; it never creates, tags, changes or deletes anything, and holds no
 * finalizer, so deleting the object touches nothing in AWS.
 *
 * Transitions need no memory of the previous policy:
 * - Full to ObserveOnly: the object still carries the finalizer; the flow removes it (the
 *   resource stays, as with `deletionPolicy: Retain`). The ownership tags stay on the resource,
 *   so it remains this object's own by the ownership rules (./ownership.ts).
 * - ObserveOnly to Full: the managed flow takes over; a resource carrying this object's UID tag
 *   is its own, every other is foreign and taken over only when the adoption rules allow it
 *   (./ownership.ts: spec.adoptExisting, and the cluster admin's grant for a resource the object's
 *   namespace did not leave itself), exactly as for an object created Full. Observing needs no
 *   grant: it never writes to AWS.
 *
 * This module holds the pure decisions; the flow (./flow/reconciler.ts) executes them.
 */
import type { Description, ManagedObject, ObservedDetails, Observation } from "./driver.ts";
import { available, notTrue, type ConditionValue } from "./flow/conditions.ts";
import { Reason } from "./reasons.ts";

/** Values of `spec.managementPolicy`. */
export const ManagementPolicy = {
  Full: "Full",
  ObserveOnly: "ObserveOnly",
} as const;

/** The `status.state` of an observe-only object whose resource does not exist. */
export const NOT_FOUND_STATE = "NotFound";

/** Whether `obj` only observes its resource. */
export function observesOnly(obj: Pick<ManagedObject, "spec">): boolean {
  return obj.spec.managementPolicy === ManagementPolicy.ObserveOnly;
}

/** The message of the Released Event when an object stops managing its resource. */
export function releasedMessage(noun: string): string {
  return `managementPolicy is ObserveOnly: the operator released the ${noun} and leaves it in AWS untouched`;
}

/** What an observation of an observe-only object puts into its status. */
export interface ObservedView<S> {
  /**
   * The resource is gone: every field the driver describes is cleared before {@link status} is
   * applied.
   */
  readonly clear: boolean;
  /** Fields to set in status; undefined values clear a field. */
  readonly status: Partial<S> & ObserveOnlyStatus;
  /** The Ready condition. */
  readonly ready: ConditionValue;
}

/** The status fields only observe-only objects carry. */
export interface ObserveOnlyStatus {
  observedTags?: Record<string, string> | undefined;
  state?: string | undefined;
}

/**
 * The status fields only observe-only objects carry, each cleared: what a managed object's
 * status is merged with, so a switch to Full leaves nothing stale behind.
 */
export function observeOnlyFieldsCleared(traits: {
  readonly observedFields?: readonly string[];
}): Record<string, undefined> {
  const out: Record<string, undefined> = { observedTags: undefined };
  for (const k of traits.observedFields ?? []) out[k] = undefined;
  return out;
}

/**
 * The status view of an observation: what the driver describes plus what it observes (the tags
 * and the kind's observe-only fields) when the resource exists, with Ready=True: the resource is
 * there, whatever its state (which status.state reports); the driver's readiness judges a
 * resource against a spec, and an observe-only spec asks nothing of it. When it does not exist:
 * Ready=False with reason NotFound and the described fields cleared. Either way the object is
 * polled at the steady poll period.
 */
export function observedView<S, R, O extends Pick<ManagedObject, "spec">>(
  obs: Observation<R>,
  obj: O,
  driver: {
    describe(resource: R, obj: O): Description<S>;
    observed(resource: R): ObservedDetails<S>;
  },
  noun: string,
): ObservedView<S> {
  if (!obs.exists) {
    return {
      clear: true,
      status: { state: NOT_FOUND_STATE } as Partial<S> & ObserveOnlyStatus,
      ready: notTrue(Reason.NotFound, `the ${noun} named in the spec does not exist in ${obj.spec.region}`),
    };
  }
  const { status } = driver.describe(obs.resource, obj);
  const observed = driver.observed(obs.resource);
  return {
    clear: false,
    status: { ...status, ...observed.status, observedTags: { ...observed.tags } },
    ready: available(`the ${noun} exists in ${obj.spec.region}; the operator only observes it`),
  };
}
