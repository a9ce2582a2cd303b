/**
 * The S3 calls the S3Bucket reconciler makes, for one bucket, each turned into the answer the
 * reconciler needs ("absent", "already ours", "not empty") instead of an error where the error
 * is an expected outcome. Everything else is thrown as the AWS layer's {@link AwsError}, which the
 * shared flow classifies (throttled and retryable: retry with backoff; terminal: report).
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  type BucketLocationConstraint,
  type ObjectOwnership,
  type S3Client,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from "@aws-sdk/client-s3";
import { ACCESS_CODES, KNOWN_CODES } from "../../aws/error-codes.ts";
import { AwsError } from "../../aws/errors.ts";
import { fromS3TagSet, toS3TagSet, type TagMap } from "../../aws/ownership.ts";
import { pages } from "../../aws/pages.ts";
import type { VersioningStatus } from "./model.ts";
import type { BucketCalls, S3Command } from "./settings/calls.ts";

/** What HeadBucket says about a bucket name in the client's region. */
export type HeadResult =
  /** No bucket of that name exists anywhere. */
  | { kind: "absent" }
  /** The bucket exists and this account may read it; `region` as S3 reports it, if it does. */
  | { kind: "present"; region: string | undefined }
  /** 403: the name belongs to another account, or the operator may not read the bucket. */
  | { kind: "forbidden" }
  /** The bucket lives in another region (S3 answered with a redirect naming it, if it did). */
  | { kind: "elsewhere"; region: string | undefined };

/** One object version or delete marker, as DeleteObjects takes it. */
export interface VersionRef {
  Key: string;
  VersionId?: string | undefined;
}

/** A DeleteObjects or ListObjectVersions page holds at most this many keys. */
export const MAX_KEYS_PER_BATCH = 1000;

