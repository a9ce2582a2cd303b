/**
 * The S3 calls the S3Bucket reconciler makes, for one bucket, each turned into the answer the
 * reconciler needs ("absent", "already ours", "not empty") instead of an error where the error
 * is an expected outcome. Everything else is thrown as the AWS layer's {@link AwsError}, which the
 * shared flow classifies (throttled and retryable: retry with backoff; terminal: report).
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketLifecycleCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketOwnershipControlsCommand,
  GetBucketPolicyCommand,
  GetPublicAccessBlockCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutPublicAccessBlockCommand,
  type ObjectOwnership,
  type ServerSideEncryption,
  type TransitionStorageClass,
  DeleteObjectsCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  type BucketLocationConstraint,
  type S3Client,
} from "@aws-sdk/client-s3";
import { KNOWN_CODES } from "../../aws/error-codes.ts";
import { AwsError } from "../../aws/errors.ts";
import { fromS3TagSet, toS3TagSet, type TagMap } from "../../aws/ownership.ts";
import type { JsonValue } from "../../api/schema/openapi.ts";
import type { VersioningStatus } from "./model.ts";
import {
  normalRules,
  type BucketSetting,
  type BucketSettings,
  type Encryption,
  type LifecycleRule,
  type PublicAccessBlock,
  type SettingChange,
} from "./settings.ts";

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
   * rejects one), with `objectOwnership` when given. `already-owned` when this account owns the name already (S3 answers
   * `BucketAlreadyOwnedByYou`, or 200 in us-east-1).
   * @throws AwsError `BucketAlreadyExists` (terminal) when another account owns the name.
   */
  async create(objectOwnership?: string): Promise<"created" | "already-owned"> {
    try {
      await this.#send("CreateBucket", (o) =>
        this.#client.send(
          new CreateBucketCommand({
            Bucket: this.#bucket,
            ...(objectOwnership !== undefined ? { ObjectOwnership: objectOwnership as ObjectOwnership } : {}),
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

  /**
   * When S3 says the bucket was created (ListBuckets, narrowed by prefix to this name), or
   * undefined when the account lists no bucket of that name.
   */
  async creationDate(): Promise<Date | undefined> {
    let token: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await this.#send("ListBuckets", (o) =>
        this.#client.send(
          new ListBucketsCommand({
            Prefix: this.#bucket,
            MaxBuckets: 1000,
            ...(token !== undefined ? { ContinuationToken: token } : {}),
          }),
          o,
        ),
      );
      const found = (page.Buckets ?? []).find((b) => b.Name === this.#bucket);
      if (found !== undefined) return found.CreationDate;
      const next = page.ContinuationToken;
      token = next !== undefined && next !== "" && !seen.has(next) ? next : undefined;
      if (token !== undefined) seen.add(token);
    } while (token !== undefined);
    return undefined;
  }

  /** Reads the given settings in normal form (see settings.ts); each is one call. */
  async settings(which: readonly BucketSetting[]): Promise<BucketSettings> {
    const out: BucketSettings = {};
    for (const setting of which) {
      switch (setting) {
        case "objectOwnership":
          out.objectOwnership = await this.#unset(
            ["OwnershipControlsNotFoundError", "NoSuchOwnershipControls"],
            async () => {
              const r = await this.#send("GetBucketOwnershipControls", (o) =>
                this.#client.send(new GetBucketOwnershipControlsCommand({ Bucket: this.#bucket }), o),
              );
              return r.OwnershipControls?.Rules?.[0]?.ObjectOwnership ?? null;
            },
          );
          break;
        case "encryption":
          out.encryption = await this.#unset(["ServerSideEncryptionConfigurationNotFoundError"], async () => {
            const r = await this.#send("GetBucketEncryption", (o) =>
              this.#client.send(new GetBucketEncryptionCommand({ Bucket: this.#bucket }), o),
            );
            const rule = r.ServerSideEncryptionConfiguration?.Rules?.[0];
            const by = rule?.ApplyServerSideEncryptionByDefault;
            if (by?.SSEAlgorithm === undefined) return null;
            const enc: Encryption = {
              algorithm: by.SSEAlgorithm,
              kmsKeyId: by.SSEAlgorithm === "aws:kms" ? nonEmpty(by.KMSMasterKeyID) : undefined,
              bucketKeyEnabled: rule?.BucketKeyEnabled === true,
            };
            return enc;
          });
          break;
        case "publicAccessBlock":
          out.publicAccessBlock = await this.#unset(["NoSuchPublicAccessBlockConfiguration"], async () => {
            const r = await this.#send("GetPublicAccessBlock", (o) =>
              this.#client.send(new GetPublicAccessBlockCommand({ Bucket: this.#bucket }), o),
            );
            const c = r.PublicAccessBlockConfiguration;
            if (c === undefined) return null;
            const pab: PublicAccessBlock = {
              blockPublicAcls: c.BlockPublicAcls === true,
              ignorePublicAcls: c.IgnorePublicAcls === true,
              blockPublicPolicy: c.BlockPublicPolicy === true,
              restrictPublicBuckets: c.RestrictPublicBuckets === true,
            };
            return pab;
          });
          break;
        case "policy":
          out.policy = await this.#unset(["NoSuchBucketPolicy"], async () => {
            const r = await this.#send("GetBucketPolicy", (o) =>
              this.#client.send(new GetBucketPolicyCommand({ Bucket: this.#bucket }), o),
            );
            return r.Policy === undefined || r.Policy === "" ? null : (JSON.parse(r.Policy) as JsonValue);
          });
          break;
        case "lifecycleRules":
          out.lifecycleRules =
            (await this.#unset(["NoSuchLifecycleConfiguration"], async () => {
              const r = await this.#send("GetBucketLifecycleConfiguration", (o) =>
                this.#client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: this.#bucket }), o),
              );
              return normalRules(
                (r.Rules ?? []).map((x) => ({
                  id: x.ID ?? "",
                  enabled: x.Status === "Enabled",
                  prefix: x.Filter?.Prefix ?? x.Prefix ?? "",
                  expirationDays: x.Expiration?.Days,
                  noncurrentVersionExpirationDays: x.NoncurrentVersionExpiration?.NoncurrentDays,
                  abortIncompleteMultipartUploadDays: x.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
                  transitions: (x.Transitions ?? []).map((t) => ({
                    days: t.Days ?? 0,
                    storageClass: t.StorageClass ?? "",
                  })),
                })),
              );
            })) ?? [];
          break;
      }
    }
    return out;
  }

  /** `read()`, or null when S3 answers one of `codes` (the setting is not configured). */
  async #unset<T>(codes: readonly string[], read: () => Promise<T>): Promise<T | null> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof AwsError && codes.includes(err.code)) return null;
      throw err;
    }
  }

  /** Writes one setting as `change` asks. */
  async putSetting(change: SettingChange): Promise<void> {
    const Bucket = this.#bucket;
    switch (change.setting) {
      case "objectOwnership": {
        const ObjectOwnership = change.desired as ObjectOwnership;
        await this.#send("PutBucketOwnershipControls", (o) =>
          this.#client.send(
            new PutBucketOwnershipControlsCommand({
              Bucket,
              OwnershipControls: { Rules: [{ ObjectOwnership }] },
            }),
            o,
          ),
        );
        return;
      }
      case "encryption": {
        const e = change.desired as Encryption;
        await this.#send("PutBucketEncryption", (o) =>
          this.#client.send(
            new PutBucketEncryptionCommand({
              Bucket,
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
            o,
          ),
        );
        return;
      }
      case "publicAccessBlock": {
        const p = change.desired as PublicAccessBlock;
        await this.#send("PutPublicAccessBlock", (o) =>
          this.#client.send(
            new PutPublicAccessBlockCommand({
              Bucket,
              PublicAccessBlockConfiguration: {
                BlockPublicAcls: p.blockPublicAcls,
                IgnorePublicAcls: p.ignorePublicAcls,
                BlockPublicPolicy: p.blockPublicPolicy,
                RestrictPublicBuckets: p.restrictPublicBuckets,
              },
            }),
            o,
          ),
        );
        return;
      }
      case "policy": {
        const Policy = JSON.stringify(change.desired);
        await this.#send("PutBucketPolicy", (o) =>
          this.#client.send(new PutBucketPolicyCommand({ Bucket, Policy }), o),
        );
        return;
      }
      case "lifecycleRules": {
        const rules = change.desired as readonly LifecycleRule[];
        if (rules.length === 0) {
          await this.#send("DeleteBucketLifecycle", (o) =>
            this.#client.send(new DeleteBucketLifecycleCommand({ Bucket }), o),
          );
          return;
        }
        await this.#send("PutBucketLifecycleConfiguration", (o) =>
          this.#client.send(
            new PutBucketLifecycleConfigurationCommand({
              Bucket,
              LifecycleConfiguration: {
                Rules: rules.map((r) => ({
                  ID: r.id,
                  Status: r.enabled ? "Enabled" : "Disabled",
                  Filter: { Prefix: r.prefix },
                  ...(r.expirationDays !== undefined ? { Expiration: { Days: r.expirationDays } } : {}),
                  ...(r.noncurrentVersionExpirationDays !== undefined
                    ? { NoncurrentVersionExpiration: { NoncurrentDays: r.noncurrentVersionExpirationDays } }
                    : {}),
                  ...(r.abortIncompleteMultipartUploadDays !== undefined
                    ? {
                        AbortIncompleteMultipartUpload: {
                          DaysAfterInitiation: r.abortIncompleteMultipartUploadDays,
                        },
                      }
                    : {}),
                  ...(r.transitions.length > 0
                    ? {
                        Transitions: r.transitions.map((t) => ({
                          Days: t.days,
                          StorageClass: t.storageClass as TransitionStorageClass,
                        })),
                      }
                    : {}),
                })),
              },
            }),
            o,
          ),
        );
        return;
      }
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

/** Empty strings (S3 may send an empty key ID) become undefined. */
function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}
