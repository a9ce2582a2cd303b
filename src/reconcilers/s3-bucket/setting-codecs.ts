/**
 * How each managed bucket setting (./settings.ts) is read from S3 and written to it: one codec
 * per setting, `{ notConfigured, none, read, write }`. `read` returns the setting in normal form;
 * S3 answers a read of a setting that was never configured with an error, one of the codec's
 * `notConfigured` codes, which stands for `none` (null, or no lifecycle rules). `write` puts the
 * desired value. A new
 * setting is one more entry here (and its normal form and spec field in ./settings.ts); the
 * driver and {@link BucketApi} stay as they are.
 */
import {
  DeleteBucketCorsCommand,
  DeleteBucketLifecycleCommand,
  GetBucketCorsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLoggingCommand,
  GetBucketNotificationConfigurationCommand,
  GetBucketOwnershipControlsCommand,
  GetBucketPolicyCommand,
  GetBucketReplicationCommand,
  GetBucketWebsiteCommand,
  GetObjectLockConfigurationCommand,
  GetPublicAccessBlockCommand,
  PutBucketCorsCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketLoggingCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutBucketReplicationCommand,
  PutBucketWebsiteCommand,
  PutObjectLockConfigurationCommand,
  PutPublicAccessBlockCommand,
  type Event,
  type LifecycleRuleFilter,
  type ObjectLockRetentionMode,
  type ObjectOwnership,
  type Protocol,
  type ServerSideEncryption,
  type StorageClass,
  type TransitionStorageClass,
} from "@aws-sdk/client-s3";
import type { JsonValue } from "../../api/schema/openapi.ts";
import type { BucketCalls } from "./bucket-api.ts";
import {
  normalNotifications,
  normalReplication,
  normalCorsRule,
  normalRules,
  type BucketSetting,
  type BucketSettings,
  type CorsRule,
  type Encryption,
  type LifecycleRule,
  type Notifications,
  type ObjectLockRetention,
  type PublicAccessBlock,
  type Replication,
  type Website,
} from "./settings.ts";

/** Reads and writes one setting `K` of one bucket. */
export interface SettingCodec<K extends BucketSetting> {
  /** S3 error codes of a read that mean "the bucket has none". */
  readonly notConfigured: readonly string[];
  /** The normal form of a bucket that has none. */
  readonly none: BucketSettings[K];
  /** The setting in normal form. */
  read(s3: BucketCalls): Promise<BucketSettings[K]>;
  /** Writes `desired`. */
  write(s3: BucketCalls, desired: NonNullable<BucketSettings[K]>): Promise<void>;
}

