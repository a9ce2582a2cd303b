/**
 * What reading a change-event queue needs from IAM, for the generated IAM table of docs/aws.md
 * and the policies of config/iam (src/gen): receive, delete and the queue check, on that queue.
 * DeleteMessageBatch is authorized as sqs:DeleteMessage.
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
  ],
};
