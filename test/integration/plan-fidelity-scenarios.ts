/**
 * The scenarios of test/integration/plan-fidelity.test.ts: one object each, of one of the three
 * kinds, the spec it is set up with, and what then changes: a spec edit, a change made straight
 * at the test AWS (out of band), or the object created (a create, or the adoption of a resource
 * made outside the operator). Each says what the object's plan must then say (its action and the
 * paths of its changes), so that a scenario cannot pass by planning nothing; the calls the plan
 * lists are what the test checks against the operator's, never written down here.
 *
 * `reduced` marks the scenarios of the pass `make test` runs (PLAN_FIDELITY unset or `reduced`):
 * every kind, a create, an adoption, a restart and a refusal. `make test-plan-fidelity` runs them
 * all.
 */
import {
  CreateSecurityGroupCommand,
  ModifyInstanceMetadataOptionsCommand,
  RunInstancesCommand,
  StopInstancesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import {
  CreateBucketCommand,
  GetBucketTaggingCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import type { PlanAction } from "../../src/reconcilers/common/kind.ts";
import type { Moto } from "../support/moto.ts";

/** The namespace of the scenarios' objects. */
export const NS = "plan-fidelity";
/** moto's account, the operator's own. */
const ACCOUNT = "123456789012";
const REGION = "us-east-1";
/** The AMI every instance is launched from (one moto knows). */
export const AMI = "ami-1e749f67";

export type Kind = "S3Bucket" | "SqsQueue" | "Ec2Instance";
type Spec = Record<string, unknown>;

/** What the scenarios' specs name, made at the test AWS before the objects. */
export interface Fixtures {
  /** Two security groups of the default VPC. */
  readonly securityGroups: readonly [string, string];
  /** A standard queue to serve as a dead-letter queue, by ARN. */
  readonly deadLetterArn: string;
  /** A queue whose policy lets the notifications scenario's bucket send to it, by ARN. */
  readonly notifiedArn: string;
  /** A bucket whose policy lets the logging scenario's bucket write its logs into it. */
  readonly logBucket: string;
  /** A versioned bucket to replicate to, by ARN. */
  readonly replicaArn: string;
}

/** The test AWS, straight (not through the counting proxy): what out-of-band changes go through. */
export interface World {
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly ec2: EC2Client;
  readonly moto: Moto;
}

/** What changes about a scenario's object once it is set up. */
export type Edit =
  /** A JSON merge patch of the spec. */
  | { readonly spec: (f: Fixtures) => Spec }
  /** A change made at the test AWS to the object's resource (its bucket or queue name, or instance ID). */
  | { readonly outOfBand: (w: World, id: string) => Promise<void> }
  /** The object is created now (a create, or with adoptExisting an adoption). */
  | { readonly create: (f: Fixtures) => Spec };

export interface Scenario {
  /** The object's name; its bucket or queue is named `pf-<name>`. */
  readonly name: string;
  readonly kind: Kind;
  /** In the reduced pass too. */
  readonly reduced?: true;
  /** The spec the object is set up with (beside the kind's required fields); absent for a create. */
  readonly initial?: (f: Fixtures) => Spec;
  /** Work at the test AWS before anything is set up (the resource an adoption takes). */
  readonly prepare?: (w: World) => Promise<void>;
  readonly edit: Edit;
  /** What a plan of the object says before the change is applied: its action, its paths sorted. */
  readonly plans: { readonly action: PlanAction; readonly paths: readonly string[] };
  /**
   * How many approvals the change takes: 2 for a restart (the stop, then the change and the start
   * once the instance is stopped; each reconcile's plan lists only that reconcile's calls).
   * @default 1
   */
  readonly steps?: number;
  /** What a plan says once the change is applied. @default in-sync */
  readonly after?: PlanAction;
}

/** The bucket or queue name of scenario `name`. */
export const awsName = (name: string): string => `pf-${name}`;

/** The spec fields every object of `kind` needs, for scenario `name`. */
export function baseSpec(kind: Kind, name: string): Spec {
  switch (kind) {
    case "S3Bucket":
      return { bucketName: awsName(name), region: REGION };
    case "SqsQueue":
      return { queueName: awsName(name), region: REGION };
    case "Ec2Instance":
      return { instanceType: "t3.micro", amiId: AMI, region: REGION };
  }
}

/** The ownership tags an adoption writes: `tags["compute.cloud.com/uid"]`, ... */
const ownership = (...keys: (keyof typeof OWNERSHIP_TAGS)[]): string[] =>
  keys.map((k) => `tags[${JSON.stringify(OWNERSHIP_TAGS[k])}]`);

const LOGS_RULE = { id: "logs", prefix: "logs/", expirationDays: 90 };
const TMP_RULE = { id: "tmp", prefix: "tmp/", expirationDays: 1 };
const APP_CORS = { id: "app", allowedMethods: ["GET"], allowedOrigins: ["https://app.example.com"] };
const CDN_CORS = { id: "cdn", allowedMethods: ["GET", "HEAD"], allowedOrigins: ["*"], maxAgeSeconds: 600 };
const ALL_BLOCKED = {
  blockPublicAcls: true,
  ignorePublicAcls: true,
  blockPublicPolicy: true,
  restrictPublicBuckets: true,
};

/** A policy that denies requests without TLS to bucket `bucket`. */
const tlsOnly = (bucket: string) => ({
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    },
  ],
});

