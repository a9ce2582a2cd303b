/**
 * What the shared flow tells a driver about an object ({@link FlowFacts}), derived from the
 * object's own record: whether it is being deleted, whether it is settled, the create attempt the
 * flow recorded, and whether a create is in flight. Drivers read these facts from their context
 * and never the flow's conditions or status bookkeeping themselves.
 */
import { ConditionStatus, ConditionType, getCondition } from "../../../api/v1/index.ts";
import { recordedIdOf, type FlowFacts, type ManagedObject, type RecordedCreate } from "../driver.ts";
import { Reason } from "../reasons.ts";
import { createToken } from "../token.ts";

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
    ready?.reason === Reason.Creating
  ) {
    // One create clock: the time the flow recorded with the token. The Ready condition's
    // lastTransitionTime is no clock for it: it stays put while Ready stays False, so after a
    // failed create and a spec fix it dates the earlier create.
    const t = Date.parse(obj.status.createRequestedAt ?? "");
    if (Number.isFinite(t)) createStartedAt = t;
  }
  return { deleting, settled, create: recordedCreate(obj), createStartedAt };
}

/**
 * Whether the last reconcile of `obj` succeeded for its current generation: `Synced=True` at it,
 * and the object is not being deleted. Only such an object is polled; a reconcile of any other is
 * real work whatever enqueued it.
 */
export function reconciledAtGeneration(obj: ManagedObject): boolean {
  const synced = getCondition(obj.status?.conditions, ConditionType.Synced);
  return (
    obj.metadata.deletionTimestamp === undefined &&
    synced?.status === ConditionStatus.True &&
    synced.observedGeneration === obj.metadata.generation
  );
}

/**
 * The create attempt recorded in `obj.status`, when its token is the one the flow derives from
 * the object's UID and that attempt: status is writable by whoever may write the object, and a
 * token that does not match proves nothing.
 */
function recordedCreate(obj: ManagedObject): RecordedCreate | undefined {
  const { uid } = obj.metadata;
  const attempt = obj.status?.createAttempt;
  const token = obj.status?.createToken;
  if (uid === undefined || token === undefined || attempt === undefined) return undefined;
  if (!Number.isInteger(attempt) || attempt < 1) return undefined;
  let expected: string;
  try {
    expected = createToken(uid, attempt);
  } catch {
    return undefined;
  }
  if (token !== expected) return undefined;
  const requestedAt = Date.parse(obj.status?.createRequestedAt ?? "");
  return { token, attempt, requestedAt: Number.isFinite(requestedAt) ? requestedAt : undefined };
}
