/**
 * The S3Bucket driver: finds a bucket by name in spec.region, creates it (CreateBucket, then its
 * tags, versioning and managed settings), plans what differs from the spec in its tags,
 * versioning and managed settings (./settings/), and deletes it only when it is this
 * object's and empty (or spec.forceDelete allows emptying it; for an adopted bucket only when set
 * after the adoption, ./force-delete.ts). The shared flow
 * (../common/flow/reconciler.ts) does the Kubernetes side and calls these methods.
 *
 * Ownership is the UID tag, as for every kind (../common/ownership.ts). S3 has no idempotency
 * token and the tags are a second call, so a crash between CreateBucket and PutBucketTagging
 * leaves an untagged bucket: it counts as this object's only on the evidence of
 * ./crash-window.ts (its creation date inside the window of the object's current create). A
 * bucket name is unique, so a retried create never yields a second bucket.
 */
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import type { TagMap } from "../../aws/ownership.ts";
import { S3BucketResource } from "../../api/v1/index.ts";
import { Reason } from "../common/reasons.ts";
import { systemClock, type Clock } from "../../runtime/clock.ts";
import { isOwnedBy, taggedOwner, verdictOf, type Verdict } from "../common/ownership.ts";
import { isSteadyPoll, logTagSource, type TagSnapshots } from "../common/tag-snapshots.ts";
import {
  applyTagChanges,
  applyTagPlan,
  DEFAULT_TAG_POLICY,
  desiredTagsOf,
  tagChanges,
  type TagPolicy,
} from "../common/tags.ts";
import { changeSetOf, type Change, type ChangeSet } from "../common/changes.ts";
import {
  blocked,
  InvalidSpecError,
  recordedIdOf,
  type DeleteOutcome,
  type Description,
  type DriverContext,
  type FlowFacts,
  type ObservedDetails,
  type Observation,
  type ResourceDriver,
} from "../common/driver.ts";
import { BucketApi, MAX_KEYS_PER_BATCH, type HeadResult } from "./bucket-api.ts";
import {
  bucketArn,
  notEmptyMessage,
  objectsLockedMessage,
  targetVersioning,
  versioningChange,
  type VersioningStatus,
  type S3BucketView,
  type S3BucketObject,
} from "./model.ts";
import { createdInWindow, createWindow } from "./crash-window.ts";
import {
  FORCE_DELETE_HELD_TAG,
  forceDeleteHeld,
  heldMessage,
  mayEmpty,
  withForceDeleteHold,
} from "./force-delete.ts";
import { CREATE_BUCKET, PUT_BUCKET_TAGGING, PUT_BUCKET_VERSIONING } from "./iam.ts";
import {
  createdSettings,
  createSettingActions,
  desiredSettings,
  managedSettings,
  readSettings,
  settingPlans,
  type ResolvedTargets,
} from "./settings/index.ts";
import { S3_BUCKET_TRAITS } from "./traits.ts";
import { bucketEndpoint } from "./endpoint.ts";

/** Options of {@link S3BucketDriver}. */
export interface S3BucketDriverOptions {
  aws: AwsClientSource;
  /** Judges the crash window of an untagged bucket. @default systemClock */
  clock?: Clock;
  /**
   * With spec.forceDelete, DeleteObjects batches (of up to 1000 versions) per reconcile; a larger
   * bucket is emptied over several reconciles so no worker is held for long. @default 10
   */
  maxDeleteBatchesPerPass?: number;
  /** What the operator may do to a bucket's tags. @default DEFAULT_TAG_POLICY */
  tagPolicy?: TagPolicy | undefined;
  /**
   * Bulk tag reads for steady polls (`--bulk-tag-reads`; ../common/tag-snapshots.ts).
   * @default none: every poll reads the bucket's tags itself
   */
  tagSnapshots?: TagSnapshots | undefined;
}

/**
 * The bucket's tags changed between a bulk read and the direct read before a repair so that it
 * no longer carries this object's ownership: retried, and the retry reads everything directly.
 */
export class BucketTagsChangedError extends Error {
  override readonly name = "BucketTagsChangedError";
  constructor(bucket: string) {
    super(`the tags of bucket ${bucket} changed since they were read in bulk; reading the bucket again`);
  }
}

/**
 * CreateBucket answered that this account owns the name already: the bucket appeared between the
 * observation and the create. Retried with backoff; the next observation judges the bucket.
 */
export class BucketAppearedError extends Error {
  override readonly name = "BucketAppearedError";
  constructor(bucket: string) {
    super(`bucket ${bucket} appeared in this account before the create; looking at it again`);
  }
}

