import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SQS_QUEUE_OUTPUT_KEYS } from "../../api/v1/index.ts";
import { sqsQueueOutputs } from "./outputs.ts";

describe("SqsQueue outputs", () => {
  const spec = {
    queueName: "orders.fifo",
    region: "eu-west-1",
    fifo: true,
    visibilityTimeoutSeconds: 30,
    messageRetentionSeconds: 345600,
    managementPolicy: "Full" as const,
    driftPolicy: "Repair" as const,
    changePolicy: "Auto" as const,
    deletionPolicy: "Delete" as const,
    adoptExisting: false,
    onDeletedOutOfBand: "Recreate" as const,
  };

  it("holds the name, URL, ARN and region, under the documented keys", () => {
    const url = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo";
    const arn = "arn:aws:sqs:eu-west-1:123456789012:orders.fifo";
    const out = sqsQueueOutputs({ spec, status: { queueUrl: url, queueArn: arn } });
    assert.deepEqual(out, {
      QUEUE_NAME: "orders.fifo",
      QUEUE_URL: url,
      QUEUE_ARN: arn,
      QUEUE_REGION: "eu-west-1",
    });
    assert.deepEqual(
      Object.keys(out),
      SQS_QUEUE_OUTPUT_KEYS.map(([k]) => k),
    );
  });

  it("has no URL or ARN before the queue exists", () => {
    const out = sqsQueueOutputs({ spec });
    assert.equal(out.QUEUE_URL, undefined);
    assert.equal(out.QUEUE_ARN, undefined);
  });
});
