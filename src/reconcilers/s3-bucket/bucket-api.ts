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
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  type BucketLocationConstraint,
  type S3Client,
} from "@aws-sdk/client-s3";
import { KNOWN_CODES } from "../../aws/error-codes.ts";
import { AwsError } from "../../aws/errors.ts";
import { fromS3TagSet, toS3TagSet, type TagMap } from "../../aws/ownership.ts";
import type { VersioningStatus } from "./bucket.ts";

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

/** S3 calls for one bucket through one regional client. */
export class BucketApi {
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

  async #send<O>(operation: string, call: (opts: { abortSignal?: AbortSignal }) => Promise<O>): Promise<O> {
    try {
      return await call(this.#signal !== undefined ? { abortSignal: this.#signal } : {});
    } catch (err) {
      // Clients from AwsClients already throw AwsError; a plain SDK client does not.
      throw AwsError.from(err, { service: "s3", operation });
    }
  }

  /** HeadBucket, with the outcomes a reconciler must tell apart. */
  async head(): Promise<HeadResult> {
    try {
      const out = await this.#send("HeadBucket", (o) =>
        this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), o),
      );
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
      const out = await this.#send("GetBucketTagging", (o) =>
        this.#client.send(new GetBucketTaggingCommand({ Bucket: this.#bucket }), o),
      );
      return { kind: "present", region: this.#region, tags: fromS3TagSet(out.TagSet) };
    } catch (err) {
      if (err instanceof AwsError && (err.code === "NoSuchTagSet" || err.code === "NoSuchTagSetError"))
        return { kind: "present", region: this.#region, tags: {} };
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
      const out = await this.#send("GetBucketTagging", (o) =>
        this.#client.send(new GetBucketTaggingCommand({ Bucket: this.#bucket }), o),
      );
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
    const out = await this.#send("GetBucketVersioning", (o) =>
      this.#client.send(new GetBucketVersioningCommand({ Bucket: this.#bucket }), o),
    );
    return out.Status === "Enabled" || out.Status === "Suspended" ? out.Status : undefined;
  }

  /**
   * CreateBucket in the client's region (with a LocationConstraint outside us-east-1, which
   * rejects one). `already-owned` when this account owns the name already (S3 answers
   * `BucketAlreadyOwnedByYou`, or 200 in us-east-1).
   * @throws AwsError `BucketAlreadyExists` (terminal) when another account owns the name.
   */
  async create(): Promise<"created" | "already-owned"> {
    try {
      await this.#send("CreateBucket", (o) =>
        this.#client.send(
          new CreateBucketCommand({
            Bucket: this.#bucket,
            ...(this.#region !== "us-east-1"
              ? {
                  CreateBucketConfiguration: { LocationConstraint: this.#region as BucketLocationConstraint },
                }
              : {}),
          }),
          o,
        ),
      );
      return "created";
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketAlreadyOwnedByYou") return "already-owned";
      throw err;
    }
  }

  /** Replaces the bucket's tag set with `tags` (S3 has no incremental tagging call). */
  async putTags(tags: Readonly<TagMap>): Promise<void> {
    await this.#send("PutBucketTagging", (o) =>
      this.#client.send(
        new PutBucketTaggingCommand({ Bucket: this.#bucket, Tagging: { TagSet: toS3TagSet(tags) } }),
        o,
      ),
    );
  }

  /** Sets the versioning status. */
  async putVersioning(status: "Enabled" | "Suspended"): Promise<void> {
    await this.#send("PutBucketVersioning", (o) =>
      this.#client.send(
        new PutBucketVersioningCommand({ Bucket: this.#bucket, VersioningConfiguration: { Status: status } }),
        o,
      ),
    );
  }

  /**
   * The first `max` (at most {@link MAX_KEYS_PER_BATCH}) object versions and delete markers, and
   * whether there are more. An unversioned bucket lists each object once, with version `null`.
   */
  async listVersions(max: number = MAX_KEYS_PER_BATCH): Promise<{ refs: VersionRef[]; truncated: boolean }> {
    const out = await this.#send("ListObjectVersions", (o) =>
      this.#client.send(
        new ListObjectVersionsCommand({ Bucket: this.#bucket, MaxKeys: Math.min(max, MAX_KEYS_PER_BATCH) }),
        o,
      ),
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
   * @throws AwsError when S3 refuses any key, with the first key's error code.
   */
  async deleteVersions(refs: readonly VersionRef[]): Promise<void> {
    if (refs.length === 0) return;
    if (refs.length > MAX_KEYS_PER_BATCH)
      throw new RangeError(`at most ${MAX_KEYS_PER_BATCH} keys per batch`);
    const out = await this.#send("DeleteObjects", (o) =>
      this.#client.send(
        new DeleteObjectsCommand({
          Bucket: this.#bucket,
          Delete: { Objects: refs.map((r) => ({ Key: r.Key, VersionId: r.VersionId })), Quiet: true },
        }),
        o,
      ),
    );
    const first = out.Errors?.[0];
    if (first !== undefined) {
      const code = first.Code ?? "InternalError";
      const known = KNOWN_CODES.get(code);
      const kind = known === "terminal" || known === "throttled" ? known : "retryable";
      throw new AwsError({
        kind,
        code,
        service: "s3",
        operation: "DeleteObjects",
        message: `S3 DeleteObjects failed with ${code} for ${out.Errors?.length ?? 1} of ${refs.length} keys: ${first.Message ?? code}`,
      });
    }
  }

  /** DeleteBucket: `absent` when it is gone already, `not-empty` when objects remain. */
  async delete(): Promise<"deleted" | "absent" | "not-empty"> {
    try {
      await this.#send("DeleteBucket", (o) =>
        this.#client.send(new DeleteBucketCommand({ Bucket: this.#bucket }), o),
      );
      return "deleted";
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketNotEmpty") return "not-empty";
      if (err instanceof AwsError && err.kind === "not-found") return "absent";
      throw err;
    }
  }
}