/** The URL of queue `name` at the test AWS. */
async function queueUrl(w: World, name: string): Promise<string> {
  return (await w.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? "";
}

/** Every scenario, the reduced ones first of each kind. */
export const SCENARIOS: readonly Scenario[] = [
  // --- S3Bucket ------------------------------------------------------------------------------
  {
    name: "s3-multi",
    kind: "S3Bucket",
    reduced: true,
    initial: () => ({ versioning: false, tags: { team: "a" }, cors: [APP_CORS] }),
    edit: {
      spec: () => ({ versioning: true, tags: { team: "b", env: "prod" }, cors: [APP_CORS, CDN_CORS] }),
    },
    plans: { action: "update", paths: ["spec.cors", "spec.tags.env", "spec.tags.team", "spec.versioning"] },
  },
  {
    name: "s3-lifecycle-change",
    kind: "S3Bucket",
    reduced: true,
    initial: () => ({ lifecycleRules: [LOGS_RULE, TMP_RULE] }),
    edit: { spec: () => ({ lifecycleRules: [{ ...LOGS_RULE, expirationDays: 30 }, TMP_RULE] }) },
    plans: { action: "update", paths: ["spec.lifecycleRules[id=logs]"] },
  },
  {
    name: "s3-create",
    kind: "S3Bucket",
    reduced: true,
    edit: {
      create: () => ({
        versioning: true,
        tags: { team: "a" },
        objectOwnership: "BucketOwnerEnforced",
        publicAccessBlock: ALL_BLOCKED,
        lifecycleRules: [LOGS_RULE],
      }),
    },
    plans: { action: "create", paths: ["spec"] },
  },
  {
    name: "s3-versioning",
    kind: "S3Bucket",
    initial: () => ({ versioning: false }),
    edit: { spec: () => ({ versioning: true }) },
    plans: { action: "update", paths: ["spec.versioning"] },
  },
  {
    name: "s3-tags",
    kind: "S3Bucket",
    initial: () => ({ tags: { team: "a", old: "x" } }),
    edit: { spec: () => ({ tags: { team: "b", old: null, env: "prod" } }) },
    plans: { action: "update", paths: ["spec.tags.env", "spec.tags.old", "spec.tags.team"] },
  },
  {
    name: "s3-encryption",
    kind: "S3Bucket",
    initial: () => ({ encryption: { algorithm: "AES256" } }),
    edit: {
      spec: () => ({ encryption: { algorithm: "aws:kms", kmsKeyId: "alias/data", bucketKeyEnabled: true } }),
    },
    plans: { action: "update", paths: ["spec.encryption"] },
  },
  {
    name: "s3-public-access-block",
    kind: "S3Bucket",
    initial: () => ({ publicAccessBlock: ALL_BLOCKED }),
    edit: { spec: () => ({ publicAccessBlock: { blockPublicPolicy: false, restrictPublicBuckets: false } }) },
    plans: { action: "update", paths: ["spec.publicAccessBlock"] },
  },
  {
    name: "s3-policy",
    kind: "S3Bucket",
    initial: () => ({}),
    edit: { spec: () => ({ policy: tlsOnly(awsName("s3-policy")) }) },
    plans: { action: "update", paths: ["spec.policy"] },
  },
  {
    name: "s3-lifecycle-add",
    kind: "S3Bucket",
    initial: () => ({ lifecycleRules: [LOGS_RULE] }),
    edit: { spec: () => ({ lifecycleRules: [LOGS_RULE, TMP_RULE] }) },
    plans: { action: "update", paths: ["spec.lifecycleRules[id=tmp]"] },
  },
  {
    name: "s3-lifecycle-remove",
    kind: "S3Bucket",
    initial: () => ({ lifecycleRules: [LOGS_RULE, TMP_RULE] }),
    edit: { spec: () => ({ lifecycleRules: [LOGS_RULE] }) },
    plans: { action: "update", paths: ["spec.lifecycleRules[id=tmp]"] },
  },
  {
    // The last rule removed: S3 takes no empty configuration, the write is DeleteBucketLifecycle.
    name: "s3-lifecycle-clear",
    kind: "S3Bucket",
    initial: () => ({ lifecycleRules: [LOGS_RULE] }),
    edit: { spec: () => ({ lifecycleRules: [] }) },
    plans: { action: "update", paths: ["spec.lifecycleRules[id=logs]"] },
  },
  {
    name: "s3-object-ownership",
    kind: "S3Bucket",
    initial: () => ({ objectOwnership: "ObjectWriter" }),
    edit: { spec: () => ({ objectOwnership: "BucketOwnerEnforced" }) },
    plans: { action: "update", paths: ["spec.objectOwnership"] },
  },
  {
    // No rules left: the write is DeleteBucketCors.
    name: "s3-cors-clear",
    kind: "S3Bucket",
    initial: () => ({ cors: [APP_CORS, CDN_CORS] }),
    edit: { spec: () => ({ cors: [] }) },
    plans: { action: "update", paths: ["spec.cors"] },
  },
  {
    name: "s3-website",
    kind: "S3Bucket",
    initial: () => ({}),
    edit: {
      spec: () => ({ website: { redirectAllRequestsTo: { hostName: "example.com", protocol: "https" } } }),
    },
    plans: { action: "update", paths: ["spec.website"] },
  },
  {
    name: "s3-logging",
    kind: "S3Bucket",
    initial: () => ({}),
    edit: { spec: (f) => ({ logging: { targetBucket: f.logBucket, targetPrefix: "s3-logging/" } }) },
    plans: { action: "update", paths: ["spec.logging"] },
  },
  {
    name: "s3-object-lock",
    kind: "S3Bucket",
    initial: () => ({
      versioning: true,
      objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
    }),
    edit: { spec: () => ({ objectLock: { defaultRetention: { days: 2 } } }) },
    plans: { action: "update", paths: ["spec.objectLock.defaultRetention"] },
  },
  {
    name: "s3-notifications",
    kind: "S3Bucket",
    initial: () => ({}),
    edit: {
      spec: (f) => ({
        notifications: {
          queues: [{ id: "created", events: ["s3:ObjectCreated:*"], queueArn: f.notifiedArn }],
        },
      }),
    },
    plans: { action: "update", paths: ["spec.notifications"] },
  },
  {
    // moto reads every replication rule back without a prefix and with delete marker replication
    // off, whatever was put (reconciler-s3-replication.test.ts): the rule sets neither.
    name: "s3-replication",
    kind: "S3Bucket",
    initial: () => ({ versioning: true }),
    edit: {
      spec: (f) => ({
        replication: {
          roleArn: `arn:aws:iam::${ACCOUNT}:role/s3-replication`,
          rules: [{ id: "everything", priority: 1, destination: { bucketArn: f.replicaArn } }],
        },
      }),
    },
    plans: { action: "update", paths: ["spec.replication"] },
  },
  {
    name: "s3-out-of-band",
    kind: "S3Bucket",
    initial: () => ({ versioning: true, tags: { team: "a" } }),
    edit: {
      outOfBand: async (w, bucket) => {
        await w.s3.send(
          new PutBucketVersioningCommand({
            Bucket: bucket,
            VersioningConfiguration: { Status: "Suspended" },
          }),
        );
        const tags = (await w.s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet ?? [];
        await w.s3.send(
          new PutBucketTaggingCommand({
            Bucket: bucket,
            Tagging: { TagSet: [...tags, { Key: "stray", Value: "x" }] },
          }),
        );
      },
    },
    plans: { action: "update", paths: ["spec.tags.stray", "spec.versioning"] },
  },
  {
    name: "s3-adopt",
    kind: "S3Bucket",
    prepare: async (w) => {
      const Bucket = awsName("s3-adopt");
      await w.s3.send(new CreateBucketCommand({ Bucket }));
      await w.s3.send(
        new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: "team", Value: "legacy" }] } }),
      );
    },
    edit: { create: () => ({ adoptExisting: true, versioning: true, tags: { team: "new" } }) },
    plans: {
      action: "adopt",
      paths: [
        "spec.tags.team",
        "spec.versioning",
        ...ownership("kind", "managedBy", "name", "namespace", "uid"),
      ].sort(),
    },
  },

  // --- SqsQueue ------------------------------------------------------------------------------
  {
    name: "sqs-multi",
    kind: "SqsQueue",
    reduced: true,
    initial: () => ({ visibilityTimeoutSeconds: 30, delaySeconds: 0, tags: { team: "a", old: "x" } }),
    edit: { spec: () => ({ visibilityTimeoutSeconds: 60, delaySeconds: 5, tags: { team: "b", old: null } }) },
    plans: {
      action: "update",
      paths: ["spec.delaySeconds", "spec.tags.old", "spec.tags.team", "spec.visibilityTimeoutSeconds"],
    },
  },
  {
    name: "sqs-out-of-band",
    kind: "SqsQueue",
    reduced: true,
    initial: () => ({ visibilityTimeoutSeconds: 30, tags: { team: "a" } }),
    edit: {
      outOfBand: async (w, queue) => {
        const QueueUrl = await queueUrl(w, queue);
        await w.sqs.send(
          new SetQueueAttributesCommand({ QueueUrl, Attributes: { VisibilityTimeout: "45" } }),
        );
        await w.sqs.send(new TagQueueCommand({ QueueUrl, Tags: { stray: "x" } }));
      },
    },
    plans: { action: "update", paths: ["spec.tags.stray", "spec.visibilityTimeoutSeconds"] },
  },
  {
    name: "sqs-adopt",
    kind: "SqsQueue",
    reduced: true,
    prepare: async (w) => {
      await w.sqs.send(
        new CreateQueueCommand({
          QueueName: awsName("sqs-adopt"),
          Attributes: { VisibilityTimeout: "30" },
          tags: { team: "legacy" },
        }),
      );
    },
    edit: { create: () => ({ adoptExisting: true, visibilityTimeoutSeconds: 60, tags: { team: "new" } }) },
    plans: {
      action: "adopt",
      paths: [
        "spec.tags.team",
        "spec.visibilityTimeoutSeconds",
        ...ownership("kind", "managedBy", "name", "namespace", "uid"),
      ].sort(),
    },
  },
  {
    name: "sqs-visibility",
    kind: "SqsQueue",
    initial: () => ({ visibilityTimeoutSeconds: 30 }),
    edit: { spec: () => ({ visibilityTimeoutSeconds: 120 }) },
    plans: { action: "update", paths: ["spec.visibilityTimeoutSeconds"] },
  },
  {
    name: "sqs-retention",
    kind: "SqsQueue",
    initial: () => ({}),
    edit: { spec: () => ({ messageRetentionSeconds: 86400 }) },
    plans: { action: "update", paths: ["spec.messageRetentionSeconds"] },
  },
  {
    name: "sqs-delay",
    kind: "SqsQueue",
    initial: () => ({ delaySeconds: 0 }),
    edit: { spec: () => ({ delaySeconds: 30 }) },
    plans: { action: "update", paths: ["spec.delaySeconds"] },
  },
  {
    name: "sqs-receive-wait",
    kind: "SqsQueue",
    initial: () => ({ receiveWaitTimeSeconds: 0 }),
    edit: { spec: () => ({ receiveWaitTimeSeconds: 20 }) },
    plans: { action: "update", paths: ["spec.receiveWaitTimeSeconds"] },
  },
  {
    name: "sqs-max-size",
    kind: "SqsQueue",
    initial: () => ({ maximumMessageSize: 262144 }),
    edit: { spec: () => ({ maximumMessageSize: 4096 }) },
    plans: { action: "update", paths: ["spec.maximumMessageSize"] },
  },
  {
    name: "sqs-dead-letter",
    kind: "SqsQueue",
    initial: () => ({}),
    edit: { spec: (f) => ({ deadLetterQueue: { targetArn: f.deadLetterArn, maxReceiveCount: 3 } }) },
    plans: { action: "update", paths: ["spec.deadLetterQueue"] },
  },
  {
    name: "sqs-redrive-allow",
    kind: "SqsQueue",
    initial: () => ({ redriveAllowPolicy: { redrivePermission: "allowAll" } }),
    edit: { spec: () => ({ redriveAllowPolicy: { redrivePermission: "denyAll" } }) },
    plans: { action: "update", paths: ["spec.redriveAllowPolicy"] },
  },
  {
    name: "sqs-policy",
    kind: "SqsQueue",
    initial: () => ({}),
    edit: {
      spec: () => ({
        policy: {
          Version: "2012-10-17",
          Statement: [
            {
              Sid: "OwnAccountOnly",
              Effect: "Allow",
              Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
              Action: "sqs:SendMessage",
              Resource: `arn:aws:sqs:${REGION}:${ACCOUNT}:${awsName("sqs-policy")}`,
            },
          ],
        },
      }),
    },
    plans: { action: "update", paths: ["spec.policy"] },
  },
  {
    name: "sqs-encryption",
    kind: "SqsQueue",
    initial: () => ({}),
    edit: { spec: () => ({ encryption: { kmsKeyId: "alias/queues", dataKeyReusePeriodSeconds: 600 } }) },
    plans: {
      action: "update",
      paths: ["spec.encryption.dataKeyReusePeriodSeconds", "spec.encryption.kmsKeyId"],
    },
  },
  {
    name: "sqs-tags",
    kind: "SqsQueue",
    initial: () => ({ tags: { team: "a", old: "x" } }),
    edit: { spec: () => ({ tags: { team: "b", old: null, env: "prod" } }) },
    plans: { action: "update", paths: ["spec.tags.env", "spec.tags.old", "spec.tags.team"] },
  },
  {
    name: "sqs-create",
    kind: "SqsQueue",
    edit: { create: () => ({ visibilityTimeoutSeconds: 45, delaySeconds: 5, tags: { team: "a" } }) },
    plans: { action: "create", paths: ["spec"] },
  },

  // --- Ec2Instance ---------------------------------------------------------------------------
  {
    name: "ec2-type-restart",
    kind: "Ec2Instance",
    reduced: true,
    initial: () => ({ restartForUpdate: true }),
    edit: { spec: () => ({ instanceType: "t3.small" }) },
    plans: { action: "update", paths: ["spec.instanceType"] },
    steps: 2,
  },
  {
    name: "ec2-metadata",
    kind: "Ec2Instance",
    reduced: true,
    initial: () => ({ metadataOptions: { httpTokens: "optional" } }),
    edit: { spec: () => ({ metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 } }) },
    plans: {
      action: "update",
      paths: ["spec.metadataOptions.httpPutResponseHopLimit", "spec.metadataOptions.httpTokens"],
    },
  },
  {
    name: "ec2-create",
    kind: "Ec2Instance",
    reduced: true,
    edit: { create: () => ({ tags: { team: "a" }, monitoring: true }) },
    plans: { action: "create", paths: ["spec"] },
  },
  {
    // A new type on a running instance without restartForUpdate: refused, and nothing else of the
    // object is applied either (the tag edit beside it waits too).
    name: "ec2-refused",
    kind: "Ec2Instance",
    reduced: true,
    initial: () => ({ tags: { team: "a" } }),
    edit: { spec: () => ({ instanceType: "t3.small", tags: { team: "b" } }) },
    plans: { action: "refused", paths: ["spec.instanceType", "spec.tags.team"] },
    after: "refused",
  },
  {
    name: "ec2-tags",
    kind: "Ec2Instance",
    initial: () => ({ tags: { team: "a", old: "x" } }),
    edit: { spec: () => ({ tags: { team: "b", old: null, env: "prod" } }) },
    plans: { action: "update", paths: ["spec.tags.env", "spec.tags.old", "spec.tags.team"] },
  },
  {
    name: "ec2-user-data-restart",
    kind: "Ec2Instance",
    initial: () => ({ restartForUpdate: true, userData: "#!/bin/sh\necho one\n" }),
    edit: { spec: () => ({ userData: "#!/bin/sh\necho two\n" }) },
    plans: { action: "update", paths: ["spec.userData"] },
    steps: 2,
  },
  {
    name: "ec2-stop",
    kind: "Ec2Instance",
    initial: () => ({}),
    edit: { spec: () => ({ desiredState: "stopped" }) },
    plans: { action: "update", paths: ["spec.desiredState"] },
  },
  {
    name: "ec2-start",
    kind: "Ec2Instance",
    initial: () => ({ desiredState: "stopped" }),
    edit: { spec: () => ({ desiredState: "running" }) },
    plans: { action: "update", paths: ["spec.desiredState"] },
  },
  {
    name: "ec2-monitoring",
    kind: "Ec2Instance",
    initial: () => ({ monitoring: false }),
    edit: { spec: () => ({ monitoring: true }) },
    plans: { action: "update", paths: ["spec.monitoring"] },
  },
  {
    name: "ec2-security-groups",
    kind: "Ec2Instance",
    initial: (f) => ({ securityGroups: [f.securityGroups[0]] }),
    edit: { spec: (f) => ({ securityGroups: [...f.securityGroups] }) },
    plans: { action: "update", paths: ["spec.securityGroups"] },
  },
  {
    name: "ec2-termination-protection",
    kind: "Ec2Instance",
    initial: () => ({ disableApiTermination: false }),
    edit: { spec: () => ({ disableApiTermination: true }) },
    plans: { action: "update", paths: ["spec.disableApiTermination"] },
  },
  {
    name: "ec2-instance-profile",
    kind: "Ec2Instance",
    prepare: async (w) => {
      await w.moto.createInstanceProfile("pf-web");
      await w.moto.createInstanceProfile("pf-worker");
    },
    initial: () => ({ iamInstanceProfile: "pf-web" }),
    edit: { spec: () => ({ iamInstanceProfile: "pf-worker" }) },
    plans: { action: "update", paths: ["spec.iamInstanceProfile"] },
  },
  {
    name: "ec2-credits",
    kind: "Ec2Instance",
    initial: () => ({ creditSpecification: "unlimited" }),
    edit: { spec: () => ({ creditSpecification: "standard" }) },
    plans: { action: "update", paths: ["spec.creditSpecification"] },
  },
  {
    name: "ec2-out-of-band-stop",
    kind: "Ec2Instance",
    initial: () => ({}),
    edit: {
      outOfBand: async (w, id) => {
        await w.ec2.send(new StopInstancesCommand({ InstanceIds: [id] }));
      },
    },
    plans: { action: "update", paths: ["spec.desiredState"] },
  },
  {
    name: "ec2-out-of-band-metadata",
    kind: "Ec2Instance",
    initial: () => ({ metadataOptions: { httpTokens: "required" } }),
    edit: {
      outOfBand: async (w, id) => {
        await w.ec2.send(
          new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, HttpTokens: "optional" }),
        );
      },
    },
    plans: { action: "update", paths: ["spec.metadataOptions.httpTokens"] },
  },
  {
    // An instance made outside the operator that carries the object's namespace, name and kind
    // tags (the adoption candidate), adopted under the operator's --adoption=enabled.
    name: "ec2-adopt",
    kind: "Ec2Instance",
    prepare: async (w) => {
      const tags = {
        [OWNERSHIP_TAGS.namespace]: NS,
        [OWNERSHIP_TAGS.name]: "ec2-adopt",
        [OWNERSHIP_TAGS.kind]: "Ec2Instance",
        team: "legacy",
      };
      await w.ec2.send(
        new RunInstancesCommand({
          ImageId: AMI,
          InstanceType: "t3.micro",
          MinCount: 1,
          MaxCount: 1,
          TagSpecifications: [
            { ResourceType: "instance", Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
          ],
        }),
      );
    },
    edit: { create: () => ({ adoptExisting: true, tags: { team: "new" } }) },
    plans: { action: "adopt", paths: ["spec.tags.team", ...ownership("managedBy", "uid")].sort() },
  },
];

