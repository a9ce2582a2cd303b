/**
 * The S3Bucket kind: the shared managed-resource flow with the S3 bucket driver.
 */
import {
  S3BucketResource,
  s3BucketCrd,
  SqsQueueResource,
  type S3Bucket,
  type SqsQueue,
} from "../../api/v1/index.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { kindTagSnapshots } from "../common/tag-snapshots.ts";
import { referenceKey, referrersIn } from "../common/references.ts";
import { s3BucketOutputs } from "./outputs.ts";
import { s3BucketChangeEvents } from "./change-events.ts";
import type { S3BucketView, S3BucketObject } from "./model.ts";
import { S3BucketDriver } from "./driver.ts";

export { S3BucketDriver, type S3BucketDriverOptions } from "./driver.ts";
export type { S3BucketView, S3BucketObject } from "./model.ts";

/** The cache index of buckets by the SqsQueue objects their notifications name: `namespace/name`. */
export const NOTIFICATION_QUEUE_INDEX = "notificationQueueRef";

/** The {@link NOTIFICATION_QUEUE_INDEX} values of `b`: the queues its notifications name by queueRef. */
export function notificationQueueIndex(b: Readonly<S3Bucket>): string[] {
  const names = (b.spec.notifications?.queues ?? []).flatMap((q) => (q.queueRef ? [q.queueRef.name] : []));
  return [...new Set(names)].map((name) => referenceKey(b.metadata.namespace, name));
}

/** The cache index of buckets by the S3Bucket objects their replication rules name: `namespace/name`. */
export const REPLICATION_DESTINATION_INDEX = "replicationDestinationRef";

/** The {@link REPLICATION_DESTINATION_INDEX} values of `b`: the buckets its rules name by bucketRef. */
export function replicationDestinationIndex(b: Readonly<S3Bucket>): string[] {
  const names = (b.spec.replication?.rules ?? []).flatMap((r) =>
    r.destination.bucketRef ? [r.destination.bucketRef.name] : [],
  );
  return [...new Set(names)].map((name) => referenceKey(b.metadata.namespace, name));
}

/**
 * The cache index of buckets by the S3Bucket objects their logging names, as target
 * (targetBucketRef) or as source (allowLoggingFrom): `namespace/name`.
 */
export const LOGGING_PEER_INDEX = "loggingBucketRef";

/** The {@link LOGGING_PEER_INDEX} values of `b`. */
export function loggingPeerIndex(b: Readonly<S3Bucket>): string[] {
  const target = b.spec.logging?.targetBucketRef?.name;
  const names = [
    ...(target !== undefined ? [target] : []),
    ...(b.spec.allowLoggingFrom ?? []).map((a) => a.bucketRef.name),
  ];
  return [...new Set(names)].map((name) => referenceKey(b.metadata.namespace, name));
}

