/**
 * The pure half of the SqsQueue driver: which queue attributes the spec asks for, how they
 * differ from what SQS reports, and the change of a plan each difference is. No I/O here, so
 * every rule is unit-tested without a network.
 */
import { isDeepStrictEqual } from "node:util";
import type { JsonValue } from "../../api/schema/openapi.ts";
import { sqsQueueSpecSchema, type SqsQueue, type SqsQueueSpec } from "../../api/v1/index.ts";
import type { ManagedObject } from "../common/managed-object.ts";
import { partitionOf } from "../../aws/partition.ts";
import type { Change } from "../common/changes.ts";
import { TAGS_SETTING } from "../common/driver.ts";

/** An SqsQueue as the flow hands it over. */
export type SqsQueueObject = SqsQueue & ManagedObject;

/** SQS attribute names the operator reads or writes, spelled as the API spells them. */
export const SqsAttribute = {
  VisibilityTimeout: "VisibilityTimeout",
  MessageRetentionPeriod: "MessageRetentionPeriod",
  DelaySeconds: "DelaySeconds",
  ReceiveMessageWaitTimeSeconds: "ReceiveMessageWaitTimeSeconds",
  MaximumMessageSize: "MaximumMessageSize",
  ContentBasedDeduplication: "ContentBasedDeduplication",
  DeduplicationScope: "DeduplicationScope",
  FifoThroughputLimit: "FifoThroughputLimit",
  SqsManagedSseEnabled: "SqsManagedSseEnabled",
  KmsMasterKeyId: "KmsMasterKeyId",
  KmsDataKeyReusePeriodSeconds: "KmsDataKeyReusePeriodSeconds",
  Policy: "Policy",
  RedrivePolicy: "RedrivePolicy",
  RedriveAllowPolicy: "RedriveAllowPolicy",
  FifoQueue: "FifoQueue",
  QueueArn: "QueueArn",
  /** When SQS created the queue (epoch seconds): tells a queue recreated under the same ARN. */
  CreatedTimestamp: "CreatedTimestamp",
} as const;

/** The IAM actions of the SQS calls that change a queue, as the kind's `iam` table names them. */
export const SqsAction = {
  CreateQueue: "sqs:CreateQueue",
  SetQueueAttributes: "sqs:SetQueueAttributes",
  TagQueue: "sqs:TagQueue",
  UntagQueue: "sqs:UntagQueue",
} as const;

/** The apply group of the attribute changes: SQS takes them all in one `SetQueueAttributes` call. */
export const ATTRIBUTES_GROUP = "attributes";

/** The spec fields the operator keeps in line with the queue's attributes. */
export type ManagedAttributeSpec = Pick<
  SqsQueueSpec,
  "visibilityTimeoutSeconds" | "messageRetentionSeconds"
> &
  Partial<
    Pick<
      SqsQueueSpec,
      | "delaySeconds"
      | "receiveWaitTimeSeconds"
      | "maximumMessageSize"
      | "contentBasedDeduplication"
      | "deduplicationScope"
      | "fifoThroughputLimit"
      | "encryption"
      | "policy"
      | "deadLetterQueue"
      | "redriveAllowPolicy"
      | "allowS3Notifications"
    >
  >;

/** How SQS's string value of an attribute compares with the desired one. */
type Comparison = "number" | "boolean" | "string" | "json";

/**
 * Each managed attribute: the spec field behind it (the setting a change of it is counted
 * under), the spec path its changes name, and how its value compares.
 */
const ATTRIBUTES: Readonly<
  Record<string, { setting: keyof ManagedAttributeSpec; path: string; compare: Comparison }>
