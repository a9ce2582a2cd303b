/**
 * The SqsQueue driver: finds, creates, repairs and deletes one SQS queue for the shared reconcile
 * flow. A queue name is unique per account and region, so the name is the natural idempotency
 * key: before any create the flow asks {@link SqsQueueDriver.observe}, which looks the queue up by
 * its recorded URL or by name and judges ownership by the UID tag. A crash between `CreateQueue`
 * and the status write therefore finds the queue (tagged at create time) on the next reconcile,
 * and can never make a second one.
 */
import { isOwnedBy, verdictOf } from "../common/ownership.ts";
import { isSteadyPoll, logTagSource, type TagSnapshots } from "../common/tag-snapshots.ts";
import {
  DEFAULT_TAG_POLICY,
  desiredTagsOf,
  isEmptyPlan,
  planTags,
  repairTags,
  type TagPolicy,
} from "../common/tags.ts";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { SqsQueueResource, type S3Bucket, type SqsQueue } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { isAwsErrorKind } from "../../aws/errors.ts";
import { fromSqsTags, toSqsTags, type TagMap } from "../../aws/ownership.ts";
import {
  recordedIdOf,
  type DeleteOutcome,
  type Description,
  type DriftRepair,
  type DriverContext,
  type ManagedObject,
  type ObservedDetails,
  type Observation,
  type ResourceDriver,
} from "../common/driver.ts";
import {
  SqsAttribute,
  attributeDrift,
  attributeUpdate,
  createAttributes,
  managedAttributes,
  describeAttributeChanges,
  observedAttributes,
  queueArnOfUrl,
  queueNameOfUrl,
  SQS_DRIFT_SETTINGS,
} from "./model.ts";
import { resolveReferences, type QueueLookups } from "./references.ts";

/** An SqsQueue as the shared flow handles it. */
export type SqsQueueObject = SqsQueue & ManagedObject;

/** What the driver knows about a queue in SQS. Immutable snapshots. */
export interface SqsQueueView {
  readonly url: string;
  /** Empty when SQS did not report one. */
  readonly arn: string;
  /**
   * Every attribute `GetQueueAttributes(All)` reported; for a queue this driver just created,
   * the attributes CreateQueue set.
   */
  readonly attributes: Readonly<Record<string, string>>;
  readonly tags: Readonly<TagMap>;
  /**
   * The tags came from a bulk read (../common/tag-snapshots.ts), which may lag: before any
   * repair the driver reads them directly.
   */
  readonly tagsFromSnapshot?: true;
}

/** The value of `status.state` while the queue exists. */
export const QUEUE_STATE_AVAILABLE = "Available";

/**
 * `CreateQueue` found a queue of that name already there (SQS `QueueAlreadyExists` /
 * `QueueNameExists`, or a create answered with the URL of a queue that does not carry this
 * object's UID tag). The flow retries with backoff, and the next reconcile's observation takes
 * the queue up through the ownership rules: synced when it is ours, `NotOwned` or adopted when
 * it is not. The create path itself never claims a queue.
 */
export class QueueExistsError extends Error {
  override readonly name = "QueueExistsError";
  readonly queueName: string;
  constructor(queueName: string, options?: { cause?: unknown }) {
    super(`a queue named ${queueName} already exists; looking it up again`, options);
    this.queueName = queueName;
  }
}

/**
 * The queue's tags changed between a bulk read and the direct read before a repair so that it no
 * longer carries this object's ownership: retried, and the retry reads everything directly.
 */
export class QueueTagsChangedError extends Error {
  override readonly name = "QueueTagsChangedError";
  constructor(url: string) {
    super(`the tags of queue ${url} changed since they were read in bulk; reading the queue again`);
  }
}

/** Options of {@link SqsQueueDriver}. */
export interface SqsQueueDriverOptions {
  /** SQS clients per region; every failure they throw is an `AwsError`. */
  aws: AwsClientSource;
  /**
   * SqsQueue objects from the shared cache, for dead-letter queues named by queueRef.
   * @default none: a queueRef is never ready
   */
  queues?: (ref: { namespace: string; name: string }) => Readonly<SqsQueue> | undefined;
  /**
   * S3Bucket objects from the shared cache, for the buckets allowS3Notifications names.
   * @default none: a bucketRef is never found
   */
  buckets?: (ref: { namespace: string; name: string }) => Readonly<S3Bucket> | undefined;
  /** What the operator may do to a queue's tags. @default DEFAULT_TAG_POLICY */
  tagPolicy?: TagPolicy | undefined;
  /**
   * Bulk tag reads for steady polls (`--bulk-tag-reads`; ../common/tag-snapshots.ts).
   * @default none: every poll reads the queue's tags itself
   */
  tagSnapshots?: TagSnapshots | undefined;
}

