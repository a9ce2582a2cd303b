/**
 * The bucket settings beyond tags and versioning: default encryption, Block Public Access, the
 * bucket policy, lifecycle rules, Object Ownership, the default retention of Object Lock, CORS
 * and the static website. One rule for all of them: a setting the
 * spec leaves unset is not managed (never read, never written); a set one is read on every poll,
 * compared in a normal form (policies as JSON values, rules by id) and written only when it
 * differs. Pure functions: the S3 calls are in bucket-api.ts.
 */
import { isDeepStrictEqual } from "node:util";
import type { S3BucketSpec } from "../../api/v1/index.ts";
import type { JsonValue } from "../../api/schema/openapi.ts";
import { s3BucketArn } from "../../aws/partition.ts";

/** The settings this file manages, in the order they are applied. */
export const BUCKET_SETTINGS = [
  "objectOwnership",
  "encryption",
  "publicAccessBlock",
  "policy",
  "lifecycleRules",
  "notifications",
  "replication",
  "logging",
  "objectLock",
  "cors",
  "website",
] as const;
/** One managed setting. */
export type BucketSetting = (typeof BUCKET_SETTINGS)[number];

/** Default encryption in normal form. */
export interface Encryption {
  readonly algorithm: string;
  readonly kmsKeyId: string | undefined;
  readonly bucketKeyEnabled: boolean;
}

/** Block Public Access in normal form. */
export interface PublicAccessBlock {
  readonly blockPublicAcls: boolean;
  readonly ignorePublicAcls: boolean;
  readonly blockPublicPolicy: boolean;
  readonly restrictPublicBuckets: boolean;
}

/** One lifecycle rule in normal form (absent actions undefined, transitions sorted by days). */
export interface LifecycleRule {
  readonly id: string;
  readonly enabled: boolean;
  readonly prefix: string;
  /** Tags an object must all carry; `{}` for none. */
  readonly tags: Readonly<Record<string, string>>;
  /** Bytes an object must exceed; undefined for no lower bound. */
  readonly objectSizeGreaterThan: number | undefined;
  /** Bytes an object must stay below; undefined for no upper bound. */
  readonly objectSizeLessThan: number | undefined;
  readonly expirationDays: number | undefined;
  readonly noncurrentVersionExpirationDays: number | undefined;
  readonly abortIncompleteMultipartUploadDays: number | undefined;
  readonly transitions: readonly { readonly days: number; readonly storageClass: string }[];
  /** Transitions of noncurrent versions, `days` counted from when a version became noncurrent. */
  readonly noncurrentTransitions: readonly { readonly days: number; readonly storageClass: string }[];
}

/** The default retention of an Object Lock bucket in normal form (one of days or years). */
export interface ObjectLockRetention {
  readonly mode: string;
  readonly days: number | undefined;
  readonly years: number | undefined;
}

/** One CORS rule in normal form (its lists sorted: S3 treats each as a set). */
export interface CorsRule {
  readonly id: string | undefined;
  readonly allowedMethods: readonly string[];
  readonly allowedOrigins: readonly string[];
  readonly allowedHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  readonly maxAgeSeconds: number | undefined;
}

/** The static website in normal form; `routingRules` counts rules (the spec never sets one). */
export interface Website {
  readonly indexDocument: string | undefined;
  readonly errorDocument: string | undefined;
  readonly redirectAllRequestsTo:
    { readonly hostName: string; readonly protocol: string | undefined } | undefined;
  readonly routingRules: number;
}

/** One queue notification in normal form (events sorted; an absent filter is ""). */
export interface QueueNotification {
  readonly id: string;
  readonly queueArn: string;
  readonly events: readonly string[];
  readonly prefix: string;
  readonly suffix: string;
}

/**
 * The bucket's notification configuration in normal form: its queues sorted by id, how many
 * destinations of other kinds (SNS topics, Lambda functions) it has, which a managed
 * configuration never holds, and whether it sends its events to EventBridge. In a desired
 * configuration `eventBridge` undefined means not managed: {@link settingChanges} takes the
 * bucket's own value, so a write keeps it.
 */