> = Object.freeze({
  [SqsAttribute.VisibilityTimeout]: {
    setting: "visibilityTimeoutSeconds",
    path: "spec.visibilityTimeoutSeconds",
    compare: "number",
  },
  [SqsAttribute.MessageRetentionPeriod]: {
    setting: "messageRetentionSeconds",
    path: "spec.messageRetentionSeconds",
    compare: "number",
  },
  [SqsAttribute.DelaySeconds]: { setting: "delaySeconds", path: "spec.delaySeconds", compare: "number" },
  [SqsAttribute.ReceiveMessageWaitTimeSeconds]: {
    setting: "receiveWaitTimeSeconds",
    path: "spec.receiveWaitTimeSeconds",
    compare: "number",
  },
  [SqsAttribute.MaximumMessageSize]: {
    setting: "maximumMessageSize",
    path: "spec.maximumMessageSize",
    compare: "number",
  },
  [SqsAttribute.ContentBasedDeduplication]: {
    setting: "contentBasedDeduplication",
    path: "spec.contentBasedDeduplication",
    compare: "boolean",
  },
  [SqsAttribute.DeduplicationScope]: {
    setting: "deduplicationScope",
    path: "spec.deduplicationScope",
    compare: "string",
  },
  [SqsAttribute.FifoThroughputLimit]: {
    setting: "fifoThroughputLimit",
    path: "spec.fifoThroughputLimit",
    compare: "string",
  },
  [SqsAttribute.SqsManagedSseEnabled]: {
    setting: "encryption",
    path: "spec.encryption.sqsManaged",
    compare: "boolean",
  },
  [SqsAttribute.KmsMasterKeyId]: {
    setting: "encryption",
    path: "spec.encryption.kmsKeyId",
    compare: "string",
  },
  [SqsAttribute.KmsDataKeyReusePeriodSeconds]: {
    setting: "encryption",
    path: "spec.encryption.dataKeyReusePeriodSeconds",
    compare: "number",
  },
  // The queue's whole policy document: spec.policy with the statements of allowS3Notifications.
  [SqsAttribute.Policy]: { setting: "policy", path: "spec.policy", compare: "json" },
  [SqsAttribute.RedrivePolicy]: { setting: "deadLetterQueue", path: "spec.deadLetterQueue", compare: "json" },
  [SqsAttribute.RedriveAllowPolicy]: {
    setting: "redriveAllowPolicy",
    path: "spec.redriveAllowPolicy",
    compare: "json",
  },
});

/** Every setting a change of an SqsQueue plan belongs to. */
export const SQS_DRIFT_SETTINGS: readonly string[] = Object.freeze([
  ...new Set(Object.values(ATTRIBUTES).map((a) => a.setting)),
  TAGS_SETTING,
]);

/**
 * What the spec's references resolve to (./references.ts): the ARN of a dead-letter queue named
 * by queueRef; the buckets spec.allowS3Notifications names; the source queues
 * redriveAllowPolicy.sourceQueueRefs names, in its order; and, added by the driver, this queue's
 * own ARN (the grants' Resource, and the account of a source queue not created yet; not known
 * before CreateQueue answers).
 */
export interface ResolvedReferences {
  deadLetterTargetArn?: string | undefined;
  s3NotificationSources?: readonly S3NotificationSource[] | undefined;
  redriveSources?: readonly RedriveSource[] | undefined;
  queueArn?: string | undefined;
}

/**
 * A source queue of the redrive allow policy named by queueRef: its ARN, or, for a queue that
 * waits for this one to be created (it names this queue as its dead-letter queue), its region
 * and name, whose ARN is the one it gets in this queue's account.
 */
export type RedriveSource =
  { readonly arn: string } | { readonly queueName: string; readonly region: string };

/** A bucket allowed to send event notifications to the queue. */
export interface S3NotificationSource {
  readonly bucketName: string;
  readonly bucketArn: string;
}

/** The Sid of the policy statement that lets bucket `bucketName` send notifications. */
export function s3NotificationSid(bucketName: string): string {
  return `s3-notifications-${bucketName}`;
}

/**
 * The queue policy the spec manages: spec.policy (or an empty 2012-10-17 policy) with one
 * statement per allowed bucket appended, sorted by bucket name: s3.amazonaws.com may
 * sqs:SendMessage to this queue when the request's aws:SourceArn is that bucket.
 */
export function queuePolicy(
  policy: SqsQueueSpec["policy"],
  queueArn: string,
  sources: readonly S3NotificationSource[],
): Record<string, unknown> {
  const grants = [...sources]
    .sort((a, b) => (a.bucketName < b.bucketName ? -1 : a.bucketName > b.bucketName ? 1 : 0))
    .map((b) => s3NotificationStatement(queueArn, b));
  const base = policy ?? EMPTY_POLICY;
  return { ...base, Statement: [...base.Statement, ...grants] };
}

/** The policy {@link queuePolicy} starts from when the spec sets none. */
const EMPTY_POLICY = Object.freeze({ Version: "2012-10-17", Statement: [] });

