/**
 * The values an SqsQueue writes into the ConfigMap of `spec.writeOutputsTo`.
 */
import type { SQS_QUEUE_OUTPUT_KEYS, SqsQueue } from "../../api/v1/index.ts";

/** The output values of a queue, by key; a value not known yet is undefined. */
export function sqsQueueOutputs(
  q: Pick<SqsQueue, "spec" | "status">,
): Record<(typeof SQS_QUEUE_OUTPUT_KEYS)[number][0], string | undefined> {
  return {
    QUEUE_NAME: q.spec.queueName,
    QUEUE_URL: q.status?.queueUrl,
    QUEUE_ARN: q.status?.queueArn,
    QUEUE_REGION: q.spec.region,
  };
}
