/**
 * The SqsQueue driver: finds, creates, plans the changes of and deletes one SQS queue for the
 * shared reconcile flow. A queue name is unique per account and region, so the name is the natural idempotency
 * key: before any create the flow asks {@link SqsQueueDriver.observe}, which looks the queue up by
 * its recorded URL or by name and judges ownership by the UID tag. A crash between `CreateQueue`
 * and the status write therefore finds the queue (tagged at create time) on the next reconcile,
 * and can never make a second one.
 */
import { isOwnedBy, verdictOf } from "../common/ownership.ts";
import { isSteadyPoll, logTagSource, type TagSnapshots } from "../common/tag-snapshots.ts";
import { changeSetOf, type Change, type ChangeSet } from "../common/changes.ts";
import {
  applyTagChanges,
  DEFAULT_TAG_POLICY,
  desiredTagsOf,
  tagChanges,
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
import { SqsQueueResource } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { isAwsErrorKind } from "../../aws/errors.ts";
import { fromSqsTags, toSqsTags, type TagMap } from "../../aws/ownership.ts";
import {
  recordedIdOf,
  type DeleteOutcome,
  type Description,
  type DriverContext,
  type ObservedDetails,
  type Observation,
  type ResourceDriver,
} from "../common/driver.ts";
import {
  SqsAction,
  SqsAttribute,
  attributeChange,
  attributeDrift,
  attributesAfterCreate,
  attributeUpdate,
  createActionsFor,
  createAttributes,
  observedAttributes,
  queueArnOfUrl,
  queueNameOfUrl,
  type AttributeChange,
  type ResolvedReferences,
} from "./model.ts";
import { SQS_QUEUE_TRAITS } from "./traits.ts";

/** An SqsQueue as the shared flow handles it. */
export type { SqsQueueObject } from "./model.ts";
import type { SqsQueueObject } from "./model.ts";

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
   * The tags came from a bulk read (../common/tag-snapshots.ts), which may lag: before a plan
   * with changes the driver reads them directly.
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
 * The queue's tags changed between a bulk read and the direct read a plan makes so that it no
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
  /** What the operator may do to a queue's tags. @default DEFAULT_TAG_POLICY */
  tagPolicy?: TagPolicy | undefined;
  /**
   * Bulk tag reads for steady polls (`--bulk-tag-reads`; ../common/tag-snapshots.ts).
   * @default none: every poll reads the queue's tags itself
   */
  tagSnapshots?: TagSnapshots | undefined;
}

/** The {@link ResourceDriver} of SqsQueue; stateless, safe to share between workers. */
export class SqsQueueDriver implements ResourceDriver<SqsQueueObject, SqsQueueView, ResolvedReferences> {
  readonly #aws: AwsClientSource;
  readonly #tagPolicy: TagPolicy;
  readonly #snapshots: TagSnapshots | undefined;

  constructor(opts: SqsQueueDriverOptions) {
    this.#snapshots = opts.tagSnapshots;
    this.#aws = opts.aws;
    this.#tagPolicy = opts.tagPolicy ?? DEFAULT_TAG_POLICY;
  }

  async observe(obj: SqsQueueObject, ctx: DriverContext): Promise<Observation<SqsQueueView>> {
    const sqs = await this.#aws.client("sqs", obj.spec.region);
    const view = await this.#find(sqs, obj, ctx);
    if (view === undefined) return { exists: false };
    return { exists: true, resource: view, ...verdictOf(view.tags, obj) };
  }