export interface Notifications {
  readonly queues: readonly QueueNotification[];
  readonly otherDestinations: number;
  readonly eventBridge: boolean | undefined;
}

/** One replication rule in normal form (an absent prefix is "", an absent storage class undefined). */
export interface ReplicationRule {
  readonly id: string;
  readonly priority: number;
  readonly enabled: boolean;
  readonly prefix: string;
  readonly destinationArn: string;
  readonly storageClass: string | undefined;
  readonly deleteMarkerReplication: boolean;
}

/** The replication configuration in normal form: the role and the rules sorted by id. */
export interface Replication {
  readonly roleArn: string;
  readonly rules: readonly ReplicationRule[];
}

/**
 * What the driver resolved for the spec, by object name: the ARNs of the SqsQueue objects
 * notifications name, and of the S3Bucket objects replication rules name.
 */
export interface ResolvedTargets {
  readonly queueArns?: ReadonlyMap<string, string>;
  readonly bucketArns?: ReadonlyMap<string, string>;
  /** The bucket name of the S3Bucket logging.targetBucketRef names. */
  readonly loggingTarget?: string;
  /** The bucket names and ARNs of the S3Bucket objects allowLoggingFrom names. */
  readonly loggingSources?: readonly { readonly bucketName: string; readonly bucketArn: string }[];
}

/** Server access logging in normal form. */
export interface Logging {
  readonly targetBucket: string;
  readonly targetPrefix: string;
}

/** The Sid of the bucket policy statement that lets bucket `bucketName` write its access logs here. */
export function loggingSid(bucketName: string): string {
  return `s3-logging-${bucketName}`;
}

/**
 * The bucket policy the spec manages: spec.policy (or an empty 2012-10-17 policy) with one
 * statement per bucket allowLoggingFrom names appended, sorted by bucket name:
 * logging.s3.amazonaws.com may s3:PutObject into this bucket when aws:SourceArn is that bucket.
 */
export function bucketPolicy(
  policy: S3BucketSpec["policy"],
  bucketArn: string,
  sources: NonNullable<ResolvedTargets["loggingSources"]>,
): JsonValue {
  const grants = [...sources]
    .sort((a, b) => (a.bucketName < b.bucketName ? -1 : a.bucketName > b.bucketName ? 1 : 0))
    .map((b) => ({
      Sid: loggingSid(b.bucketName),
      Effect: "Allow",
      Principal: { Service: "logging.s3.amazonaws.com" },
      Action: "s3:PutObject",
      Resource: `${bucketArn}/*`,
      Condition: { ArnLike: { "aws:SourceArn": b.bucketArn } },
    }));
  const base = (policy ?? { Version: "2012-10-17", Statement: [] }) as { Statement: unknown[] };
  return normalJson({ ...base, Statement: [...base.Statement, ...grants] } as JsonValue);
}

/**
 * Each setting in normal form. `null`: the bucket has none (S3 answered "not configured"; no
 * lifecycle rules is `[]`). A key that is absent was not read.
 */
export interface BucketSettings {
  objectOwnership?: string | null;
  encryption?: Encryption | null;
  publicAccessBlock?: PublicAccessBlock | null;
  policy?: JsonValue | null;
  lifecycleRules?: readonly LifecycleRule[];
  notifications?: Notifications;
  replication?: Replication | null;
  logging?: Logging | null;
  /** Managed only when the spec sets objectLock.defaultRetention (enabled goes with CreateBucket). */
  objectLock?: ObjectLockRetention | null;
  /** In S3's order, which matters (the first matching rule applies); none is `[]`. */
  cors?: readonly CorsRule[];
  website?: Website | null;
}