/** Makes the {@link Fixtures} at the test AWS. */
export async function makeFixtures(w: World): Promise<Fixtures> {
  const groups = await Promise.all(
    ["pf-a", "pf-b"].map(
      async (GroupName) =>
        (await w.ec2.send(new CreateSecurityGroupCommand({ GroupName, Description: GroupName }))).GroupId ??
        "",
    ),
  );
  const arnOf = (queue: string): string => `arn:aws:sqs:${REGION}:${ACCOUNT}:${queue}`;
  await w.sqs.send(new CreateQueueCommand({ QueueName: "pf-dead-letter" }));
  const notified = "pf-notified";
  const source = `arn:aws:s3:::${awsName("s3-notifications")}`;
  // The grant AWS checks when the configuration is put (moto does not).
  await w.sqs.send(
    new CreateQueueCommand({
      QueueName: notified,
      Attributes: {
        Policy: JSON.stringify({
          Version: "2012-10-17",
          Statement: [
            {
              Sid: "s3-notifications",
              Effect: "Allow",
              Principal: { Service: "s3.amazonaws.com" },
              Action: "sqs:SendMessage",
              Resource: arnOf(notified),
              Condition: { ArnEquals: { "aws:SourceArn": source } },
            },
          ],
        }),
      },
    }),
  );
  const logBucket = "pf-log-target";
  await w.s3.send(new CreateBucketCommand({ Bucket: logBucket }));
  await w.s3.send(
    new PutBucketPolicyCommand({
      Bucket: logBucket,
      Policy: JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          {
            Sid: "s3-logging",
            Effect: "Allow",
            Principal: { Service: "logging.s3.amazonaws.com" },
            Action: "s3:PutObject",
            Resource: `arn:aws:s3:::${logBucket}/*`,
            Condition: { ArnLike: { "aws:SourceArn": `arn:aws:s3:::${awsName("s3-logging")}` } },
          },
        ],
      }),
    }),
  );
  const replica = "pf-replica";
  await w.s3.send(new CreateBucketCommand({ Bucket: replica }));
  await w.s3.send(
    new PutBucketVersioningCommand({ Bucket: replica, VersioningConfiguration: { Status: "Enabled" } }),
  );
  return {
    securityGroups: [groups[0] ?? "", groups[1] ?? ""],
    deadLetterArn: arnOf("pf-dead-letter"),
    notifiedArn: arnOf(notified),
    logBucket,
    replicaArn: `arn:aws:s3:::${replica}`,
  };
}