/** State written to status while a forced deletion empties the bucket. */
const EMPTYING_STATE = "Emptying";

/** Implements {@link ResourceDriver} for S3 buckets; see the module comment. */
export class S3BucketDriver implements ResourceDriver<S3BucketObject, S3BucketView, ResolvedTargets> {
  readonly #aws: AwsClientSource;
  readonly #maxBatches: number;
  readonly #clock: Clock;
  readonly #tagPolicy: TagPolicy;
  readonly #snapshots: TagSnapshots | undefined;

  constructor(opts: S3BucketDriverOptions) {
    this.#snapshots = opts.tagSnapshots;
    this.#aws = opts.aws;
    this.#clock = opts.clock ?? systemClock;
    this.#tagPolicy = opts.tagPolicy ?? DEFAULT_TAG_POLICY;
    this.#maxBatches = opts.maxDeleteBatchesPerPass ?? 10;
    if (!Number.isInteger(this.#maxBatches) || this.#maxBatches < 1)
      throw new RangeError(`maxDeleteBatchesPerPass must be an integer >= 1, got ${this.#maxBatches}`);
  }

  async #api(obj: S3BucketObject, ctx: DriverContext): Promise<BucketApi> {
    const { bucketName: bucket, region } = obj.spec;
    const client = await this.#aws.client("s3", region);
    return new BucketApi({ client, bucket, region, signal: ctx.signal });
  }

  /**
   * Reads the bucket (HeadBucket, or only its tags once seen in spec.region; on a steady poll
   * with bulk tag reads, its versioning, with the tags from the snapshot when the rules of
   * ../common/tag-snapshots.ts allow), checks its region, reads its tags and judges it, then reads its versioning,
   * managed settings and endpoint (not for a deletion, which needs none of them). A bucket this
   * account cannot read, or one in another region, can never be this object's: a spec error,
   * except for a deletion, which gets it as a foreign, {@link S3BucketView.unreachable} bucket
   * to leave in place.
   */
  async observe(obj: S3BucketObject, ctx: DriverContext): Promise<Observation<S3BucketView>> {
    const { bucketName: name, region } = obj.spec;
    const api = await this.#api(obj, ctx);
    const bulk = this.#snapshots !== undefined && seenHere(obj) && isSteadyPoll(obj, ctx.flow);
    let readTags: TagMap | undefined;
    let readVersioning: { status: VersioningStatus } | undefined;
    let head: HeadResult;
    if (bulk) {
      const read = await api.versioningOrWhereabouts();
      if ("versioning" in read) readVersioning = { status: read.versioning };
      head = read;
    } else {
      const read = await steadyRead(obj, api);
      if ("tags" in read) readTags = read.tags;
      head = read;
    }
    if (head.kind === "absent") return { exists: false };
    const actualRegion = head.kind === "forbidden" ? undefined : head.region;
    const elsewhere = head.kind === "elsewhere" || (actualRegion !== undefined && actualRegion !== region);
    if (ctx.flow.deleting && (head.kind === "forbidden" || elsewhere)) {
      return {
        exists: true,
        resource: {
          name,
          region: actualRegion ?? region,
          tags: {},
          versioning: undefined,
          endpoint: "",
          settings: {},
          unreachable: head.kind === "forbidden" ? "forbidden" : "elsewhere",
        },
        ...verdictOf({}, obj, { adoptable: false }),
      };
    }
    if (head.kind === "forbidden") {
      throw new InvalidSpecError(
        Reason.BucketAlreadyExists,
        `bucket ${name} exists but this AWS account cannot access it: the name belongs to another ` +
          `account (S3 bucket names are global; choose another bucketName), or the operator's IAM ` +
          `identity lacks s3:ListBucket on it`,
      );
    }
    if (elsewhere) {
      throw new InvalidSpecError(
        Reason.BucketInOtherRegion,
        `bucket ${name} exists in ${actualRegion ?? "another region"}, not in spec.region ${region}; ` +
          `S3 cannot move a bucket: create the object with region ${actualRegion ?? "of the bucket"} or ` +
          `choose another bucketName`,
      );
    }
    const arn = bucketArn(name, region);
    const snapshotTags = readVersioning !== undefined ? await this.#snapshotTags(obj, arn, ctx) : undefined;
    const tags = snapshotTags ?? readTags ?? (await api.tags());
    if (tags === undefined) return { exists: false }; // deleted between the two calls
    if (snapshotTags === undefined) this.#snapshots?.noteDirect(arn);
    const verdict = await this.#verdict(obj, ctx.flow, api, tags);
    if (ctx.flow.deleting) {
      // A deletion needs the bucket's ownership only: its settings are neither repaired nor described.
      const resource = { name, region, tags, versioning: undefined, endpoint: "", settings: {} };
      return { exists: true, resource, ...verdict };
    }
    const versioning = readVersioning !== undefined ? readVersioning.status : await api.versioning();
    const settings = await readSettings(api, managedSettings(obj.spec));
    const endpoint = await bucketEndpoint(await this.#aws.client("s3", region), name, region);
    const resource: S3BucketView = {
      name,
      region,
      tags,
      versioning,
      endpoint,
      settings,
      ...(snapshotTags !== undefined ? { tagsFromSnapshot: true } : {}),
    };
    return { exists: true, resource, ...verdict };
  }

  /**
   * The bucket's tags from the snapshot, when its rules allow and they carry this object's
   * ownership (a snapshot never decides that a bucket is someone else's); else undefined, and
   * the tags are read directly.
   */
  async #snapshotTags(obj: S3BucketObject, arn: string, ctx: DriverContext): Promise<TagMap | undefined> {
    const snapshots = this.#snapshots;
    if (snapshots === undefined) return undefined;
    const found = await snapshots.lookup(obj.spec.region, arn);
    logTagSource(ctx, found);
    if (found.source !== "snapshot") return undefined;
    if (isOwnedBy(found.tags, obj)) return { ...found.tags };
    snapshots.count("disagreed");
    return undefined;
  }

  /**
   * Before planning a change of a bucket whose tags came from the snapshot: its tags read
   * directly. The plan then works from them, so a stale snapshot never causes a wrong write.
   * @throws BucketTagsChangedError when they no longer carry this object's ownership.
   */
  async #rereadTags(obj: S3BucketObject, api: BucketApi, bucket: S3BucketView): Promise<S3BucketView> {
    const arn = bucketArn(bucket.name, bucket.region);
    this.#snapshots?.count("disagreed");
    const tags = await api.tags();
    if (tags === undefined || !isOwnedBy(tags, obj)) {
      this.#snapshots?.distrust(arn);
      throw new BucketTagsChangedError(bucket.name);
    }
    this.#snapshots?.noteDirect(arn);
    const { tagsFromSnapshot: _dropped, ...rest } = bucket;
    return { ...rest, tags };
  }

