/**
 * The S3Bucket kind: one general purpose S3 bucket.
 *
 * The bucket name and region identify the bucket and are immutable. Versioning, tags and the
 * lifecycle policies are mutable and reconciled continuously.
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

/** Where the S3Bucket kind is served. */
export const S3BucketResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "s3buckets",
  kind: "S3Bucket",
  namespaced: true,
});

/** The S3 naming rules for general purpose buckets, each with its own message. */
const bucketNameRules = [
  { rule: "!self.contains('..')", message: "bucketName must not contain two adjacent periods" },
  {
    rule: "!self.matches('^[0-9]{1,3}\\\\.[0-9]{1,3}\\\\.[0-9]{1,3}\\\\.[0-9]{1,3}$')",
    message: "bucketName must not be formatted as an IP address",
  },
  {
    rule: "!self.startsWith('xn--') && !self.startsWith('sthree-') && !self.startsWith('amzn-s3-demo-')",
    message: "bucketName must not start with the reserved prefixes xn--, sthree- or amzn-s3-demo-",
  },
  {
    rule:
      "!self.endsWith('-s3alias') && !self.endsWith('--ol-s3') && !self.endsWith('.mrap') && " +
      "!self.endsWith('--x-s3') && !self.endsWith('--table-s3')",
    message:
      "bucketName must not end with the reserved suffixes -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3",
  },
  s.immutable("bucketName is immutable: S3 cannot rename a bucket"),
];

/** Default encryption of new objects (PutBucketEncryption). */
const encryptionSchema = s.object(
  {
    algorithm: s.enumOf(["AES256", "aws:kms"], {
      description: "AES256: S3-managed keys (SSE-S3). aws:kms: AWS KMS keys (SSE-KMS).",
      required: true,
    }),
    kmsKeyId: s.string({
      description:
        "KMS key ID, key ARN or alias ARN for aws:kms; without it S3 uses the AWS managed key " +
        "aws/s3. Allowed only with algorithm aws:kms.",
      minLength: 1,
      maxLength: 2048,
    }),
    bucketKeyEnabled: s.boolean({
      description: "Use an S3 Bucket Key for SSE-KMS, which cuts the KMS requests S3 makes.",
      default: false,
    }),
  },
  {
    description:
      "Default encryption of new objects. Unset: not managed (S3 applies SSE-S3 to every new " +
      "bucket). Set: enforced and repaired on drift. Mutable.",
    validations: [
      {
        rule: "!has(self.kmsKeyId) || self.algorithm == 'aws:kms'",
        message: "kmsKeyId is allowed only with algorithm aws:kms",
        fieldPath: ".kmsKeyId",
      },
    ],
  },
);

/** The four switches of S3 Block Public Access (PutPublicAccessBlock). */
const publicAccessBlockSchema = s.object(
  {
    blockPublicAcls: s.boolean({
      description: "Reject requests that add public ACLs to the bucket or its objects.",
      default: false,
    }),
    ignorePublicAcls: s.boolean({
      description: "Ignore every public ACL on the bucket and its objects.",
      default: false,
    }),
    blockPublicPolicy: s.boolean({
      description: "Reject bucket policies that grant public access.",
      default: false,
    }),
    restrictPublicBuckets: s.boolean({
      description: "Allow only AWS services and this account's principals when the policy is public.",
      default: false,
    }),
  },
  {
    description:
      "S3 Block Public Access for the bucket. Unset: not managed. Set: the four switches are " +
      "enforced (an omitted switch is false). Mutable.",
  },
);

/** S3 storage classes a lifecycle transition may move objects to. */
const TRANSITION_CLASSES = [
  "STANDARD_IA",
  "ONEZONE_IA",
  "INTELLIGENT_TIERING",
  "GLACIER_IR",
  "GLACIER",
  "DEEP_ARCHIVE",
] as const;

/**
 * The largest object size a lifecycle filter may name, in bytes: S3's maximum filter size, 50 TB
 * (S3 counts object sizes in binary units: 50 TiB).
 */
export const MAX_LIFECYCLE_FILTER_SIZE = 50 * 2 ** 40;

