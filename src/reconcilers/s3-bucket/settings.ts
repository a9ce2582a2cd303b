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

/** The settings this file manages, in the order they are applied. */
export const BUCKET_SETTINGS = [
  "objectOwnership",
  "encryption",
  "publicAccessBlock",
  "policy",
  "lifecycleRules",
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

/** The static website in normal form; `routingRules` counts rules (the spec never has any). */
export interface Website {
  readonly indexDocument: string | undefined;
  readonly errorDocument: string | undefined;
  readonly redirectAllRequestsTo:
    { readonly hostName: string; readonly protocol: string | undefined } | undefined;
  readonly routingRules: number;
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
  /** Managed only when the spec sets objectLock.defaultRetention (enabled goes with CreateBucket). */
  objectLock?: ObjectLockRetention | null;
  /** In S3's order, which matters (the first matching rule applies); none is `[]`. */
  cors?: readonly CorsRule[];
  website?: Website | null;
}

/** The settings the spec sets, each in normal form: what the bucket must have. */
export function desiredSettings(spec: S3BucketSpec): BucketSettings {
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
  if (spec.policy !== undefined) out.policy = normalJson(spec.policy as JsonValue);
  if (spec.lifecycleRules !== undefined) {
    out.lifecycleRules = normalRules(
      spec.lifecycleRules.map((r) => ({
        id: r.id,
        enabled: r.enabled,
        prefix: r.prefix ?? "",
        tags: r.tags ?? {},
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

/** The settings the spec manages, in the order they are applied. */
export function managedSettings(spec: S3BucketSpec): BucketSetting[] {
  const desired = desiredSettings(spec);
  return BUCKET_SETTINGS.filter((k) => k in desired);
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
    const want = desired[setting];
    if (want === undefined || want === null) continue;
    const have = actual[setting];
    if (have !== undefined && isDeepStrictEqual(have, want)) continue;
    out.push({ setting, desired: want, description: describe(setting, want, have) } as SettingChange);
  }
  return out;
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
