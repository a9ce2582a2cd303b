/**
 * The SqsQueue kind: the shared managed-resource flow with the SQS driver.
 */
import { SqsQueueResource, sqsQueueCrd, type SqsQueue } from "../../api/v1/index.ts";
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { sqsQueueOutputs } from "./outputs.ts";
import { sqsQueueChangeEvents } from "./change-events.ts";
import { SqsQueueDriver, type SqsQueueObject, type SqsQueueView } from "./driver.ts";

export { QueueExistsError, SqsQueueDriver, type SqsQueueObject, type SqsQueueView } from "./driver.ts";

/** The cache index of queues by the dead-letter queue they name: `namespace/name`. */
export const DEAD_LETTER_QUEUE_INDEX = "deadLetterQueueRef";

/** The {@link DEAD_LETTER_QUEUE_INDEX} values of `q`: the queue its queueRef names, if any. */
export function deadLetterQueueIndex(q: Readonly<SqsQueue>): string[] {
  const ref = q.spec.deadLetterQueue?.queueRef?.name;
  return ref === undefined ? [] : [`${q.metadata.namespace ?? ""}/${ref}`];
}

/** The `sqsqueue` controller's kind. */
export const sqsQueueKind: KindModule = defineKind<SqsQueueObject, SqsQueueView>({
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
  indexers: { [DEAD_LETTER_QUEUE_INDEX]: deadLetterQueueIndex },
  watches: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    return [
      {
        resource: SqsQueueResource,
        map: (changed) => referrers((key) => queues.byIndex(DEAD_LETTER_QUEUE_INDEX, key), changed),
      },
    ];
  },
});

/**
 * The keys of the queues whose deadLetterQueue.queueRef names `dlq`, found through `byIndex`
 * ({@link DEAD_LETTER_QUEUE_INDEX}): one lookup, whatever the number of queues in the namespace.
 */
export function referrers(
  byIndex: (key: string) => readonly Readonly<SqsQueue>[],
  dlq: KubeObject,
): Request[] {
  return byIndex(`${dlq.metadata.namespace ?? ""}/${dlq.metadata.name ?? ""}`).map((q) => ({
    namespace: q.metadata.namespace ?? "",
    name: q.metadata.name ?? "",
  }));
}