/** The codec of every managed setting. */
export const SETTING_CODECS: { readonly [K in BucketSetting]: SettingCodec<K> } = {
  objectOwnership: {
    notConfigured: ["OwnershipControlsNotFoundError", "NoSuchOwnershipControls"],
    none: null,
    async read(s3) {
      const r = await s3.call(
        "GetBucketOwnershipControls",
        new GetBucketOwnershipControlsCommand({ Bucket: s3.bucket }),
      );
      return r.OwnershipControls?.Rules?.[0]?.ObjectOwnership ?? null;
    },
    async write(s3, desired) {
      await s3.call(
        "PutBucketOwnershipControls",
        new PutBucketOwnershipControlsCommand({
          Bucket: s3.bucket,
          OwnershipControls: { Rules: [{ ObjectOwnership: desired as ObjectOwnership }] },
        }),
      );
    },
  },

  encryption: {
    notConfigured: ["ServerSideEncryptionConfigurationNotFoundError"],
    none: null,
    async read(s3) {
      const r = await s3.call("GetBucketEncryption", new GetBucketEncryptionCommand({ Bucket: s3.bucket }));
      const rule = r.ServerSideEncryptionConfiguration?.Rules?.[0];
      const by = rule?.ApplyServerSideEncryptionByDefault;
      if (by?.SSEAlgorithm === undefined) return null;
      const enc: Encryption = {
        algorithm: by.SSEAlgorithm,
        kmsKeyId: by.SSEAlgorithm === "aws:kms" ? nonEmpty(by.KMSMasterKeyID) : undefined,
        bucketKeyEnabled: rule?.BucketKeyEnabled === true,
      };
      return enc;
    },
    async write(s3, e) {
      await s3.call(
        "PutBucketEncryption",
        new PutBucketEncryptionCommand({
          Bucket: s3.bucket,
          ServerSideEncryptionConfiguration: {
            Rules: [
              {
                ApplyServerSideEncryptionByDefault: {
                  SSEAlgorithm: e.algorithm as ServerSideEncryption,
                  ...(e.kmsKeyId !== undefined ? { KMSMasterKeyID: e.kmsKeyId } : {}),
                },
                BucketKeyEnabled: e.bucketKeyEnabled,
              },
            ],
          },
        }),
      );
    },
  },

  publicAccessBlock: {
    notConfigured: ["NoSuchPublicAccessBlockConfiguration"],
    none: null,
    async read(s3) {
      const r = await s3.call("GetPublicAccessBlock", new GetPublicAccessBlockCommand({ Bucket: s3.bucket }));
      const c = r.PublicAccessBlockConfiguration;
      if (c === undefined) return null;
      const pab: PublicAccessBlock = {
        blockPublicAcls: c.BlockPublicAcls === true,
        ignorePublicAcls: c.IgnorePublicAcls === true,
        blockPublicPolicy: c.BlockPublicPolicy === true,
        restrictPublicBuckets: c.RestrictPublicBuckets === true,
      };
      return pab;
    },
    async write(s3, p) {
      await s3.call(
        "PutPublicAccessBlock",
        new PutPublicAccessBlockCommand({
          Bucket: s3.bucket,
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: p.blockPublicAcls,
            IgnorePublicAcls: p.ignorePublicAcls,
            BlockPublicPolicy: p.blockPublicPolicy,
            RestrictPublicBuckets: p.restrictPublicBuckets,
          },
        }),
      );
    },
  },

  policy: {
    notConfigured: ["NoSuchBucketPolicy"],
    none: null,
    async read(s3) {
      const r = await s3.call("GetBucketPolicy", new GetBucketPolicyCommand({ Bucket: s3.bucket }));
      return r.Policy === undefined || r.Policy === "" ? null : (JSON.parse(r.Policy) as JsonValue);
    },
    async write(s3, desired) {
      await s3.call(
        "PutBucketPolicy",
        new PutBucketPolicyCommand({ Bucket: s3.bucket, Policy: JSON.stringify(desired) }),
      );
    },
  },

  lifecycleRules: {
    notConfigured: ["NoSuchLifecycleConfiguration"],
    none: [],
    async read(s3) {
      const r = await s3.call(
        "GetBucketLifecycleConfiguration",
        new GetBucketLifecycleConfigurationCommand({ Bucket: s3.bucket }),
      );
      return normalRules(
        (r.Rules ?? []).map((x) => ({
          id: x.ID ?? "",
          enabled: x.Status === "Enabled",
          prefix: x.Filter?.Prefix ?? x.Filter?.And?.Prefix ?? x.Prefix ?? "",
          tags: filterTags(x.Filter),
          objectSizeGreaterThan: x.Filter?.ObjectSizeGreaterThan ?? x.Filter?.And?.ObjectSizeGreaterThan,
          objectSizeLessThan: x.Filter?.ObjectSizeLessThan ?? x.Filter?.And?.ObjectSizeLessThan,
          expirationDays: x.Expiration?.Days,
          noncurrentVersionExpirationDays: x.NoncurrentVersionExpiration?.NoncurrentDays,
          abortIncompleteMultipartUploadDays: x.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
          transitions: (x.Transitions ?? []).map((t) => ({
            days: t.Days ?? 0,
            storageClass: t.StorageClass ?? "",
          })),
          noncurrentTransitions: (x.NoncurrentVersionTransitions ?? []).map((t) => ({
            days: t.NoncurrentDays ?? 0,
            storageClass: t.StorageClass ?? "",
          })),
        })),
      );
    },
    async write(s3, rules) {
      if (rules.length === 0) {
        await s3.call("DeleteBucketLifecycle", new DeleteBucketLifecycleCommand({ Bucket: s3.bucket }));
        return;
      }
      await s3.call(
        "PutBucketLifecycleConfiguration",
        new PutBucketLifecycleConfigurationCommand({
          Bucket: s3.bucket,
          LifecycleConfiguration: { Rules: rules.map(lifecycleRule) },
        }),
      );
    },
  },

  notifications: {
    // S3 answers a bucket without notifications with an empty configuration, not an error.
    notConfigured: [],
    none: { queues: [], otherDestinations: 0, eventBridge: false },
    async read(s3) {
      const r = await s3.call(
        "GetBucketNotificationConfiguration",
        new GetBucketNotificationConfigurationCommand({ Bucket: s3.bucket }),
      );
      return normalNotifications({
        queues: (r.QueueConfigurations ?? []).map((q) => {
          const rules = q.Filter?.Key?.FilterRules ?? [];
          const rule = (name: string) => rules.find((f) => f.Name?.toLowerCase() === name)?.Value ?? "";
          return {
            id: q.Id ?? "",
            queueArn: q.QueueArn ?? "",
            events: q.Events ?? [],
            prefix: rule("prefix"),
            suffix: rule("suffix"),
          };
        }),
        otherDestinations:
          (r.TopicConfigurations?.length ?? 0) + (r.LambdaFunctionConfigurations?.length ?? 0),
        // S3 answers an empty <EventBridgeConfiguration/> while the bucket sends to EventBridge.
        eventBridge: r.EventBridgeConfiguration !== undefined,
      });
    },
    async write(s3, n) {
      await s3.call(
        "PutBucketNotificationConfiguration",
        new PutBucketNotificationConfigurationCommand({
          Bucket: s3.bucket,
          NotificationConfiguration: notificationConfiguration(n),
        }),
      );
    },
  },

  logging: {
    // S3 answers a bucket without logging with an empty status, not an error.
    notConfigured: [],
    none: null,
    async read(s3) {
      const r = await s3.call("GetBucketLogging", new GetBucketLoggingCommand({ Bucket: s3.bucket }));
      const l = r.LoggingEnabled;
      if (l?.TargetBucket === undefined) return null;
      return { targetBucket: l.TargetBucket, targetPrefix: l.TargetPrefix ?? "" };
    },
    async write(s3, l) {
      await s3.call(
        "PutBucketLogging",
        new PutBucketLoggingCommand({
          Bucket: s3.bucket,
          BucketLoggingStatus: {
            LoggingEnabled: { TargetBucket: l.targetBucket, TargetPrefix: l.targetPrefix },
          },
        }),
      );
    },
  },

  replication: {
    notConfigured: ["ReplicationConfigurationNotFoundError"],
    none: null,
    async read(s3) {
      const r = await s3.call("GetBucketReplication", new GetBucketReplicationCommand({ Bucket: s3.bucket }));
      const c = r.ReplicationConfiguration;
      if (c === undefined) return null;
      const replication: Replication = normalReplication({
        roleArn: c.Role ?? "",
        rules: (c.Rules ?? []).map((x) => ({
          id: x.ID ?? "",
          priority: Number(x.Priority ?? 0),
          enabled: x.Status === "Enabled",
          prefix: x.Filter?.Prefix ?? x.Prefix ?? "",
          destinationArn: x.Destination?.Bucket ?? "",
          storageClass: nonEmpty(x.Destination?.StorageClass),
          deleteMarkerReplication: x.DeleteMarkerReplication?.Status === "Enabled",
        })),
      });
      return replication;
    },
    async write(s3, r) {
      await s3.call(
        "PutBucketReplication",
        new PutBucketReplicationCommand({
          Bucket: s3.bucket,
          ReplicationConfiguration: {
            Role: r.roleArn,
            Rules: r.rules.map((x) => ({
              ID: x.id,
              Priority: x.priority,
              Status: x.enabled ? ("Enabled" as const) : ("Disabled" as const),
              Filter: { Prefix: x.prefix },
              Destination: {
                Bucket: x.destinationArn,
                ...(x.storageClass !== undefined ? { StorageClass: x.storageClass as StorageClass } : {}),
              },
              DeleteMarkerReplication: {
                Status: x.deleteMarkerReplication ? ("Enabled" as const) : ("Disabled" as const),
              },
            })),
          },
        }),
      );
    },
  },

  objectLock: {
    // S3 answers a bucket created without Object Lock with this code.
    notConfigured: ["ObjectLockConfigurationNotFoundError"],
    none: null,
    async read(s3) {
      const r = await s3.call(
        "GetObjectLockConfiguration",
        new GetObjectLockConfigurationCommand({ Bucket: s3.bucket }),
      );
      const d = r.ObjectLockConfiguration?.Rule?.DefaultRetention;
      if (d?.Mode === undefined) return null;
      const retention: ObjectLockRetention = {
        mode: d.Mode,
        days: positive(d.Days),
        years: positive(d.Years),
      };
      return retention;
    },
    async write(s3, r) {
      // S3 takes ObjectLockEnabled with every configuration; the spec allows defaultRetention
      // only with objectLock.enabled, which went with CreateBucket.
      await s3.call(
        "PutObjectLockConfiguration",
        new PutObjectLockConfigurationCommand({
          Bucket: s3.bucket,
          ObjectLockConfiguration: {
            ObjectLockEnabled: "Enabled",
            Rule: {
              DefaultRetention: {
                Mode: r.mode as ObjectLockRetentionMode,
                ...(r.years !== undefined ? { Years: r.years } : { Days: r.days }),
              },
            },
          },
        }),
      );
    },
  },

  cors: {
    notConfigured: ["NoSuchCORSConfiguration"],
    none: [],
    async read(s3) {
      const r = await s3.call("GetBucketCors", new GetBucketCorsCommand({ Bucket: s3.bucket }));
      return (r.CORSRules ?? []).map((x) =>
        normalCorsRule({
          id: nonEmpty(x.ID),
          allowedMethods: x.AllowedMethods ?? [],
          allowedOrigins: x.AllowedOrigins ?? [],
          allowedHeaders: x.AllowedHeaders ?? [],
          exposeHeaders: x.ExposeHeaders ?? [],
          maxAgeSeconds: x.MaxAgeSeconds,
        }),
      );
    },
    async write(s3, rules) {
      if (rules.length === 0) {
        await s3.call("DeleteBucketCors", new DeleteBucketCorsCommand({ Bucket: s3.bucket }));
        return;
      }
      await s3.call(
        "PutBucketCors",
        new PutBucketCorsCommand({
          Bucket: s3.bucket,
          CORSConfiguration: { CORSRules: rules.map(corsRule) },
        }),
      );
    },
  },

  website: {
    notConfigured: ["NoSuchWebsiteConfiguration"],
    none: null,
    async read(s3) {
      const r = await s3.call("GetBucketWebsite", new GetBucketWebsiteCommand({ Bucket: s3.bucket }));
      const redirect = r.RedirectAllRequestsTo;
      const website: Website = {
        indexDocument: nonEmpty(r.IndexDocument?.Suffix),
        errorDocument: nonEmpty(r.ErrorDocument?.Key),
        redirectAllRequestsTo:
          redirect?.HostName !== undefined
            ? { hostName: redirect.HostName, protocol: nonEmpty(redirect.Protocol) }
            : undefined,
        routingRules: r.RoutingRules?.length ?? 0,
      };
      return website;
    },
    async write(s3, w) {
      // PutBucketWebsite replaces the whole configuration, routing rules included.
      await s3.call(
        "PutBucketWebsite",
        new PutBucketWebsiteCommand({
          Bucket: s3.bucket,
          WebsiteConfiguration:
            w.redirectAllRequestsTo !== undefined
              ? {
                  RedirectAllRequestsTo: {
                    HostName: w.redirectAllRequestsTo.hostName,
                    ...(w.redirectAllRequestsTo.protocol !== undefined
                      ? { Protocol: w.redirectAllRequestsTo.protocol as Protocol }
                      : {}),
                  },
                }
              : {
                  ...(w.indexDocument !== undefined ? { IndexDocument: { Suffix: w.indexDocument } } : {}),
                  ...(w.errorDocument !== undefined ? { ErrorDocument: { Key: w.errorDocument } } : {}),
                },
        }),
      );
    },
  },
};

