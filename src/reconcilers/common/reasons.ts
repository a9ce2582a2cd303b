/**
 * Every condition reason the managed kinds set, in one place: those of the shared flow, those of
 * the ownership rules and of observe-only objects, and those each kind's driver decides. The
 * reasons docs/api.md documents are the API's own (`ConditionReason`, src/api/v1/conditions.ts)
 * and are included here under the same names. An AWS error code becomes a reason through
 * {@link conditionReason}; the AwsAccount kind's reasons are `AccountReason`
 * (src/api/v1/aws-account.ts). A new reason is one more entry here.
 */
import { ConditionReason } from "../../api/v1/index.ts";

/** Reasons the flow itself puts into conditions. */
export const FlowReason = {
  /** Ready=True: the resource is usable. */
  Available: "Available",
  /** Ready=False: the create intent is recorded and the create was (or is being) sent. */
  Creating: "Creating",
  /** Ready=False: the resource is being deleted (EC2 shutting-down). */
  Deleting: "Deleting",
  /** Synced=True: the last reconcile reached AWS and applied the spec. */
  ReconcileSuccess: "ReconcileSuccess",
  /** The resource was deleted outside the operator and onDeletedOutOfBand is Report. */
  DeletedOutOfBand: ConditionReason.DeletedOutOfBand,
  /** The ConfigMap spec.writeOutputsTo names exists and is not this object's. */
  OutputConflict: ConditionReason.OutputConflict,
} as const;

/** Reasons of the ownership rules (./ownership.ts): the resource found is not this object's to take. */
export const OwnershipReason = {
  NotOwned: ConditionReason.NotOwned,
  OwnedByAnotherObject: ConditionReason.OwnedByAnotherObject,
  AdoptionDisabled: ConditionReason.AdoptionDisabled,
} as const;

/** Reasons an observe-only object reports (./management-policy.ts). */
export const ObserveReason = {
  /** The resource the spec names does not exist in AWS. */
  NotFound: "NotFound",
} as const;

/** Reasons of the Ec2Instance driver. */
export const Ec2Reason = {
  /** Synced: a type change on a running instance that the spec does not let restart. */
  RestartRequired: "RestartRequired",
  /** amiId or instanceType is missing on an object about to launch (admission requires both unless it only observes). */
  MissingLaunchFields: "MissingLaunchFields",
} as const;

/** Reasons of the S3Bucket driver. */
export const S3BucketReason = {
  /** The name is taken by another AWS account (or the operator may not read the bucket). */
  BucketAlreadyExists: "BucketAlreadyExists",
  /** A bucket of this name exists in another region than spec.region. */
  BucketInOtherRegion: "BucketInOtherRegion",
  /** spec.tags plus the ownership tags exceed S3's 50 tags per bucket. */
  TooManyTags: "TooManyTags",
  /** Deletion waits because the operator may not read a bucket it recorded as its own. */
  BucketAccessDenied: "BucketAccessDenied",
  /** Deletion waits because the bucket still holds objects and forceDelete is false. */
  BucketNotEmpty: ConditionReason.BucketNotEmpty,
} as const;

/** Reasons of the SqsQueue driver. */
export const SqsQueueReason = {
  /** The dead-letter queue named by queueRef does not exist or has no ARN yet. */
  DeadLetterQueueNotReady: "DeadLetterQueueNotReady",
  /** The dead-letter queue named by queueRef is of the other type, or in another region. */
  DeadLetterQueueMismatch: "DeadLetterQueueMismatch",
} as const;

/** AWS codes contain dots (`InvalidAMIID.NotFound`); condition reasons may not. */
export function conditionReason(code: string): string {
  const r = code.replace(/[^A-Za-z0-9_,:]/g, "_").replace(/^[^A-Za-z]+/, "");
  return r.length > 0 ? r.slice(0, 1024) : "AwsError";
}
