/**
 * What an SqsQueue's spec references resolve to, from the shared cache: the dead-letter queue of
 * deadLetterQueue.queueRef, the buckets allowed to notify it (allowS3Notifications), and the
 * source queues of redriveAllowPolicy.sourceQueueRefs. Each object is found through
 * ../common/references.ts `referencedObject`, so every reference reports a missing object and a
 * reference to the queue itself alike; what a queue must be to serve (its type, region,
 * readiness) is checked here.
 */
import { ConditionType, isConditionTrue, type S3Bucket, type SqsQueue } from "../../api/v1/index.ts";
import { s3BucketArn } from "../../aws/partition.ts";
import { DependencyNotReadyError, InvalidSpecError } from "../common/driver.ts";
import { Reason } from "../common/reasons.ts";
import { grantedBuckets, referencedObject } from "../common/references.ts";
import { s3NotificationSid, type RedriveSource, type ResolvedReferences } from "./model.ts";

/** The objects of the shared cache a queue's references may name; none: nothing is found. */
export interface QueueLookups {
  readonly queues?:
    ((ref: { namespace: string; name: string }) => Readonly<SqsQueue> | undefined) | undefined;
  readonly buckets?:
    ((ref: { namespace: string; name: string }) => Readonly<S3Bucket> | undefined) | undefined;
}

/**
 * @throws InvalidSpecError with `reason` when `other` (`what`, named for the message) is of the
 * other type (FIFO or standard) than `obj`, or in another region: SQS moves messages only to a
 * dead-letter queue of the same type and region.
 */
function mismatch(obj: Readonly<SqsQueue>, other: Readonly<SqsQueue>, what: string, reason: string): void {
  if (other.spec.fifo !== obj.spec.fifo) {
    const [mine, theirs] = obj.spec.fifo ? ["a FIFO", "a standard"] : ["a standard", "a FIFO"];
    throw new InvalidSpecError(
      reason,
      `this is ${mine} queue but ${what} is ${theirs} queue; SQS needs both of one type`,
    );
  }
  if (other.spec.region !== obj.spec.region) {
    throw new InvalidSpecError(
      reason,
      `${what} is in ${other.spec.region}, not in ${obj.spec.region}; SQS needs both in one region`,
    );
  }
}

/** The ARN of queue `q` once it is Ready with one: what a queue that names it may use. */
function readyArn(q: Readonly<SqsQueue>): string | undefined {
  const arn = q.status?.queueArn;
  return arn !== undefined && arn !== "" && isConditionTrue(q.status?.conditions, ConditionType.Ready)
    ? arn
    : undefined;
}

/**
 * Every reference the spec makes, resolved from the cache (each through
 * ../common/references.ts `referencedObject`): the dead-letter queue, the buckets allowed to
 * notify, the redrive source queues. This queue's own ARN is not among them: the driver adds it
 * once the queue exists.
 * @throws DependencyNotReadyError while one is missing or not Ready.
 * @throws InvalidSpecError when one can never serve (another type or region, or this queue).
 */
export function resolveReferences(obj: Readonly<SqsQueue>, lookups: QueueLookups): ResolvedReferences {
  return {
    ...deadLetter(obj, lookups),
    ...s3Sources(obj, lookups),
    ...redriveSources(obj, lookups),
  };
}

/**
 * The source queues spec.redriveAllowPolicy.sourceQueueRefs names, from the cache: each must
 * exist as another SqsQueue of this queue's type and region, and be Ready with its ARN. A
 * source whose deadLetterQueue.queueRef names this queue waits for this one instead, so it
 * is listed by the ARN it gets in this queue's account (the only account whose queues may
 * name this one as their dead-letter queue), and neither waits for the other.
 * @throws DependencyNotReadyError while one is missing, or not Ready and not waiting for this queue.
 * @throws InvalidSpecError when one can never use this queue (this queue, another type or region).
 */
function redriveSources(obj: Readonly<SqsQueue>, lookups: QueueLookups): ResolvedReferences {
  const refs = obj.spec.redriveAllowPolicy?.sourceQueueRefs;
  if (refs === undefined) return {};
  const me = obj.metadata.name ?? "";
  const redriveSources = refs.map(({ name }): RedriveSource => {
    const what = `redriveAllowPolicy: the source queue ${name}`;
    const source = referencedObject({
      what,
      name,
      referrer: obj,
      lookup: (ref) => lookups.queues?.(ref),
      missing: Reason.RedriveSourceNotReady,
      itself: {
        reason: Reason.RedriveSourceMismatch,
        message:
          "redriveAllowPolicy: a queue cannot be its own source queue (SQS refuses a queue as its own dead-letter queue)",
      },
    });
    mismatch(obj, source, what, Reason.RedriveSourceMismatch);
    const arn = readyArn(source);
    if (arn !== undefined) return { arn };
    if (source.spec.deadLetterQueue?.queueRef?.name === me)
      return { queueName: source.spec.queueName, region: source.spec.region };
    throw new DependencyNotReadyError(
      Reason.RedriveSourceNotReady,
      `redriveAllowPolicy: waiting for the source queue ${name} to be Ready`,
    );
  });
  return { redriveSources };
}

/**
 * The buckets spec.allowS3Notifications names, from the cache: each must exist as an S3Bucket
 * object (its bucket need not exist yet: the grant names the bucket by its name), and
 * spec.policy must not use the Sids of their statements.
 * @throws DependencyNotReadyError while a named S3Bucket object does not exist.
 * @throws InvalidSpecError when spec.policy uses one of those Sids.
 */
function s3Sources(obj: Readonly<SqsQueue>, lookups: QueueLookups): ResolvedReferences {
  const allowed = obj.spec.allowS3Notifications;
  if (allowed === undefined) return {};
  const s3NotificationSources = grantedBuckets({
    field: "allowS3Notifications",
    refs: allowed,
    namespace: obj.metadata.namespace ?? "",
    lookup: (ref) => lookups.buckets?.(ref),
    arnOf: s3BucketArn,
    missing: Reason.NotificationSourceNotFound,
    sidOf: s3NotificationSid,
    policy: obj.spec.policy,
  });
  return { s3NotificationSources };
}

/**
 * The ARN of the dead-letter queue that spec.deadLetterQueue.queueRef names, read from the
 * cache: it must exist, be Ready with an ARN, and match this queue's type and region.
 * @throws DependencyNotReadyError while it is missing or not Ready.
 * @throws InvalidSpecError when it can never serve (another type or region, or this queue).
 */
function deadLetter(obj: Readonly<SqsQueue>, lookups: QueueLookups): ResolvedReferences {
  const ref = obj.spec.deadLetterQueue?.queueRef;
  if (ref === undefined) return {};
  const dlq = referencedObject({
    what: `the dead-letter queue ${ref.name}`,
    name: ref.name,
    referrer: obj,
    lookup: (r) => lookups.queues?.(r),
    missing: Reason.DeadLetterQueueNotReady,
    itself: {
      reason: Reason.DeadLetterQueueMismatch,
      message: "a queue cannot be its own dead-letter queue",
    },
  });
  mismatch(obj, dlq, `its dead-letter queue ${ref.name}`, Reason.DeadLetterQueueMismatch);
  const arn = readyArn(dlq);
  if (arn === undefined)
    throw new DependencyNotReadyError(
      Reason.DeadLetterQueueNotReady,
      `waiting for the dead-letter queue ${ref.name} to be Ready`,
    );
  return { deadLetterTargetArn: arn };
}
