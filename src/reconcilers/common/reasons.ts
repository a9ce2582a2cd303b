/**
 * Every condition reason a managed object can carry, in one table: those the shared flow sets,
 * those of the ownership rules, the account hook and observe-only objects, and those each kind's
 * driver decides. The reasons docs/api.md documents are the API's own (`ConditionReason`,
 * src/api/v1/conditions.ts; the account ones `AccountReason`, src/api/v1/aws-account.ts) and
 * appear here under the same names. An AWS error code becomes a reason through
 * {@link conditionReason}. A new reason is one more entry here.
 */
import { AccountReason, ConditionReason } from "../../api/v1/index.ts";

/** The condition reasons of managed objects; see the module comment. */
export const Reason = {
  // The shared flow (./flow/).
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
  /** The ConfigMap or Secret spec.writeOutputsTo names exists and is not this object's. */
  OutputConflict: ConditionReason.OutputConflict,
  /** spec.writeOutputsTo.secretName in a namespace outside --output-secret-namespaces. */
  OutputNotAllowed: ConditionReason.OutputNotAllowed,
  /** Synced=False: the object carries the paused annotation (./pause.ts). */
  Paused: ConditionReason.Paused,
  /** Synced=False: a change the driver's plan refuses (a setting not changed in place). */
  DriftNotRepaired: ConditionReason.DriftNotRepaired,
  /** Drifted=True: under driftPolicy Report, the resource differs from the spec (../changes.ts). */
  DriftDetected: ConditionReason.DriftDetected,
  /** Drifted=False: the resource matches the spec. */
  NoDrift: ConditionReason.NoDrift,
  /** ChangesPending=True, Synced=False: under changePolicy Approve, the plan waits for approval. */
  AwaitingApproval: ConditionReason.AwaitingApproval,
  /** ChangesPending=True, Synced=False: the approved hash is not the current plan's. */
  StaleApproval: ConditionReason.StaleApproval,
  /** ChangesPending=False: nothing waits for approval. */
  NoChangesPending: ConditionReason.NoChangesPending,
  /** The Normal Event of an approved plan being applied. */
  ChangesApproved: "ChangesApproved",

  // Per-object timing (./timing.ts): the PollIntervalValid condition.
  /** PollIntervalValid=True: the compute.cloud.com/poll-interval annotation sets the poll period. */
  PollIntervalSet: "PollIntervalSet",
  /** PollIntervalValid=False: the annotation is no duration or out of bounds. */
  InvalidPollInterval: ConditionReason.InvalidPollInterval,

  // The ownership rules (./ownership.ts): the resource found is not this object's to take.
  NotOwned: ConditionReason.NotOwned,
  OwnedByAnotherObject: ConditionReason.OwnedByAnotherObject,
  AdoptionNotAllowed: ConditionReason.AdoptionNotAllowed,

  // The account hook (./account.ts and src/accounts).
  AccountRequired: AccountReason.AccountRequired,
  AccountNotAllowed: AccountReason.AccountNotAllowed,
  AccountNotReady: AccountReason.AccountNotReady,
  AccountChanged: AccountReason.AccountChanged,

  // Observe-only objects (./management-policy.ts).
  /** The resource the spec names does not exist in AWS. */
  NotFound: "NotFound",

  // Ec2Instance.
  /** Synced: a type change on a running instance that the spec does not let restart. */
  RestartRequired: "RestartRequired",
  /** amiId or instanceType is missing on an object about to launch (admission requires both unless it only observes). */
  MissingLaunchFields: "MissingLaunchFields",
  /** Deletion waits because EC2 refuses to terminate an instance with termination protection. */
  TerminationProtected: "TerminationProtected",

  // S3Bucket.
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
  /** Deletion waits because S3 Object Lock keeps object versions that forceDelete cannot delete. */
  BucketObjectsLocked: ConditionReason.BucketObjectsLocked,

  // SqsQueue.
  /** The dead-letter queue named by queueRef does not exist or has no ARN yet. */
  DeadLetterQueueNotReady: "DeadLetterQueueNotReady",
  /** The dead-letter queue named by queueRef is of the other type, or in another region. */
  DeadLetterQueueMismatch: "DeadLetterQueueMismatch",
  /** A source queue redriveAllowPolicy names by queueRef does not exist or is not Ready yet. */
  RedriveSourceNotReady: "RedriveSourceNotReady",
  /** A source queue redriveAllowPolicy names by queueRef can never use this queue (this queue, another type or region). */
  RedriveSourceMismatch: "RedriveSourceMismatch",

  // S3 event notifications to SQS queues (S3Bucket spec.notifications, SqsQueue spec.allowS3Notifications).
  /** S3Bucket: a queue named by queueRef does not exist, is not Ready, or does not allow this bucket yet. */
  NotificationTargetNotReady: "NotificationTargetNotReady",
  /** S3Bucket: a queue named by queueRef can never receive its notifications (another region, FIFO). */
  NotificationTargetMismatch: "NotificationTargetMismatch",
  /**
   * An object names another by reference whose kind this operator does not run (`--controllers`),
   * so the named object never becomes Ready.
   */
  ReferencedKindNotRunning: "ReferencedKindNotRunning",
  /** SqsQueue: a bucket named in allowS3Notifications does not exist as an S3Bucket object. */
  NotificationSourceNotFound: "NotificationSourceNotFound",
  /** SqsQueue: spec.policy uses a Sid that allowS3Notifications manages. */
  PolicyStatementConflict: "PolicyStatementConflict",

  // S3 server access logging (S3Bucket spec.logging and spec.allowLoggingFrom).
  /** The target named by targetBucketRef does not exist, is not Ready, or does not allow this bucket yet. */
  LoggingTargetNotReady: "LoggingTargetNotReady",
  /** The target named by targetBucketRef can never take the logs (this bucket itself, another region). */
  LoggingTargetMismatch: "LoggingTargetMismatch",
  /** A bucket named in allowLoggingFrom does not exist as an S3Bucket object. */
  LoggingSourceNotFound: "LoggingSourceNotFound",

  // S3 replication (S3Bucket spec.replication).
  /** A destination named by bucketRef does not exist or is not Ready with versioning enabled yet. */
  ReplicationDestinationNotReady: "ReplicationDestinationNotReady",
  /** A destination named by bucketRef does not set versioning: true, which S3 requires. */
  ReplicationDestinationNotVersioned: "ReplicationDestinationNotVersioned",
  /** A rule names the bucket itself as its destination. */
  ReplicationDestinationMismatch: "ReplicationDestinationMismatch",
} as const;

/** AWS codes contain dots (`InvalidAMIID.NotFound`); condition reasons may not. */
export function conditionReason(code: string): string {
  const r = code.replace(/[^A-Za-z0-9_,:]/g, "_").replace(/^[^A-Za-z]+/, "");
  return r.length > 0 ? r.slice(0, 1024) : "AwsError";
}