/** The statement of {@link queuePolicy} that lets bucket `b` send notifications to queue `queueArn`. */
function s3NotificationStatement(queueArn: string, b: S3NotificationSource): Record<string, unknown> {
  return {
    Sid: s3NotificationSid(b.bucketName),
    Effect: "Allow",
    Principal: { Service: "s3.amazonaws.com" },
    Action: "sqs:SendMessage",
    Resource: queueArn,
    Condition: { ArnEquals: { "aws:SourceArn": b.bucketArn } },
  };
}

/**
 * The inverse of {@link queuePolicy}: `document` (a queue's policy, parsed) split into the
 * spec.policy and the buckets whose statements queuePolicy would append to it, so that
 * `queuePolicy(policy, queueArn, sources)` gives `document` back. The buckets are the statements
 * at the end of the document that are exactly such grants, in ascending bucket name, and whose
 * bucket ARN `accept` takes (the longest such run). None when taking them would leave a policy
 * queuePolicy cannot extend to `document` (an empty one with more than the default Version, a Sid
 * of theirs used again): the document is then spec.policy whole.
 */
export function splitQueuePolicy(
  document: { readonly Statement: readonly unknown[] } & Readonly<Record<string, unknown>>,
  queueArn: string,
  accept: (bucketArn: string) => boolean,
): { policy: Record<string, unknown> | undefined; sources: S3NotificationSource[] } {
  const whole = { policy: { ...document }, sources: [] };
  const statements = document.Statement;
  const sources: S3NotificationSource[] = [];
  for (let i = statements.length - 1; i >= 0; i--) {
    const source = s3NotificationSourceOf(statements[i], queueArn);
    const next = sources[0];
    if (source === undefined || !accept(source.bucketArn)) break;
    if (next !== undefined && !(source.bucketName < next.bucketName)) break;
    sources.unshift(source);
  }
  if (sources.length === 0) return whole;
  const rest = statements.slice(0, statements.length - sources.length);
  const sids = new Set(sources.map((s) => s3NotificationSid(s.bucketName)));
  if (rest.some((st) => sids.has(String((st as { Sid?: unknown } | null)?.Sid)))) return whole;
  if (rest.length > 0) return { policy: { ...document, Statement: rest }, sources };
  const { Statement: _none, ...top } = document;
  const { Statement: _empty, ...emptyTop } = EMPTY_POLICY;
  return isDeepStrictEqual(top, emptyTop) ? { policy: undefined, sources } : whole;
}

/** The bucket `statement` lets send notifications to `queueArn` as {@link queuePolicy} writes it, if it is such a grant. */
function s3NotificationSourceOf(statement: unknown, queueArn: string): S3NotificationSource | undefined {
  const st = statement as { Condition?: { ArnEquals?: Record<string, unknown> } } | null;
  const bucketArn = st?.Condition?.ArnEquals?.["aws:SourceArn"];
  if (typeof bucketArn !== "string") return undefined;
  const bucketName = /^arn:[a-z-]+:s3:::([^/]+)$/.exec(bucketArn)?.[1];
  if (bucketName === undefined) return undefined;
  const source = { bucketName, bucketArn };
  return isDeepStrictEqual(statement, s3NotificationStatement(queueArn, source)) ? source : undefined;
}

/**
 * The mutable attributes the spec asks for, as `SetQueueAttributes` takes them (strings; the
 * policies as JSON). Fields the spec leaves unset are not managed and do not appear. Keys come
 * out in a fixed order, so equal specs give deep-equal maps.
 */