/** One lifecycle rule (PutBucketLifecycleConfiguration). */
const lifecycleRuleSchema = s.object(
  {
    id: s.string({
      description: "Rule ID, unique within the bucket (1-255 characters).",
      required: true,
      minLength: 1,
      maxLength: 255,
    }),
    enabled: s.boolean({ description: "Whether S3 applies the rule.", default: true }),
    prefix: s.string({
      description: "Apply the rule only to keys starting with this prefix; unset: every object.",
      maxLength: 1024,
    }),
    tags: s.record(s.string({ description: "Tag value.", maxLength: 256 }), {
      description:
        "Apply the rule only to objects carrying every one of these tags (and matching the other " +
        "conditions). At most 10 tags.",
      maxProperties: 10,
      validations: [
        {
          rule: "self.all(k, size(k) >= 1 && size(k) <= 128)",
          message: "each lifecycle tag key must be 1-128 characters",
        },
      ],
    }),
    objectSizeGreaterThan: s.integer({
      description:
        "Apply the rule only to objects larger than this many bytes (and matching the other " +
        "conditions), 0 to 54975581388800 (50 TB, S3's maximum filter size). S3 by default " +
        "transitions no object smaller than 128 KiB, whatever the filter.",
      format: "int64",
      minimum: 0,
      maximum: MAX_LIFECYCLE_FILTER_SIZE,
    }),
    objectSizeLessThan: s.integer({
      description:
        "Apply the rule only to objects smaller than this many bytes (and matching the other " +
        "conditions), 1 to 54975581388800 (50 TB).",
      format: "int64",
      minimum: 1,
      maximum: MAX_LIFECYCLE_FILTER_SIZE,
    }),
    expirationDays: s.integer({
      description: "Expire (delete, or add a delete marker to) objects this many days after creation.",
      minimum: 1,
      maximum: 36500,
    }),
    noncurrentVersionExpirationDays: s.integer({
      description: "Permanently delete object versions this many days after they become noncurrent.",
      minimum: 1,
      maximum: 36500,
    }),
    abortIncompleteMultipartUploadDays: s.integer({
      description: "Abort multipart uploads not completed this many days after they started.",
      minimum: 1,
      maximum: 36500,
    }),
    transitions: s.array(
      s.object(
        {
          days: s.integer({
            description: "Days after creation at which objects move.",
            required: true,
            minimum: 0,
            maximum: 36500,
          }),
          storageClass: s.enumOf(TRANSITION_CLASSES, {
            description: "The storage class objects move to.",
            required: true,
          }),
        },
        { description: "Move objects to another storage class after some days." },
      ),
      {
        description: "Storage class transitions of current object versions.",
        maxItems: 6,
        validations: [
          {
            rule: "self.all(t, self.exists_one(u, u.storageClass == t.storageClass))",
            message: "each storage class may appear in one transition only",
          },
        ],
      },
    ),
    noncurrentVersionTransitions: s.array(
      s.object(
        {
          noncurrentDays: s.integer({
            description: "Days after an object version becomes noncurrent at which it moves.",
            required: true,
            minimum: 1,
            maximum: 36500,
          }),
          storageClass: s.enumOf(TRANSITION_CLASSES, {
            description: "The storage class noncurrent versions move to.",
            required: true,
          }),
        },
        { description: "Move noncurrent object versions to another storage class after some days." },
      ),
      {
        description: "Storage class transitions of noncurrent object versions (versioned buckets).",
        maxItems: 6,
        validations: [
          {
            rule: "self.all(t, self.exists_one(u, u.storageClass == t.storageClass))",
            message: "each storage class may appear in one noncurrent version transition only",
          },
        ],
      },
    ),
  },
  {
    description:
      "A lifecycle rule: what S3 does with the objects it selects, and when. It selects the " +
      "objects that meet every condition it sets (prefix, tags, objectSizeGreaterThan, " +
      "objectSizeLessThan); the operator sends one condition alone and two or more joined by " +
      "S3's And, as S3 requires.",
    validations: [
      {
        rule:
          "has(self.expirationDays) || has(self.noncurrentVersionExpirationDays) || " +
          "has(self.abortIncompleteMultipartUploadDays) || (has(self.transitions) && size(self.transitions) > 0) || " +
          "(has(self.noncurrentVersionTransitions) && size(self.noncurrentVersionTransitions) > 0)",
        message:
          "a lifecycle rule needs at least one action: expirationDays, noncurrentVersionExpirationDays, " +
          "abortIncompleteMultipartUploadDays, transitions or noncurrentVersionTransitions",
      },
      {
        rule: "!has(self.abortIncompleteMultipartUploadDays) || !has(self.tags) || size(self.tags) == 0",
        message:
          "abortIncompleteMultipartUploadDays cannot be combined with tags: S3 selects incomplete " +
          "uploads by prefix only (an upload has no tags before it completes)",
      },
      {
        rule:
          "!has(self.abortIncompleteMultipartUploadDays) || " +
          "(!has(self.objectSizeGreaterThan) && !has(self.objectSizeLessThan))",
        message:
          "abortIncompleteMultipartUploadDays cannot be combined with objectSizeGreaterThan or " +
          "objectSizeLessThan: S3 selects incomplete uploads by prefix only (an upload has no size " +
          "before it completes)",
      },
      {
        rule:
          "!has(self.objectSizeGreaterThan) || !has(self.objectSizeLessThan) || " +
          "self.objectSizeGreaterThan < self.objectSizeLessThan",
        message:
          "objectSizeGreaterThan must be less than objectSizeLessThan: the range would select no object",
        fieldPath: ".objectSizeGreaterThan",
      },
      {
        rule:
          "!has(self.noncurrentVersionExpirationDays) || !has(self.noncurrentVersionTransitions) || " +
          "self.noncurrentVersionTransitions.all(t, t.noncurrentDays < self.noncurrentVersionExpirationDays)",
        message: "every noncurrent version transition must come before noncurrentVersionExpirationDays",
      },
      {
        rule: "!has(self.expirationDays) || !has(self.transitions) || self.transitions.all(t, t.days < self.expirationDays)",
        message: "every transition must come before expirationDays",
      },
    ],
  },
);

