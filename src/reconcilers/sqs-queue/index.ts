/**
 * The SqsQueue kind: the shared managed-resource flow with the SQS driver.
 */
import { SqsQueueResource, sqsQueueCrd, type SqsQueue } from "../../api/v1/index.ts";
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { sqsQueueOutputs } from "./outputs.ts";
import { SqsQueueDriver, type ManagedSqsQueue, type SqsQueueView } from "./driver.ts";

export {
  QueueExistsError,
  SqsQueueDriver,
  SqsQueueReason,
  type ManagedSqsQueue,
  type SqsQueueView,
} from "./driver.ts";

/** The `sqsqueue` controller's kind. */
export const sqsQueueKind: KindModule = defineKind<ManagedSqsQueue, SqsQueueView>({
  name: "sqsqueue",
  resource: SqsQueueResource,
  crd: sqsQueueCrd,
  iam: [
    { action: "sqs:CreateQueue" },
    { action: "sqs:DeleteQueue" },
    { action: "sqs:GetQueueUrl" },
    { action: "sqs:GetQueueAttributes" },
    { action: "sqs:SetQueueAttributes" },
    { action: "sqs:ListQueueTags" },
    { action: "sqs:TagQueue" },
    { action: "sqs:UntagQueue" },
  ],
  outputs: sqsQueueOutputs,
  driver: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    return new SqsQueueDriver({ aws: deps.aws, tagPolicy: deps.tagPolicy, queues: (ref) => queues.get(ref) });
  },
  // A change of a queue enqueues the queues that name it as their dead-letter queue, so they
  // pick up its ARN (or its deletion) at once instead of at the next poll.
  watches: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    return [
      {
        resource: SqsQueueResource,
        map: (changed) => referrers(queues.list({ namespace: changed.metadata.namespace }), changed),
      },
    ];
  },
});

/** The keys of the queues among `candidates` whose deadLetterQueue.queueRef names `dlq`. */
export function referrers(candidates: readonly Readonly<SqsQueue>[], dlq: KubeObject): Request[] {
  return candidates
    .filter((q) => q.spec.deadLetterQueue?.queueRef?.name === dlq.metadata.name)
    .map((q) => ({ namespace: q.metadata.namespace ?? "", name: q.metadata.name ?? "" }));
}