export function managedAttributes(
  spec: ManagedAttributeSpec,
  resolved: ResolvedReferences = {},
): Record<string, string> {
  const out: Record<string, string> = {
    [SqsAttribute.VisibilityTimeout]: String(spec.visibilityTimeoutSeconds),
    [SqsAttribute.MessageRetentionPeriod]: String(spec.messageRetentionSeconds),
  };
  if (spec.delaySeconds !== undefined) out[SqsAttribute.DelaySeconds] = String(spec.delaySeconds);
  if (spec.receiveWaitTimeSeconds !== undefined)
    out[SqsAttribute.ReceiveMessageWaitTimeSeconds] = String(spec.receiveWaitTimeSeconds);
  if (spec.maximumMessageSize !== undefined)
    out[SqsAttribute.MaximumMessageSize] = String(spec.maximumMessageSize);
  if (spec.contentBasedDeduplication !== undefined)
    out[SqsAttribute.ContentBasedDeduplication] = String(spec.contentBasedDeduplication);
  if (spec.deduplicationScope !== undefined) out[SqsAttribute.DeduplicationScope] = spec.deduplicationScope;
  if (spec.fifoThroughputLimit !== undefined)
    out[SqsAttribute.FifoThroughputLimit] = spec.fifoThroughputLimit;
  const enc = spec.encryption;
  if (enc?.kmsKeyId !== undefined) {
    out[SqsAttribute.KmsMasterKeyId] = enc.kmsKeyId;
    if (enc.dataKeyReusePeriodSeconds !== undefined)
      out[SqsAttribute.KmsDataKeyReusePeriodSeconds] = String(enc.dataKeyReusePeriodSeconds);
  } else if (enc?.sqsManaged === true) {
    out[SqsAttribute.SqsManagedSseEnabled] = "true";
  }
  if (spec.allowS3Notifications !== undefined) {
    const sources = resolved.s3NotificationSources;
    if (sources === undefined) throw new Error("allowS3Notifications was not resolved to bucket ARNs");
    // Before CreateQueue answers, the queue's ARN (the grants' Resource) is unknown: the create
    // path sets the policy right after.
    if (resolved.queueArn !== undefined)
      out[SqsAttribute.Policy] = JSON.stringify(queuePolicy(spec.policy, resolved.queueArn, sources));
  } else if (spec.policy !== undefined) out[SqsAttribute.Policy] = JSON.stringify(spec.policy);
  const allow = spec.redriveAllowPolicy;
  if (allow !== undefined) {
    const policy = redriveAllowPolicy(allow, resolved);
    // A source queue not created yet is named by an ARN in this queue's account, known once
    // CreateQueue answers: the create path sets the policy right after.
    if (policy !== undefined) out[SqsAttribute.RedriveAllowPolicy] = JSON.stringify(policy);
  }
  const dlq = spec.deadLetterQueue;
  if (dlq !== undefined) {
    const arn = dlq.targetArn ?? resolved.deadLetterTargetArn;
    if (arn === undefined) throw new Error("deadLetterQueue.queueRef was not resolved to an ARN");
    out[SqsAttribute.RedrivePolicy] = JSON.stringify({
      deadLetterTargetArn: arn,
      maxReceiveCount: dlq.maxReceiveCount,
    });
  }
  return out;
}

/**
 * The RedriveAllowPolicy attribute for `allow`, as SQS takes it: `{redrivePermission}`, with
 * byQueue the `sourceQueueArns` of both lists, sorted; undefined while a source queue's ARN needs
 * this queue's own, which is not known yet.
 * @throws Error when sourceQueueRefs were not resolved (the flow resolves them first:
 * ./references.ts).
 */
function redriveAllowPolicy(
  allow: NonNullable<SqsQueueSpec["redriveAllowPolicy"]>,
  resolved: ResolvedReferences,
): { redrivePermission: string; sourceQueueArns?: string[] } | undefined {
  if (allow.redrivePermission !== "byQueue") return { redrivePermission: allow.redrivePermission };
  const refs = allow.sourceQueueRefs ?? [];
  const sources = resolved.redriveSources;
  if (refs.length > 0 && sources?.length !== refs.length)
    throw new Error("redriveAllowPolicy.sourceQueueRefs were not resolved to ARNs");
  const arns: string[] = [...(allow.sourceQueueArns ?? [])];
  for (const source of sources ?? []) {
    if ("arn" in source) arns.push(source.arn);
    else if (resolved.queueArn === undefined) return undefined;
    else arns.push(arnInAccountOf(resolved.queueArn, source.region, source.queueName));
  }
  return { redrivePermission: "byQueue", sourceQueueArns: [...new Set(arns)].sort() };
}

/** The ARN of queue `queueName` in `region`, in the partition and account of the queue `queueArn`. */
function arnInAccountOf(queueArn: string, region: string, queueName: string): string {
  const [, partition = "aws", , , account = ""] = queueArn.split(":");
  return `arn:${partition}:sqs:${region}:${account}:${queueName}`;
}