/** The settings the spec sets, each in normal form: what the bucket must have. */
export function desiredSettings(spec: S3BucketSpec, resolved: ResolvedTargets = {}): BucketSettings {
  const out: BucketSettings = {};
  if (spec.objectOwnership !== undefined) out.objectOwnership = spec.objectOwnership;
  if (spec.encryption !== undefined) {
    const e = spec.encryption;
    out.encryption = {
      algorithm: e.algorithm,
      kmsKeyId: e.algorithm === "aws:kms" ? e.kmsKeyId : undefined,
      bucketKeyEnabled: e.bucketKeyEnabled,
    };
  }
  if (spec.publicAccessBlock !== undefined) {
    const p = spec.publicAccessBlock;
    out.publicAccessBlock = {
      blockPublicAcls: p.blockPublicAcls,
      ignorePublicAcls: p.ignorePublicAcls,
      blockPublicPolicy: p.blockPublicPolicy,
      restrictPublicBuckets: p.restrictPublicBuckets,
    };
  }
  if (spec.allowLoggingFrom !== undefined) {
    const sources = resolved.loggingSources;
    if (sources === undefined) throw new Error("allowLoggingFrom was not resolved to bucket ARNs");
    out.policy = bucketPolicy(spec.policy, s3BucketArn(spec.bucketName, spec.region), sources);
  } else if (spec.policy !== undefined) out.policy = normalJson(spec.policy as JsonValue);
  if (spec.lifecycleRules !== undefined) {
    out.lifecycleRules = normalRules(
      spec.lifecycleRules.map((r) => ({
        id: r.id,
        enabled: r.enabled,
        prefix: r.prefix ?? "",
        tags: r.tags ?? {},
        objectSizeGreaterThan: r.objectSizeGreaterThan,
        objectSizeLessThan: r.objectSizeLessThan,
        expirationDays: r.expirationDays,
        noncurrentVersionExpirationDays: r.noncurrentVersionExpirationDays,
        abortIncompleteMultipartUploadDays: r.abortIncompleteMultipartUploadDays,
        transitions: (r.transitions ?? []).map((t) => ({ days: t.days, storageClass: t.storageClass })),
        noncurrentTransitions: (r.noncurrentVersionTransitions ?? []).map((t) => ({
          days: t.noncurrentDays,
          storageClass: t.storageClass,
        })),
      })),
    );
  }
  if (spec.notifications !== undefined)
    out.notifications = desiredNotifications(spec.notifications, resolved);
  if (spec.replication !== undefined) out.replication = desiredReplication(spec.replication, resolved);
  if (spec.logging !== undefined) {
    const target = spec.logging.targetBucket ?? resolved.loggingTarget;
    if (target === undefined) throw new Error("logging.targetBucketRef was not resolved to a bucket");
    out.logging = { targetBucket: target, targetPrefix: spec.logging.targetPrefix };
  }
  const retention = spec.objectLock?.defaultRetention;
  if (retention !== undefined) {
    out.objectLock = { mode: retention.mode, days: retention.days, years: retention.years };
  }
  if (spec.cors !== undefined) {
    out.cors = spec.cors.map((r) =>
      normalCorsRule({
        id: r.id,
        allowedMethods: r.allowedMethods,
        allowedOrigins: r.allowedOrigins,
        allowedHeaders: r.allowedHeaders ?? [],
        exposeHeaders: r.exposeHeaders ?? [],
        maxAgeSeconds: r.maxAgeSeconds,
      }),
    );
  }
  if (spec.website !== undefined) {
    const w = spec.website;
    out.website = {
      indexDocument: w.indexDocument,
      errorDocument: w.errorDocument,
      redirectAllRequestsTo:
        w.redirectAllRequestsTo !== undefined
          ? { hostName: w.redirectAllRequestsTo.hostName, protocol: w.redirectAllRequestsTo.protocol }
          : undefined,
      routingRules: 0,
    };
  }
  return out;
}

