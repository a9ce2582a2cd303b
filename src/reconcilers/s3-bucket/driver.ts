/**
 * The S3Bucket driver: finds a bucket by name in spec.region, creates it (CreateBucket, then its
 * tags and versioning), repairs tag and versioning drift, and deletes it only when it is this
 * object's and empty (or spec.forceDelete allows emptying it). The shared flow
 * (../common/managed-reconciler.ts) does the Kubernetes side and calls these methods.
 *
 * S3 has no create-with-tags and no idempotency token: the token the flow records before the
 * create is what marks an untagged bucket of the right name as this object's after a crash
 * between CreateBucket and PutBucketTagging (see {@link judgeOwnership}). A second create of the
 * same name by this account is harmless (`BucketAlreadyOwnedByYou`), so a retried create never
 * yields a second bucket.
 */
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import { isAwsTagKey, ownershipOf } from "../../aws/ownership.ts";
import { ConditionReason } from "../../api/v1/index.ts";
import {
  DeletionBlockedError,
  InvalidSpecError,
  type DeleteOutcome,
  type DriverContext,
  type Observation,
  type Readiness,
  type ResourceDriver,
} from "../common/driver.ts";
import { BucketApi, MAX_KEYS_PER_BATCH } from "./bucket-api.ts";
import {
  bucketArn,
  bucketTagDiff,
  describeTagDiff,
  desiredBucketTags,
  isEmptyDiff,
  judgeOwnership,
  notEmptyMessage,
  targetVersioning,
  type ObservedBucket,
  type S3BucketObject,
} from "./bucket.ts";
import { bucketEndpoint } from "./endpoint.ts";

/** Reasons this driver puts into conditions, beyond the shared ones. */
export const S3BucketReason = {
  /** The name is taken by another AWS account (or the operator may not read the bucket). */
  BucketAlreadyExists: "BucketAlreadyExists",
  /** A bucket of this name exists in another region than spec.region. */
  BucketInOtherRegion: "BucketInOtherRegion",
  /** spec.tags plus the ownership tags exceed S3's 50 tags per bucket. */
  TooManyTags: "TooManyTags",
  /** Deletion waits because the operator may not read a bucket it recorded as its own. */
  BucketAccessDenied: "BucketAccessDenied",
} as const;

/** Options of {@link S3BucketDriver}. */
export interface S3BucketDriverOptions {
  aws: Pick<AwsClientSource, "s3">;
  /**
   * With spec.forceDelete, DeleteObjects batches (of up to 1000 versions) per reconcile; a larger
   * bucket is emptied over several reconciles so no worker is held for long. @default 10
   */
  maxDeleteBatchesPerPass?: number;
}

/** State written to status while a forced deletion empties the bucket. */
const EMPTYING_STATE = "Emptying";

/** Implements {@link ResourceDriver} for S3 buckets; see the module comment. */
export class S3BucketDriver implements ResourceDriver<S3BucketObject, ObservedBucket> {
  readonly noun = "bucket";
  readonly #aws: Pick<AwsClientSource, "s3">;
  readonly #maxBatches: number;