/**
 * Whether SQS's value `actual` of attribute `name` equals the desired `want`: as the spec's
 * values ({@link specValue}), so numbers compare as numbers, switches without case, policies as
 * JSON values.
 */
function sameValue(name: string, actual: string, want: string): boolean {
  return isDeepStrictEqual(specValue(name, actual), specValue(name, want));
}

/** `text` as a number when it is one (`"030"` is 30); undefined when it is blank or not a number. */
function numberOf(text: string): number | undefined {
  const n = Number(text);
  return text.trim() !== "" && Number.isFinite(n) ? n : undefined;
}

/**
 * SQS's string value of attribute `name` as the spec writes the setting: a number, a boolean
 * (SQS's `true`/`false` in upper or lower case), a string, or a JSON value for the policies. A value of
 * another shape stays the string SQS reported.
 *
 * References are shown resolved, as SQS knows them, so that an observed and a desired value
 * compare field by field: a redrive policy is `{targetArn, maxReceiveCount}` (for a
 * deadLetterQueue.queueRef, the dead-letter queue's ARN as targetArn), with maxReceiveCount a
 * number (SQS reports either); a redrive allow policy is `{redrivePermission, sourceQueueArns}`,
 * the ARNs of sourceQueueRefs and sourceQueueArns together, sorted (a set to SQS); the queue
 * policy is the whole document, the statements of allowS3Notifications included.
 */
export function specValue(name: string, text: string): JsonValue {
  switch (ATTRIBUTES[name]?.compare ?? "string") {
    case "number":
      return numberOf(text) ?? text;
    case "boolean":
      return booleanOf(text) ?? text;
    case "string":
      return text;
    case "json":
      return jsonValue(name, text);
  }
}

/** A policy attribute as a JSON value, the redrive policies in the spec's shape (see {@link specValue}). */
function jsonValue(name: string, text: string): JsonValue {
  let v: JsonValue;
  try {
    v = JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  if (name === SqsAttribute.RedrivePolicy) {
    const { deadLetterTargetArn, maxReceiveCount, ...rest } = v;
    const count = typeof maxReceiveCount === "string" ? numberOf(maxReceiveCount) : undefined;
    return {
      ...(deadLetterTargetArn !== undefined ? { targetArn: deadLetterTargetArn } : {}),
      ...(maxReceiveCount !== undefined ? { maxReceiveCount: count ?? maxReceiveCount } : {}),
      ...rest,
    };
  }
  const arns = v.sourceQueueArns;
  if (name === SqsAttribute.RedriveAllowPolicy && Array.isArray(arns))
    return { ...v, sourceQueueArns: arns.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).sort() };
  return v;
}

/** The settings of a queue whose attributes name no other resource. */
export type PlainSettings = Pick<SqsQueueSpec, "fifo"> &
  Omit<ManagedAttributeSpec, "policy" | "deadLetterQueue" | "redriveAllowPolicy" | "allowS3Notifications">;

/**
 * The inverse of {@link managedAttributes} (and of createAttributes' `FifoQueue`) for the
 * settings that name no other resource: the spec that asks for the `attributes` a queue reports
 * (`GetQueueAttributes`), every one it reports set. The FIFO settings are read for a FIFO queue
 * only (the spec allows them nowhere else); encryption is set when the queue is encrypted.
 * `unreadable`: the spec paths of values of another shape than the spec's, left out (a required
 * one at its CRD default).
 */