/** The S3 event types a notification may name (the S3 event notification types). */
export const S3_NOTIFICATION_EVENTS = [
  "s3:ObjectCreated:*",
  "s3:ObjectCreated:Put",
  "s3:ObjectCreated:Post",
  "s3:ObjectCreated:Copy",
  "s3:ObjectCreated:CompleteMultipartUpload",
  "s3:ObjectRemoved:*",
  "s3:ObjectRemoved:Delete",
  "s3:ObjectRemoved:DeleteMarkerCreated",
  "s3:ObjectRestore:*",
  "s3:ObjectRestore:Post",
  "s3:ObjectRestore:Completed",
  "s3:ObjectRestore:Delete",
  "s3:ReducedRedundancyLostObject",
  "s3:Replication:*",
  "s3:Replication:OperationFailedReplication",
  "s3:Replication:OperationMissedThreshold",
  "s3:Replication:OperationReplicatedAfterThreshold",
  "s3:Replication:OperationNotTracked",
  "s3:LifecycleExpiration:*",
  "s3:LifecycleExpiration:Delete",
  "s3:LifecycleExpiration:DeleteMarkerCreated",
  "s3:LifecycleTransition",
  "s3:IntelligentTiering",
  "s3:ObjectTagging:*",
  "s3:ObjectTagging:Put",
  "s3:ObjectTagging:Delete",
  "s3:ObjectAcl:Put",
] as const;

/** One queue notification (a QueueConfiguration of PutBucketNotificationConfiguration). */
const queueNotificationSchema = s.object(
  {
    id: s.string({
      description: "Notification ID, unique within the bucket (1-255 characters).",
      required: true,
      minLength: 1,
      maxLength: 255,
    }),
    events: s.array(
      s.enumOf(S3_NOTIFICATION_EVENTS, { description: "An S3 event type, such as s3:ObjectCreated:*." }),
      {
        description: "The event types that send a message; at least one, each once.",
        required: true,
        minItems: 1,
        maxItems: S3_NOTIFICATION_EVENTS.length,
        listType: "set",
      },
    ),
    filter: s.object(
      {
        prefix: s.string({
          description: "Only keys starting with this prefix.",
          minLength: 1,
          maxLength: 1024,
        }),
        suffix: s.string({
          description: "Only keys ending with this suffix.",
          minLength: 1,
          maxLength: 1024,
        }),
      },
      { description: "Narrows the notification to matching keys; unset: every key." },
    ),
    queueRef: namespacedRefField("SqsQueue", {
      description:
        "The queue as an SqsQueue object in this namespace, in the bucket's region. The bucket " +
        "waits (NotificationTargetNotReady) until that queue is Ready and its " +
        "spec.allowS3Notifications names this bucket, so that S3 may send to it.",
    }),
    queueArn: s.string({
      description:
        "The queue's ARN, for a queue this cluster does not manage; its policy must let " +
        "s3.amazonaws.com send messages with this bucket as aws:SourceArn.",
      maxLength: 256,
      pattern: "^arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$",
    }),
  },
  {
    description: "Send a message to an SQS queue when one of the events happens to a matching key.",
    validations: [
      {
        rule: "has(self.queueRef) != has(self.queueArn)",
        message: "a queue notification takes exactly one of queueRef and queueArn",
      },
    ],
  },
);

