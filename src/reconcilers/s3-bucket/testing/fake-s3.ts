/**
 * An in-memory S3 for the unit tests of the driver's decisions: the bucket calls the driver makes,
 * with S3's answers for a missing bucket, another account's bucket and another region's, every
 * call logged by command name. The managed settings (../settings/) are kept as documents: a read
 * answers what the last write sent, or S3's "not configured".
 */
import { S3Client } from "@aws-sdk/client-s3";
import { AwsError, type AwsErrorKind } from "../../../aws/errors.ts";
import { fromS3TagSet, type TagMap } from "../../../aws/ownership.ts";
import type { VersionRef } from "../bucket-api.ts";

export interface FakeBucket {
  region: string;
  tags: TagMap | undefined;
  versioning: "Enabled" | "Suspended" | undefined;
  versions: VersionRef[];
  otherAccount?: boolean;
  /** When S3 says it was created. @default the fake clock's time when CreateBucket made it, else NOW */
  created?: Date;
  /** The managed settings' documents, by the operation that reads them, as S3 answers it. @default none */
  settings?: Record<string, Record<string, unknown>>;
}

/**
 * The calls of one managed setting: the read, the write and the delete (where there is one), the member of
 * the write's input that holds the document, whether the read answers that member's content
 * (`unwrap`) or the member itself, and the error code of a read of a bucket that has none
 * (undefined: S3 answers an empty document).
 */
interface SettingCalls {
  readonly get: string;
  readonly put: string;
  readonly del?: string;
  readonly input: string;
  readonly unwrap: boolean;
  readonly absent: string | undefined;
}

const SETTING_CALLS: readonly SettingCalls[] = [
  {
    get: "GetBucketOwnershipControls",
    put: "PutBucketOwnershipControls",
    input: "OwnershipControls",
    unwrap: false,
    absent: "OwnershipControlsNotFoundError",
  },
  {
    get: "GetBucketEncryption",
    put: "PutBucketEncryption",
    input: "ServerSideEncryptionConfiguration",
    unwrap: false,
    absent: "ServerSideEncryptionConfigurationNotFoundError",
  },
  {
    get: "GetPublicAccessBlock",
    put: "PutPublicAccessBlock",
    input: "PublicAccessBlockConfiguration",
    unwrap: false,
    absent: "NoSuchPublicAccessBlockConfiguration",
  },
  {
    get: "GetBucketPolicy",
    put: "PutBucketPolicy",
    input: "Policy",
    unwrap: false,
    absent: "NoSuchBucketPolicy",
  },
  {
    get: "GetBucketLifecycleConfiguration",
    put: "PutBucketLifecycleConfiguration",
    del: "DeleteBucketLifecycle",
    input: "LifecycleConfiguration",
    unwrap: true,
    absent: "NoSuchLifecycleConfiguration",
  },
  {
    get: "GetBucketNotificationConfiguration",
    put: "PutBucketNotificationConfiguration",
    input: "NotificationConfiguration",
    unwrap: true,
    absent: undefined,
  },
  {
    get: "GetBucketReplication",
    put: "PutBucketReplication",
    input: "ReplicationConfiguration",
    unwrap: false,
    absent: "ReplicationConfigurationNotFoundError",
  },
  {
    get: "GetBucketLogging",
    put: "PutBucketLogging",
    input: "BucketLoggingStatus",
    unwrap: true,
    absent: undefined,
  },
  {
    get: "GetObjectLockConfiguration",
    put: "PutObjectLockConfiguration",
    input: "ObjectLockConfiguration",
    unwrap: false,
    absent: "ObjectLockConfigurationNotFoundError",
  },
  {
    get: "GetBucketCors",
    put: "PutBucketCors",
    del: "DeleteBucketCors",
    input: "CORSConfiguration",
    unwrap: true,
    absent: "NoSuchCORSConfiguration",
  },
  {
    get: "GetBucketWebsite",
    put: "PutBucketWebsite",
    input: "WebsiteConfiguration",
    unwrap: true,
    absent: "NoSuchWebsiteConfiguration",
  },
];

function awsError(kind: AwsErrorKind, code: string, httpStatus: number): AwsError {
  return new AwsError({ kind, code, service: "s3", operation: "fake", message: code, httpStatus });
}

/** An in-memory S3 for the driver's logic: every call is logged by command name. */
export class FakeS3 {
  readonly buckets = new Map<string, FakeBucket>();
  /** The time a bucket without a creation date says it was created (ms since the epoch). */
  readonly now: number;
  constructor(now: number) {
    this.now = now;
  }
  readonly calls: { op: string; input: Record<string, unknown> }[] = [];
  /**
   * Whether ListBuckets answers each bucket's BucketRegion and takes the BucketRegion filter, as
   * S3 does; false: an S3 that does neither (then GetBucketLocation tells the region).
   */
  listsBucketRegion = true;
  readonly config = new S3Client({
    region: "us-east-1",
    endpoint: "http://s3.test:4566",
    forcePathStyle: true,
  }).config;

