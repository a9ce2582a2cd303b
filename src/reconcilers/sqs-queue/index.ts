/**
 * The SqsQueue controller: the shared managed-resource flow with the SQS driver.
 */
import { SqsQueueResource } from "../../api/v1/index.ts";
import type { Controller } from "../../runtime/controller/index.ts";
import { setupManagedController, type ReconcilerDeps } from "../common/setup.ts";
import { SqsQueueDriver, type ManagedSqsQueue, type SqsQueueView } from "./driver.ts";

export { QueueExistsError, SqsQueueDriver, type ManagedSqsQueue, type SqsQueueView } from "./driver.ts";

/** Builds the `sqsqueue` controller and adds it to the manager. */
export function setupSqsQueueController(deps: ReconcilerDeps): Controller {
  return setupManagedController<ManagedSqsQueue, SqsQueueView>(
    "sqsqueue",
    SqsQueueResource,
    new SqsQueueDriver({ aws: deps.aws }),
    deps,
  );
}