/** Event notifications of the bucket (PutBucketNotificationConfiguration). */
const notificationsSchema = s.object(
  {
    queues: s.array(queueNotificationSchema, {
      description: "Notifications to SQS queues, identified by id. S3 sends only to standard queues.",
      listType: "map",
      listMapKeys: ["id"],
      maxItems: 100,
    }),
    eventBridge: s.boolean({
      description:
        "Whether the bucket sends all of its events to Amazon EventBridge (the default event bus " +
        "of its account and region), where rules match and route them. true turns it on, false " +
        "off; both are repaired on drift. Unset: not managed (left as it is).",
    }),
  },
  {
    description:
      "Event notifications. Unset: not managed. Set: the bucket has exactly these queue " +
      "destinations (any other, such as an SNS topic or a Lambda function, is removed; {} " +
      "removes every one), and EventBridge delivery as eventBridge says. Mutable.",
  },
);

/** Storage classes a replica may be stored in. */
const REPLICA_STORAGE_CLASSES = [
  "STANDARD",
  "REDUCED_REDUNDANCY",
  "STANDARD_IA",
  "ONEZONE_IA",
  "INTELLIGENT_TIERING",
  "GLACIER",
  "DEEP_ARCHIVE",
  "GLACIER_IR",
] as const;

/** One replication rule (a Rule of PutBucketReplication). */
const replicationRuleSchema = s.object(
  {
    id: s.string({
      description: "Rule ID, unique within the bucket (1-255 characters).",
      required: true,
      minLength: 1,
      maxLength: 255,
    }),
    priority: s.integer({
      description: "Which rule wins when several select an object: the highest; each rule its own.",
      required: true,
      minimum: 0,
      maximum: 2147483647,
    }),
    enabled: s.boolean({ description: "Whether S3 applies the rule.", default: true }),
    prefix: s.string({
      description: "Replicate only keys starting with this prefix; unset: every object.",
      maxLength: 1024,
    }),
    destination: s.object(
      {
        bucketRef: namespacedRefField("S3Bucket", {
          description:
            "The destination as an S3Bucket object in this namespace. The bucket waits " +
            "(ReplicationDestinationNotReady) until that bucket is Ready with versioning: true.",
        }),
        bucketArn: s.string({
          description: "The destination bucket's ARN, for a bucket this cluster does not manage.",
          maxLength: 128,
          pattern: "^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]*[a-z0-9]$",
        }),
        storageClass: s.enumOf(REPLICA_STORAGE_CLASSES, {
          description: "Storage class of the replicas; unset: the source object's.",
        }),
      },
      {
        description: "Where the rule replicates to: exactly one of bucketRef and bucketArn.",
        required: true,
        validations: [
          {
            rule: "has(self.bucketRef) != has(self.bucketArn)",
            message: "a replication destination takes exactly one of bucketRef and bucketArn",
          },
        ],
      },
    ),
    deleteMarkerReplication: s.boolean({
      description: "Replicate delete markers too.",
      default: false,
    }),
  },
  { description: "A replication rule: which objects S3 copies, and where to." },
);

