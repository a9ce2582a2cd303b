/**
 * What the shared flow tells a driver about an object ({@link FlowFacts}), derived from the
 * object's own record: whether it is being deleted, whether it is settled, and whether a create is in flight. Drivers read these facts from their context
 * and never the flow's conditions themselves.
 */
import { ConditionStatus, ConditionType, getCondition } from "../../../api/v1/index.ts";
import { recordedIdOf, type FlowFacts, type ManagedObject } from "../driver.ts";
import { FlowReason } from "../reasons.ts";

/** The facts about `obj`, whose driver records the resource's identifier in `status[idField]`. */
export function flowFacts(obj: ManagedObject, idField: string): FlowFacts {
  const recordedId = recordedIdOf(obj, idField);
  const deleting = obj.metadata.deletionTimestamp !== undefined;
  const ready = getCondition(obj.status?.conditions, ConditionType.Ready);
  const settled =
    recordedId !== undefined &&
    !deleting &&
    ready?.status === ConditionStatus.True &&
    ready.observedGeneration === obj.metadata.generation;
  let createStartedAt: number | undefined;
  if (
    recordedId === undefined &&
    obj.status?.createToken !== undefined &&
    ready?.reason === FlowReason.Creating
  ) {
    // One create clock: the time the flow recorded with the token. The Ready condition's
    // lastTransitionTime is no clock for it: it stays put while Ready stays False, so after a
    // failed create and a spec fix it dates the earlier create.
    const t = Date.parse(obj.status.createRequestedAt ?? "");
    if (Number.isFinite(t)) createStartedAt = t;
  }
  return { deleting, settled, createStartedAt };
}