  constructor(opts: S3BucketDriverOptions) {
    this.#aws = opts.aws;
    this.#maxBatches = opts.maxDeleteBatchesPerPass ?? 10;
    if (!Number.isInteger(this.#maxBatches) || this.#maxBatches < 1)
      throw new RangeError(`maxDeleteBatchesPerPass must be an integer >= 1, got ${this.#maxBatches}`);
  }

  #api(obj: S3BucketObject, ctx: DriverContext): BucketApi {
    const { bucketName: bucket, region } = obj.spec;
    return new BucketApi({ client: this.#aws.s3(region), bucket, region, signal: ctx.signal });
  }

  recordedId(obj: S3BucketObject): string | undefined {
    return obj.status?.bucketArn;
  }

  async observe(obj: S3BucketObject, ctx: DriverContext): Promise<Observation<ObservedBucket>> {
    const { bucketName: name, region } = obj.spec;
    const api = this.#api(obj, ctx);
    const head = await steadyRead(obj, api);
    if (head.kind === "absent") return { exists: false };
    if (head.kind === "forbidden") {
      throw new InvalidSpecError(
        S3BucketReason.BucketAlreadyExists,
        `bucket ${name} exists but this AWS account cannot access it: the name belongs to another ` +
          `account (S3 bucket names are global; choose another bucketName), or the operator's IAM ` +
          `identity lacks s3:ListBucket on it`,
      );
    }
    const actualRegion = head.region;
    if (head.kind === "elsewhere" || (actualRegion !== undefined && actualRegion !== region)) {
      throw new InvalidSpecError(
        S3BucketReason.BucketInOtherRegion,
        `bucket ${name} exists in ${actualRegion ?? "another region"}, not in spec.region ${region}; ` +
          `S3 cannot move a bucket: create the object with region ${actualRegion ?? "of the bucket"} or ` +
          `choose another bucketName`,
      );
    }
    const tags = "tags" in head ? head.tags : await api.tags();
    if (tags === undefined) return { exists: false }; // deleted between the two calls
    const versioning = await api.versioning();
    const endpoint = await bucketEndpoint(this.#aws.s3(region), name, region);
    return {
      exists: true,
      resource: { name, region, tags, versioning, endpoint },
      ownership: judgeOwnership(tags, obj),
    };
  }

  async create(obj: S3BucketObject, _token: string, ctx: DriverContext): Promise<ObservedBucket> {
    const { bucketName: name, region } = obj.spec;
    const tags = desiredBucketTags(obj); // may throw TooManyTags: before anything exists
    const api = this.#api(obj, ctx);
    let outcome: "created" | "already-owned";
    try {
      outcome = await api.create();
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketAlreadyExists") {
        throw new InvalidSpecError(
          S3BucketReason.BucketAlreadyExists,
          `bucket name ${name} is taken by another AWS account; S3 bucket names are global: choose another bucketName`,
        );
      }
      throw err;
    }
    let versioning: ObservedBucket["versioning"];
    if (outcome === "already-owned") {
      // Ours by name only: it appeared after observe, or this is a retry after a crash. Never
      // take over a bucket another object has tagged as its own.
      const existing = (await api.tags()) ?? {};
      if (ownershipOf(existing, obj.metadata.uid ?? "") === "foreign-owner") {
        throw new InvalidSpecError(
          ConditionReason.NotOwned,
          `bucket ${name} exists in AWS but is owned by another object; set spec.adoptExisting to true to adopt it`,
        );
      }
      versioning = await api.versioning();
      ctx.logger.info({ bucket: name }, "bucket already owned by this account; taking it up");
    }
    await api.putTags(tags);
    const target = targetVersioning(obj.spec.versioning, versioning);
    if (target !== undefined) {
      await api.putVersioning(target);
      versioning = target;
    }
    const endpoint = await bucketEndpoint(this.#aws.s3(region), name, region);
    return { name, region, tags, versioning, endpoint };
  }

  async adopt(obj: S3BucketObject, resource: ObservedBucket, ctx: DriverContext): Promise<ObservedBucket> {
    const desired = desiredBucketTags(obj);
    const keep: Record<string, string> = {};
    for (const [k, v] of Object.entries(resource.tags)) if (isAwsTagKey(k)) keep[k] = v;
    await this.#api(obj, ctx).putTags(desired);
    return { ...resource, tags: { ...keep, ...desired } };
  }

  async sync(
    obj: S3BucketObject,
    resource: ObservedBucket,
    ctx: DriverContext,
  ): Promise<{ resource: ObservedBucket; changes: string[] }> {
    const api = this.#api(obj, ctx);
    const changes: string[] = [];
    let next = resource;
    const desired = desiredBucketTags(obj);
    const diff = bucketTagDiff(desired, resource.tags);
    if (!isEmptyDiff(diff)) {
      await api.putTags(desired);
      next = { ...next, tags: desired };
      changes.push(describeTagDiff(diff));
    }
    const target = targetVersioning(obj.spec.versioning, resource.versioning);
    if (target !== undefined) {
      await api.putVersioning(target);
      next = { ...next, versioning: target };
      changes.push(`versioning: ${resource.versioning ?? "never enabled"} -> ${target}`);
    }
    return { resource: next, changes };
  }

  status(_obj: S3BucketObject, resource: ObservedBucket): Partial<NonNullable<S3BucketObject["status"]>> {
    return {
      bucketArn: bucketArn(resource.name, resource.region),
      endpoint: resource.endpoint,
      region: resource.region,
      state: "Available",
    };
  }

  clearedStatus(): Partial<NonNullable<S3BucketObject["status"]>> {
    return { bucketArn: undefined, endpoint: undefined, region: undefined, state: undefined };
  }

  readiness(resource: ObservedBucket): Readiness {
    return {
      ready: true,
      pending: false,
      reason: "Available",
      message: `bucket ${resource.name} exists in ${resource.region}`,
    };
  }

  async delete(obj: S3BucketObject, ctx: DriverContext): Promise<DeleteOutcome> {
    const { bucketName: name, region } = obj.spec;
    const api = this.#api(obj, ctx);
    const head = await api.head();
    if (head.kind === "absent") return { done: true };
    if (
      head.kind === "elsewhere" ||
      (head.kind === "present" && head.region !== undefined && head.region !== region)
    ) {
      // This object only ever creates its bucket in spec.region (immutable): not ours.
      ctx.logger.info(
        { bucket: name, region: head.region },
        "bucket lives in another region; left untouched",
      );
      return { done: true, leftInPlace: `bucket ${name} lives in another region and was left in place` };
    }
    if (head.kind === "forbidden") {
      if (this.recordedId(obj) === undefined) {
        // Never seen as ours (the name belongs to another account): nothing of ours to delete.
        ctx.logger.info({ bucket: name }, "bucket not accessible and never recorded as ours; left untouched");
        return {
          done: true,
          leftInPlace: `bucket ${name} is not accessible to the operator and was left in place`,
        };
      }
      throw new DeletionBlockedError(
        S3BucketReason.BucketAccessDenied,
        `bucket ${name} cannot be read (HTTP 403): grant the operator s3:ListBucket on it, or set ` +
          `spec.deletionPolicy to Retain to release the object without deleting the bucket`,
      );
    }
    const tags = await api.tags();
    if (tags === undefined) return { done: true };
    if (judgeOwnership(tags, obj) !== "owned") {
      ctx.logger.info({ bucket: name }, "bucket is not owned by this object; left untouched");
      return { done: true, leftInPlace: `bucket ${name} is not owned by this object and was left in place` };
    }
    const emptied = await this.#empty(obj, api);
    if (emptied !== undefined) return emptied;
    const result = await api.delete();
    if (result !== "not-empty") return { done: true };
    // Objects arrived between the listing and the delete.
    if (obj.spec.forceDelete) return this.#emptyingOutcome(name);
    throw new DeletionBlockedError(ConditionReason.BucketNotEmpty, notEmptyMessage(name, 1, true));
  }

  /**
   * Makes sure the bucket is empty before DeleteBucket: without forceDelete a non-empty bucket
   * blocks deletion; with it, up to `maxDeleteBatchesPerPass` batches of versions are deleted.
   * Returns an outcome when this pass cannot finish, undefined when the bucket is empty.
   */
  async #empty(obj: S3BucketObject, api: BucketApi): Promise<DeleteOutcome | undefined> {
    const name = obj.spec.bucketName;
    let page = await api.listVersions(MAX_KEYS_PER_BATCH);
    if (page.refs.length === 0) return undefined;
    if (!obj.spec.forceDelete) {
      throw new DeletionBlockedError(
        ConditionReason.BucketNotEmpty,
        notEmptyMessage(name, page.refs.length, page.truncated),
      );
    }
    for (let batch = 0; batch < this.#maxBatches; batch++) {
      await api.deleteVersions(page.refs);
      page = await api.listVersions(MAX_KEYS_PER_BATCH);
      if (page.refs.length === 0) return undefined;
    }
    return this.#emptyingOutcome(name);
  }

  #emptyingOutcome(name: string): DeleteOutcome {
    return {
      done: false,
      state: EMPTYING_STATE,
      message: `deleting the objects in bucket ${name} before deleting it (spec.forceDelete is true)`,
    };
  }
}

/**
 * The first read of an observation. A bucket this object already found in spec.region (its
 * status says so) cannot have moved, since S3 cannot move a bucket: GetBucketTagging alone then
 * answers whether it is still there, and the steady poll makes two calls (tags, versioning)
 * instead of three. Otherwise HeadBucket, which reports the bucket's region.
 */
function steadyRead(
  obj: S3BucketObject,
  api: BucketApi,
): Promise<Awaited<ReturnType<BucketApi["head"]>> | Awaited<ReturnType<BucketApi["tagsOrWhereabouts"]>>> {
  const seenHere = obj.status?.bucketArn !== undefined && obj.status.region === obj.spec.region;
  return seenHere ? api.tagsOrWhereabouts() : api.head();
}