  mutations(): string[] {
    return this.calls.map((c) => c.op).filter((op) => !/^(Head|Get|List)/.test(op));
  }

  #get(name: string): FakeBucket {
    const b = this.buckets.get(name);
    if (b === undefined) throw awsError("not-found", "NoSuchBucket", 404);
    return b;
  }

  async send(cmd: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
    const op = cmd.constructor.name.replace(/Command$/, "");
    const input = cmd.input;
    this.calls.push({ op, input });
    const name = String(input.Bucket);
    switch (op) {
      case "HeadBucket": {
        const b = this.buckets.get(name);
        if (b === undefined) throw awsError("not-found", "NotFound", 404);
        if (b.otherAccount) throw awsError("terminal", "HTTP403", 403);
        return { BucketRegion: b.region };
      }
      case "GetBucketTagging": {
        const b = this.#get(name);
        if (b.tags === undefined) throw awsError("not-found", "NoSuchTagSet", 404);
        return { TagSet: Object.entries(b.tags).map(([Key, Value]) => ({ Key, Value })) };
      }
      case "PutBucketTagging":
        this.#get(name).tags = fromS3TagSet(
          (input.Tagging as { TagSet: { Key: string; Value: string }[] }).TagSet,
        );
        return {};
      case "GetBucketVersioning":
        return { Status: this.#get(name).versioning };
      case "PutBucketVersioning":
        this.#get(name).versioning = (
          input.VersioningConfiguration as { Status: "Enabled" | "Suspended" }
        ).Status;
        return {};
      case "CreateBucket": {
        const b = this.buckets.get(name);
        if (b?.otherAccount) throw awsError("terminal", "BucketAlreadyExists", 409);
        if (b !== undefined) throw awsError("conflict", "BucketAlreadyOwnedByYou", 409);
        const cfg = input.CreateBucketConfiguration as { LocationConstraint?: string } | undefined;
        this.buckets.set(name, {
          region: cfg?.LocationConstraint ?? "us-east-1",
          tags: undefined,
          versioning: undefined,
          versions: [],
          created: new Date(this.now),
        });
        return {};
      }
      case "ListBuckets": {
        // Pages of MaxBuckets (all when unset) in name order; the token is the last name listed.
        const prefix = String(input.Prefix ?? "");
        const region = this.listsBucketRegion ? input.BucketRegion : undefined;
        const after = input.ContinuationToken === undefined ? "" : String(input.ContinuationToken);
        const matching = [...this.buckets.entries()]
          .filter(
            ([n, b]) => n.startsWith(prefix) && n > after && (region === undefined || b.region === region),
          )
          .sort(([x], [y]) => (x < y ? -1 : 1));
        const max = input.MaxBuckets === undefined ? matching.length : Number(input.MaxBuckets);
        const page = matching.slice(0, max);
        const last = page.at(-1);
        return {
          Buckets: page.map(([Name, b]) => ({
            Name,
            CreationDate: b.created ?? new Date(this.now),
            ...(this.listsBucketRegion ? { BucketRegion: b.region } : {}),
          })),
          ...(matching.length > max && last !== undefined ? { ContinuationToken: last[0] } : {}),
        };
      }
      case "GetBucketLocation": {
        const b = this.#get(name);
        return { LocationConstraint: b.region === "us-east-1" ? undefined : b.region };
      }
      case "ListObjectVersions": {
        const b = this.#get(name);
        const max = Number(input.MaxKeys);
        return {
          Versions: b.versions.slice(0, max).map((v) => ({ Key: v.Key, VersionId: v.VersionId })),
          IsTruncated: b.versions.length > max,
        };
      }
      case "DeleteObjects": {
        const b = this.#get(name);
        const gone = (input.Delete as { Objects: VersionRef[] }).Objects;
        b.versions = b.versions.filter(
          (v) => !gone.some((g) => g.Key === v.Key && g.VersionId === v.VersionId),
        );
        return {};
      }
      case "DeleteBucket": {
        const b = this.#get(name);
        if (b.versions.length > 0) throw awsError("conflict", "BucketNotEmpty", 409);
        this.buckets.delete(name);
        return {};
      }
      default: {
        const setting = SETTING_CALLS.find((c) => op === c.get || op === c.put || op === c.del);
        if (setting === undefined) throw new Error(`fake S3 does not implement ${op}`);
        const b = this.#get(name);
        const docs = (b.settings ??= {});
        if (op === setting.put) {
          const doc = input[setting.input];
          docs[setting.get] = structuredClone(
            setting.unwrap ? (doc as Record<string, unknown>) : { [setting.input]: doc },
          );
          return {};
        }
        if (op === setting.del) {
          delete docs[setting.get];
          return {};
        }
        const doc = docs[setting.get];
        if (doc !== undefined) return structuredClone(doc);
        if (setting.absent !== undefined) throw awsError("not-found", setting.absent, 404);
        return {};
      }
    }
  }
}
