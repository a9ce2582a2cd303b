/**
 * The export of SqsQueue (../common/export.ts): the queues of a region by `ListQueues`, and the
 * spec of one from what the driver's observation reads (`GetQueueAttributes(All)` and
 * `ListQueueTags`), through the inverses of the driver's attribute rules (./model.ts). Before a
 * spec is handed over, the driver's own comparison checks it: a setting whose attribute would not
 * compare equal is left out and named in `omitted`, so that adopting the queue writes nothing but
 * the ownership tags.
 */
import {
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { isJsonObject, type JsonValue } from "../../api/schema/openapi.ts";
import { sqsQueueSpecSchema, type SqsQueueSpec } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { isAwsErrorKind } from "../../aws/errors.ts";
import { expressiblePolicy, type PolicyDocument } from "../common/export-policy.ts";
import { fromSqsTags, type TagMap } from "../../aws/ownership.ts";
import { pages } from "../../aws/pages.ts";
import {
  specTagsOf,
  type ExportContext,
  type ExportedResource,
  type KindExporter,
  type ListedResource,
} from "../common/export.ts";
import {
  SqsAttribute,
  attributeChange,
  attributeDrift,
  queueArnOfUrl,
  queueNameOfUrl,
  settingsOfAttributes,
  specValue,
  splitQueuePolicy,
  type ManagedAttributeSpec,
  type ResolvedReferences,
} from "./model.ts";

/** Queues per `ListQueues` page: the most SQS returns. */
export const LIST_QUEUES_PAGE_SIZE = 1000;

/** The {@link KindExporter} of SqsQueue with one account's clients. */
export class SqsQueueExporter implements KindExporter {
  readonly #aws: AwsClientSource;

  constructor(aws: AwsClientSource) {
    this.#aws = aws;
  }

  /**
   * Every queue of `region`, by `ListQueues` pages of {@link LIST_QUEUES_PAGE_SIZE}: its URL as
   * the ID, its ARN from the URL (read with `GetQueueAttributes(QueueArn)` only for a URL of
   * another shape; a queue gone meanwhile is left out).
   */
  async *list(region: string, signal: AbortSignal): AsyncIterable<ListedResource> {
    const sqs = await this.#aws.client("sqs", region);
    const opts = { abortSignal: signal };
    const listing = pages(
      (token) =>
        sqs.send(
          new ListQueuesCommand({
            MaxResults: LIST_QUEUES_PAGE_SIZE,
            ...(token !== undefined ? { NextToken: token } : {}),
          }),
          opts,
        ),
      (page) => page.NextToken,
    );
    for await (const page of listing) {
      for (const url of page.QueueUrls ?? []) {
        const arn = queueArnOfUrl(url, region) ?? (await readArn(sqs, url, signal));
        if (arn === undefined) continue;
        const awsName = queueNameOfUrl(url) ?? arn.slice(arn.lastIndexOf(":") + 1);
        yield { id: url, region, arn, awsName };
      }
    }
  }

  /** The queue at `listed.id`, read as the driver observes it; undefined when it is gone. */
  async read(listed: ListedResource, ctx: ExportContext): Promise<ExportedResource | undefined> {
    const sqs = await this.#aws.client("sqs", listed.region);
    const opts = { abortSignal: ctx.signal };
    try {
      const [attrs, tags] = await Promise.all([
        sqs.send(new GetQueueAttributesCommand({ QueueUrl: listed.id, AttributeNames: ["All"] }), opts),
        sqs.send(new ListQueueTagsCommand({ QueueUrl: listed.id }), opts),
      ]);
      return exportedQueue(listed, attrs.Attributes ?? {}, fromSqsTags(tags.Tags), ctx);
    } catch (err) {
      if (isAwsErrorKind(err, "not-found")) return undefined;
      throw err;
    }
  }
}

/** The ARN of the queue at `url`, read from SQS; undefined when it is gone. */
async function readArn(sqs: SQSClient, url: string, signal: AbortSignal): Promise<string | undefined> {
  try {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [SqsAttribute.QueueArn] }),
      { abortSignal: signal },
    );
    return out.Attributes?.[SqsAttribute.QueueArn];
  } catch (err) {
    if (isAwsErrorKind(err, "not-found")) return undefined;
    throw err;
  }
}