/** Replication of the bucket's objects to other buckets (PutBucketReplication). */
const replicationSchema = s.object(
  {
    roleArn: s.string({
      description: "The IAM role S3 assumes to replicate objects.",
      required: true,
      maxLength: 2048,
      pattern: "^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$",
    }),
    rules: s.array(replicationRuleSchema, {
      description: "The replication rules, identified by id; at least one.",
      required: true,
      listType: "map",
      listMapKeys: ["id"],
      minItems: 1,
      maxItems: 1000,
      validations: [
        {
          rule: "self.all(r, self.exists_one(q, q.priority == r.priority))",
          message: "each replication rule needs its own priority",
        },
      ],
    }),
  },
  {
    description:
      "Replication to other buckets. Needs versioning: true here and on every destination. " +
      "Unset: not managed. Set: the bucket has exactly this configuration. Mutable.",
  },
);

/** S3 Object Lock (CreateBucket ObjectLockEnabledForBucket, PutObjectLockConfiguration). */
const objectLockSchema = s.object(
  {
    enabled: s.boolean({
      description:
        "Create the bucket with S3 Object Lock on. Needs versioning: true. Set at creation only: " +
        "it cannot be added, changed or removed afterwards.",
      required: true,
    }),
    defaultRetention: s.object(
      {
        mode: s.enumOf(["GOVERNANCE", "COMPLIANCE"], {
          description:
            "GOVERNANCE: principals with s3:BypassGovernanceRetention may delete a version early. " +
            "COMPLIANCE: nobody can, the root user included, until the retention ends.",
          required: true,
        }),
        days: s.integer({
          description: "Retention period in days (exactly one of days or years).",
          minimum: 1,
          maximum: 36500,
        }),
        years: s.integer({
          description: "Retention period in years (exactly one of days or years).",
          minimum: 1,
          maximum: 100,
        }),
      },
      {
        description:
          "The retention S3 applies to every new object version. Unset: not managed. Set: enforced " +
          "and repaired on drift. Mutable.",
        validations: [
          {
            rule: "has(self.days) != has(self.years)",
            message: "defaultRetention needs exactly one of days or years",
          },
        ],
      },
    ),
  },
  {
    description:
      "S3 Object Lock: object versions that cannot be deleted or overwritten for a retention " +
      "period. A deletion of the bucket never bypasses it: while locked versions remain it waits " +
      "with Ready=False, reason BucketObjectsLocked.",
    validations: [
      {
        rule: "!has(self.defaultRetention) || self.enabled",
        message: "defaultRetention needs objectLock.enabled: true",
        fieldPath: ".defaultRetention",
      },
    ],
  },
);

/** The spec rules of Object Lock: set at creation only, and only on a versioned bucket. */
const objectLockRules = [
  {
    rule:
      "(has(self.objectLock) && self.objectLock.enabled) == " +
      "(has(oldSelf.objectLock) && oldSelf.objectLock.enabled)",
    message:
      "objectLock.enabled is immutable: S3 turns Object Lock on only when it creates the bucket, " +
      "and a locked bucket stays locked",
    fieldPath: ".objectLock",
  },
  {
    rule: "!has(self.objectLock) || !self.objectLock.enabled || self.versioning",
    message:
      "objectLock.enabled needs versioning: true: S3 Object Lock works on versioned buckets only, " +
      "and their versioning cannot be suspended",
    fieldPath: ".versioning",
  },
];

/** One CORS origin or header pattern. */
const corsPattern = s.string({
  description: "One origin or header; at most one * wildcard.",
  minLength: 1,
  maxLength: 256,
});

/** The rule on a list of CORS origins or headers: each entry with at most one `*` wildcard. */
const oneWildcard = (what: string) => ({
  rule: "self.all(x, x.matches('^[^*]*([*][^*]*)?$'))",
  message: `each ${what} may contain at most one * wildcard`,
});

