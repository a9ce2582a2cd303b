/**
 * What reading a change-event queue needs from IAM, for the generated IAM table of docs/aws.md
 * and the policies of config/iam (src/gen): receive, delete and the queue check, on that queue.
 * DeleteMessageBatch is authorized as sqs:DeleteMessage. A queue encrypted with a customer
 * managed KMS key also needs kms:Decrypt on the key to receive; the operator never sends to the
 * queue, so it needs no kms:GenerateDataKey.
 */
import type { IamFeature } from "../reconcilers/common/kind.ts";

/** The IAM the change-event reader needs. */
export const CHANGE_EVENTS_IAM: IamFeature = {
  name: "change events",
  sid: "ChangeEvents",
  iam: [
    { action: "sqs:ReceiveMessage", when: "only with --change-events or spec.changeEvents: on that queue" },
    {
      action: "sqs:DeleteMessage",
      calls: ["DeleteMessageBatch"],
      when: "only with --change-events or spec.changeEvents: on that queue",
    },
    {
      action: "sqs:GetQueueAttributes",
      when: "only with --change-events or spec.changeEvents: on that queue",
    },
    {
      action: "kms:Decrypt",
      calls: ["ReceiveMessage"],
      when: "only for a change-event queue encrypted with a customer managed KMS key: on that key, through SQS",
    },
  ],
};
