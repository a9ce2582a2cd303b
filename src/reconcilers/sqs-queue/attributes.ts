/**
 * The pure half of the SqsQueue driver: which queue attributes and tags the spec asks for, how
 * they differ from what SQS reports, and how a difference is described. No I/O here, so every
 * rule is unit-tested without a network.
 */
import type { SqsQueueSpec } from "../../api/v1/index.ts";
import { diffTags, type TagDiff, type TagMap } from "../../aws/ownership.ts";
import { TAGS_SETTING, type DriftRepair } from "../common/driver.ts";

/** SQS attribute names the operator reads or writes, spelled as the API spells them. */
export const SqsAttribute = {
  VisibilityTimeout: "VisibilityTimeout",
  MessageRetentionPeriod: "MessageRetentionPeriod",
  FifoQueue: "FifoQueue",
  QueueArn: "QueueArn",
} as const;

/** The spec fields the operator keeps in line with the queue's attributes. */
export type ManagedAttributeSpec = Pick<SqsQueueSpec, "visibilityTimeoutSeconds" | "messageRetentionSeconds">;

/** The spec field behind each managed attribute: the setting a repair of it is counted under. */
export const ATTRIBUTE_SETTINGS: Readonly<Record<string, keyof ManagedAttributeSpec>> = Object.freeze({
  [SqsAttribute.VisibilityTimeout]: "visibilityTimeoutSeconds",
  [SqsAttribute.MessageRetentionPeriod]: "messageRetentionSeconds",
});

/** Every setting the SqsQueue driver repairs. */
export const SQS_DRIFT_SETTINGS: readonly string[] = Object.freeze([
  ...Object.values(ATTRIBUTE_SETTINGS),
  TAGS_SETTING,
]);

/**
 * The mutable attributes the spec asks for, as `SetQueueAttributes` takes them (decimal
 * strings). Keys come out in a fixed order, so equal specs give deep-equal maps.
 */
export function managedAttributes(spec: ManagedAttributeSpec): Record<string, string> {
  return {
    [SqsAttribute.VisibilityTimeout]: String(spec.visibilityTimeoutSeconds),
    [SqsAttribute.MessageRetentionPeriod]: String(spec.messageRetentionSeconds),
  };
}

/**
 * The `Attributes` of a `CreateQueue` request: the managed attributes plus `FifoQueue: "true"`
 * for a FIFO queue. `FifoQueue` is omitted for a standard queue because SQS rejects
 * `FifoQueue=false` on create.
 */
export function createAttributes(
  spec: ManagedAttributeSpec & Pick<SqsQueueSpec, "fifo">,
): Record<string, string> {
  return {
    ...(spec.fifo ? { [SqsAttribute.FifoQueue]: "true" } : {}),
    ...managedAttributes(spec),
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
 * reports them). Values compare as numbers, so `"030"` equals `"30"`; attributes the operator
 * does not manage are ignored. Empty when the queue is in sync.
 */
export function attributeDrift(
  spec: ManagedAttributeSpec,
  actual: Readonly<Record<string, string | undefined>>,
): AttributeChange[] {
  const changes: AttributeChange[] = [];
  for (const [name, to] of Object.entries(managedAttributes(spec))) {
    const from = actual[name];
    if (from === undefined || from.trim() === "" || Number(from) !== Number(to)) {
      changes.push({ name, from, to });
    }
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
 * The tag changes that make the queue carry exactly `desired` (the user's tags plus ownership
 * tags): tags are authoritative, so everything else is removed, except `aws:` tags, which only
 * AWS may write.
 */
export function tagPlan(desired: Readonly<TagMap>, actual: Readonly<TagMap>): TagDiff {
  return diffTags(desired, actual, { keepForeign: false });
}

/**
 * Short, stable descriptions of the changes made (for the Updated Event): attribute names with
 * old and new values, tag keys set and removed. Values of tags are left out: they may be long,
 * and the keys say what was repaired.
 */
export function describeChanges(attrs: readonly AttributeChange[], tags: TagDiff): DriftRepair[] {
  const out: DriftRepair[] = attrs.map((c) => ({
    setting: ATTRIBUTE_SETTINGS[c.name] ?? c.name,
    description: `${c.name} ${c.from ?? "unset"} -> ${c.to}`,
  }));
  const set = Object.keys(tags.set);
  if (set.length > 0) out.push({ setting: TAGS_SETTING, description: `tags set: ${set.join(", ")}` });
  if (tags.remove.length > 0) {
    out.push({ setting: TAGS_SETTING, description: `tags removed: ${tags.remove.join(", ")}` });
  }
  return out;
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