/** `r` with each of its lists sorted. */
export function normalCorsRule(r: CorsRule): CorsRule {
  const sorted = (xs: readonly string[]) => [...xs].sort();
  return {
    ...r,
    allowedMethods: sorted(r.allowedMethods),
    allowedOrigins: sorted(r.allowedOrigins),
    allowedHeaders: sorted(r.allowedHeaders),
    exposeHeaders: sorted(r.exposeHeaders),
  };
}

/** The settings the spec manages (sets), in the order they are applied. */
export function managedSettings(spec: S3BucketSpec): BucketSetting[] {
  return BUCKET_SETTINGS.filter((k) => {
    if (k === "policy") return spec.policy !== undefined || spec.allowLoggingFrom !== undefined;
    // objectLock.enabled goes with CreateBucket; only the default retention is a setting.
    if (k === "objectLock") return spec.objectLock?.defaultRetention !== undefined;
    return spec[k] !== undefined;
  });
}

/**
 * spec.notifications in normal form, each queueRef replaced by the ARN `resolved` holds for it.
 * @throws Error when a queueRef was not resolved (the driver resolves every one first).
 */
function desiredNotifications(
  n: NonNullable<S3BucketSpec["notifications"]>,
  resolved: ResolvedTargets,
): Notifications {
  return normalNotifications({
    queues: (n.queues ?? []).map((q) => {
      const arn =
        q.queueArn ?? (q.queueRef !== undefined ? resolved.queueArns?.get(q.queueRef.name) : undefined);
      if (arn === undefined) throw new Error(`notification ${q.id}: its queueRef was not resolved to an ARN`);
      return {
        id: q.id,
        queueArn: arn,
        events: q.events,
        prefix: q.filter?.prefix ?? "",
        suffix: q.filter?.suffix ?? "",
      };
    }),
    otherDestinations: 0,
    eventBridge: n.eventBridge,
  });
}

/**
 * spec.replication in normal form, each bucketRef replaced by the ARN `resolved` holds for it.
 * @throws Error when a bucketRef was not resolved (the driver resolves every one first).
 */
function desiredReplication(
  r: NonNullable<S3BucketSpec["replication"]>,
  resolved: ResolvedTargets,
): Replication {
  return normalReplication({
    roleArn: r.roleArn,
    rules: r.rules.map((rule) => {
      const d = rule.destination;
      const arn =
        d.bucketArn ?? (d.bucketRef !== undefined ? resolved.bucketArns?.get(d.bucketRef.name) : undefined);
      if (arn === undefined)
        throw new Error(`replication rule ${rule.id}: its bucketRef was not resolved to an ARN`);
      return {
        id: rule.id,
        priority: rule.priority,
        enabled: rule.enabled,
        prefix: rule.prefix ?? "",
        destinationArn: arn,
        storageClass: d.storageClass,
        deleteMarkerReplication: rule.deleteMarkerReplication,
      };
    }),
  });
}