/** One CORS rule (PutBucketCors). */
const corsRuleSchema = s.object(
  {
    id: s.string({ description: "Rule ID (at most 255 characters).", minLength: 1, maxLength: 255 }),
    allowedMethods: s.array(
      s.enumOf(["GET", "PUT", "POST", "DELETE", "HEAD"], { description: "One HTTP method." }),
      {
        description: "HTTP methods a cross-origin request may use.",
        required: true,
        minItems: 1,
        maxItems: 5,
        listType: "set",
      },
    ),
    allowedOrigins: s.array(corsPattern, {
      description: "Origins allowed to make cross-origin requests, for example https://app.example.com or *.",
      required: true,
      minItems: 1,
      maxItems: 64,
      listType: "set",
      validations: [oneWildcard("origin")],
    }),
    allowedHeaders: s.array(corsPattern, {
      description: "Headers a preflight request may name in Access-Control-Request-Headers.",
      maxItems: 64,
      listType: "set",
      validations: [oneWildcard("header")],
    }),
    exposeHeaders: s.array(s.string({ description: "One header.", minLength: 1, maxLength: 256 }), {
      description: "Response headers browsers may let the page read.",
      maxItems: 64,
      listType: "set",
    }),
    maxAgeSeconds: s.integer({
      description: "How long browsers may cache the preflight answer, in seconds.",
      minimum: 0,
      maximum: 2147483647,
    }),
  },
  { description: "One CORS rule: which origins may call the bucket with which methods and headers." },
);

/** The static website of the bucket (PutBucketWebsite). */
const websiteSchema = s.object(
  {
    indexDocument: s.string({
      description:
        "Suffix appended to requests for a folder (index.html: a request for images/ returns " +
        "images/index.html). Not empty and without a slash.",
      minLength: 1,
      maxLength: 1024,
      pattern: "^[^/]+$",
    }),
    errorDocument: s.string({
      description: "Object key returned on a 4XX error. Only with indexDocument.",
      minLength: 1,
      maxLength: 1024,
    }),
    redirectAllRequestsTo: s.object(
      {
        hostName: s.string({
          description: "Host every request is redirected to.",
          required: true,
          minLength: 1,
          maxLength: 253,
        }),
        protocol: s.enumOf(["http", "https"], {
          description: "Protocol of the redirect; unset: the protocol of the original request.",
        }),
      },
      { description: "Redirect every request to another host instead of serving documents." },
    ),
  },
  {
    description:
      "The bucket's static website endpoint: documents (indexDocument, errorDocument) or a " +
      "redirect of every request (redirectAllRequestsTo). Unset: not managed. Set: enforced and " +
      "repaired on drift (routing rules added out of band are drift). Mutable.",
    validations: [
      {
        rule: "has(self.indexDocument) != has(self.redirectAllRequestsTo)",
        message: "website needs exactly one of indexDocument or redirectAllRequestsTo",
      },
      {
        rule: "!has(self.errorDocument) || has(self.indexDocument)",
        message: "errorDocument is allowed only with indexDocument",
        fieldPath: ".errorDocument",
      },
    ],
  },
);

/** A website that serves documents needs Block Public Access switches that let a policy make it public. */
const websiteRules = [
  {
    rule:
      "!has(self.website) || !has(self.website.indexDocument) || (has(self.publicAccessBlock) && " +
      "!self.publicAccessBlock.blockPublicPolicy && !self.publicAccessBlock.restrictPublicBuckets)",
    message:
      "website.indexDocument needs publicAccessBlock set with blockPublicPolicy: false and " +
      "restrictPublicBuckets: false: the website endpoint serves only objects a public bucket " +
      "policy lets anyone read, and S3 turns every Block Public Access switch on for a new bucket " +
      "(a redirectAllRequestsTo website needs neither; for a private bucket behind CloudFront use " +
      "its REST endpoint with origin access control, not a website)",
    fieldPath: ".website",
  },
];

/** The keys of the ConfigMap `spec.writeOutputsTo` names, with what each holds. */
export const S3_BUCKET_OUTPUT_KEYS = [
  ["BUCKET_NAME", "the bucket name"],
  ["BUCKET_ARN", "the bucket ARN"],
  ["BUCKET_REGION", "the region S3 reports"],
  ["BUCKET_ENDPOINT", "its HTTPS endpoint"],
] as const;

