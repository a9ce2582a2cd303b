/**
 * The SqsQueue kind: the shared managed-resource flow with the SQS driver.
 */
import {
  S3BucketResource,
  SqsQueueResource,
  sqsQueueCrd,
  type S3Bucket,
  type SqsQueue,
} from "../../api/v1/index.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { SQS_QUEUE_TRAITS } from "./traits.ts";
import { kindTagSnapshots } from "../common/tag-snapshots.ts";
import { referenceKey, referrersIn } from "../common/references.ts";
import { sqsQueueOutputs } from "./outputs.ts";
import { sqsQueueChangeEvents } from "./change-events.ts";
import { SqsQueueDriver, type SqsQueueObject, type SqsQueueView } from "./driver.ts";
import type { ResolvedReferences } from "./model.ts";
import { resolveReferences, type QueueLookups } from "./references.ts";
import { SqsQueueExporter } from "./export.ts";

export { referrers } from "../common/references.ts";
export { QueueExistsError, SqsQueueDriver, type SqsQueueObject, type SqsQueueView } from "./driver.ts";

/** The cache index of queues by the dead-letter queue they name: `namespace/name`. */
export const DEAD_LETTER_QUEUE_INDEX = "deadLetterQueueRef";

/** The {@link DEAD_LETTER_QUEUE_INDEX} values of `q`: the queue its queueRef names, if any. */
export function deadLetterQueueIndex(q: Readonly<SqsQueue>): string[] {
  const ref = q.spec.deadLetterQueue?.queueRef?.name;
  return ref === undefined ? [] : [referenceKey(q.metadata.namespace, ref)];
}

/** The cache index of queues by the source queues their redriveAllowPolicy names: `namespace/name`. */
export const REDRIVE_SOURCE_INDEX = "redriveSourceQueueRef";

/** The {@link REDRIVE_SOURCE_INDEX} values of `q`: the queues its sourceQueueRefs name. */
export function redriveSourceIndex(q: Readonly<SqsQueue>): string[] {
  return (q.spec.redriveAllowPolicy?.sourceQueueRefs ?? []).map((r) =>
    referenceKey(q.metadata.namespace, r.name),
  );
}

/** The cache index of queues by the S3Bucket objects their allowS3Notifications names: `namespace/name`. */
export const S3_NOTIFICATION_SOURCE_INDEX = "allowS3NotificationsBucketRef";

/** The {@link S3_NOTIFICATION_SOURCE_INDEX} values of `q`: the buckets it lets notify it. */
export function s3NotificationSourceIndex(q: Readonly<SqsQueue>): string[] {
  return (q.spec.allowS3Notifications ?? []).map((a) => referenceKey(q.metadata.namespace, a.bucketRef.name));
}

/** The `sqsqueue` controller's kind. */
export const sqsQueueKind: KindModule = defineKind<SqsQueueObject, SqsQueueView, ResolvedReferences>({
  traits: SQS_QUEUE_TRAITS,
  name: "sqsqueue",
  resource: SqsQueueResource,
  crd: sqsQueueCrd,
  changeEvents: sqsQueueChangeEvents,
  iam: [
    { action: "sqs:CreateQueue" },
    { action: "sqs:DeleteQueue" },
    { action: "sqs:GetQueueUrl" },
    { action: "sqs:GetQueueAttributes" },
    { action: "sqs:SetQueueAttributes" },
    { action: "sqs:ListQueueTags" },
    { action: "sqs:ListQueues", when: "by kubeprovisioner export" },
    // CreateQueue puts the operator's tags on the new queue, which SQS authorizes as sqs:TagQueue too.
    { action: "sqs:TagQueue", calls: ["TagQueue", "CreateQueue"] },
    { action: "sqs:UntagQueue" },
  ],
  outputs: sqsQueueOutputs,
  exporter: (_deps, aws) => new SqsQueueExporter(aws),
  references: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    const buckets = deps.client.resource<S3Bucket>(S3BucketResource);
    const lookups: QueueLookups = { queues: (ref) => queues.get(ref), buckets: (ref) => buckets.get(ref) };
    return (obj) => resolveReferences(obj, lookups);
  },
  driver: (deps) =>
    new SqsQueueDriver({
      aws: deps.aws,
      tagPolicy: deps.tagPolicy,
      tagSnapshots: kindTagSnapshots(deps, SqsQueueResource.kind, "sqs"),
    }),
  // A change of a queue enqueues the queues that name it as their dead-letter queue, so they
  // pick up its ARN (or its deletion) at once instead of at the next poll; a change of an
  // S3Bucket enqueues the queues that allow it to send notifications (its name, its deletion);
  // a change of a queue also enqueues the queues whose redrive allow policy names it (its ARN).
  indexers: {
    [DEAD_LETTER_QUEUE_INDEX]: deadLetterQueueIndex,
    [S3_NOTIFICATION_SOURCE_INDEX]: s3NotificationSourceIndex,
    [REDRIVE_SOURCE_INDEX]: redriveSourceIndex,
  },
  watches: [
    {
      resource: SqsQueueResource,
      map: (deps) => referrersIn(deps, SqsQueueResource, DEAD_LETTER_QUEUE_INDEX),
    },
    {
      resource: S3BucketResource,
      map: (deps) => referrersIn(deps, SqsQueueResource, S3_NOTIFICATION_SOURCE_INDEX),
    },
    {
      resource: SqsQueueResource,
      map: (deps) => referrersIn(deps, SqsQueueResource, REDRIVE_SOURCE_INDEX),
    },
  ],
});
