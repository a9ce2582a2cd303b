/**
 * The pure half of the SqsQueue driver: which queue attributes the spec asks for, how they
 * differ from what SQS reports, and how a difference is described. No I/O here, so every
 * rule is unit-tested without a network.
 */
import { isDeepStrictEqual } from "node:util";
import type { SqsQueueSpec } from "../../api/v1/index.ts";
import { partitionOf } from "../../aws/partition.ts";
import { TAGS_SETTING, type DriftRepair } from "../common/driver.ts";

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

/** Each managed attribute: the spec field behind it (the setting a repair is counted under) and how it compares. */
const ATTRIBUTES: Readonly<Record<string, { setting: keyof ManagedAttributeSpec; compare: Comparison }>> =
  Object.freeze({
    [SqsAttribute.VisibilityTimeout]: { setting: "visibilityTimeoutSeconds", compare: "number" },
    [SqsAttribute.MessageRetentionPeriod]: { setting: "messageRetentionSeconds", compare: "number" },
    [SqsAttribute.DelaySeconds]: { setting: "delaySeconds", compare: "number" },
    [SqsAttribute.ReceiveMessageWaitTimeSeconds]: { setting: "receiveWaitTimeSeconds", compare: "number" },
    [SqsAttribute.MaximumMessageSize]: { setting: "maximumMessageSize", compare: "number" },
    [SqsAttribute.ContentBasedDeduplication]: { setting: "contentBasedDeduplication", compare: "boolean" },
    [SqsAttribute.DeduplicationScope]: { setting: "deduplicationScope", compare: "string" },
    [SqsAttribute.FifoThroughputLimit]: { setting: "fifoThroughputLimit", compare: "string" },
    [SqsAttribute.SqsManagedSseEnabled]: { setting: "encryption", compare: "boolean" },
    [SqsAttribute.KmsMasterKeyId]: { setting: "encryption", compare: "string" },
    [SqsAttribute.KmsDataKeyReusePeriodSeconds]: { setting: "encryption", compare: "number" },
    [SqsAttribute.Policy]: { setting: "policy", compare: "json" },
    [SqsAttribute.RedrivePolicy]: { setting: "deadLetterQueue", compare: "json" },
    [SqsAttribute.RedriveAllowPolicy]: { setting: "redriveAllowPolicy", compare: "json" },
  });

/** The spec field behind each managed attribute: the setting a repair of it is counted under. */
export const ATTRIBUTE_SETTINGS: Readonly<Record<string, keyof ManagedAttributeSpec>> = Object.freeze(
  Object.fromEntries(Object.entries(ATTRIBUTES).map(([name, a]) => [name, a.setting])),
);

/** Every setting the SqsQueue driver repairs. */
export const SQS_DRIFT_SETTINGS: readonly string[] = Object.freeze([
  ...new Set(Object.values(ATTRIBUTE_SETTINGS)),
  TAGS_SETTING,
]);

/**
 * What the driver resolved for the spec: the ARN of a dead-letter queue named by queueRef; the
 * buckets spec.allowS3Notifications names; the source queues redriveAllowPolicy.sourceQueueRefs
 * names, in its order; and this queue's own ARN (the grants' Resource, and the account of a
 * source queue not created yet; not known before CreateQueue answers).
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
    .map((b) => ({
      Sid: s3NotificationSid(b.bucketName),
      Effect: "Allow",
      Principal: { Service: "s3.amazonaws.com" },
      Action: "sqs:SendMessage",
      Resource: queueArn,
      Condition: { ArnEquals: { "aws:SourceArn": b.bucketArn } },
    }));
  const base = policy ?? { Version: "2012-10-17", Statement: [] };
  return { ...base, Statement: [...base.Statement, ...grants] };
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
 * @throws Error when sourceQueueRefs were not resolved (the driver resolves them first).
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

/** Whether SQS's value `actual` of attribute `name` equals the desired `want`. */
function sameValue(name: string, actual: string, want: string): boolean {
  switch (ATTRIBUTES[name]?.compare ?? "string") {
    case "number":
      return actual.trim() !== "" && Number(actual) === Number(want);
    case "boolean":
      return actual.trim().toLowerCase() === want.toLowerCase();
    case "string":
      return actual === want;
    case "json":
      return isDeepStrictEqual(normalJson(name, actual), normalJson(name, want));
  }
}

/**
 * A policy attribute as a JSON value; a redrive policy's maxReceiveCount as a number (SQS reports
 * either); a redrive allow policy's sourceQueueArns sorted (a set to SQS).
 */
function normalJson(name: string, text: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof v !== "object" || v === null) return v;
  const r = v as Record<string, unknown>;
  if (name === SqsAttribute.RedrivePolicy) return { ...r, maxReceiveCount: Number(r.maxReceiveCount) };
  if (name === SqsAttribute.RedriveAllowPolicy && Array.isArray(r.sourceQueueArns))
    return { ...r, sourceQueueArns: [...(r.sourceQueueArns as unknown[])].map(String).sort() };
  return v;
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
 * Short, stable descriptions of the attribute changes made (for the Updated Event): attribute
 * names with old and new values. Tag changes are worded by ../common/tags.ts.
 */
export function describeAttributeChanges(attrs: readonly AttributeChange[]): DriftRepair[] {
  return attrs.map((c) => ({
    setting: ATTRIBUTE_SETTINGS[c.name] ?? c.name,
    description: describeAttribute(c),
  }));
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
