/**
 * The `compute.cloud.com/paused: "true"` annotation, for every kind alike. While an object
 * carries it, the flow makes no AWS call for it (not even the account's role session) and
 * changes none of its finalizers: it only records `Synced=False`, reason `Paused`, with an
 * Event when that begins. A deletion of a paused object that holds the finalizer waits, and its
 * condition and Event say so. Removing the annotation (or giving it any other value) resumes the
 * managed flow at once: the controller enqueues an object whose paused annotation changed, and
 * that reconcile observes the resource once, as every other reconcile does.
 *
 * This module holds the pure decisions; the flow (./flow/reconciler.ts) executes them.
 */
import { PAUSED_ANNOTATION } from "../../api/v1/index.ts";
import type { ManagedObject } from "./driver.ts";
import { notTrue, type ConditionValue } from "./flow/conditions.ts";
import { Reason } from "./reasons.ts";

/** The annotation value that pauses an object; any other value, or none, does not. */
export const PAUSED_VALUE = "true";

/** Whether `obj` is paused. */
export function isPaused(obj: Pick<ManagedObject, "metadata">): boolean {
  return obj.metadata.annotations?.[PAUSED_ANNOTATION] === PAUSED_VALUE;
}

/** The Synced condition of a paused object; `deleting` when its deletion waits for the pause to end. */
export function pausedCondition(deleting: boolean): ConditionValue {
  return notTrue(
    Reason.Paused,
    deleting
      ? `the deletion waits: the ${PAUSED_ANNOTATION} annotation is "${PAUSED_VALUE}"; ` +
          "the operator makes no AWS call for this object and keeps its finalizer until the annotation is removed"
      : `the ${PAUSED_ANNOTATION} annotation is "${PAUSED_VALUE}": ` +
          "the operator makes no AWS call for this object until the annotation is removed",
  );
}
