/**
 * The S3Bucket driver: finds a bucket by name in spec.region, creates it (CreateBucket, then its
 * tags and versioning), repairs tag and versioning drift, and deletes it only when it is this
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
import { S3BucketResource, type S3Bucket, type SqsQueue } from "../../api/v1/index.ts";
import { Reason } from "../common/reasons.ts";
import {
  grantedBuckets,
  readyAsSpecified,
  referencedKindNotRunning,
  referencedObject,
} from "../common/references.ts";
import { systemClock, type Clock } from "../../runtime/clock.ts";
import { isOwnedBy, taggedOwner, verdictOf, type Verdict } from "../common/ownership.ts";
import { isSteadyPoll, logTagSource, type TagSnapshots } from "../common/tag-snapshots.ts";
import {
  applyTagPlan,
  DEFAULT_TAG_POLICY,
  desiredTagsOf,
  isEmptyPlan,
  planTags,
  repairTags,
  type TagPolicy,
} from "../common/tags.ts";
import {
  blocked,
  DependencyNotReadyError,
  InvalidSpecError,
  recordedIdOf,
  TAGS_SETTING,
  type DeleteOutcome,
  type DriftRepair,
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
import {
  BUCKET_SETTINGS,
  desiredSettings,
  loggingSid,
  managedSettings,
  settingChanges,
  type BucketSettings,
  type ResolvedTargets,
} from "./settings.ts";
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
   * SqsQueue objects from the shared cache, for notification queues named by queueRef.
   * @default none: a queueRef is never ready
   */
  queues?: (ref: { namespace: string; name: string }) => Readonly<SqsQueue> | undefined;
  /**
   * Whether the operator runs the SqsQueue controller (`--controllers`): without it a queueRef
   * waits with `ReferencedKindNotRunning`. @default true
   */
  queuesRun?: boolean;
  /**
   * S3Bucket objects from the shared cache, for replication destinations named by bucketRef.
   * @default none: a bucketRef is never ready
   */
  buckets?: (ref: { namespace: string; name: string }) => Readonly<S3Bucket> | undefined;
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

/** The setting name of `spec.versioning` in drift repairs. */
const VERSIONING_SETTING = "versioning";

/** State written to status while a forced deletion empties the bucket. */
const EMPTYING_STATE = "Emptying";

/** Implements {@link ResourceDriver} for S3 buckets; see the module comment. */
export class S3BucketDriver implements ResourceDriver<S3BucketObject, S3BucketView> {
  readonly noun = "bucket";
  readonly idField = "bucketArn";
  readonly driftSettings: readonly string[] = Object.freeze([
    TAGS_SETTING,
    VERSIONING_SETTING,
    ...BUCKET_SETTINGS,
  ]);
  readonly #aws: AwsClientSource;
  readonly #maxBatches: number;
  readonly #clock: Clock;
  readonly #tagPolicy: TagPolicy;
  readonly #queues: S3BucketDriverOptions["queues"];
  readonly #queuesRun: boolean;
  readonly #buckets: S3BucketDriverOptions["buckets"];
  readonly #snapshots: TagSnapshots | undefined;

  constructor(opts: S3BucketDriverOptions) {
    this.#snapshots = opts.tagSnapshots;
    this.#buckets = opts.buckets;
    this.#queues = opts.queues;
    this.#queuesRun = opts.queuesRun ?? true;
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
    const settings = await api.settings(managedSettings(obj.spec));
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
   * Before a repair of a bucket whose tags came from the snapshot: its tags read directly. The
   * repair then works from them, so a stale snapshot never causes a wrong write.
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

  /** Every reference the spec makes, resolved from the cache; see each part for what it waits for. */
  #resolve(obj: S3BucketObject): ResolvedTargets {
    return {
      queueArns: this.#notificationQueues(obj),
      bucketArns: this.#replicationDestinations(obj),
      ...this.#loggingTarget(obj),
      ...this.#loggingSources(obj),
    };
  }