/**
 * The configuration PutBucketNotificationConfiguration takes for `n` (which has no other
 * destinations): one document, so it carries the queues and EventBridge together; an absent
 * EventBridgeConfiguration turns EventBridge off.
 */
function notificationConfiguration(n: Notifications) {
  return {
    ...(n.eventBridge === true ? { EventBridgeConfiguration: {} } : {}),
    QueueConfigurations: n.queues.map((q) => {
      const rules = [
        ...(q.prefix !== "" ? [{ Name: "prefix" as const, Value: q.prefix }] : []),
        ...(q.suffix !== "" ? [{ Name: "suffix" as const, Value: q.suffix }] : []),
      ];
      return {
        Id: q.id,
        QueueArn: q.queueArn,
        Events: q.events as Event[],
        ...(rules.length > 0 ? { Filter: { Key: { FilterRules: rules } } } : {}),
      };
    }),
  };
}

/** One CORS rule as PutBucketCors takes it (absent lists and fields left out). */
function corsRule(r: CorsRule) {
  return {
    ...(r.id !== undefined ? { ID: r.id } : {}),
    AllowedMethods: [...r.allowedMethods],
    AllowedOrigins: [...r.allowedOrigins],
    ...(r.allowedHeaders.length > 0 ? { AllowedHeaders: [...r.allowedHeaders] } : {}),
    ...(r.exposeHeaders.length > 0 ? { ExposeHeaders: [...r.exposeHeaders] } : {}),
    ...(r.maxAgeSeconds !== undefined ? { MaxAgeSeconds: r.maxAgeSeconds } : {}),
  };
}