  /**
   * The shared verdict on a bucket with `tags`; an untagged one is this object's only inside the
   * window of its current create (ListBuckets is asked only then).
   */
  async #verdict(
    obj: S3BucketObject,
    flow: FlowFacts,
    api: BucketApi,
    tags: Readonly<TagMap>,
  ): Promise<Verdict> {
    const now = this.#clock.now();
    const candidate = taggedOwner(tags) === undefined && createWindow(obj, flow, now) !== undefined;
    const untaggedIsOwn = candidate && createdInWindow(obj, flow, await api.creationDate(), now);
    return verdictOf(tags, obj, { untaggedIsOwn });
  }

  /** `resolved`: the spec's references (./references.ts), which the managed settings name. */
  async create(
    obj: S3BucketObject,
    _token: string,
    ctx: DriverContext,
    resolved: ResolvedTargets,
  ): Promise<S3BucketView> {
    const { bucketName: name, region } = obj.spec;
    const tags = desiredTagsOf(obj, S3BucketResource.kind, this.#tagPolicy); // may throw TooManyTags: before anything exists
    const api = await this.#api(obj, ctx);
    this.#snapshots?.noteWrite(bucketArn(name, region));
    let outcome: "created" | "already-owned";
    try {
      outcome = await api.create({
        objectOwnership: obj.spec.objectOwnership,
        objectLock: obj.spec.objectLock?.enabled === true,
      });
    } catch (err) {
      if (err instanceof AwsError && err.code === "BucketAlreadyExists") {
        throw new InvalidSpecError(
          Reason.BucketAlreadyExists,
          `bucket name ${name} is taken by another AWS account; S3 bucket names are global: choose another bucketName`,
        );
      }
      throw err;
    }
    let versioning: S3BucketView["versioning"] = undefined;
    if (outcome === "already-owned") {
      // The account has the name already: the bucket appeared after observe. Whose it is is for
      // the next observation's ownership rules to say, never for the create path to assume.
      throw new BucketAppearedError(name);
    }
    await api.putTags(tags);
    const target = targetVersioning(obj.spec.versioning, versioning);
    if (target !== undefined) {
      await api.putVersioning(target);
      versioning = target;
    }
    // What CreateBucket set (Object Ownership) is not written again; every other managed setting is.
    const desired = desiredSettings(obj.spec, resolved);
    const created = createdSettings(obj.spec);
    for (const plan of settingPlans(desired, created)) await plan.write(api);
    const endpoint = await bucketEndpoint(await this.#aws.client("s3", region), name, region);
    return { name, region, tags, versioning, endpoint, settings: { ...desired, ...created } };
  }

  /**
   * What {@link create} calls: CreateBucket, PutBucketTagging, PutBucketVersioning when the spec
   * enables versioning, then the write of each managed setting CreateBucket does not set.
   */
  createActions(obj: S3BucketObject): readonly string[] {
    return [
      CREATE_BUCKET.action,
      PUT_BUCKET_TAGGING.action,
      ...(targetVersioning(obj.spec.versioning, undefined) !== undefined
        ? [PUT_BUCKET_VERSIONING.action]
        : []),
      ...createSettingActions(obj.spec),
    ];
  }

  /**
   * What differs from the spec, in the order it is applied: the tags (one PutBucketTagging of the
   * whole set; for a bucket being adopted the ownership tags, with the hold of ./force-delete.ts
   * when forceDelete is already true), versioning, then each managed setting that differs (one
   * write of its whole document), the settings desired with the spec's references `resolved`.
   * Tags that came from a snapshot are read directly first when anything differs.
   */
  async plan(
    obj: S3BucketObject,
    observed: Observation<S3BucketView> & { exists: true },
    ctx: DriverContext,
    resolved: ResolvedTargets,
  ): Promise<ChangeSet> {
    let bucket = observed.resource;
    const ownTags = desiredTagsOf(obj, S3BucketResource.kind, this.#tagPolicy);
    const adopting = observed.ownership === "foreign";
    const tagsOf = (actual: Readonly<TagMap>): Change[] =>
      tagChanges(withForceDeleteHold(ownTags, obj, actual, adopting), actual, this.#tagPolicy, {
        actions: { replace: PUT_BUCKET_TAGGING.action },
        own: { tags: obj.spec.tags, field: "spec.tags" },
      });
    let tags = tagsOf(bucket.tags);
    const versioning = versioningChange(obj.spec.versioning, bucket.versioning);
    const settings = settingPlans(desiredSettings(obj.spec, resolved), bucket.settings);
    if (
      bucket.tagsFromSnapshot === true &&
      (tags.length > 0 || versioning !== undefined || settings.length > 0)
    ) {
      bucket = await this.#rereadTags(obj, await this.#api(obj, ctx), bucket);
      tags = tagsOf(bucket.tags);
    }
    const actual = bucket.tags;
    const arn = bucketArn(bucket.name, bucket.region);
    return changeSetOf([
      [
        tags,
        async (changes, c) => {
          const api = await this.#api(obj, c);
          await applyTagChanges(changes, actual, {
            replace: (t) => {
              this.#snapshots?.noteWrite(arn);
              return api.putTags(t);
            },
          });
        },
      ],
      [
        versioning !== undefined ? [versioning] : [],
        async ([change], c) => {
          await (await this.#api(obj, c)).putVersioning(change?.desired === true ? "Enabled" : "Suspended");
        },
      ],
      ...settings.map(
        (p) =>
          [
            p.changes,
            async (_changes: readonly Change[], c: DriverContext) => p.write(await this.#api(obj, c)),
          ] as const,
      ),
    ]);
  }

  /** A bucket is usable as soon as it exists. */
  describe(bucket: S3BucketView): Description<NonNullable<S3BucketObject["status"]>> {
    return {
      status: {
        bucketArn: bucketArn(bucket.name, bucket.region),
        endpoint: bucket.endpoint,
        region: bucket.region,
        state: "Available",
      },
      readiness: {
        ready: true,
        pending: false,
        reason: "Available",
        message: `bucket ${bucket.name} exists in ${bucket.region}`,
      },
    };
  }

  /** An observe-only bucket reports its tags and versioning. */
  observed(bucket: S3BucketView): ObservedDetails<NonNullable<S3BucketObject["status"]>> {
    return { tags: bucket.tags, status: { observedVersioning: bucket.versioning ?? "Disabled" } };
  }

  /**
   * Deletes the observed bucket when it is this object's, after emptying it (spec.forceDelete,
   * unless ./force-delete.ts holds it) or refusing to while it holds objects.
   */
  async delete(
    obj: S3BucketObject,
    observed: Observation<S3BucketView>,
    ctx: DriverContext,
  ): Promise<DeleteOutcome> {
    const name = obj.spec.bucketName;
    if (!observed.exists) return { done: true };
    const bucket = observed.resource;
    if (bucket.unreachable === "elsewhere") {
      // This object only ever creates its bucket in spec.region (immutable): not ours.
      ctx.logger.info(
        { bucket: name, region: bucket.region },
        "bucket lives in another region; left untouched",
      );
      return { done: true, leftInPlace: `bucket ${name} lives in another region and was left in place` };
    }
    if (bucket.unreachable === "forbidden") {
      if (recordedIdOf(obj, S3_BUCKET_TRAITS.idField) === undefined) {
        // Never seen as ours (the name belongs to another account): nothing of ours to delete.
        ctx.logger.info({ bucket: name }, "bucket not accessible and never recorded as ours; left untouched");
        return {
          done: true,
          leftInPlace: `bucket ${name} is not accessible to the operator and was left in place`,
        };
      }
      return blocked(
        Reason.BucketAccessDenied,
        `bucket ${name} cannot be read (HTTP 403): grant the operator s3:ListBucket on it, or set ` +
          `spec.deletionPolicy to Retain to release the object without deleting the bucket`,
      );
    }
    if (observed.ownership !== "owned") {
      ctx.logger.info({ bucket: name }, "bucket is not owned by this object; left untouched");
      return { done: true, leftInPlace: `bucket ${name} is not owned by this object and was left in place` };
    }
    const api = await this.#api(obj, ctx);
    const held = forceDeleteHeld(bucket.tags);
    if (held !== undefined && !obj.spec.forceDelete) await this.#releaseHold(bucket, api);
    const force = mayEmpty(obj, bucket.tags);
    const why = held !== undefined && obj.spec.forceDelete ? heldMessage(name, held) : undefined;
    const emptied = await this.#empty(obj, api, force, why);
    if (emptied !== undefined) return emptied;
    const result = await api.delete();
    if (result !== "not-empty") return { done: true };
    // Objects arrived between the listing and the delete.
    if (force) return this.#emptyingOutcome(name);
    return blocked(Reason.BucketNotEmpty, notEmptyMessage(name, 1, true, why));
  }

  /** Removes the force-delete hold from the bucket (forceDelete was seen false: ./force-delete.ts). */
  async #releaseHold(bucket: S3BucketView, api: BucketApi): Promise<void> {
    this.#snapshots?.noteWrite(bucketArn(bucket.name, bucket.region));
    await applyTagPlan({ set: {}, remove: [FORCE_DELETE_HELD_TAG] }, bucket.tags, {
      replace: (tags) => api.putTags(tags),
    });
  }

  /**
   * Makes sure the bucket is empty before DeleteBucket: without `force` (spec.forceDelete, not
   * held) a non-empty bucket blocks deletion, with `held` saying why a true forceDelete does not
   * count; with it, up to `maxDeleteBatchesPerPass` batches of versions are deleted, and versions
   * that S3 Object Lock keeps block it (their retention is never bypassed).
   * Returns an outcome when this pass cannot finish, undefined when the bucket is empty.
   */
  async #empty(
    obj: S3BucketObject,
    api: BucketApi,
    force: boolean,
    held: string | undefined,
  ): Promise<DeleteOutcome | undefined> {
    const name = obj.spec.bucketName;
    let page = await api.listVersions(MAX_KEYS_PER_BATCH);
    if (page.refs.length === 0) return undefined;
    if (!force) {
      return blocked(Reason.BucketNotEmpty, notEmptyMessage(name, page.refs.length, page.truncated, held));
    }
    for (let batch = 0; batch < this.#maxBatches; batch++) {
      const { locked } = await api.deleteVersions(page.refs);
      if (locked > 0) return blocked(Reason.BucketObjectsLocked, objectsLockedMessage(name, locked));
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
 * instead of three, plus one read per setting the spec manages (./settings.ts). Otherwise
 * HeadBucket, which reports the bucket's region.
 */
function steadyRead(
  obj: S3BucketObject,
  api: BucketApi,
): Promise<Awaited<ReturnType<BucketApi["head"]>> | Awaited<ReturnType<BucketApi["tagsOrWhereabouts"]>>> {
  return seenHere(obj) ? api.tagsOrWhereabouts() : api.head();
}

/** Whether the object's status records its bucket in spec.region (where it stays: S3 cannot move one). */
function seenHere(obj: S3BucketObject): boolean {
  return obj.status?.bucketArn !== undefined && obj.status.region === obj.spec.region;
}