export function settingsOfAttributes(attributes: Readonly<Record<string, string>>): {
  spec: PlainSettings;
  unreadable: string[];
} {
  const unreadable: string[] = [];
  const value = (name: string): JsonValue | undefined => {
    const text = attributes[name];
    if (text === undefined) return undefined;
    const v = specValue(name, text);
    const a = ATTRIBUTES[name];
    const fits =
      a?.compare === "number"
        ? Number.isInteger(v)
        : a?.compare === "boolean"
          ? typeof v === "boolean"
          : typeof v === "string" && (enumOf(a?.setting)?.includes(v) ?? true);
    if (fits) return v;
    unreadable.push(a?.path ?? name);
    return undefined;
  };
  const int = (name: string): number | undefined => value(name) as number | undefined;
  const fifo = booleanOf(attributes[SqsAttribute.FifoQueue]) === true;
  const spec: PlainSettings = {
    fifo,
    visibilityTimeoutSeconds: int(SqsAttribute.VisibilityTimeout) ?? 30,
    messageRetentionSeconds: int(SqsAttribute.MessageRetentionPeriod) ?? 345600,
  };
  const delay = int(SqsAttribute.DelaySeconds);
  if (delay !== undefined) spec.delaySeconds = delay;
  const wait = int(SqsAttribute.ReceiveMessageWaitTimeSeconds);
  if (wait !== undefined) spec.receiveWaitTimeSeconds = wait;
  const size = int(SqsAttribute.MaximumMessageSize);
  if (size !== undefined) spec.maximumMessageSize = size;
  if (fifo) {
    const cbd = value(SqsAttribute.ContentBasedDeduplication);
    if (typeof cbd === "boolean") spec.contentBasedDeduplication = cbd;
    const scope = value(SqsAttribute.DeduplicationScope);
    if (scope !== undefined) spec.deduplicationScope = scope as PlainSettings["deduplicationScope"];
    const limit = value(SqsAttribute.FifoThroughputLimit);
    if (limit !== undefined) spec.fifoThroughputLimit = limit as PlainSettings["fifoThroughputLimit"];
  }
  const kmsKeyId = attributes[SqsAttribute.KmsMasterKeyId];
  if (kmsKeyId !== undefined && kmsKeyId !== "") {
    const reuse = int(SqsAttribute.KmsDataKeyReusePeriodSeconds);
    spec.encryption = { kmsKeyId, ...(reuse !== undefined ? { dataKeyReusePeriodSeconds: reuse } : {}) };
  } else if (value(SqsAttribute.SqsManagedSseEnabled) === true) spec.encryption = { sqsManaged: true };
  return { spec, unreadable };
}

/** The values the CRD allows for spec field `field`, when it is an enum. */
function enumOf(field: string | undefined): readonly JsonValue[] | undefined {
  return field === undefined ? undefined : sqsQueueSpecSchema.node.properties?.[field]?.enum;
}

/** SQS's `true`/`false` (either case) as a boolean; undefined for anything else. */
function booleanOf(text: string | undefined): boolean | undefined {
  const t = text?.trim().toLowerCase();
  return t === "true" ? true : t === "false" ? false : undefined;
}

/**
 * The `Attributes` of a `CreateQueue` request: the managed attributes plus `FifoQueue: "true"`
 * for a FIFO queue. `FifoQueue` is omitted for a standard queue because SQS rejects
 * `FifoQueue=false` on create.
 */
export function createAttributes(
  spec: ManagedAttributeSpec & Pick<SqsQueueSpec, "fifo">,
  resolved: ResolvedReferences = {},
): Record<string, string> {
  return {
    ...(spec.fifo ? { [SqsAttribute.FifoQueue]: "true" } : {}),
    ...managedAttributes(spec, resolved),
  };
}

/**
 * The attributes of `spec` that name the queue's own ARN (the S3 notification grants' Resource,
 * a redrive source queue that waits for this one), which `CreateQueue` therefore cannot take: the
 * create path sets them with one `SetQueueAttributes` call once CreateQueue answers with
 * `queueArn`. `resolved` as before the create (no `queueArn`). Empty when CreateQueue sets
 * everything.
 */
export function attributesAfterCreate(
  spec: ManagedAttributeSpec & Pick<SqsQueueSpec, "fifo">,
  resolved: ResolvedReferences,
  queueArn: string,
): Record<string, string> {
  const sent = createAttributes(spec, { ...resolved, queueArn: undefined });
  return Object.fromEntries(
    Object.entries(managedAttributes(spec, { ...resolved, queueArn })).filter(([name]) => !(name in sent)),
  );
}

/**
 * The IAM actions creating a queue for `spec` calls, in call order: `CreateQueue`, which SQS
 * authorizes as sqs:TagQueue too since it carries the operator's tags, and the
 * `SetQueueAttributes` of {@link attributesAfterCreate} when there is one. `resolved` as before
 * the create.
 */
