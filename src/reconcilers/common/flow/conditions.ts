/**
 * The Ready and Synced conditions the flow sets, as named values instead of positional
 * `[status, reason, message]` tuples, and the one function that stamps them onto a status with
 * the object's generation (keeping `lastTransitionTime` while a condition's status holds).
 */
import {
  ConditionStatus,
  ConditionType,
  removeCondition,
  setCondition,
  type Condition,
} from "../../../api/v1/index.ts";
import type { ManagedObject } from "../driver.ts";
import { Reason } from "../reasons.ts";

/** The value of one condition: status, CamelCase reason, stable message. */
export interface ConditionValue {
  readonly status: Condition["status"];
  readonly reason: string;
  readonly message: string;
}

/** The conditions one step sets; an absent one keeps its current value, a null one is removed. */
export interface ConditionSet {
  readonly ready?: ConditionValue;
  readonly synced?: ConditionValue;
  /** Drifted (./change-policy.ts): only under driftPolicy Report. */
  readonly drifted?: ConditionValue | null;
  /** ChangesPending (./change-policy.ts): only under changePolicy Approve. */
  readonly changesPending?: ConditionValue | null;
}

/** Ready=True: the resource is usable. */
export function available(message: string): ConditionValue {
  return { status: ConditionStatus.True, reason: Reason.Available, message };
}

/** Ready=False (or Synced=False) for `reason`. */
export function notTrue(reason: string, message: string): ConditionValue {
  return { status: ConditionStatus.False, reason, message };
}

/** Synced=True: the last reconcile reached AWS and applied the spec. */
export const reconciled: ConditionValue = Object.freeze({
  status: ConditionStatus.True,
  reason: Reason.ReconcileSuccess,
  message: "",
});

/** Ready=False and Synced=False, both for the same `reason`. */
export function failing(reason: string, message: string): ConditionSet {
  const value = notTrue(reason, message);
  return { ready: value, synced: value };
}

/** Status of `obj` with the conditions of `set` applied, stamped with the object's generation. */
export function withConditions<T extends ManagedObject>(
  obj: T,
  set: ConditionSet,
  now: number,
): NonNullable<T["status"]> {
  const generation = obj.metadata.generation ?? 0;
  let conditions: Condition[] = [...(obj.status?.conditions ?? [])];
  for (const [type, value] of [
    [ConditionType.Ready, set.ready],
    [ConditionType.Synced, set.synced],
    [ConditionType.Drifted, set.drifted],
    [ConditionType.ChangesPending, set.changesPending],
  ] as const) {
    if (value === undefined) continue;
    if (value === null) {
      if (conditions.some((c) => c.type === type)) conditions = removeCondition(conditions, type);
      continue;
    }
    conditions = setCondition(conditions, { type, ...value, observedGeneration: generation }, now);
  }
  return { ...(obj.status ?? {}), observedGeneration: generation, conditions } as NonNullable<T["status"]>;
}