  /**
   * The bucket name of the S3Bucket spec.logging.targetBucketRef names, from the cache: it must
   * be another bucket in this region whose spec.allowLoggingFrom names this one, Ready and Synced
   * with that spec reconciled (so the grant is in its policy before S3 checks it).
   * @throws DependencyNotReadyError while it is missing, not Ready or not allowing this bucket yet.
   * @throws InvalidSpecError when it is this bucket or in another region.
   */
  #loggingTarget(obj: S3BucketObject): Pick<ResolvedTargets, "loggingTarget"> {
    const name = obj.spec.logging?.targetBucketRef?.name;
    if (name === undefined) return {};
    const me = obj.metadata.name ?? "";
    const target = referencedObject({
      what: `logging: the bucket ${name}`,
      name,
      referrer: obj,
      lookup: (ref) => this.#buckets?.(ref),
      missing: Reason.LoggingTargetNotReady,
      itself: {
        reason: Reason.LoggingTargetMismatch,
        message: "logging: targetBucketRef names this bucket itself; name another bucket",
      },
    });
    if (target.spec.region !== obj.spec.region) {
      throw new InvalidSpecError(
        Reason.LoggingTargetMismatch,
        `logging: the bucket ${name} is in ${target.spec.region}, not in ${obj.spec.region}; ` +
          `S3 writes access logs only into a bucket of the same region`,
      );
    }
    if (!(target.spec.allowLoggingFrom ?? []).some((a) => a.bucketRef.name === me)) {
      throw new DependencyNotReadyError(
        Reason.LoggingTargetNotReady,
        `logging: the bucket ${name} does not allow this bucket's logs: add {bucketRef: {name: ${me}}} ` +
          `to its spec.allowLoggingFrom`,
      );
    }
    if (target.status?.bucketArn === undefined || !readyAsSpecified(target)) {
      throw new DependencyNotReadyError(
        Reason.LoggingTargetNotReady,
        `logging: waiting for the bucket ${name} to be Ready with this bucket allowed`,
      );
    }
    return { loggingTarget: target.spec.bucketName };
  }

  /**
   * The buckets spec.allowLoggingFrom names, from the cache: each must exist as an S3Bucket object
   * (its bucket need not exist yet), and spec.policy must not use the Sids of their statements.
   * @throws DependencyNotReadyError while a named S3Bucket object does not exist.
   * @throws InvalidSpecError when spec.policy uses one of those Sids.
   */
  #loggingSources(obj: S3BucketObject): Pick<ResolvedTargets, "loggingSources"> {
    const allowed = obj.spec.allowLoggingFrom;
    if (allowed === undefined) return {};
    const loggingSources = grantedBuckets({
      field: "allowLoggingFrom",
      refs: allowed,
      namespace: obj.metadata.namespace ?? "",
      lookup: (ref) => this.#buckets?.(ref),
      arnOf: bucketArn,
      missing: Reason.LoggingSourceNotFound,
      sidOf: loggingSid,
      policy: obj.spec.policy,
    });
    return { loggingSources };
  }

  /**
   * The ARNs of the buckets spec.replication names by bucketRef, read from the cache: each must
   * exist with versioning: true, and be Ready with that spec reconciled (versioning enabled).
   * @throws DependencyNotReadyError while one is missing, not versioned or not Ready.
   * @throws InvalidSpecError for a rule that names this bucket itself.
   */
  #replicationDestinations(obj: S3BucketObject): Map<string, string> {
    const arns = new Map<string, string>();
    for (const rule of obj.spec.replication?.rules ?? []) {
      const name = rule.destination.bucketRef?.name;
      if (name === undefined || arns.has(name)) continue;
      const dest = referencedObject({
        what: `replication rule ${rule.id}: the bucket ${name}`,
        name,
        referrer: obj,
        lookup: (ref) => this.#buckets?.(ref),
        missing: Reason.ReplicationDestinationNotReady,
        itself: {
          reason: Reason.ReplicationDestinationMismatch,
          message: `replication rule ${rule.id}: a bucket cannot replicate to itself`,
        },
      });
      if (!dest.spec.versioning) {
        throw new DependencyNotReadyError(
          Reason.ReplicationDestinationNotVersioned,
          `replication rule ${rule.id}: the destination bucket ${name} does not set versioning: true; ` +
            `S3 replicates only to versioned buckets`,
        );
      }
      const arn = dest.status?.bucketArn;
      if (arn === undefined || !readyAsSpecified(dest)) {
        throw new DependencyNotReadyError(
          Reason.ReplicationDestinationNotReady,
          `replication rule ${rule.id}: waiting for the destination bucket ${name} to be Ready with versioning enabled`,
        );
      }
      arns.set(name, arn);
    }
    return arns;
  }

  /**
   * The ARNs of the queues spec.notifications names by queueRef, read from the cache: each must
   * exist, be a standard queue in the bucket's region, allow this bucket in its
   * spec.allowS3Notifications, and be Ready and Synced with that spec reconciled (so the grant is in its
   * policy before S3 checks the destination).
   * @throws DependencyNotReadyError while one is missing, not Ready or not allowing this bucket yet.
   * @throws InvalidSpecError when one can never serve (another region, a FIFO queue).
   */
  #notificationQueues(obj: S3BucketObject): Map<string, string> {
    const queueArns = new Map<string, string>();
    for (const n of obj.spec.notifications?.queues ?? []) {
      const name = n.queueRef?.name;
      if (name === undefined || queueArns.has(name)) continue;
      if (!this.#queuesRun)
        throw referencedKindNotRunning(
          `notification ${n.id}`,
          "SqsQueue",
          name,
          "name the queue by queueArn",
        );
      const queue = referencedObject({
        what: `notification ${n.id}: the queue ${name}`,
        name,
        referrer: obj,
        lookup: (ref) => this.#queues?.(ref),
        missing: Reason.NotificationTargetNotReady,
      });
      if (queue.spec.region !== obj.spec.region) {
        throw new InvalidSpecError(
          Reason.NotificationTargetMismatch,
          `notification ${n.id}: the queue ${name} is in ${queue.spec.region}, not in ${obj.spec.region}; ` +
            `S3 sends notifications only to queues in the bucket's region`,
        );
      }
      if (queue.spec.fifo) {
        throw new InvalidSpecError(
          Reason.NotificationTargetMismatch,
          `notification ${n.id}: the queue ${name} is a FIFO queue; S3 sends notifications to standard queues only`,
        );
      }
      const me = obj.metadata.name ?? "";
      if (!(queue.spec.allowS3Notifications ?? []).some((a) => a.bucketRef.name === me)) {
        throw new DependencyNotReadyError(
          Reason.NotificationTargetNotReady,
          `notification ${n.id}: the queue ${name} does not allow this bucket to send to it: add ` +
            `{bucketRef: {name: ${me}}} to its spec.allowS3Notifications`,
        );
      }
      const arn = queue.status?.queueArn;
      if (arn === undefined || arn === "" || !readyAsSpecified(queue)) {
        throw new DependencyNotReadyError(
          Reason.NotificationTargetNotReady,
          `notification ${n.id}: waiting for the queue ${name} to be Ready with this bucket allowed`,
        );
      }
      queueArns.set(name, arn);
    }
    return queueArns;
  }

  async create(obj: S3BucketObject, _token: string, ctx: DriverContext): Promise<S3BucketView> {
    const { bucketName: name, region } = obj.spec;
    const resolved = this.#resolve(obj); // may wait for a notification queue: before anything exists
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
    // Object Ownership went with CreateBucket; every other managed setting is written now.
    const desired = desiredSettings(obj.spec, resolved);
    const created: BucketSettings = { objectOwnership: obj.spec.objectOwnership ?? null };
    for (const change of settingChanges(desired, created)) await api.putSetting(change);
    const endpoint = await bucketEndpoint(await this.#aws.client("s3", region), name, region);
    return { name, region, tags, versioning, endpoint, settings: { ...desired, ...created } };
  }

  /**
   * Repairs tag and versioning drift; for a bucket being adopted this writes its ownership tags,
   * with the hold of ./force-delete.ts when forceDelete is already true.
   */
  async update(
    obj: S3BucketObject,
    observed: Observation<S3BucketView> & { exists: true },
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    let bucket = observed.resource;
    const resolved = this.#resolve(obj);
    const api = await this.#api(obj, ctx);
    const ownTags = desiredTagsOf(obj, S3BucketResource.kind, this.#tagPolicy);
    const adopting = observed.ownership === "foreign";
    const desiredOf = (tags: Readonly<TagMap>): TagMap => withForceDeleteHold(ownTags, obj, tags, adopting);
    const needsRepair = (): boolean =>
      !isEmptyPlan(planTags(desiredOf(bucket.tags), bucket.tags, this.#tagPolicy)) ||
      targetVersioning(obj.spec.versioning, bucket.versioning) !== undefined ||
      settingChanges(desiredSettings(obj.spec, resolved), bucket.settings).length > 0;
    if (bucket.tagsFromSnapshot === true && needsRepair()) bucket = await this.#rereadTags(obj, api, bucket);
    const arn = bucketArn(bucket.name, bucket.region);
    const { changes } = await repairTags(
      desiredOf(bucket.tags),
      bucket.tags,
      {
        replace: (tags) => {
          this.#snapshots?.noteWrite(arn);
          return api.putTags(tags);
        },
      },
      this.#tagPolicy,
    );
    const target = targetVersioning(obj.spec.versioning, bucket.versioning);
    if (target !== undefined) {
      await api.putVersioning(target);
      changes.push({
        setting: VERSIONING_SETTING,
        description: `versioning: ${bucket.versioning ?? "never enabled"} -> ${target}`,
      });
    }
    for (const change of settingChanges(desiredSettings(obj.spec, resolved), bucket.settings)) {
      await api.putSetting(change);
      changes.push({ setting: change.setting, description: change.description });
    }
    return changes;
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

  readonly observedFields = ["observedVersioning"] as const;

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
      if (recordedIdOf(obj, this.idField) === undefined) {
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
