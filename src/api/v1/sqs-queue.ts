/**
 * The SqsQueue kind: one standard or FIFO SQS queue.
 *
 * The queue name, region and queue type identify the queue and are immutable. The visibility
 * timeout, retention period, tags and lifecycle policies are mutable and reconciled continuously.
 */
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import * as s from "../schema/builder.ts";
import { buildCrd, type CustomResourceDefinition } from "../schema/crd.ts";
import {
  adoptExistingField,
  commonStatusFields,
  deletionPolicyField,
  onDeletedOutOfBandField,
  regionField,
  tagsField,
} from "./common.ts";
import type { API_VERSION } from "./group.ts";
import { CATEGORIES, GROUP, VERSION } from "./group.ts";
import { readyColumns, regionColumn, standardLabels } from "./printer.ts";

/** Where the SqsQueue kind is served. */
export const SqsQueueResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "sqsqueues",
  kind: "SqsQueue",
  namespaced: true,
});

/** Schema of `SqsQueue.spec`. */
export const sqsQueueSpecSchema = s.object(
  {
    queueName: s.string({
      description:
        "Queue name: at most 80 characters of letters, digits, hyphens and underscores; a FIFO " +
        "queue's name ends in .fifo (included in the 80). Unique per account and region. Immutable.",
      required: true,
      minLength: 1,
      maxLength: 80,
      pattern: "^[A-Za-z0-9_-]+(\\.fifo)?$",
      validations: [s.immutable("queueName is immutable: SQS cannot rename a queue")],
    }),
    region: regionField("queue"),
    fifo: s.boolean({
      description:
        "Create a FIFO queue (exactly-once, ordered). queueName must end in .fifo if and only if " +
        "this is true. Immutable: SQS cannot convert a queue between standard and FIFO.",
      default: false,
      validations: [s.immutable("fifo is immutable: SQS cannot convert a queue between standard and FIFO")],
    }),
    visibilityTimeoutSeconds: s.integer({
      description:
        "Seconds a received message stays hidden from other consumers, 0-43200 (12 hours). Mutable.",
      default: 30,
      minimum: 0,
      maximum: 43200,
    }),
    messageRetentionSeconds: s.integer({
      description: "Seconds SQS keeps a message, 60 (1 minute) to 1209600 (14 days). Mutable.",
      default: 345600,
      minimum: 60,
      maximum: 1209600,
    }),
    tags: tagsField("queue"),
    deletionPolicy: deletionPolicyField("queue"),
    adoptExisting: adoptExistingField(
      "A queue counts as existing when a queue named queueName exists in this account and region " +
        "but does not carry this object's ownership tags.",
    ),
    onDeletedOutOfBand: onDeletedOutOfBandField("queue"),
  },
  {
    description: "Desired state of the SQS queue.",
    required: true,
    validations: [
      {
        rule: "!self.fifo || self.queueName.endsWith('.fifo')",
        message: "a FIFO queue's queueName must end with .fifo",
        fieldPath: ".queueName",
      },
      {
        rule: "self.fifo || !self.queueName.endsWith('.fifo')",
        message:
          "queueName ends with .fifo, which SQS reserves for FIFO queues: set fifo: true or rename the queue",
        fieldPath: ".queueName",
      },
    ],
  },
);

/** Schema of `SqsQueue.status`. */
export const sqsQueueStatusSchema = s.object(
  {
    ...commonStatusFields(),
    queueUrl: s.string({ description: "URL of the queue, used by SQS clients.", maxLength: 512 }),
    queueArn: s.string({ description: "ARN of the queue.", maxLength: 256 }),
    state: s.string({
      description: "Lifecycle state as last observed, for example Available, Deleting or Missing.",
      maxLength: 32,
    }),
  },
  { description: "Observed state of the SQS queue, written by the operator only." },
);

/** Desired state of an SQS queue, as served (defaults applied). */
export type SqsQueueSpec = s.Static<typeof sqsQueueSpecSchema>;
/** Desired state as a client may write it (defaulted fields optional). */
export type SqsQueueSpecInput = s.Input<typeof sqsQueueSpecSchema>;
/** Observed state of an SQS queue. */
export type SqsQueueStatus = s.Static<typeof sqsQueueStatusSchema>;

/** An SqsQueue object as served by the API server. */
export interface SqsQueue extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: "SqsQueue";
  spec: SqsQueueSpec;
  status?: SqsQueueStatus;
}

/** The generated CustomResourceDefinition of SqsQueue. */
export function sqsQueueCrd(): CustomResourceDefinition {
  return buildCrd({
    resource: SqsQueueResource,
    singular: "sqsqueue",
    shortNames: ["sqsq"],
    categories: CATEGORIES,
    labels: standardLabels,
    description:
      "SqsQueue is an SQS queue managed by kubeprovisioner. The operator creates it in " +
      "spec.region, keeps its visibility timeout, retention and tags in line with the spec, and " +
      "deletes it on deletion unless spec.deletionPolicy is Retain.",
    spec: sqsQueueSpecSchema,
    status: sqsQueueStatusSchema,
    selectableFields: [".spec.region", ".spec.queueName"],
    printerColumns: [
      { name: "QueueName", type: "string", jsonPath: ".spec.queueName", description: "SQS queue name" },
      { name: "State", type: "string", jsonPath: ".status.state", description: "Queue state" },
      { name: "QueueURL", type: "string", jsonPath: ".status.queueUrl", description: "Queue URL" },
      ...readyColumns,
      regionColumn,
      { name: "FIFO", type: "boolean", jsonPath: ".spec.fifo", description: "FIFO queue", priority: 1 },
    ],
  });
}
