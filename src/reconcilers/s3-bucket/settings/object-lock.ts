/**
 * The default retention of an Object Lock bucket (spec.objectLock.defaultRetention). Object Lock
 * itself (objectLock.enabled) goes with CreateBucket and is not a setting.
 */
import {
  GetObjectLockConfigurationCommand,
  PutObjectLockConfigurationCommand,
  type ObjectLockRetentionMode,
} from "@aws-sdk/client-s3";
import { count, defineSetting, specJson } from "./setting.ts";

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
    return { mode: d.Mode, days: positive(d.Days), years: positive(d.Years) };
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

/** `GOVERNANCE 30 days`, `COMPLIANCE 1 year`, or `none`. */
function retentionText(r: ObjectLockRetention | null | undefined): string {
  if (r === null || r === undefined) return "none";
  return `${r.mode} ${r.years !== undefined ? count(r.years, "year") : count(r.days ?? 0, "day")}`;
}

/** A retention period S3 reports as absent or 0 (moto sends both fields) becomes undefined. */
function positive(n: number | undefined): number | undefined {
  return n === undefined || n === 0 ? undefined : n;
}
