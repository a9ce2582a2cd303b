/** What is fixed about the SqsQueue kind (../common/kind-traits.ts). */
import type { KindTraits } from "../common/kind-traits.ts";
import { SQS_DRIFT_SETTINGS, type SqsQueueObject } from "./model.ts";

/** The SqsQueue kind's static facts. */
export const SQS_QUEUE_TRAITS: KindTraits<SqsQueueObject> = {
  noun: "queue",
  idField: "queueUrl",
  driftSettings: SQS_DRIFT_SETTINGS,
  observedFields: ["observedAttributes"],
};