/** One lifecycle rule as PutBucketLifecycleConfiguration takes it. */
function lifecycleRule(r: LifecycleRule) {
  return {
    ID: r.id,
    Status: r.enabled ? ("Enabled" as const) : ("Disabled" as const),
    Filter: lifecycleFilter(r),
    ...(r.expirationDays !== undefined ? { Expiration: { Days: r.expirationDays } } : {}),
    ...(r.noncurrentVersionExpirationDays !== undefined
      ? { NoncurrentVersionExpiration: { NoncurrentDays: r.noncurrentVersionExpirationDays } }
      : {}),
    ...(r.abortIncompleteMultipartUploadDays !== undefined
      ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: r.abortIncompleteMultipartUploadDays } }
      : {}),
    ...(r.transitions.length > 0
      ? {
          Transitions: r.transitions.map((t) => ({
            Days: t.days,
            StorageClass: t.storageClass as TransitionStorageClass,
          })),
        }
      : {}),
    ...(r.noncurrentTransitions.length > 0
      ? {
          NoncurrentVersionTransitions: r.noncurrentTransitions.map((t) => ({
            NoncurrentDays: t.days,
            StorageClass: t.storageClass as TransitionStorageClass,
          })),
        }
      : {}),
  };
}

/**
 * The filter of a lifecycle rule as S3 takes it: a Filter holds exactly one of Prefix, Tag,
 * ObjectSizeGreaterThan, ObjectSizeLessThan and And, so one condition goes on its own (no
 * condition is the empty prefix: every object) and two or more are joined by And.
 */
