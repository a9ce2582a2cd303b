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
import { S3_BUCKET_TRAITS } from "./traits.ts";
import { kindTagSnapshots } from "../common/tag-snapshots.ts";
import { referenceKey, referrersIn } from "../common/references.ts";
import { s3BucketOutputs } from "./outputs.ts";
import { s3BucketChangeEvents } from "./change-events.ts";
import { S3_BUCKET_IAM } from "./iam.ts";
import type { S3BucketView, S3BucketObject } from "./model.ts";
import { S3BucketDriver } from "./driver.ts";
import { s3BucketExporter } from "./export.ts";
import { resolveReferences, type BucketLookups } from "./references.ts";
import type { ResolvedTargets } from "./settings/index.ts";

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
export const s3BucketKind: KindModule = defineKind<S3BucketObject, S3BucketView, ResolvedTargets>({
  traits: S3_BUCKET_TRAITS,
  name: "s3bucket",
  resource: S3BucketResource,
  crd: s3BucketCrd,
  changeEvents: s3BucketChangeEvents,
  iam: S3_BUCKET_IAM,
  outputs: s3BucketOutputs,
  references: (deps) => {
    const queues = deps.client.resource<SqsQueue>(SqsQueueResource);
    const buckets = deps.client.resource<S3Bucket>(S3BucketResource);
    const lookups: BucketLookups = {
      queues: (ref) => queues.get(ref),
      queuesRun: deps.runningKinds?.includes(SqsQueueResource.kind) ?? true,
      buckets: (ref) => buckets.get(ref),
    };
    return (obj) => resolveReferences(obj, lookups);
  },
  driver: (deps) =>
    new S3BucketDriver({
      aws: deps.aws,
      tagPolicy: deps.tagPolicy,
      tagSnapshots: kindTagSnapshots(deps, S3BucketResource.kind, "s3"),
    }),
  exporter: (_deps, aws) => s3BucketExporter(aws),
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