type Unresolved = { path: string; arn: string };

/**
 * The export of the queue `listed` that reports `attributes` and carries `tags`: the full spec,
 * with references to the exported objects `ctx.refOf` knows. See the module comment for the
 * check that leaves out what would not compare equal.
 */
export function exportedQueue(
  listed: ListedResource,
  attributes: Readonly<Record<string, string>>,
  tags: Readonly<TagMap>,
  ctx: Pick<ExportContext, "refOf">,
): ExportedResource {
  const queueArn = attributes[SqsAttribute.QueueArn] ?? listed.arn;
  const plain = settingsOfAttributes(attributes);
  const omitted = plain.unreadable.map((path) => `${path}: SQS reports a value the spec cannot hold`);
  const unresolved: Unresolved[] = [];
  const resolved: ResolvedReferences = { queueArn };
  const spec: Record<string, JsonValue> & Omit<ManagedAttributeSpec, "policy"> = {
    queueName: listed.awsName,
    region: listed.region,
    ...plain.spec,
  };

  const policy = policyDocument(attributes[SqsAttribute.Policy]);
  if (policy === "inexpressible")
    omitted.push("spec.policy: the queue policy is not an IAM policy document the spec can hold");
  else if (policy !== undefined) {
    // S3 notifies standard queues only, and the spec allows allowS3Notifications on them only.
    const accept = (arn: string): boolean => !plain.spec.fifo && ctx.refOf(arn)?.kind === "S3Bucket";
    const split = splitQueuePolicy(policy, queueArn, accept);
    const kept = split.policy?.Statement;
    if (split.policy !== undefined && Array.isArray(kept) && kept.length > 0)
      spec.policy = split.policy as JsonValue;
    if (split.sources.length > 0) {
      spec.allowS3Notifications = split.sources.map((s) => ({
        bucketRef: { name: ctx.refOf(s.bucketArn)?.name ?? "" },
      }));
      resolved.s3NotificationSources = split.sources;
    }
  }

  const dlq = specValue(SqsAttribute.RedrivePolicy, attributes[SqsAttribute.RedrivePolicy] ?? "");
  if (isJsonObject(dlq)) {
    const { targetArn, maxReceiveCount } = dlq;
    if (typeof targetArn === "string" && typeof maxReceiveCount === "number") {
      const ref = queueRef(targetArn, ctx);
      if (ref === undefined) unresolved.push({ path: "spec.deadLetterQueue.targetArn", arn: targetArn });
      else resolved.deadLetterTargetArn = targetArn;
      spec.deadLetterQueue = { ...(ref !== undefined ? { queueRef: ref } : { targetArn }), maxReceiveCount };
    }
  }

  const allow = specValue(SqsAttribute.RedriveAllowPolicy, attributes[SqsAttribute.RedriveAllowPolicy] ?? "");
  if (isJsonObject(allow) && isRedrivePermission(allow.redrivePermission)) {
    const redrivePermission = allow.redrivePermission;
    if (redrivePermission !== "byQueue") spec.redriveAllowPolicy = { redrivePermission };
    else {
      const arns = Array.isArray(allow.sourceQueueArns) ? allow.sourceQueueArns.map(String) : [];
      const refs = arns.flatMap((arn) => {
        const ref = queueRef(arn, ctx);
        return ref !== undefined ? [{ arn, ref }] : [];
      });
      const byArn = arns.filter((arn) => queueRef(arn, ctx) === undefined);
      byArn.forEach((arn, i) =>
        unresolved.push({ path: `spec.redriveAllowPolicy.sourceQueueArns[${i}]`, arn }),
      );
      refs.sort((a, b) => (a.ref.name < b.ref.name ? -1 : a.ref.name > b.ref.name ? 1 : 0));
      resolved.redriveSources = refs.map(({ arn }) => ({ arn }));
      spec.redriveAllowPolicy = {
        redrivePermission,
        ...(refs.length > 0 ? { sourceQueueRefs: refs.map((r) => r.ref) } : {}),
        ...(byArn.length > 0 ? { sourceQueueArns: byArn } : {}),
      };
    }
  }

  // The driver's comparison of the spec with the queue: what differs is left out.
  for (const change of attributeDrift(spec, attributes, resolved).map(attributeChange)) {
    if (!(change.setting in spec) || REQUIRED.has(change.setting)) continue;
    delete spec[change.setting];
    if (change.setting === "policy") delete spec.allowS3Notifications;
    const prefix = `spec.${change.setting}`;
    for (let i = unresolved.length - 1; i >= 0; i--)
      if (unresolved[i]?.path.startsWith(prefix) === true) unresolved.splice(i, 1);
    omitted.push(`${prefix}: SQS reports a value the spec cannot reproduce`);
  }
  // A JSON setting SQS reports that the spec cannot hold in its shape.
  for (const [name, setting] of Object.entries(JSON_SETTINGS)) {
    const path = `spec.${setting}`;
    const held = setting in spec || (setting === "policy" && "allowS3Notifications" in spec);
    const empty = (attributes[name] ?? "").trim() === "" || isEmptyPolicy(attributes[name]);
    if (!held && !empty && !omitted.some((o) => o.startsWith(path)))
      omitted.push(`${path}: SQS reports a value the spec cannot hold`);
  }

  const specTags = specTagsOf(tags);
  if (Object.keys(specTags).length > 0) spec.tags = specTags;
  return { awsName: listed.awsName, tags: { ...tags }, spec, unresolved, omitted: omitted.sort() };
}