function lifecycleFilter(r: LifecycleRule): LifecycleRuleFilter {
  const tags = Object.entries(r.tags).map(([Key, Value]) => ({ Key, Value }));
  const sizes = {
    ...(r.objectSizeGreaterThan !== undefined ? { ObjectSizeGreaterThan: r.objectSizeGreaterThan } : {}),
    ...(r.objectSizeLessThan !== undefined ? { ObjectSizeLessThan: r.objectSizeLessThan } : {}),
  };
  const prefix = r.prefix !== "" ? { Prefix: r.prefix } : {};
  const conditions = Object.keys(prefix).length + tags.length + Object.keys(sizes).length;
  const [only] = tags;
  if (conditions > 1) return { And: { ...prefix, ...(tags.length > 0 ? { Tags: tags } : {}), ...sizes } };
  if (only !== undefined) return { Tag: only };
  if (conditions === 1 && r.prefix === "") return sizes;
  return { Prefix: r.prefix };
}

/** The tags a lifecycle filter asks for, alone or under And. */
function filterTags(f: LifecycleRuleFilter | undefined): Record<string, string> {
  const tags = f?.Tag !== undefined ? [f.Tag] : (f?.And?.Tags ?? []);
  return Object.fromEntries(tags.map((t) => [t.Key ?? "", t.Value ?? ""]));
}

/** A retention period S3 reports as absent or 0 (moto sends both fields) becomes undefined. */
function positive(n: number | undefined): number | undefined {
  return n === undefined || n === 0 ? undefined : n;
}

/** Empty strings (S3 may send an empty key ID) become undefined. */
function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}
