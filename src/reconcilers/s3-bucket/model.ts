/**
 * What the S3Bucket reconciler knows about a bucket, and the pure decisions it makes about one:
 * its ARN, which versioning to write, and how a blocked deletion reads.
 * Nothing here talks to AWS.
 */
import type { S3Bucket, S3BucketStatus } from "../../api/v1/index.ts";
import type { TagMap } from "../../aws/ownership.ts";
import { s3BucketArn } from "../../aws/partition.ts";
import type { Change } from "../common/changes.ts";
import type { ManagedObject, ManagedStatus } from "../common/driver.ts";
import { PUT_BUCKET_VERSIONING } from "./iam.ts";
import type { BucketSettings } from "./settings/index.ts";

/** An S3Bucket object as the shared reconcile flow handles it (type meta filled in). */
export type S3BucketObject = S3Bucket &
  ManagedObject & {
    status?: S3BucketStatus & ManagedStatus;
  };

/**
 * A bucket's versioning state as `GetBucketVersioning` reports it: `undefined` for a bucket that
 * was never versioned. S3 cannot return a bucket to that state once versioning was enabled.
 */
export type VersioningStatus = "Enabled" | "Suspended" | undefined;

/** The reconciler's view of one bucket that exists in AWS. */
export interface S3BucketView {
  readonly name: string;
  /** The region S3 reports for the bucket (equal to spec.region, or observe fails). */
  readonly region: string;
  /** Every tag on the bucket, `aws:` tags included; keys sorted. */
  readonly tags: TagMap;
  readonly versioning: VersioningStatus;
  /** URL of the bucket through the client the operator uses (see endpoint.ts). */
  readonly endpoint: string;
  /** The settings the spec manages, as read (settings.ts); unmanaged ones are never read. */
  readonly settings: BucketSettings;
  /**
   * Set only on an observation for a deletion: the bucket of this name cannot be this object's
   * because this account cannot read it (`forbidden`) or it lives in another region
   * (`elsewhere`). Outside deletion the driver reports these as spec errors instead.
   */
  readonly unreachable?: "forbidden" | "elsewhere";
  /**
   * The tags came from a bulk read (../common/tag-snapshots.ts), which may lag: before any
   * repair the driver reads them directly.
   */
  readonly tagsFromSnapshot?: true;
}

/** `arn:<partition>:s3:::<name>`; bucket ARNs carry neither region nor account. */
export const bucketArn = s3BucketArn;

/**
 * The versioning status to write, or undefined to leave the bucket alone. `versioning: true`
 * means Enabled. `false` means Suspended on a bucket that has ever been versioned (S3 cannot go
 * back to unversioned), and nothing at all on a bucket that never was.
 */
export function targetVersioning(
  wanted: boolean,
  current: VersioningStatus,
): "Enabled" | "Suspended" | undefined {
  if (wanted) return current === "Enabled" ? undefined : "Enabled";
  return current === "Enabled" ? "Suspended" : undefined;
}

/** The setting (and apply group) of spec.versioning in a plan. */
export const VERSIONING_SETTING = "versioning";

/**
 * The change that brings a bucket whose versioning is `current` to spec.versioning `wanted`
 * ({@link targetVersioning}), or undefined when there is none. Its values are the spec's: the
 * bucket's versioning is `true` only while Enabled.
 */
export function versioningChange(wanted: boolean, current: VersioningStatus): Change | undefined {
  const target = targetVersioning(wanted, current);
  if (target === undefined) return undefined;
  return {
    path: "spec.versioning",
    setting: VERSIONING_SETTING,
    observed: current === "Enabled",
    desired: target === "Enabled",
    actions: [PUT_BUCKET_VERSIONING.action],
    disruption: "none",
    description: `versioning: ${current ?? "never enabled"} -> ${target}`,
    group: VERSIONING_SETTING,
  };
}

/**
 * Stable message of a deletion blocked by objects still in the bucket; `held` is why forceDelete
 * does not count (./force-delete.ts), when it is true but held.
 */
export function notEmptyMessage(name: string, count: number, truncated: boolean, held?: string): string {
  const what = truncated ? `at least ${count}` : String(count);
  const noun = count === 1 ? "object or object version" : "objects or object versions";
  const holds = `bucket ${name} still holds ${what} ${noun}`;
  if (held !== undefined)
    return `${holds}; ${held}; or empty the bucket, or set spec.deletionPolicy to Retain to keep it`;
  return (
    `${holds}; the operator never deletes objects unless ` +
    `spec.forceDelete is true: empty the bucket, set spec.forceDelete to true, or set ` +
    `spec.deletionPolicy to Retain to keep it`
  );
}

/** Why the deletion of a bucket waits for versions that S3 Object Lock keeps. */
export function objectsLockedMessage(name: string, count: number): string {
  const noun = count === 1 ? "object version" : "object versions";
  return (
    `S3 refused to delete ${count} ${noun} of bucket ${name}: Object Lock keeps them (a retention ` +
    `period or a legal hold), and the operator never bypasses it; deletion waits until their ` +
    `retention ends and legal holds are removed, or set spec.deletionPolicy to Retain to keep the bucket`
  );
}