/** Schema of `S3Bucket.spec`. */
export const s3BucketSpecSchema = s.object(
  {
    bucketName: s.string({
      description:
        "Globally unique bucket name: 3-63 characters of lowercase letters, digits, periods and " +
        "hyphens, starting and ending with a letter or digit (the S3 naming rules). Immutable.",
      required: true,
      minLength: 3,
      maxLength: 63,
      pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
      validations: bucketNameRules,
    }),
    region: regionField("bucket"),
    versioning: s.boolean({
      description:
        "Enable S3 versioning. Mutable: true enables it; false suspends it on a bucket where it " +
        "was enabled (S3 cannot return a bucket to the unversioned state) and leaves a never-" +
        "versioned bucket alone.",
      default: false,
    }),
    tags: tagsField("bucket"),
    managementPolicy: managementPolicyField("bucket", "bucketName (in region)"),
    driftPolicy: driftPolicyField("bucket"),
    changePolicy: changePolicyField("bucket"),
    deletionPolicy: deletionPolicyField("bucket"),
    forceDelete: s.boolean({
      description:
        "Delete every object (and object version) in the bucket before deleting it. Without it a " +
        "non-empty bucket is never emptied: deletion waits with Ready=False, reason BucketNotEmpty, " +
        "until the bucket is emptied by other means. Only matters with deletionPolicy Delete. For an " +
        "adopted bucket it counts only when set after the adoption: one adopted while forceDelete " +
        "was already true carries the compute.cloud.com/force-delete-held tag and is not emptied " +
        "(BucketNotEmpty) until forceDelete is set to false (the operator then removes the tag) and " +
        "back to true. Mutable.",
      default: false,
    }),
    adoptExisting: adoptExistingField(
      "A bucket counts as existing when a bucket named bucketName is owned by this AWS account " +
        "but does not carry this object's ownership tags.",
    ),
    onDeletedOutOfBand: onDeletedOutOfBandField("bucket"),
    writeOutputsTo: writeOutputsToField("bucket", S3_BUCKET_OUTPUT_KEYS),
    accountRef: accountRefField(),
    encryption: encryptionSchema,
    publicAccessBlock: publicAccessBlockSchema,
    policy: iamPolicyField(
      "The bucket policy as an IAM policy document (S3 allows 20 KB). Unset: not managed. Set: " +
        "enforced; compared with the bucket's policy as JSON values, so formatting and key order " +
        "never count as drift. S3 rejects invalid principals or actions: the object then reports " +
        "Synced=False with S3's error code. Mutable.",
    ),
    lifecycleRules: s.array(lifecycleRuleSchema, {
      description:
        "Lifecycle rules of the bucket, identified by id. Unset: not managed. Set: the bucket has " +
        "exactly these rules (an empty list removes every rule). Mutable.",
      listType: "map",
      listMapKeys: ["id"],
      maxItems: 100,
    }),
    objectOwnership: s.enumOf(["BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"], {
      description:
        "S3 Object Ownership. BucketOwnerEnforced disables ACLs (the bucket owner owns every " +
        "object); BucketOwnerPreferred and ObjectWriter keep them. Unset: not managed (new buckets " +
        "get BucketOwnerEnforced). Set at creation and repaired on drift. Mutable.",
    }),
    notifications: notificationsSchema,
    replication: replicationSchema,
    logging: s.object(
      {
        targetBucketRef: namespacedRefField("S3Bucket", {
          description:
            "The target as another S3Bucket object in this namespace, in the bucket's region. The " +
            "bucket waits (LoggingTargetNotReady) until that bucket is Ready and its " +
            "spec.allowLoggingFrom names this bucket.",
        }),
        targetBucket: s.string({
          description:
            "The target bucket's name, for a bucket this cluster does not manage; its policy must " +
            "let logging.s3.amazonaws.com put objects with this bucket as aws:SourceArn.",
          minLength: 3,
          maxLength: 63,
          pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
        }),
        targetPrefix: s.string({
          description: "Prefix of the log objects' keys in the target bucket.",
          default: "",
          maxLength: 1024,
        }),
      },
      {
        description:
          "Server access logging into another bucket: exactly one of targetBucketRef and " +
          "targetBucket. Unset: not managed. Mutable.",
        validations: [
          {
            rule: "has(self.targetBucketRef) != has(self.targetBucket)",
            message: "logging takes exactly one of targetBucketRef and targetBucket",
          },
        ],
      },
    ),
    allowLoggingFrom: s.array(
      s.object(
        {
          bucketRef: namespacedRefField("S3Bucket", {
            description: "The bucket as an S3Bucket object in this namespace.",
            required: true,
          }),
        },
        { description: "A bucket whose server access logs may be written into this bucket." },
      ),
      {
        description:
          "Buckets whose server access logs may be written here. Each adds one statement to this " +
          "bucket's policy, Sid s3-logging-<bucketName>, allowing logging.s3.amazonaws.com " +
          "s3:PutObject with that bucket as aws:SourceArn; the statements are merged with " +
          "spec.policy, which must not use those Sids. Unset: not managed (removing it leaves the " +
          "bucket's policy as it is). Mutable.",
        minItems: 1,
        maxItems: 50,
        validations: [eachReferencedOnce("bucketRef.name", "each bucketRef may appear once")],
      },
    ),
    objectLock: objectLockSchema,
    cors: s.array(corsRuleSchema, {
      description:
        "CORS rules of the bucket, in the order S3 tries them (the first match applies). Unset: not " +
        "managed. Set: the bucket has exactly these rules (an empty list removes them). At most " +
        "100 rules (S3 also caps the configuration at 64 KB). Mutable.",
      maxItems: 100,
    }),
    website: websiteSchema,
  },
  {
    description: "Desired state of the S3 bucket.",
    required: true,
    validations: [
      accountRefKept,
      ...objectLockRules,
      ...websiteRules,
      {
        rule: "!has(self.replication) || self.versioning",
        message: "replication requires versioning: true (S3 replicates only from versioned buckets)",
        fieldPath: ".replication",
      },
    ],
  },
);

