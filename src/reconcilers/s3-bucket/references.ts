/**
 * What an S3Bucket's spec references resolve to, from the shared cache: the queues its
 * notifications name by queueRef, the buckets its replication rules name by bucketRef, the
 * bucket its logging writes into (logging.targetBucketRef) and the buckets it lets log into it
 * (allowLoggingFrom). Each object is found through ../common/references.ts `referencedObject`;
 * what it must be to serve (its region, type, readiness, its own grant of this bucket) is
 * checked here. The flow resolves them before observing the bucket, and the driver gets the
 * result (./settings/ turns it into the desired settings).
 */
import type { S3Bucket, SqsQueue } from "../../api/v1/index.ts";
import { DependencyNotReadyError, InvalidSpecError } from "../common/driver.ts";
import { Reason } from "../common/reasons.ts";
import {
  grantedBuckets,
  readyAsSpecified,
  referencedKindNotRunning,
  referencedObject,
} from "../common/references.ts";
import { bucketArn, type S3BucketObject } from "./model.ts";
import type { ResolvedTargets } from "./settings/index.ts";
import { loggingSid } from "./settings/policy.ts";

/** The objects of the shared cache a bucket's references may name; none: nothing is found. */
export interface BucketLookups {
  /** SqsQueue objects, for notification queues named by queueRef. */
  readonly queues?:
    ((ref: { namespace: string; name: string }) => Readonly<SqsQueue> | undefined) | undefined;
  /**
   * Whether the operator runs the SqsQueue controller (`--controllers`): without it a queueRef
   * waits with `ReferencedKindNotRunning`. @default true
   */
  readonly queuesRun?: boolean | undefined;
  /** S3Bucket objects, for replication destinations and logging peers named by bucketRef. */
  readonly buckets?:
    ((ref: { namespace: string; name: string }) => Readonly<S3Bucket> | undefined) | undefined;
}

/**
 * Every reference the spec makes, resolved from the cache through `lookups`; see each part for
 * what it waits for.
 * @throws DependencyNotReadyError while a referenced object is missing or not ready.
 * @throws InvalidSpecError when a reference can never serve.
 */
export function resolveReferences(obj: S3BucketObject, lookups: BucketLookups): ResolvedTargets {
  return {
    queueArns: notificationQueues(obj, lookups),
    bucketArns: replicationDestinations(obj, lookups),
    ...loggingTarget(obj, lookups),
    ...loggingSources(obj, lookups),
  };
}

/**
 * The bucket name of the S3Bucket spec.logging.targetBucketRef names, from the cache: it must
 * be another bucket in this region whose spec.allowLoggingFrom names this one, Ready and Synced
 * with that spec reconciled (so the grant is in its policy before S3 checks it).
 * @throws DependencyNotReadyError while it is missing, not Ready or not allowing this bucket yet.
 * @throws InvalidSpecError when it is this bucket or in another region.
 */
function loggingTarget(obj: S3BucketObject, lookups: BucketLookups): Pick<ResolvedTargets, "loggingTarget"> {
  const name = obj.spec.logging?.targetBucketRef?.name;
  if (name === undefined) return {};
  const me = obj.metadata.name ?? "";
  const target = referencedObject({
    what: `logging: the bucket ${name}`,
    name,
    referrer: obj,
    lookup: (ref) => lookups.buckets?.(ref),
    missing: Reason.LoggingTargetNotReady,
    itself: {
      reason: Reason.LoggingTargetMismatch,
      message: "logging: targetBucketRef names this bucket itself; name another bucket",
    },
  });
  if (target.spec.region !== obj.spec.region) {
    throw new InvalidSpecError(
      Reason.LoggingTargetMismatch,
      `logging: the bucket ${name} is in ${target.spec.region}, not in ${obj.spec.region}; ` +
        `S3 writes access logs only into a bucket of the same region`,
    );
  }
  if (!(target.spec.allowLoggingFrom ?? []).some((a) => a.bucketRef.name === me)) {
    throw new DependencyNotReadyError(
      Reason.LoggingTargetNotReady,
      `logging: the bucket ${name} does not allow this bucket's logs: add {bucketRef: {name: ${me}}} ` +
        `to its spec.allowLoggingFrom`,
    );
  }
  if (target.status?.bucketArn === undefined || !readyAsSpecified(target)) {
    throw new DependencyNotReadyError(
      Reason.LoggingTargetNotReady,
      `logging: waiting for the bucket ${name} to be Ready with this bucket allowed`,
    );
  }
  return { loggingTarget: target.spec.bucketName };
}

/**
 * The buckets spec.allowLoggingFrom names, from the cache: each must exist as an S3Bucket object
 * (its bucket need not exist yet), and spec.policy must not use the Sids of their statements.
 * @throws DependencyNotReadyError while a named S3Bucket object does not exist.
 * @throws InvalidSpecError when spec.policy uses one of those Sids.
 */