/** The region S3 names in a response's `x-amz-bucket-region` header (redirects and 403s carry it). */
function regionHeader(err: AwsError): string | undefined {
  const cause = err.cause as { $response?: { headers?: Record<string, string | undefined> } } | undefined;
  const value = cause?.$response?.headers?.["x-amz-bucket-region"];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/**
 * A DeleteObjects key error that is S3 Object Lock's refusal: AccessDenied with S3's message
 * "Access Denied because object protected by object lock." (a denial by IAM says only "Access
 * Denied").
 */
function isLockRefusal(e: { Code?: string | undefined; Message?: string | undefined }): boolean {
  return e.Code === "AccessDenied" && /object lock/i.test(e.Message ?? "");
}

/** S3 calls for one bucket through one regional client; the settings (./settings/) make theirs through it too. */
export class BucketApi implements BucketCalls {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #region: string;
  readonly #signal: AbortSignal | undefined;

  /** `region` is the client's region; `signal` aborts every call in flight. */
  constructor(opts: { client: S3Client; bucket: string; region: string; signal?: AbortSignal }) {
    this.#client = opts.client;
    this.#bucket = opts.bucket;
    this.#region = opts.region;
    this.#signal = opts.signal;
  }

  get bucket(): string {
    return this.#bucket;
  }

  async call<I extends ServiceInputTypes, O extends ServiceOutputTypes>(
    operation: string,
    command: S3Command<I, O>,
  ): Promise<O> {
    try {
      return await this.#client.send(command, { abortSignal: this.#signal });
    } catch (err) {
      // Clients from AwsClients already throw AwsError; a plain SDK client does not.
      throw AwsError.from(err, { service: "s3", operation });
    }
  }

  /** HeadBucket, with the outcomes a reconciler must tell apart. */
  async head(): Promise<HeadResult> {
    try {
      const out = await this.call("HeadBucket", new HeadBucketCommand({ Bucket: this.#bucket }));
      return { kind: "present", region: out.BucketRegion };
    } catch (err) {
      return this.#whereabouts(err);
    }
  }

  /**
   * GetBucketTagging as the one read that also answers whether the bucket is still here: absent,
   * elsewhere (S3 redirects a request sent to another region's endpoint) and forbidden come back
   * as from {@link head}; a bucket here yields its tags. `region` of a present result is the
   * client's, which the request reached.
   */
  async tagsOrWhereabouts(): Promise<HeadResult | { kind: "present"; region: string; tags: TagMap }> {
    try {
      const out = await this.call("GetBucketTagging", new GetBucketTaggingCommand({ Bucket: this.#bucket }));
      return { kind: "present", region: this.#region, tags: fromS3TagSet(out.TagSet) };
    } catch (err) {
      if (err instanceof AwsError && (err.code === "NoSuchTagSet" || err.code === "NoSuchTagSetError"))
        return { kind: "present", region: this.#region, tags: {} };
      return this.#whereabouts(err);
    }
  }

  /**
   * GetBucketVersioning as the one read that also answers whether the bucket is still here, as
   * {@link tagsOrWhereabouts} does with the tags: for a steady poll whose tags come from a bulk
   * read (../common/tag-snapshots.ts).
   */
  async versioningOrWhereabouts(): Promise<
    HeadResult | { kind: "present"; region: string; versioning: VersioningStatus }
  > {
    try {
      return { kind: "present", region: this.#region, versioning: await this.versioning() };
    } catch (err) {
      return this.#whereabouts(err);
    }
  }

  /** Where a bucket is, from a failed read of it; rethrows what says nothing about that. */
  #whereabouts(err: unknown): HeadResult {
    if (!(err instanceof AwsError)) throw err;
    if (err.kind === "not-found") return { kind: "absent" };
    const region = regionHeader(err);
    const status = err.info.httpStatus;
    const redirected =
      status === 301 || status === 307 || err.code === "PermanentRedirect" || err.code === "MovedPermanently";
    if (redirected || (region !== undefined && region !== this.#region)) return { kind: "elsewhere", region };
    if (status === 403) return { kind: "forbidden" };
    throw err;
  }

  /** The bucket's tags (`{}` when it has none), or undefined when the bucket is gone. */
  async tags(): Promise<TagMap | undefined> {
    try {
      const out = await this.call("GetBucketTagging", new GetBucketTaggingCommand({ Bucket: this.#bucket }));
      return fromS3TagSet(out.TagSet);
    } catch (err) {
      if (err instanceof AwsError && (err.code === "NoSuchTagSet" || err.code === "NoSuchTagSetError"))
        return {};
      if (err instanceof AwsError && err.kind === "not-found") return undefined;
      throw err;
    }
  }

  /** The versioning status; undefined for a bucket that was never versioned. */
  async versioning(): Promise<VersioningStatus> {
    const out = await this.call(
      "GetBucketVersioning",
      new GetBucketVersioningCommand({ Bucket: this.#bucket }),
    );
    return out.Status === "Enabled" || out.Status === "Suspended" ? out.Status : undefined;
  }

  /**
   * CreateBucket in the client's region (with a LocationConstraint outside us-east-1, which
   * rejects one), with `objectOwnership` when given and Object Lock on when `objectLock`. `already-owned` when this account owns the name already (S3 answers
   * `BucketAlreadyOwnedByYou`, or 200 in us-east-1).
   * @throws AwsError `BucketAlreadyExists` (terminal) when another account owns the name.
   */
  async create(
    opts: { objectOwnership?: string | undefined; objectLock?: boolean } = {},
  ): Promise<"created" | "already-owned"> {
    const { objectOwnership, objectLock = false } = opts;
    try {
      await this.call(
        "CreateBucket",
        new CreateBucketCommand({
          Bucket: this.#bucket,
          ...(objectOwnership !== undefined ? { ObjectOwnership: objectOwnership as ObjectOwnership } : {}),
          ...(objectLock ? { ObjectLockEnabledForBucket: true } : {}),
          ...(this.#region !== "us-east-1"
            ? {
                CreateBucketConfiguration: { LocationConstraint: this.#region as BucketLocationConstraint },
              }
            : {}),
        }),
      );
      return "created";
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketAlreadyOwnedByYou") return "already-owned";
      throw err;
    }
  }

  /**
   * When S3 says the bucket was created (ListBuckets, narrowed by prefix to this name), or
   * undefined when the account lists no bucket of that name.
   */
  async creationDate(): Promise<Date | undefined> {
    const listing = pages(
      (token) =>
        this.call(
          "ListBuckets",
          new ListBucketsCommand({
            Prefix: this.#bucket,
            MaxBuckets: 1000,
            ContinuationToken: token,
          }),
        ),
      (page) => page.ContinuationToken,
    );
    for await (const page of listing) {
      const found = (page.Buckets ?? []).find((b) => b.Name === this.#bucket);
      if (found !== undefined) return found.CreationDate;
    }
    return undefined;
  }

  /** Replaces the bucket's tag set with `tags` (S3 has no incremental tagging call). */
  async putTags(tags: Readonly<TagMap>): Promise<void> {
    await this.call(
      "PutBucketTagging",
      new PutBucketTaggingCommand({ Bucket: this.#bucket, Tagging: { TagSet: toS3TagSet(tags) } }),
    );
  }

  /** Sets the versioning status. */
  async putVersioning(status: "Enabled" | "Suspended"): Promise<void> {
    await this.call(
      "PutBucketVersioning",
      new PutBucketVersioningCommand({ Bucket: this.#bucket, VersioningConfiguration: { Status: status } }),
    );
  }

  /**
   * The first `max` (at most {@link MAX_KEYS_PER_BATCH}) object versions and delete markers, and
   * whether there are more. An unversioned bucket lists each object once, with version `null`.
   */
  async listVersions(max: number = MAX_KEYS_PER_BATCH): Promise<{ refs: VersionRef[]; truncated: boolean }> {
    const out = await this.call(
      "ListObjectVersions",
      new ListObjectVersionsCommand({ Bucket: this.#bucket, MaxKeys: Math.min(max, MAX_KEYS_PER_BATCH) }),
    );
    const refs: VersionRef[] = [];
    for (const v of [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])]) {
      if (v.Key !== undefined) refs.push({ Key: v.Key, VersionId: v.VersionId });
    }
    return { refs, truncated: out.IsTruncated === true };
  }

  /**
   * Permanently deletes the given versions (at most {@link MAX_KEYS_PER_BATCH}). Each carries
   * its version ID, `null` included, so a versioned or suspended bucket gets no delete marker.
   * The request never carries BypassGovernanceRetention: S3 Object Lock keeps every version
   * under retention or legal hold, and their count comes back as `locked`.
   * @throws AwsError when S3 refuses any key for another reason, with the first such key's code.
   */
  async deleteVersions(refs: readonly VersionRef[]): Promise<{ locked: number }> {
    if (refs.length === 0) return { locked: 0 };
    if (refs.length > MAX_KEYS_PER_BATCH)
      throw new RangeError(`at most ${MAX_KEYS_PER_BATCH} keys per batch`);
    const out = await this.call(
      "DeleteObjects",
      new DeleteObjectsCommand({
        Bucket: this.#bucket,
        Delete: { Objects: refs.map((r) => ({ Key: r.Key, VersionId: r.VersionId })), Quiet: true },
      }),
    );
    const errors = out.Errors ?? [];
    const other = errors.filter((e) => !isLockRefusal(e));
    const first = other[0];
    if (first !== undefined) {
      const code = first.Code ?? "InternalError";
      const known = KNOWN_CODES.get(code);
      const kind = known === "terminal" || known === "throttled" ? known : "retryable";
      const access = kind === "terminal" ? ACCESS_CODES.get(code) : undefined;
      throw new AwsError({
        kind,
        code,
        ...(access !== undefined ? { access } : {}),
        service: "s3",
        operation: "DeleteObjects",
        message: `S3 DeleteObjects failed with ${code} for ${other.length} of ${refs.length} keys: ${first.Message ?? code}`,
      });
    }
    return { locked: errors.length };
  }

  /** DeleteBucket: `absent` when it is gone already, `not-empty` when objects remain. */
  async delete(): Promise<"deleted" | "absent" | "not-empty"> {
    try {
      await this.call("DeleteBucket", new DeleteBucketCommand({ Bucket: this.#bucket }));
      return "deleted";
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketNotEmpty") return "not-empty";
      if (err instanceof AwsError && err.kind === "not-found") return "absent";
      throw err;
    }
  }
}