/** Schema of `S3Bucket.status`. */
export const s3BucketStatusSchema = s.object(
  {
    ...commonStatusFields(),
    bucketArn: s.string({ description: "ARN of the bucket (arn:aws:s3:::name).", maxLength: 128 }),
    endpoint: s.string({ description: "HTTPS endpoint of the bucket.", maxLength: 512 }),
    state: s.string({
      description: "Lifecycle state as last observed, for example Available, Deleting or Missing.",
      maxLength: 32,
    }),
    region: s.string({ description: "Region S3 reports for the bucket.", maxLength: 32 }),
    observedVersioning: s.enumOf(["Enabled", "Suspended", "Disabled"], {
      description:
        "The bucket's versioning as last read: Enabled, Suspended, or Disabled (never enabled); " +
        "reported only while spec.managementPolicy is ObserveOnly.",
    }),
  },
  { description: "Observed state of the S3 bucket, written by the operator only." },
);

/** Desired state of an S3 bucket, as served (defaults applied). */
export type S3BucketSpec = s.Static<typeof s3BucketSpecSchema>;
/** Desired state as a client may write it (defaulted fields optional). */
export type S3BucketSpecInput = s.Input<typeof s3BucketSpecSchema>;
/** Observed state of an S3 bucket. */
export type S3BucketStatus = s.Static<typeof s3BucketStatusSchema>;

/** An S3Bucket object as served by the API server. */
export interface S3Bucket extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: "S3Bucket";
  spec: S3BucketSpec;
  status?: S3BucketStatus;
}

/** The generated CustomResourceDefinition of S3Bucket. */
export function s3BucketCrd(): CustomResourceDefinition {
  return buildCrd({
    resource: S3BucketResource,
    singular: "s3bucket",
    shortNames: ["s3b"],
    categories: CATEGORIES,
    labels: standardLabels,
    description:
      "S3Bucket is an S3 bucket managed by kubeprovisioner. The operator creates it in " +
      "spec.region, keeps versioning and tags in line with the spec, and deletes it (only when " +
      "empty, unless spec.forceDelete) on deletion unless spec.deletionPolicy is Retain.",
    spec: s3BucketSpecSchema,
    status: s3BucketStatusSchema,
    selectableFields: [".spec.region", ".spec.bucketName"],
    printerColumns: [
      { name: "BucketName", type: "string", jsonPath: ".spec.bucketName", description: "S3 bucket name" },
      { name: "State", type: "string", jsonPath: ".status.state", description: "Bucket state" },
      { name: "Endpoint", type: "string", jsonPath: ".status.endpoint", description: "Bucket endpoint" },
      ...readyColumns,
      regionColumn,
      {
        name: "Versioning",
        type: "boolean",
        jsonPath: ".spec.versioning",
        description: "Versioning",
        priority: 1,
      },
      managementPolicyColumn,
    ],
  });
}
