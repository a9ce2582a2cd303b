/**
 * How queues are named in AWS change events: CloudTrail's SQS management events
 * (SetQueueAttributes, TagQueue, UntagQueue, DeleteQueue, …) carry `requestParameters.queueUrl`,
 * CreateQueue `requestParameters.queueName`. Queues are indexed by name: the URL's host differs
 * between endpoints (regional, legacy, VPC, an emulator), its last path segment does not; the
 * event's region and account say which queue of that name.
 */
import type { ChangeEventNaming } from "../../change-events/naming.ts";
import { stringIn } from "../../change-events/naming.ts";
import type { SqsQueue } from "../../api/v1/index.ts";

/** The SqsQueue kind's naming table. */
export const sqsQueueChangeEvents: ChangeEventNaming<SqsQueue> = {
  eventSource: "sqs.amazonaws.com",
  namesInRequest: (p) => [...stringIn(queueNameOfUrl(p.queueUrl)), ...stringIn(p.queueName)],
  namesOf: (q) => stringIn(q.spec.queueName),
  regionOf: (q) => q.spec.region,
};

/** The queue name in a queue URL (its last path segment), if it is one. */
export function queueNameOfUrl(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  const name = url.replace(/\/+$/, "").split("/").pop();
  return name !== undefined && name !== "" && !name.includes(":") ? name : undefined;
}