/** The {@link ResourceDriver} of SqsQueue; stateless, safe to share between workers. */
export class SqsQueueDriver implements ResourceDriver<SqsQueueObject, SqsQueueView> {
  readonly noun = "queue";
  readonly idField = "queueUrl";
  readonly driftSettings = SQS_DRIFT_SETTINGS;
  readonly #aws: AwsClientSource;
  readonly #tagPolicy: TagPolicy;
  readonly #lookups: QueueLookups;
  readonly #snapshots: TagSnapshots | undefined;

  constructor(opts: SqsQueueDriverOptions) {
    this.#snapshots = opts.tagSnapshots;
    this.#aws = opts.aws;
    this.#tagPolicy = opts.tagPolicy ?? DEFAULT_TAG_POLICY;
    this.#lookups = { queues: opts.queues, buckets: opts.buckets };
  }

  async observe(obj: SqsQueueObject, ctx: DriverContext): Promise<Observation<SqsQueueView>> {
    const sqs = await this.#aws.client("sqs", obj.spec.region);
    const view = await this.#find(sqs, obj, ctx);
    if (view === undefined) return { exists: false };
    return { exists: true, resource: view, ...verdictOf(view.tags, obj) };
  }

  /**
   * SQS has no idempotency token: `token` is only recorded by the flow. Uniqueness comes from the
   * queue name, and ownership from the tags written atomically with the queue.
   */
  async create(obj: SqsQueueObject, _token: string, ctx: DriverContext): Promise<SqsQueueView> {
    const { spec } = obj;
    const resolved = resolveReferences(obj, this.#lookups);
    const sqs = await this.#aws.client("sqs", spec.region);
    const attributes = createAttributes(spec, resolved);
    let url: string | undefined;
    try {
      const out = await sqs.send(
        new CreateQueueCommand({
          QueueName: spec.queueName,
          Attributes: attributes,
          tags: toSqsTags(desiredTagsOf(obj, SqsQueueResource.kind, this.#tagPolicy)),
        }),
        { abortSignal: ctx.signal },
      );
      url = out.QueueUrl;
    } catch (err) {
      // Same name, other attributes: the queue exists. Observe it again rather than guess.
      if (isAwsErrorKind(err, "conflict")) throw new QueueExistsError(spec.queueName, { cause: err });
      throw err;
    }
    if (url === undefined || url === "") throw new Error("SQS CreateQueue returned no QueueUrl");
    const createdArn = queueArnOfUrl(url, spec.region);
    if (createdArn !== undefined) this.#snapshots?.noteWrite(createdArn);
    let view = await this.#created(sqs, url, obj, attributes, ctx);
    // SQS may take about a second before a new queue answers reads. Retrying is safe (the retry
    // finds the queue by name, or CreateQueue answers with it again), and nothing is recorded in
    // status until the queue has been read, so the lag is never taken for an out-of-band delete.
    if (view === undefined)
      throw new Error(`the new queue ${spec.queueName} does not answer reads yet; retrying`);
    // CreateQueue with identical attributes answers with an existing queue's URL: only the UID
    // tag tells whether this call made it.
    if (!isOwnedBy(view.tags, obj)) throw new QueueExistsError(spec.queueName);
    ctx.logger.info({ queueUrl: url }, "created SQS queue");
    if (view.arn !== "") {
      // What names the queue's own ARN, known only now (the notification grants' Resource, the
      // account of a redrive source not created yet), is set before the queue is reported Ready.
      const late = Object.fromEntries(
        Object.entries(managedAttributes(spec, { ...resolved, queueArn: view.arn })).filter(
          ([name]) => !(name in attributes),
        ),
      );
      if (Object.keys(late).length > 0) {
        await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: late }), {
          abortSignal: ctx.signal,
        });
        view = { ...view, attributes: { ...view.attributes, ...late } };
      }
    }
    return view;
  }