/** Rules sorted by id. */
export function normalReplication(r: Replication): Replication {
  return { ...r, rules: [...r.rules].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
}

/** Queues sorted by id, each with its events sorted. */
export function normalNotifications(n: Notifications): Notifications {
  return {
    ...n,
    queues: [...n.queues]
      .map((q) => ({ ...q, events: [...q.events].sort() }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
}

/** Rules sorted by id, each with both kinds of transitions sorted by days, then storage class. */
export function normalRules(rules: readonly LifecycleRule[]): LifecycleRule[] {
  const byDays = (ts: LifecycleRule["transitions"]) =>
    [...ts].sort((a, b) => a.days - b.days || a.storageClass.localeCompare(b.storageClass));
  return [...rules]
    .map((r) => ({
      ...r,
      transitions: byDays(r.transitions),
      noncurrentTransitions: byDays(r.noncurrentTransitions),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** `v` with undefined members dropped, as JSON would have it. */
export function normalJson(v: JsonValue): JsonValue {
  return JSON.parse(JSON.stringify(v)) as JsonValue;
}

/** One setting to write: its desired value and a short description for the Updated Event. */
export interface SettingChange<K extends BucketSetting = BucketSetting> {
  readonly setting: K;
  readonly desired: NonNullable<BucketSettings[K]>;
  readonly description: string;
}

/**
 * The settings that differ between `desired` and `actual`, in the order to apply them. A setting
 * `actual` does not hold (not read) counts as different: this is how create applies them all.
 * Policies are compared as JSON values (key order and formatting never count).
 */
export function settingChanges(desired: BucketSettings, actual: BucketSettings): SettingChange[] {
  const out: SettingChange[] = [];
  for (const setting of BUCKET_SETTINGS) {
    const have = actual[setting];
    const want = withUnmanagedParts(setting, desired[setting], have);
    if (want === undefined || want === null) continue;
    if (have !== undefined && isDeepStrictEqual(have, want)) continue;
    out.push({ setting, desired: want, description: describe(setting, want, have) } as SettingChange);
  }
  return out;
}

/**
 * `want` with the parts of a setting that the spec leaves unmanaged taken from `have`, the
 * bucket's value: they never count as drift, and the write of a setting held in one document
 * (PutBucketNotificationConfiguration replaces the whole configuration) carries them as they are.
 */
function withUnmanagedParts<K extends BucketSetting>(
  setting: K,
  want: BucketSettings[K],
  have: BucketSettings[K],
): BucketSettings[K] {
  if (setting !== "notifications" || want === undefined || have === undefined) return want;
  const n = want as Notifications;
  if (n.eventBridge !== undefined) return want;
  return { ...n, eventBridge: (have as Notifications).eventBridge } as BucketSettings[K];
}

function describe(setting: BucketSetting, want: unknown, have: unknown): string {
  switch (setting) {
    case "objectOwnership":
      return `objectOwnership: ${String(have ?? "none")} -> ${String(want)}`;
    case "encryption": {
      const e = want as Encryption;
      return `encryption: ${e.algorithm}${e.kmsKeyId !== undefined ? ` (${e.kmsKeyId})` : ""}`;
    }
    case "publicAccessBlock":
      return "publicAccessBlock";
    case "policy":
      return "policy";
    case "lifecycleRules": {
      const n = (want as readonly LifecycleRule[]).length;
      return `lifecycleRules: ${n} rule${n === 1 ? "" : "s"}`;
    }
    case "logging": {
      const l = want as Logging;
      return `logging: ${l.targetBucket}/${l.targetPrefix}`;
    }
    case "replication": {
      const n = (want as Replication).rules.length;
      return `replication: ${n} rule${n === 1 ? "" : "s"}`;
    }
    case "notifications": {
      const n = want as Notifications;
      const queues = `${n.queues.length} queue${n.queues.length === 1 ? "" : "s"}`;
      return n.eventBridge === undefined
        ? `notifications: ${queues}`
        : `notifications: ${queues}, EventBridge ${n.eventBridge ? "on" : "off"}`;
    }
    case "cors": {
      const n = (want as readonly CorsRule[]).length;
      return `cors: ${n} rule${n === 1 ? "" : "s"}`;
    }
    case "website": {
      const w = want as Website;
      return w.redirectAllRequestsTo !== undefined
        ? `website: redirect to ${w.redirectAllRequestsTo.hostName}`
        : `website: index ${w.indexDocument ?? ""}`;
    }
    case "objectLock":
      return `objectLock: defaultRetention ${retentionText(have as ObjectLockRetention | null | undefined)} -> ${retentionText(want as ObjectLockRetention)}`;
  }
}

/** `GOVERNANCE 30 days`, `COMPLIANCE 1 year`, or `none`. */
function retentionText(r: ObjectLockRetention | null | undefined): string {
  if (r === null || r === undefined) return "none";
  const [n, unit] = r.years !== undefined ? [r.years, "year"] : [r.days ?? 0, "day"];
  return `${r.mode} ${n} ${unit}${n === 1 ? "" : "s"}`;
}