  /**
   * SQS has no idempotency token: `token` is only recorded by the flow. Uniqueness comes from the
   * queue name, and ownership from the tags written atomically with the queue. `resolved`: the
   * spec's references (./references.ts).
   */
  async create(
    obj: SqsQueueObject,
    _token: string,
    ctx: DriverContext,
    resolved: ResolvedReferences,
  ): Promise<SqsQueueView> {
    const { spec } = obj;
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
      const late = attributesAfterCreate(spec, resolved, view.arn);
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

  /** What {@link create} calls for `obj` with the references `resolved` (see {@link createActionsFor}). */
  createActions(obj: SqsQueueObject, resolved: ResolvedReferences): readonly string[] {
    return createActionsFor(obj.spec, resolved);
  }

  /**
   * The queue's attribute and tag differences; for a queue being adopted, its ownership tags.
   * The tag changes come first: a policy confined to queues carrying the managed-by tag
   * (config/iam/policy-tag-scoped.json) allows SetQueueAttributes on an adopted queue only once
   * the tag is on it. Tags taken from a bulk read are read again directly before the plan
   * reports a change, so a stale snapshot never causes a write. `resolved`: the spec's
   * references (./references.ts), to which the plan adds the queue's own ARN.
   */
  async plan(
    obj: SqsQueueObject,
    observed: Observation<SqsQueueView> & { exists: true },
    ctx: DriverContext,
    resolved: ResolvedReferences,
  ): Promise<ChangeSet> {
    let queue = observed.resource;
    const drift = attributeDrift(obj.spec, queue.attributes, {
      ...resolved,
      queueArn: queue.arn !== "" ? queue.arn : undefined,
    });
    const desiredTags = desiredTagsOf(obj, SqsQueueResource.kind, this.#tagPolicy);
    const tagOpts = { actions: { set: SqsAction.TagQueue, remove: SqsAction.UntagQueue } };
    let tags = tagChanges(desiredTags, queue.tags, this.#tagPolicy, tagOpts);
    if (queue.tagsFromSnapshot === true && (drift.length > 0 || tags.length > 0)) {
      queue = await this.#rereadTags(await this.#aws.client("sqs", obj.spec.region), obj, queue, ctx);
      tags = tagChanges(desiredTags, queue.tags, this.#tagPolicy, tagOpts);
    }
    // The apply step sets, for each change it is given, the attribute value this plan found.
    const attributes = drift.map(attributeChange);
    const byPath = new Map(drift.map((d, i) => [attributes[i]?.path, d]));
    const target = queue;
    const attributesOf = (changes: readonly Change[]): AttributeChange[] =>
      changes.map((c) => byPath.get(c.path) ?? notPlanned(c));
    return changeSetOf([
      [tags, (changes, actx) => this.#applyTags(obj, target, changes, actx)],
      [attributes, (changes, actx) => this.#applyAttributes(obj, target, attributesOf(changes), actx)],
    ]);
  }

  /** Writes the tag `changes` of a plan onto `queue`: TagQueue for what they set, then UntagQueue. */
  async #applyTags(
    obj: SqsQueueObject,
    queue: SqsQueueView,
    changes: readonly Change[],
    ctx: DriverContext,
  ): Promise<void> {
    const sqs = await this.#aws.client("sqs", obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    const noteWrite = (): void => {
      if (queue.arn !== "") this.#snapshots?.noteWrite(queue.arn);
    };
    await applyTagChanges(changes, queue.tags, {
      set: async (set) => {
        noteWrite();
        await sqs.send(new TagQueueCommand({ QueueUrl: queue.url, Tags: toSqsTags(set) }), opts);
      },
      remove: async (keys) => {
        noteWrite();
        await sqs.send(new UntagQueueCommand({ QueueUrl: queue.url, TagKeys: [...keys] }), opts);
      },
    });
    ctx.logger.info({ queueUrl: queue.url, changes: changes.map((c) => c.path) }, "updated SQS queue tags");
  }

  /** Sets the attributes of a plan's attribute changes on `queue`, with one SetQueueAttributes call. */
  async #applyAttributes(
    obj: SqsQueueObject,
    queue: SqsQueueView,
    attrs: readonly AttributeChange[],
    ctx: DriverContext,
  ): Promise<void> {
    const sqs = await this.#aws.client("sqs", obj.spec.region);
    const input = { QueueUrl: queue.url, Attributes: attributeUpdate(attrs) };
    await sqs.send(new SetQueueAttributesCommand(input), { abortSignal: ctx.signal });
    ctx.logger.info(
      { queueUrl: queue.url, attributes: attrs.map((a) => a.name) },
      "updated SQS queue attributes",
    );
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
    const recorded = recordedIdOf(obj, SQS_QUEUE_TRAITS.idField);
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
   * For a plan with changes of a queue whose tags came from the snapshot: its tags read directly.
   * The plan then works from them, so a stale snapshot never causes a wrong write.
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

/** @throws Error for a change that is not one of the plan's attribute changes. */
function notPlanned(c: Change): never {
  throw new Error(`${c.path} is not an attribute change of this plan`);
}