/** Settings the spec always holds (defaulted by the CRD): never left out. */
const REQUIRED = new Set(["visibilityTimeoutSeconds", "messageRetentionSeconds"]);

/** The attributes that hold JSON documents, with the spec field each belongs to. */
const JSON_SETTINGS: Readonly<Record<string, string>> = {
  [SqsAttribute.Policy]: "policy",
  [SqsAttribute.RedrivePolicy]: "deadLetterQueue",
  [SqsAttribute.RedriveAllowPolicy]: "redriveAllowPolicy",
};

/** Whether `text` is a policy without statements, which allows nothing and which the spec leaves unmanaged. */
function isEmptyPolicy(text: string | undefined): boolean {
  const doc = policyDocument(text);
  return typeof doc === "object" && doc.Statement.length === 0;
}

/** `{name}` of the exported SqsQueue whose queue has `arn`, if the export holds one. */
function queueRef(arn: string, ctx: Pick<ExportContext, "refOf">): { name: string } | undefined {
  const ref = ctx.refOf(arn);
  return ref?.kind === "SqsQueue" ? { name: ref.name } : undefined;
}

/** The redrive permissions the CRD allows. */
const REDRIVE_PERMISSIONS: readonly JsonValue[] =
  sqsQueueSpecSchema.node.properties?.redriveAllowPolicy?.properties?.redrivePermission?.enum ?? [];

function isRedrivePermission(
  v: JsonValue | undefined,
): v is NonNullable<SqsQueueSpec["redriveAllowPolicy"]>["redrivePermission"] {
  return v !== undefined && REDRIVE_PERMISSIONS.includes(v);
}

/**
 * The queue's policy attribute as a document spec.policy holds unchanged: undefined when the
 * queue has none; `inexpressible` when it is not JSON, or has no Version (the CRD would default
 * one), a Statement that is not a list or is longer than the CRD allows, or fields the CRD does
 * not define (the API server would drop them).
 */
function policyDocument(text: string | undefined): PolicyDocument | "inexpressible" | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  return expressiblePolicy(
    specValue(SqsAttribute.Policy, text),
    sqsQueueSpecSchema.node.properties?.["policy"],
  );
}
