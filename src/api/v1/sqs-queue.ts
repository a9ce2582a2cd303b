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
  accountRefField,
  accountRefKept,
  adoptExistingField,
  commonStatusFields,
  deletionPolicyField,
  managementPolicyField,
  driftPolicyField,
  changePolicyField,
  eachReferencedOnce,
  namespacedRefField,
  iamPolicyField,
  onDeletedOutOfBandField,
  regionField,
  tagsField,
  writeOutputsToField,
} from "./common.ts";
import type { API_VERSION } from "./group.ts";
import { CATEGORIES, GROUP, VERSION } from "./group.ts";
import { managementPolicyColumn, readyColumns, regionColumn, standardLabels } from "./printer.ts";

/** Where the SqsQueue kind is served. */
export const SqsQueueResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "sqsqueues",
  kind: "SqsQueue",
  namespaced: true,
});

/** The keys of the ConfigMap `spec.writeOutputsTo` names, with what each holds. */
export const SQS_QUEUE_OUTPUT_KEYS = [
  ["QUEUE_NAME", "the queue name"],
  ["QUEUE_URL", "the queue URL"],
  ["QUEUE_ARN", "the queue ARN"],
  ["QUEUE_REGION", "its region"],
] as const;

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
    delaySeconds: s.integer({
      description:
        "Seconds every new message is hidden before it can be received, 0-900. Unset: not managed. Mutable.",
      minimum: 0,
      maximum: 900,
    }),
    receiveWaitTimeSeconds: s.integer({
      description:
        "Long polling: seconds a ReceiveMessage call waits for a message when none is there, 0-20. " +
        "Unset: not managed. Mutable.",
      minimum: 0,
      maximum: 20,
    }),
    maximumMessageSize: s.integer({
      description:
        "Largest message in bytes, 1024-1048576 (1 MiB), as SQS allows. Unset: not managed. Mutable.",
      minimum: 1024,
      maximum: 1048576,
    }),
    contentBasedDeduplication: s.boolean({
      description:
        "FIFO only: deduplicate by a SHA-256 hash of the body when a message has no " +
        "deduplication ID. Unset: not managed. Mutable.",
    }),
    // FIFO high throughput.
    deduplicationScope: s.enumOf(["messageGroup", "queue"], {
      description:
        "FIFO only: whether message deduplication applies per message group (messageGroup, needed " +
        "for high throughput) or across the queue (queue, the SQS default). Unset: not managed. Mutable.",
    }),
    fifoThroughputLimit: s.enumOf(["perQueue", "perMessageGroupId"], {
      description:
        "FIFO only: whether the throughput quota applies to the whole queue (perQueue, the SQS " +
        "default) or to each message group (perMessageGroupId: high throughput, allowed only with " +
        "deduplicationScope: messageGroup). Unset: not managed. Mutable.",
    }),
    encryption: s.object(
      {
        sqsManaged: s.boolean({
          description: "Encrypt with keys SQS owns (SSE-SQS). Only true is meaningful.",
        }),
        kmsKeyId: s.string({
          description: "Encrypt with this KMS key (ID, ARN, alias or alias ARN; SSE-KMS).",
          minLength: 1,
          maxLength: 2048,
        }),
        dataKeyReusePeriodSeconds: s.integer({
          description: "With kmsKeyId: seconds SQS reuses a data key before calling KMS again, 60-86400.",
          minimum: 60,
          maximum: 86400,
        }),
      },
      {
        description:
          "Server-side encryption: {sqsManaged: true} or {kmsKeyId, dataKeyReusePeriodSeconds?}. " +
          "Unset: not managed. Mutable.",
        validations: [
          {
            rule: "(has(self.sqsManaged) && self.sqsManaged) != has(self.kmsKeyId)",
            message: "encryption takes exactly one of sqsManaged: true and kmsKeyId",
          },
          {
            rule: "!has(self.dataKeyReusePeriodSeconds) || has(self.kmsKeyId)",
            message: "dataKeyReusePeriodSeconds is allowed only with kmsKeyId",
            fieldPath: ".dataKeyReusePeriodSeconds",
          },
        ],
      },
    ),
    policy: iamPolicyField(
      "The queue's access policy as an IAM policy document. Unset: not managed. Set: enforced, " +
        "compared with the queue's policy as JSON values (formatting and key order never count). Mutable.",
    ),
    deadLetterQueue: s.object(
      {
        queueRef: namespacedRefField("SqsQueue", {
          description: "The dead-letter queue as an SqsQueue object in this namespace.",
        }),
        targetArn: s.string({
          description: "The dead-letter queue's ARN, for a queue this cluster does not manage.",
          maxLength: 256,
          pattern: "^arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+(\\.fifo)?$",
        }),
        maxReceiveCount: s.integer({
          description: "Receives after which SQS moves a message to the dead-letter queue, 1-1000.",
          required: true,
          minimum: 1,
          maximum: 1000,
        }),
      },
      {
        description:
          "Where SQS moves messages received maxReceiveCount times without being deleted (the " +
          "redrive policy): exactly one of queueRef and targetArn. The dead-letter queue must be of " +
          "the same type (FIFO or standard), account and region. Unset: not managed. Mutable.",
        validations: [
          {
            rule: "has(self.queueRef) != has(self.targetArn)",
            message: "deadLetterQueue takes exactly one of queueRef and targetArn",
          },
        ],
      },
    ),
    redriveAllowPolicy: s.object(
      {
        redrivePermission: s.enumOf(["allowAll", "denyAll", "byQueue"], {
          description:
            "Which queues may name this queue as their dead-letter queue: allowAll (any queue of " +
            "this account and region, SQS's default), denyAll (none), byQueue (only the source " +
            "queues listed).",
          required: true,
        }),
        sourceQueueRefs: s.array(
          namespacedRefField("SqsQueue", {
            description: "A source queue as an SqsQueue object in this namespace.",
          }),
          {
            description:
              "byQueue: source queues as SqsQueue objects in this namespace, each once, of this " +
              "queue's type and region. The queue waits (RedriveSourceNotReady) until each is " +
              "Ready, except one whose deadLetterQueue.queueRef names this queue: that one waits " +
              "for this queue, which lists it by the ARN it gets in this queue's account.",
            maxItems: 10,
            validations: [eachReferencedOnce("name", "each source queue may appear once in sourceQueueRefs")],
          },
        ),
        sourceQueueArns: s.array(
          s.string({
            description: "A source queue's ARN.",
            maxLength: 256,
            pattern: "^arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+(\\.fifo)?$",
          }),
          {
            description: "byQueue: source queues by ARN, for queues this cluster does not manage.",
            maxItems: 10,
            listType: "set",
          },
        ),
      },
      {
        description:
          "Which source queues may use this queue as their dead-letter queue (the redrive allow " +
          "policy). byQueue takes 1-10 source queues in all, from sourceQueueRefs and " +
          "sourceQueueArns; allowAll and denyAll take none. Unset: not managed. Mutable.",
        validations: [
          {
            rule: "self.redrivePermission == 'byQueue' || (!has(self.sourceQueueRefs) && !has(self.sourceQueueArns))",
            message: "sourceQueueRefs and sourceQueueArns are allowed only with redrivePermission byQueue",
          },
          {
            rule:
              "self.redrivePermission != 'byQueue' || " +
              "(has(self.sourceQueueRefs) ? size(self.sourceQueueRefs) : 0) + " +
              "(has(self.sourceQueueArns) ? size(self.sourceQueueArns) : 0) >= 1",
            message:
              "redrivePermission byQueue needs at least one source queue in sourceQueueRefs or sourceQueueArns",
          },
          {
            rule:
              "(has(self.sourceQueueRefs) ? size(self.sourceQueueRefs) : 0) + " +
              "(has(self.sourceQueueArns) ? size(self.sourceQueueArns) : 0) <= 10",
            message:
              "SQS takes at most 10 source queues in a redrive allow policy (sourceQueueRefs and " +
              "sourceQueueArns together); to allow more, use redrivePermission allowAll",
          },
        ],
      },
    ),
    allowS3Notifications: s.array(
      s.object(
        {
          bucketRef: namespacedRefField("S3Bucket", {
            description: "The bucket as an S3Bucket object in this namespace.",
            required: true,
          }),
        },
        { description: "A bucket whose event notifications may be sent to this queue." },
      ),
      {
        description:
          "Buckets that may send event notifications to this queue. Each adds one statement to " +
          "the queue's policy, Sid s3-notifications-<bucketName>, allowing s3.amazonaws.com " +
          "sqs:SendMessage with that bucket as aws:SourceArn; the statements are merged with " +
          "spec.policy, which must not use those Sids. Unset: not managed (removing it leaves the queue's policy as it is). Mutable.",
        minItems: 1,
        maxItems: 50,
        validations: [eachReferencedOnce("bucketRef.name", "each bucketRef may appear once")],
      },
    ),
    tags: tagsField("queue"),
    managementPolicy: managementPolicyField("queue", "queueName (in region)"),
    driftPolicy: driftPolicyField("queue"),
    changePolicy: changePolicyField("queue"),
    deletionPolicy: deletionPolicyField("queue"),
    adoptExisting: adoptExistingField(
      "A queue counts as existing when a queue named queueName exists in this account and region " +
        "but does not carry this object's ownership tags.",
    ),
    onDeletedOutOfBand: onDeletedOutOfBandField("queue"),
    writeOutputsTo: writeOutputsToField("queue", SQS_QUEUE_OUTPUT_KEYS),
    accountRef: accountRefField(),
  },
  {
    description: "Desired state of the SQS queue.",
    required: true,
    validations: [
      accountRefKept,
      {
        rule: "!self.fifo || self.queueName.endsWith('.fifo')",
        message: "a FIFO queue's queueName must end with .fifo",
        fieldPath: ".queueName",
      },
      {
        rule: "!has(self.contentBasedDeduplication) || self.fifo",
        message: "contentBasedDeduplication applies to FIFO queues only",
        fieldPath: ".contentBasedDeduplication",
      },
      // FIFO high throughput: the pairs SQS accepts.
      {
        rule: "!has(self.deduplicationScope) || self.fifo",
        message: "deduplicationScope applies to FIFO queues only",
        fieldPath: ".deduplicationScope",
      },
      {
        rule: "!has(self.fifoThroughputLimit) || self.fifo",
        message: "fifoThroughputLimit applies to FIFO queues only",
        fieldPath: ".fifoThroughputLimit",
      },
      {
        rule:
          "!has(self.fifoThroughputLimit) || self.fifoThroughputLimit != 'perMessageGroupId' || " +
          "(has(self.deduplicationScope) && self.deduplicationScope == 'messageGroup')",
        message:
          "fifoThroughputLimit perMessageGroupId requires deduplicationScope: messageGroup " +
          "(SQS allows the per-group limit only with per-group deduplication)",
        fieldPath: ".fifoThroughputLimit",
      },
      {
        rule:
          "!has(self.deadLetterQueue) || !has(self.deadLetterQueue.targetArn) || " +
          "self.deadLetterQueue.targetArn.endsWith('.fifo') == self.fifo",
        message: "a FIFO queue needs a FIFO dead-letter queue, and a standard queue a standard one",
        fieldPath: ".deadLetterQueue.targetArn",
      },
      {
        rule:
          "!has(self.redriveAllowPolicy) || !has(self.redriveAllowPolicy.sourceQueueArns) || " +
          "self.redriveAllowPolicy.sourceQueueArns.all(a, a.endsWith('.fifo') == self.fifo)",
        message:
          "a FIFO queue is the dead-letter queue of FIFO queues only, and a standard queue of " +
          "standard ones: each sourceQueueArns entry must be of this queue's type",
        fieldPath: ".redriveAllowPolicy.sourceQueueArns",
      },
      {
        rule: "!has(self.allowS3Notifications) || !self.fifo",
        message:
          "S3 sends event notifications to standard queues only: allowS3Notifications needs fifo: false",
        fieldPath: ".allowS3Notifications",
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
    observedAttributes: s.record(
      s.string({ description: "Attribute value, as SQS reports it.", maxLength: 32768 }),
      {
        description:
          "The queue's attributes as last read (GetQueueAttributes: VisibilityTimeout, " +
          "MessageRetentionPeriod, FifoQueue, Policy, RedrivePolicy, ...), without the " +
          "Approximate* message counters and QueueArn; reported only while " +
          "spec.managementPolicy is ObserveOnly.",
        maxProperties: 32,
      },
    ),
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
      managementPolicyColumn,
    ],
  });
}