/** The `s3bucket` controller's kind. */
export const s3BucketKind: KindModule = defineKind<S3BucketObject, S3BucketView>({
  name: "s3bucket",
  resource: S3BucketResource,
  crd: s3BucketCrd,
  changeEvents: s3BucketChangeEvents,
  iam: [
    { action: "s3:CreateBucket" },
    { action: "s3:DeleteBucket" },
    { action: "s3:ListBucket", calls: ["HeadBucket"] },
    {
      action: "s3:ListAllMyBuckets",
      calls: ["ListBuckets"],
      when: "only for an untagged bucket in the crash window of a create",
    },
    { action: "s3:ListBucketVersions", calls: ["ListObjectVersions"] },
    { action: "s3:GetBucketTagging" },
    { action: "s3:PutBucketTagging" },
    { action: "s3:GetBucketVersioning" },
    { action: "s3:PutBucketVersioning" },
    { action: "s3:DeleteObject", calls: ["DeleteObjects"], when: "only for buckets with forceDelete: true" },
    {
      action: "s3:DeleteObjectVersion",
      calls: ["DeleteObjects"],
      when: "only for buckets with forceDelete: true",
    },
    {
      action: "s3:GetEncryptionConfiguration",
      calls: ["GetBucketEncryption"],
      when: "only for buckets that set encryption",
    },
    {
      action: "s3:PutEncryptionConfiguration",
      calls: ["PutBucketEncryption"],
      when: "only for buckets that set encryption",
    },
    {
      action: "s3:GetBucketPublicAccessBlock",
      calls: ["GetPublicAccessBlock"],
      when: "only for buckets that set publicAccessBlock",
    },
    {
      action: "s3:PutBucketPublicAccessBlock",
      calls: ["PutPublicAccessBlock"],
      when: "only for buckets that set publicAccessBlock",
    },
    { action: "s3:GetBucketPolicy", when: "only for buckets that set a policy or allowLoggingFrom" },
    { action: "s3:PutBucketPolicy", when: "only for buckets that set a policy or allowLoggingFrom" },
    {
      action: "s3:GetLifecycleConfiguration",
      calls: ["GetBucketLifecycleConfiguration"],
      when: "only for buckets that set lifecycleRules",
    },
    {
      action: "s3:PutLifecycleConfiguration",
      calls: ["PutBucketLifecycleConfiguration", "DeleteBucketLifecycle"],
      when: "only for buckets that set lifecycleRules (also to remove the rules)",
    },
    { action: "s3:GetBucketOwnershipControls", when: "only for buckets that set objectOwnership" },
    {
      action: "s3:PutBucketOwnershipControls",
      calls: ["PutBucketOwnershipControls", "CreateBucket"],
      when: "only for buckets that set objectOwnership (also on CreateBucket with it)",
    },
    {
      action: "s3:GetBucketNotification",
      calls: ["GetBucketNotificationConfiguration"],
      when: "only for buckets that set notifications",
    },
    {
      action: "s3:PutBucketNotification",
      calls: ["PutBucketNotificationConfiguration"],
      when: "only for buckets that set notifications",
    },
    { action: "s3:GetBucketLogging", when: "only for buckets that set logging" },
    { action: "s3:PutBucketLogging", when: "only for buckets that set logging" },
    {
      action: "s3:GetReplicationConfiguration",
      calls: ["GetBucketReplication"],
      when: "only for buckets that set replication",
    },
    {
      action: "s3:PutReplicationConfiguration",
      calls: ["PutBucketReplication"],
      when: "only for buckets that set replication",
    },
    {
      action: "iam:PassRole",
      calls: ["PutBucketReplication"],
      when: "only for buckets that set replication: passing spec.replication.roleArn to S3",
    },
    {
      action: "s3:GetBucketObjectLockConfiguration",
      calls: ["GetObjectLockConfiguration"],
      when: "only for buckets that set objectLock.defaultRetention",
    },
    {
      action: "s3:PutBucketObjectLockConfiguration",
      calls: ["PutObjectLockConfiguration", "CreateBucket"],
      when: "only for buckets that set objectLock (also on CreateBucket with Object Lock enabled)",
    },
    {
      action: "s3:PutBucketVersioning",
      calls: ["CreateBucket"],
      when: "only for buckets that set objectLock: CreateBucket with Object Lock enabled",
    },
    { action: "s3:GetBucketCORS", calls: ["GetBucketCors"], when: "only for buckets that set cors" },
    {
      action: "s3:PutBucketCORS",
      calls: ["PutBucketCors", "DeleteBucketCors"],
      when: "only for buckets that set cors (also to remove the rules)",
    },
    { action: "s3:GetBucketWebsite", when: "only for buckets that set website" },
    { action: "s3:PutBucketWebsite", when: "only for buckets that set website" },
  ],
  outputs: s3BucketOutputs,
  driver: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    const buckets = deps.client.resource<S3Bucket>(S3BucketResource);
    return new S3BucketDriver({
      aws: deps.aws,
      tagPolicy: deps.tagPolicy,
      queues: (ref) => queues.get(ref),
      queuesRun: deps.runningKinds?.includes(SqsQueueResource.kind) ?? true,
      buckets: (ref) => buckets.get(ref),
      tagSnapshots: kindTagSnapshots(deps, S3BucketResource.kind, "s3"),
    });
  },
  // A change of a queue enqueues the buckets whose notifications name it, so they pick up its
  // readiness, its ARN or its deletion at once instead of at the next poll.
  // A change of a bucket enqueues the buckets that replicate to it (its versioning, its deletion).
  indexers: {
    [NOTIFICATION_QUEUE_INDEX]: notificationQueueIndex,
    [REPLICATION_DESTINATION_INDEX]: replicationDestinationIndex,
    [LOGGING_PEER_INDEX]: loggingPeerIndex,
  },
  watches: [
    {
      resource: SqsQueueResource,
      map: (deps) => referrersIn(deps, S3BucketResource, NOTIFICATION_QUEUE_INDEX),
    },
    {
      resource: S3BucketResource,
      map: (deps) => referrersIn(deps, S3BucketResource, REPLICATION_DESTINATION_INDEX),
    },
    { resource: S3BucketResource, map: (deps) => referrersIn(deps, S3BucketResource, LOGGING_PEER_INDEX) },
  ],
});
