/**
 * Status conditions (the `metav1.Condition` shape) and the helpers reconcilers use to set them
 * without churning `lastTransitionTime`.
 */
import * as s from "../schema/builder.ts";

/** Condition types every kind reports. */
export const ConditionType = {
  /** The AWS resource exists and matches the spec. */
  Ready: "Ready",
  /** The last reconcile reached AWS and applied the spec (False: it failed; see reason). */
  Synced: "Synced",
  /**
   * Whether the object's `compute.cloud.com/poll-interval` annotation applies (True) or is refused
   * (False, reason InvalidPollInterval); absent while the object has no such annotation.
   */
  PollIntervalValid: "PollIntervalValid",
  /**
   * Under spec.driftPolicy Report: whether the resource differs from the spec (True, reason
   * DriftDetected, the paths in status.drift) or not (False, reason NoDrift); absent under Repair.
   */
  Drifted: "Drifted",
  /**
   * Under spec.changePolicy Approve: whether changes wait for approval (True, reason
   * AwaitingApproval or StaleApproval, the plan in status.pendingChanges) or not (False, reason
   * NoChangesPending); absent under Auto.
   */
  ChangesPending: "ChangesPending",
} as const;

/**
 * Reasons whose meaning this API documents (see docs/api.md). Reconcilers also use others, for
 * example the AWS error code of a terminal failure.
 */
export const ConditionReason = {
  /**
   * The AWS resource exists but is not this object's, and it may not adopt it: adoptExisting is
   * false, or the resource was found only through an identifier recorded in status.
   */
  NotOwned: "NotOwned",
  /** The AWS resource is tagged as owned by another object that still exists; never taken over. */
  OwnedByAnotherObject: "OwnedByAnotherObject",
  /**
   * The object asked to adopt (adoptExisting) a resource it did not leave itself, and the cluster
   * admin has not granted it adoption: the install (`--adoption`, `--adoption-namespaces`) for
   * objects acting with the operator's own identity, the AwsAccount (spec.adoption) for the
   * others. Nothing is written to AWS.
   */
  AdoptionNotAllowed: "AdoptionNotAllowed",
  /** The AWS resource was deleted outside the operator and onDeletedOutOfBand is Report. */
  DeletedOutOfBand: "DeletedOutOfBand",
  /**
   * Deletion waits because the bucket still holds objects and forceDelete is false, or was already
   * true when the object adopted the bucket (it counts only when set after the adoption).
   */
  BucketNotEmpty: "BucketNotEmpty",
  /**
   * Deletion waits because S3 Object Lock keeps object versions (retention or legal hold) that
   * forceDelete may not delete; the operator never bypasses governance retention.
   */
  BucketObjectsLocked: "BucketObjectsLocked",
  /**
   * The ConfigMap spec.writeOutputsTo names exists and is not this object's (not created by the
   * operator for it); it is never overwritten.
   */
  OutputConflict: "OutputConflict",
  /**
   * spec.writeOutputsTo.secretName is set in a namespace where the operator may not write Secrets
   * (not one of `--output-secret-namespaces`); no Secret is read or written there.
   */
  OutputNotAllowed: "OutputNotAllowed",
  /**
   * Synced=False: the object carries the `compute.cloud.com/paused: "true"` annotation; the
   * operator makes no AWS call for it and a deletion waits until the annotation is removed.
   */
  Paused: "Paused",
  /**
   * Synced=False: a setting of the AWS resource differs from the spec and the operator reports it
   * instead of changing it in place (an EC2 volume resized, re-encrypted or detached out of band);
   * the message names each setting and where it differs.
   */
  DriftNotRepaired: "DriftNotRepaired",
  /**
   * PollIntervalValid=False: the `compute.cloud.com/poll-interval` annotation is not a duration or
   * is out of bounds; the message says which, and the operator's poll interval applies.
   */
  InvalidPollInterval: "InvalidPollInterval",
  /** Drifted=True: the resource differs from the spec and driftPolicy is Report. */
  DriftDetected: "DriftDetected",
  /** Drifted=False: the resource matches the spec. */
  NoDrift: "NoDrift",
  /**
   * ChangesPending=True and Synced=False: changes wait for the annotation
   * compute.cloud.com/approved-changes to carry status.pendingChanges.hash.
   */
  AwaitingApproval: "AwaitingApproval",
  /**
   * ChangesPending=True and Synced=False: the approved hash is not the current plan's (the spec or
   * AWS moved since); nothing was applied and the new plan is in status.pendingChanges.
   */
  StaleApproval: "StaleApproval",
  /** ChangesPending=False: nothing waits for approval. */
  NoChangesPending: "NoChangesPending",
} as const;

