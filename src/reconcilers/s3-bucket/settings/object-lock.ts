/**
 * The default retention of an Object Lock bucket (spec.objectLock.defaultRetention). Object Lock
 * itself (objectLock.enabled) goes with CreateBucket and is not a setting.
 */
import {
  GetObjectLockConfigurationCommand,
  PutObjectLockConfigurationCommand,
  type ObjectLockRetentionMode,
} from "@aws-sdk/client-s3";
import type { JsonValue } from "../../../api/schema/openapi.ts";
import type { BucketCalls } from "./calls.ts";
import { count, defineSetting, settingSpec, specJson } from "./setting.ts";

/** The default retention of an Object Lock bucket in normal form (one of days or years). */
export interface ObjectLockRetention {
  readonly mode: string;
  readonly days: number | undefined;
  readonly years: number | undefined;
}

export const objectLock = defineSetting<"objectLock", ObjectLockRetention | null>({
  name: "objectLock",
  path: "spec.objectLock.defaultRetention",
  iam: {
    read: {
      action: "s3:GetBucketObjectLockConfiguration",
      calls: ["GetObjectLockConfiguration"],
      when: "only for buckets that set objectLock.defaultRetention",
    },
    write: {
      action: "s3:PutBucketObjectLockConfiguration",
      calls: ["PutObjectLockConfiguration", "CreateBucket"],
      when: "only for buckets that set objectLock (also on CreateBucket with Object Lock enabled)",
    },
    more: [
      {
        action: "s3:PutBucketVersioning",
        calls: ["CreateBucket"],
        when: "only for buckets that set objectLock: CreateBucket with Object Lock enabled",
      },
    ],
  },
  managed: (spec) => spec.objectLock?.defaultRetention !== undefined,
  desired(spec) {
    const r = spec.objectLock?.defaultRetention;
    return r !== undefined ? { mode: r.mode, days: r.days, years: r.years } : undefined;
  },
  describe: (want, have) => `objectLock: defaultRetention ${retentionText(have)} -> ${retentionText(want)}`,
  toSpec: (r) => (r === null ? undefined : specJson({ mode: r.mode, days: r.days, years: r.years })),
  // A default retention exists only on a bucket with Object Lock; the export writes one without a
  // default retention from readObjectLock.
  specOf: (r) => settingSpec("objectLock", r === null ? undefined : objectLockSpec(true, r)),
  // S3 answers a bucket created without Object Lock with this code.
  notConfigured: ["ObjectLockConfigurationNotFoundError"],
  none: null,
  async read(s3) {
    return (await readObjectLock(s3)).retention;
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
});

/** The bucket's Object Lock: whether it is on, and its default retention (null: none). */
export interface ObjectLockState {
  readonly enabled: boolean;
  readonly retention: ObjectLockRetention | null;
}

/**
 * GetObjectLockConfiguration: whether the bucket has Object Lock and its default retention.
 * @throws AwsError `ObjectLockConfigurationNotFoundError` for a bucket without Object Lock.
 */
export async function readObjectLock(s3: BucketCalls): Promise<ObjectLockState> {
  const r = await s3.call(
    "GetObjectLockConfiguration",
    new GetObjectLockConfigurationCommand({ Bucket: s3.bucket }),
  );
  const enabled = r.ObjectLockConfiguration?.ObjectLockEnabled === "Enabled";
  const d = r.ObjectLockConfiguration?.Rule?.DefaultRetention;
  if (d?.Mode === undefined) return { enabled, retention: null };
  return { enabled: true, retention: { mode: d.Mode, days: positive(d.Days), years: positive(d.Years) } };
}

/** spec.objectLock of a bucket: Object Lock `enabled`, with its default retention when it has one. */
export function objectLockSpec(enabled: boolean, r: ObjectLockRetention | null): JsonValue | undefined {
  if (!enabled) return undefined;
  return specJson({
    enabled: true,
    defaultRetention: r !== null ? specJson({ mode: r.mode, days: r.days, years: r.years }) : undefined,
  });
}

/** `GOVERNANCE 30 days`, `COMPLIANCE 1 year`, or `none`. */
function retentionText(r: ObjectLockRetention | null | undefined): string {
  if (r === null || r === undefined) return "none";
  return `${r.mode} ${r.years !== undefined ? count(r.years, "year") : count(r.days ?? 0, "day")}`;
}

/** A retention period S3 reports as absent or 0 (moto sends both fields) becomes undefined. */
function positive(n: number | undefined): number | undefined {
  return n === undefined || n === 0 ? undefined : n;
}