  /**
   * The queue CreateQueue answered with, read back with one call: its tags (which tell whether
   * this call made it). The ARN follows from the URL and region, and the attributes are the ones
   * the create set; only a URL of an unknown shape costs the attribute read as well.
   */
  async #created(
    sqs: SQSClient,
    url: string,
    obj: SqsQueueObject,
    sent: Readonly<Record<string, string>>,
    ctx: DriverContext,
  ): Promise<SqsQueueView | undefined> {
    const arn = queueArnOfUrl(url, obj.spec.region);
    if (arn === undefined) return this.#describe(sqs, url, obj, ctx, false);
    try {
      const tags = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }), { abortSignal: ctx.signal });
      return {
        url,
        arn,
        attributes: { ...sent, [SqsAttribute.QueueArn]: arn },
        tags: fromSqsTags(tags.Tags),
      };
    } catch (err) {
      if (isAwsErrorKind(err, "not-found")) return undefined;
      throw err;
    }
  }

  /**
   * Repairs attribute and tag drift; for a queue being adopted this writes its ownership tags.
   * The tags go first: a policy confined to queues carrying the managed-by tag
   * (config/iam/policy-tag-scoped.json) allows SetQueueAttributes on an adopted queue only once
   * the tag is on it.
   */
  async update(
    obj: SqsQueueObject,
    observed: Observation<SqsQueueView> & { exists: true },
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    let queue = observed.resource;
    const sqs = await this.#aws.client("sqs", obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    const attrs = attributeDrift(
      obj.spec,
      queue.attributes,
      resolveReferences(obj, this.#lookups, queue.arn !== "" ? queue.arn : undefined),
    );
    const desiredTags = desiredTagsOf(obj, SqsQueueResource.kind, this.#tagPolicy);
    if (
      queue.tagsFromSnapshot === true &&
      (attrs.length > 0 || !isEmptyPlan(planTags(desiredTags, queue.tags, this.#tagPolicy)))
    )
      queue = await this.#rereadTags(sqs, obj, queue, ctx);
    const arn = queue.arn;
    const noteWrite = (): void => {
      if (arn !== "") this.#snapshots?.noteWrite(arn);
    };
    const url = queue.url;
    const tags = await repairTags(
      desiredTags,
      queue.tags,
      {
        set: async (set) => {
          noteWrite();
          await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: toSqsTags(set) }), opts);
        },
        remove: async (keys) => {
          noteWrite();
          await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: [...keys] }), opts);
        },
      },
      this.#tagPolicy,
    );
    if (attrs.length > 0) {
      const update = attributeUpdate(attrs);
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: update }), opts);
    }
    const changes = [...describeAttributeChanges(attrs), ...tags.changes];
    if (changes.length > 0) ctx.logger.info({ queueUrl: queue.url, changes }, "repaired SQS queue drift");
    return changes;
  }

  /** A queue is usable as soon as it exists; SQS has no transitional states to poll. */
  describe(queue: SqsQueueView): Description<NonNullable<SqsQueueObject["status"]>> {
    return {
      status: {
        queueUrl: queue.url,
        ...(queue.arn !== "" ? { queueArn: queue.arn } : {}),
        state: QUEUE_STATE_AVAILABLE,
      },
      readiness: {
        ready: true,
        pending: false,
        reason: QUEUE_STATE_AVAILABLE,
        message: "the queue is available",
      },
    };
  }

  readonly observedFields = ["observedAttributes"] as const;

  /** An observe-only queue reports its tags and attributes (see {@link observedAttributes}). */
  observed(queue: SqsQueueView): ObservedDetails<NonNullable<SqsQueueObject["status"]>> {
    return { tags: queue.tags, status: { observedAttributes: observedAttributes(queue.attributes) } };
  }

  /**
   * Deletes the observed queue when it is this object's; a queue that is gone, or that is not
   * ours (never created, or NotOwned), needs nothing. `DeleteQueue` returns at once (SQS finishes
   * within 60 s), so a single call completes deletion.
   */
  async delete(
    obj: SqsQueueObject,
    observed: Observation<SqsQueueView>,
    ctx: DriverContext,
  ): Promise<DeleteOutcome> {
    if (!observed.exists) return { done: true };
    const view = observed.resource;
    if (observed.ownership !== "owned") {
      ctx.logger.info({ queueUrl: view.url }, "SQS queue is not owned by this object; leaving it in place");
      return {
        done: true,
        leftInPlace: "the queue in AWS is not owned by this object and was left in place",
      };
    }
    try {
      await (
        await this.#aws.client("sqs", obj.spec.region)
      ).send(new DeleteQueueCommand({ QueueUrl: view.url }), { abortSignal: ctx.signal });
    } catch (err) {
      if (isAwsErrorKind(err, "not-found")) return { done: true };
      throw err;
    }
    ctx.logger.info({ queueUrl: view.url }, "deleted SQS queue");
    return { done: true };
  }

  /**
   * The queue of `obj`: at its recorded URL when that URL names the spec's queue, else (or when
   * nothing is there) by `GetQueueUrl`. Undefined when no such queue exists.
   */
  async #find(sqs: SQSClient, obj: SqsQueueObject, ctx: DriverContext): Promise<SqsQueueView | undefined> {
    const name = obj.spec.queueName;
    const recorded = recordedIdOf(obj, this.idField);
    if (recorded !== undefined && queueNameOfUrl(recorded) === name) {
      const view = await this.#describe(sqs, recorded, obj, ctx, isSteadyPoll(obj, ctx.flow));
      if (view !== undefined) return view;
    }
    let url: string | undefined;
    try {
      url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }), { abortSignal: ctx.signal }))
        .QueueUrl;
    } catch (err) {
      if (isAwsErrorKind(err, "not-found")) return undefined;
      throw err;
    }
    if (url === undefined || url === "") return undefined;
    if (url === recorded) return undefined; // just found missing at this very URL
    return this.#describe(sqs, url, obj, ctx, false);
  }

  /**
   * Attributes and tags of the queue at `url`; undefined when it does not exist. `bulk`: a steady
   * poll with bulk tag reads, which reads the attributes (whether the queue exists) and takes the
   * tags from the snapshot when its rules allow and they carry this object's ownership.
   */
  async #describe(
    sqs: SQSClient,
    url: string,
    obj: SqsQueueObject,
    ctx: DriverContext,
    bulk: boolean,
  ): Promise<SqsQueueView | undefined> {
    const opts = { abortSignal: ctx.signal };
    const snapshots = bulk ? this.#snapshots : undefined;
    try {
      const attrsCall = sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
        opts,
      );
      // Without bulk reads both calls go out at once, as before.
      const tagsCall =
        snapshots === undefined ? sqs.send(new ListQueueTagsCommand({ QueueUrl: url }), opts) : undefined;
      const [attrs, directTags] = await Promise.all([attrsCall, tagsCall]);
      const attributes: Record<string, string> = { ...(attrs.Attributes ?? {}) };
      const arn = attributes[SqsAttribute.QueueArn] ?? "";
      const incarnation = attributes[SqsAttribute.CreatedTimestamp];
      if (snapshots !== undefined && arn !== "") {
        const found = await snapshots.lookup(obj.spec.region, arn, incarnation);
        logTagSource(ctx, found);
        if (found.source === "snapshot" && isOwnedBy(found.tags, obj))
          return { url, arn, attributes, tags: { ...found.tags }, tagsFromSnapshot: true };
        if (found.source === "snapshot") snapshots.count("disagreed");
      }
      const tags = directTags ?? (await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }), opts));
      if (arn !== "") this.#snapshots?.noteDirect(arn, incarnation);
      return { url, arn, attributes, tags: fromSqsTags(tags.Tags) };
    } catch (err) {
      if (isAwsErrorKind(err, "not-found")) return undefined;
      throw err;
    }
  }

  /**
   * Before a repair of a queue whose tags came from the snapshot: its tags read directly. The
   * repair then works from them, so a stale snapshot never causes a wrong write.
   * @throws QueueTagsChangedError when they no longer carry this object's ownership.
   */
  async #rereadTags(
    sqs: SQSClient,
    obj: SqsQueueObject,
    queue: SqsQueueView,
    ctx: DriverContext,
  ): Promise<SqsQueueView> {
    this.#snapshots?.count("disagreed");
    const out = await sqs.send(new ListQueueTagsCommand({ QueueUrl: queue.url }), {
      abortSignal: ctx.signal,
    });
    const tags = fromSqsTags(out.Tags);
    if (!isOwnedBy(tags, obj)) {
      this.#snapshots?.distrust(queue.arn);
      throw new QueueTagsChangedError(queue.url);
    }
    this.#snapshots?.noteDirect(queue.arn, queue.attributes[SqsAttribute.CreatedTimestamp]);
    const { tagsFromSnapshot: _dropped, ...rest } = queue;
    return { ...rest, tags };
  }
}
