/**
 * The EventBridge set-up docs/aws.md#change-events tells users to make, made on the test AWS: the
 * rule patterns (the change events', and that of a bucket publishing to EventBridge) and the
 * queue policy are read from that page itself, so tests and benchmarks
 * exercise exactly what the documentation says. EventBridge is called through its JSON API
 * (the project has no EventBridge SDK client); the test AWS routes by the credential scope of the
 * Authorization header and does not check the signature.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./process.ts";

/** The detail-type of EC2's own state-change events. */
export const EC2_STATE_CHANGE = "EC2 Instance State-change Notification";

/** Every rule name the documented queue policy accepts starts with this. */
export const RULE_PREFIX = "kubeprovisioner-";

/** The JSON code blocks of the docs/aws.md section headed `<level> <heading>` (`###` by default). */
function jsonBlocksOf(heading: string, level = "###"): unknown[] {
  const doc = readFileSync(path.join(repoRoot, "docs/aws.md"), "utf8");
  const start = doc.indexOf(`\n${level} ${heading}\n`);
  if (start < 0) throw new Error(`docs/aws.md has no section "${heading}"`);
  const end = doc.indexOf("\n#", start + level.length + heading.length + 3);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? "") as unknown);
}

/** The event patterns of docs/aws.md#the-rules, in the page's order. */
export function documentedPatterns(): Record<string, unknown>[] {
  return jsonBlocksOf("The rules") as Record<string, unknown>[];
}

/** The documented pattern whose `detail-type` is exactly `[detailType]`. */
export function documentedPattern(detailType: string): Record<string, unknown> {
  const found = documentedPatterns().filter((p) => {
    const types = p["detail-type"];
    return Array.isArray(types) && types.length === 1 && types[0] === detailType;
  });
  if (found.length !== 1)
    throw new Error(`docs/aws.md#the-rules has ${found.length} rules for "${detailType}"`);
  return found[0] ?? {};
}

/**
 * The rule pattern of docs/aws.md#a-bucket-that-publishes-to-eventbridge (the objects created in
 * one bucket), for the bucket `bucketName`.
 */
export function documentedBucketPattern(bucketName: string): Record<string, unknown> {
  const [pattern] = jsonBlocksOf("A bucket that publishes to EventBridge", "##") as {
    detail?: { bucket?: { name?: unknown } };
  }[];
  if (pattern?.detail?.bucket === undefined)
    throw new Error("docs/aws.md#a-bucket-that-publishes-to-eventbridge has no pattern naming a bucket");
  pattern.detail.bucket.name = [bucketName];
  return pattern;
}

/**
 * The queue policy of docs/aws.md#the-queue-and-its-policy, for the queue `queueArn`, accepting
 * the rules named `kubeprovisioner-*` of its account and region.
 */
export function documentedQueuePolicy(queueArn: string): Record<string, unknown> {
  const [policy] = jsonBlocksOf("The queue and its policy") as {
    Statement: { Resource: string; Condition: { ArnLike: Record<string, string> } }[];
  }[];
  if (policy === undefined) throw new Error("docs/aws.md#the-queue-and-its-policy has no policy");
  const [, partition, , region, account] = queueArn.split(":");
  for (const s of policy.Statement) {
    s.Resource = queueArn;
    s.Condition.ArnLike["aws:SourceArn"] =
      `arn:${partition}:events:${region}:${account}:rule/${RULE_PREFIX}*`;
  }
  return policy;
}

/** One call of EventBridge's JSON API at `endpoint`. */
export async function eventBridge(
  endpoint: string,
  target: string,
  body: unknown,
  region = "us-east-1",
): Promise<unknown> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": `AWSEvents.${target}`,
      authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${region}/events/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`EventBridge ${target}: HTTP ${res.status} ${text}`);
  return text === "" ? {} : JSON.parse(text);
}

/** A rule on the default event bus named `kubeprovisioner-<name>`, whose target is the queue. */
export async function ruleToQueue(
  endpoint: string,
  opts: { name: string; pattern: Record<string, unknown>; queueArn: string; region?: string },
): Promise<string> {
  const name = `${RULE_PREFIX}${opts.name}`;
  await eventBridge(
    endpoint,
    "PutRule",
    { Name: name, EventPattern: JSON.stringify(opts.pattern) },
    opts.region,
  );
  await eventBridge(
    endpoint,
    "PutTargets",
    { Rule: name, Targets: [{ Id: "change-events-queue", Arn: opts.queueArn }] },
    opts.region,
  );
  return name;
}
