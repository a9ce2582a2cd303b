/**
 * The SqsQueue controller: the shared managed-resource flow with the SQS driver.
 */
import { SqsQueueResource, type SqsQueue } from "../../api/v1/index.ts";
import type { Controller } from "../../runtime/controller/index.ts";
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";
import { setupManagedController, type ReconcilerDeps } from "../common/setup.ts";
import { SqsQueueDriver, type ManagedSqsQueue, type SqsQueueView } from "./driver.ts";

export {
  QueueExistsError,
  SqsQueueDriver,
  SqsQueueReason,
  type ManagedSqsQueue,
  type SqsQueueView,
} from "./driver.ts";

/** Builds the `sqsqueue` controller and adds it to the manager. */
export function setupSqsQueueController(deps: ReconcilerDeps): Controller {
  const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
  return setupManagedController<ManagedSqsQueue, SqsQueueView>(
    "sqsqueue",
    SqsQueueResource,
    new SqsQueueDriver({ aws: deps.aws, queues: (ref) => queues.get(ref) }),
    deps,
    // A change of a queue enqueues the queues that name it as their dead-letter queue, so they
    // pick up its ARN (or its deletion) at once instead of at the next poll.
    [
      {
        resource: SqsQueueResource,
        map: (changed) => referrers(queues.list({ namespace: changed.metadata.namespace }), changed),
      },
    ],
  );
}

/** The keys of the queues among `candidates` whose deadLetterQueue.queueRef names `dlq`. */
export function referrers(candidates: readonly Readonly<SqsQueue>[], dlq: KubeObject): Request[] {
  return candidates
    .filter((q) => q.spec.deadLetterQueue?.queueRef?.name === dlq.metadata.name)
    .map((q) => ({ namespace: q.metadata.namespace ?? "", name: q.metadata.name ?? "" }));
}