/** Values of `condition.status`. */
export const ConditionStatus = {
  True: "True",
  False: "False",
  Unknown: "Unknown",
} as const;

/** Schema of one condition, identical in shape and limits to `metav1.Condition`. */
export const conditionSchema = s.object(
  {
    type: s.string({
      description: "Type of condition in CamelCase, for example Ready or Synced.",
      required: true,
      maxLength: 316,
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    }),
    status: s.enumOf(["True", "False", "Unknown"], {
      description: "Status of the condition: True, False or Unknown.",
      required: true,
    }),
    observedGeneration: s.integer({
      description:
        "metadata.generation of the object when the condition was set. A condition whose " +
        "observedGeneration is older than metadata.generation describes an earlier spec.",
      format: "int64",
      minimum: 0,
    }),
    lastTransitionTime: s.dateTime({
      description: "When the condition last changed status (not when reason or message last changed).",
      required: true,
    }),
    reason: s.string({
      description:
        "Machine-readable CamelCase reason for the condition's last transition, for example " +
        "Available, Creating, BucketNotEmpty or an AWS error code.",
      required: true,
      minLength: 1,
      maxLength: 1024,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    }),
    message: s.string({
      description: "Human-readable detail. Stable for a given cause: no request IDs or timestamps.",
      required: true,
      maxLength: 32768,
    }),
  },
  { description: "One aspect of the object's observed state." },
);

/** A status condition as served. */
export type Condition = s.Static<typeof conditionSchema>;

/** What a reconciler supplies to {@link setCondition}; the time is filled in by the helper. */
export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

/** Schema of the `conditions` list: a map keyed by `type`, so each type appears once. */
export const conditionsSchema = s.array(conditionSchema, {
  description: "Current conditions of the object. Ready and Synced are always reported once reconciled.",
  listType: "map",
  listMapKeys: ["type"],
  maxItems: 16,
});

/**
 * Formats a time as Kubernetes does for `metav1.Time`: RFC 3339 in UTC with whole seconds.
 */
export function formatTime(now: Date | number): string {
  const ms = typeof now === "number" ? now : now.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Returns the condition of the given type, or undefined. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of the given type exists and has status True. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === "True";
}

/**
 * Returns a new list with `update` applied; the input list is never modified (it may belong to
 * the informer cache).
 *
 * Guarantees: `lastTransitionTime` is kept when the status of an existing condition does not
 * change, and set to `now` (whole seconds) when it does or the condition is new; an existing
 * condition keeps its position and a new one is appended, so setting identical values twice
 * yields deep-equal lists and status writes can be skipped by deep comparison.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date | number,
): Condition[] {
  const list = conditions ? conditions.map((c) => ({ ...c })) : [];
  const index = list.findIndex((c) => c.type === update.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    type: update.type,
    status: update.status,
    ...(update.observedGeneration !== undefined ? { observedGeneration: update.observedGeneration } : {}),
    lastTransitionTime:
      previous && previous.status === update.status ? previous.lastTransitionTime : formatTime(now),
    reason: update.reason,
    message: update.message,
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** Returns a new list without the condition of the given type. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type).map((c) => ({ ...c }));
}