export function createActionsFor(
  spec: ManagedAttributeSpec & Pick<SqsQueueSpec, "fifo" | "queueName" | "region">,
  resolved: ResolvedReferences,
): string[] {
  // Which attributes wait for the ARN does not depend on its value; the account is not known yet.
  const arn = `arn:${partitionOf(spec.region)}:sqs:${spec.region}:000000000000:${spec.queueName}`;
  const after = Object.keys(attributesAfterCreate(spec, resolved, arn)).length > 0;
  return [SqsAction.CreateQueue, SqsAction.TagQueue, ...(after ? [SqsAction.SetQueueAttributes] : [])];
}

/** One managed attribute whose value in SQS differs from the spec. */
export interface AttributeChange {
  readonly name: string;
  /** The value SQS reported, or undefined when it reported none. */
  readonly from: string | undefined;
  readonly to: string;
}

/**
 * The managed attributes that differ between the spec and `actual` (as `GetQueueAttributes`
 * reports them). Numbers compare as numbers (`"030"` equals `"30"`), switches without case,
 * policies as JSON values; attributes the operator does not manage are ignored. Empty when the
 * queue is in sync.
 */
export function attributeDrift(
  spec: ManagedAttributeSpec,
  actual: Readonly<Record<string, string | undefined>>,
  resolved: ResolvedReferences = {},
): AttributeChange[] {
  const changes: AttributeChange[] = [];
  for (const [name, to] of Object.entries(managedAttributes(spec, resolved))) {
    const from = actual[name];
    if (from === undefined || !sameValue(name, from, to)) changes.push({ name, from, to });
  }
  return changes;
}

/** `SetQueueAttributes` input for `changes` (empty when nothing changes). */
export function attributeUpdate(changes: readonly AttributeChange[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of changes) out[c.name] = c.to;
  return out;
}

/**
 * The change of a plan that sets attribute `c.name` (apply group {@link ATTRIBUTES_GROUP}): at the
 * spec path the attribute comes from (`spec.visibilityTimeoutSeconds`, `spec.deadLetterQueue`,
 * `spec.encryption.kmsKeyId`), the values as {@link specValue} shows them, described as the
 * attribute with its old and new value (a policy is named, not printed). Tag changes are
 * ../common/tags.ts's.
 */
export function attributeChange(c: AttributeChange): Change {
  const a = ATTRIBUTES[c.name];
  return {
    path: a?.path ?? c.name,
    setting: a?.setting ?? c.name,
    ...(c.from !== undefined ? { observed: specValue(c.name, c.from) } : {}),
    desired: specValue(c.name, c.to),
    actions: [SqsAction.SetQueueAttributes],
    disruption: "none",
    description: describeAttribute(c),
    group: ATTRIBUTES_GROUP,
  };
}

/** One attribute change for the Updated Event; policies are named, not printed. */
function describeAttribute(c: AttributeChange): string {
  if (ATTRIBUTES[c.name]?.compare === "json") return `${c.name} updated`;
  return `${c.name} ${c.from ?? "unset"} -> ${c.to}`;
}

/**
 * The queue name at the end of a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`),
 * or undefined when `url` is not a URL with a path.
 */
export function queueNameOfUrl(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const last = path
    .split("/")
    .filter((s) => s.length > 0)
    .pop();
  if (last === undefined) return undefined;
  try {
    return decodeURIComponent(last);
  } catch {
    return undefined;
  }
}

/**
 * The attributes an observe-only queue reports: all SQS returned but the `Approximate*` message
 * counters, which move with traffic (a status write per poll), and the ARN, which status holds
 * already. Keys sorted.
 */
export function observedAttributes(attributes: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(attributes)
      .filter(([k]) => !k.startsWith("Approximate") && k !== SqsAttribute.QueueArn)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * The ARN of the queue at `url` in `region`, from the URL's account and name
 * (`https://sqs.<region>.amazonaws.com/<account>/<name>` is `arn:<partition>:sqs:<region>:<account>:<name>`),
 * or undefined when the URL does not end in those two segments.
 */
export function queueArnOfUrl(url: string, region: string): string | undefined {
  let segments: string[];
  try {
    segments = new URL(url).pathname.split("/").filter((s) => s.length > 0);
  } catch {
    return undefined;
  }
  const [account, encodedName, ...rest] = segments;
  if (account === undefined || !/^\d{12}$/.test(account) || rest.length > 0) return undefined;
  const name = queueNameOfUrl(url);
  if (name === undefined || encodedName === undefined) return undefined;
  return `arn:${partitionOf(region)}:sqs:${region}:${account}:${name}`;
}