function loggingSources(
  obj: S3BucketObject,
  lookups: BucketLookups,
): Pick<ResolvedTargets, "loggingSources"> {
  const allowed = obj.spec.allowLoggingFrom;
  if (allowed === undefined) return {};
  const loggingSources = grantedBuckets({
    field: "allowLoggingFrom",
    refs: allowed,
    namespace: obj.metadata.namespace ?? "",
    lookup: (ref) => lookups.buckets?.(ref),
    arnOf: bucketArn,
    missing: Reason.LoggingSourceNotFound,
    sidOf: loggingSid,
    policy: obj.spec.policy,
  });
  return { loggingSources };
}

/**
 * The ARNs of the buckets spec.replication names by bucketRef, read from the cache: each must
 * exist with versioning: true, and be Ready with that spec reconciled (versioning enabled).
 * @throws DependencyNotReadyError while one is missing, not versioned or not Ready.
 * @throws InvalidSpecError for a rule that names this bucket itself.
 */
function replicationDestinations(obj: S3BucketObject, lookups: BucketLookups): Map<string, string> {
  const arns = new Map<string, string>();
  for (const rule of obj.spec.replication?.rules ?? []) {
    const name = rule.destination.bucketRef?.name;
    if (name === undefined || arns.has(name)) continue;
    const dest = referencedObject({
      what: `replication rule ${rule.id}: the bucket ${name}`,
      name,
      referrer: obj,
      lookup: (ref) => lookups.buckets?.(ref),
      missing: Reason.ReplicationDestinationNotReady,
      itself: {
        reason: Reason.ReplicationDestinationMismatch,
        message: `replication rule ${rule.id}: a bucket cannot replicate to itself`,
      },
    });
    if (!dest.spec.versioning) {
      throw new DependencyNotReadyError(
        Reason.ReplicationDestinationNotVersioned,
        `replication rule ${rule.id}: the destination bucket ${name} does not set versioning: true; ` +
          `S3 replicates only to versioned buckets`,
      );
    }
    const arn = dest.status?.bucketArn;
    if (arn === undefined || !readyAsSpecified(dest)) {
      throw new DependencyNotReadyError(
        Reason.ReplicationDestinationNotReady,
        `replication rule ${rule.id}: waiting for the destination bucket ${name} to be Ready with versioning enabled`,
      );
    }
    arns.set(name, arn);
  }
  return arns;
}

/**
 * The ARNs of the queues spec.notifications names by queueRef, read from the cache: each must
 * exist, be a standard queue in the bucket's region, allow this bucket in its
 * spec.allowS3Notifications, and be Ready and Synced with that spec reconciled (so the grant is in its
 * policy before S3 checks the destination).
 * @throws DependencyNotReadyError while one is missing, not Ready or not allowing this bucket yet.
 * @throws InvalidSpecError when one can never serve (another region, a FIFO queue).
 */
function notificationQueues(obj: S3BucketObject, lookups: BucketLookups): Map<string, string> {
  const queueArns = new Map<string, string>();
  for (const n of obj.spec.notifications?.queues ?? []) {
    const name = n.queueRef?.name;
    if (name === undefined || queueArns.has(name)) continue;
    if (lookups.queuesRun === false)
      throw referencedKindNotRunning(`notification ${n.id}`, "SqsQueue", name, "name the queue by queueArn");
    const queue = referencedObject({
      what: `notification ${n.id}: the queue ${name}`,
      name,
      referrer: obj,
      lookup: (ref) => lookups.queues?.(ref),
      missing: Reason.NotificationTargetNotReady,
    });
    if (queue.spec.region !== obj.spec.region) {
      throw new InvalidSpecError(
        Reason.NotificationTargetMismatch,
        `notification ${n.id}: the queue ${name} is in ${queue.spec.region}, not in ${obj.spec.region}; ` +
          `S3 sends notifications only to queues in the bucket's region`,
      );
    }
    if (queue.spec.fifo) {
      throw new InvalidSpecError(
        Reason.NotificationTargetMismatch,
        `notification ${n.id}: the queue ${name} is a FIFO queue; S3 sends notifications to standard queues only`,
      );
    }
    const me = obj.metadata.name ?? "";
    if (!(queue.spec.allowS3Notifications ?? []).some((a) => a.bucketRef.name === me)) {
      throw new DependencyNotReadyError(
        Reason.NotificationTargetNotReady,
        `notification ${n.id}: the queue ${name} does not allow this bucket to send to it: add ` +
          `{bucketRef: {name: ${me}}} to its spec.allowS3Notifications`,
      );
    }
    const arn = queue.status?.queueArn;
    if (arn === undefined || arn === "" || !readyAsSpecified(queue)) {
      throw new DependencyNotReadyError(
        Reason.NotificationTargetNotReady,
        `notification ${n.id}: waiting for the queue ${name} to be Ready with this bucket allowed`,
      );
    }
    queueArns.set(name, arn);
  }
  return queueArns;
}
