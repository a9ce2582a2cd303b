/**
 * Tags, for every kind alike: the tags a resource should carry (the user's tags plus the
 * ownership tags), the changes that bring a resource there under the controller's
 * {@link TagPolicy}, how those changes are written (set first, then remove, so a resource never
 * goes without its ownership tags in between), and how a repair is worded in the Updated Event.
 * Whose a resource is, judged from the same tags, is ./ownership.ts.
 */
import { desiredTags, isReservedTagKey, sortedTags, type TagMap } from "../../aws/ownership.ts";
import { mapPath, type Change } from "./changes.ts";
import { InvalidSpecError, TAGS_SETTING, type ManagedObject } from "./driver.ts";
import { ownerOf } from "./owner.ts";

/**
 * The prefix of the tag keys AWS writes itself (CloudFormation, Auto Scaling) and refuses to let
 * a caller change or delete.
 */
export const AWS_TAG_PREFIX = "aws:";

/** EC2, S3 and SQS alike allow at most 50 tags on one resource. */
export const MAX_RESOURCE_TAGS = 50;

/**
 * What the operator may do to the tags of a resource it owns; one value for the whole
 * controller (`--default-tags`, `--ignore-tag-prefixes`), handed to every driver.
 */
export interface TagPolicy {
  /**
   * Tags are authoritative: every key the object does not ask for is removed. When false, keys
   * other tools added survive drift repair, and only stale keys under the operator's reserved
   * prefix are removed.
   */
  readonly authoritative: boolean;
  /**
   * Key prefixes whose tags belong to someone else (compared case-insensitively): the operator
   * never removes such a tag and never overwrites its value; it writes one only where the
   * resource lacks it. Always includes {@link AWS_TAG_PREFIX}; `--ignore-tag-prefixes` adds more
   * (AWS Backup, cost-allocation tooling, other controllers).
   */
  readonly ignoredPrefixes: readonly string[];
  /**
   * Tags every resource carries (`--default-tags`), merged under `spec.tags`: a key the object
   * sets itself wins. Never under an ignored or reserved prefix.
   */
  readonly defaultTags: Readonly<TagMap>;
}

/** The policy without flags: authoritative tags, `aws:` keys left alone, no default tags. */
export const DEFAULT_TAG_POLICY: TagPolicy = tagPolicy({});

/**
 * The policy of `--default-tags` and `--ignore-tag-prefixes`: authoritative tags, with `aws:` and
 * the given prefixes left alone. Validating the flags' texts is the config layer's job.
 */
export function tagPolicy(opts: {
  defaultTags?: Readonly<TagMap> | undefined;
  ignoredPrefixes?: readonly string[] | undefined;
}): TagPolicy {
  const prefixes = [
    AWS_TAG_PREFIX,
    ...(opts.ignoredPrefixes ?? []).filter((p) => p.toLowerCase() !== AWS_TAG_PREFIX),
  ];
  return Object.freeze({
    authoritative: true,
    ignoredPrefixes: Object.freeze(prefixes),
    defaultTags: Object.freeze(sortedTags({ ...opts.defaultTags })),
  });
}

/** The changes that turn a resource's tags into the desired ones. */
export interface TagPlan {
  /** Keys to create or overwrite, with their desired values (sorted). */
  readonly set: TagMap;
  /** Keys to delete (sorted). */
  readonly remove: readonly string[];
}

/** Whether `key` lies under one of the policy's ignored prefixes. */
export function isIgnoredTagKey(key: string, policy: TagPolicy): boolean {
  const k = key.toLowerCase();
  return policy.ignoredPrefixes.some((p) => k.startsWith(p.toLowerCase()));
}

/** Whether `key` is one AWS writes itself ({@link AWS_TAG_PREFIX}). */
function isAwsTagKey(key: string): boolean {
  return key.toLowerCase().startsWith(AWS_TAG_PREFIX);
}

/**
 * The complete tag set the resource of `obj` (of kind `kind`) should carry: the policy's default
 * tags, overridden by `spec.tags` (or the tag map `own` names, as `spec.volumeTags`), plus the
 * ownership tags.
 * @throws InvalidSpecError `TooManyTags` when that exceeds AWS's {@link MAX_RESOURCE_TAGS}
 *   (checked before anything is created, so no resource is left that cannot carry its tags).
 */
export function desiredTagsOf(
  obj: Pick<ManagedObject, "metadata" | "spec">,
  kind: string,
  policy: TagPolicy,
  own: { tags: Readonly<TagMap> | undefined; field: string } = { tags: obj.spec.tags, field: "spec.tags" },
): TagMap {
  const user = { ...policy.defaultTags, ...own.tags };
  const tags = desiredTags(user, ownerOf(obj, kind));
  const count = Object.keys(tags).length;
  if (count > MAX_RESOURCE_TAGS) {
    const ownership = count - Object.keys(user).length;
    const defaults = Object.keys(policy.defaultTags).filter((k) => !(k in (own.tags ?? {}))).length;
    throw new InvalidSpecError(
      "TooManyTags",
      `AWS allows at most ${MAX_RESOURCE_TAGS} tags on a resource; with the operator's ${ownership} ownership ` +
        `tags and ${defaults} default tags (--default-tags) not set in ${own.field}, ${own.field} may hold at most ` +
        `${MAX_RESOURCE_TAGS - ownership - defaults} keys of its own, it holds ${Object.keys(own.tags ?? {}).length}`,
    );
  }
  return tags;
}

/** The plan that turns `actual` into `desired` under `policy`. */
export function planTags(desired: Readonly<TagMap>, actual: Readonly<TagMap>, policy: TagPolicy): TagPlan {
  const set: TagMap = {};
  for (const [k, v] of Object.entries(desired)) {
    if (actual[k] === v) continue;
    // A tag under an ignored prefix is someone else's: written only where it is missing.
    if (k in actual && isIgnoredTagKey(k, policy)) continue;
    set[k] = v;
  }
  const remove: string[] = [];
  for (const k of Object.keys(actual)) {
    if (k in desired || isIgnoredTagKey(k, policy)) continue;
    if (policy.authoritative || isReservedTagKey(k)) remove.push(k);
  }
  return { set: sortedTags(set), remove: remove.sort() };
}

/** Whether a plan changes nothing. */
export function isEmptyPlan(plan: TagPlan): boolean {
  return plan.remove.length === 0 && Object.keys(plan.set).length === 0;
}

/** The tags a resource carries once `plan` has been applied to `actual`. */
export function tagsAfter(actual: Readonly<TagMap>, plan: TagPlan): TagMap {
  const out: TagMap = { ...actual, ...plan.set };
  for (const k of plan.remove) delete out[k];
  return sortedTags(out);
}

/**
 * How a service writes tags: in increments (EC2 CreateTags/DeleteTags, SQS TagQueue/UntagQueue)
 * or by replacing the whole set (S3 PutBucketTagging).
 */
export type TagWriter =
  | {
      set(tags: Readonly<TagMap>): Promise<void>;
      remove(keys: readonly string[]): Promise<void>;
    }
  | { replace(tags: Readonly<TagMap>): Promise<void> };

/**
 * Writes `plan` onto a resource that has `actual`: additions first, removals after, each call
 * only when it has something to do. A replacing writer gets the whole resulting set (the tags
 * under ignored prefixes with their current values), without the keys only AWS may write.
 * Returns the resulting tags.
 */
export async function applyTagPlan(
  plan: TagPlan,
  actual: Readonly<TagMap>,
  writer: TagWriter,
): Promise<TagMap> {
  const after = tagsAfter(actual, plan);
  if (isEmptyPlan(plan)) return after;
  if ("replace" in writer) {
    const written: TagMap = {};
    for (const [k, v] of Object.entries(after)) {
      if (!isAwsTagKey(k)) written[k] = v;
    }
    await writer.replace(written);
    return after;
  }
  if (Object.keys(plan.set).length > 0) await writer.set(plan.set);
  if (plan.remove.length > 0) await writer.remove(plan.remove);
  return after;
}

/** The stable wording of a non-empty plan in the Updated Event: `tags: set a, b; removed c`. */
export function describeTagPlan(plan: TagPlan): string {
  const parts: string[] = [];
  const set = Object.keys(plan.set);
  if (set.length > 0) parts.push(`set ${set.join(", ")}`);
  if (plan.remove.length > 0) parts.push(`removed ${plan.remove.join(", ")}`);
  return `tags: ${parts.join("; ")}`;
}

/** The IAM actions of a service's tag writes: increments (set, remove) or a whole-set replace. */
export type TagActions = { readonly set: string; readonly remove: string } | { readonly replace: string };

/**
 * The tag differences between `actual` and `desired` under `policy`, one change per key, all of
 * apply group `group`. A key of the spec's own tag map (`own.tags`, named `own.field`) and a key
 * that nothing asks for are under `<own.field>`; the operator's ownership tags (flagged
 * {@link Change.ownership}) and its default tags under `tags`.
 */
export function tagChanges(
  desired: Readonly<TagMap>,
  actual: Readonly<TagMap>,
  policy: TagPolicy,
  opts: {
    actions: TagActions;
    own?: { tags: Readonly<TagMap> | undefined; field: string };
    group?: string;
    setting?: string;
  },
): Change[] {
  const plan = planTags(desired, actual, policy);
  const own = opts.own ?? { tags: undefined, field: "spec.tags" };
  const group = opts.group ?? TAGS_SETTING;
  const setting = opts.setting ?? TAGS_SETTING;
  const label = own.field.replace(/^spec\./, "");
  const operatorKey = (k: string): boolean =>
    isReservedTagKey(k) || (k in policy.defaultTags && !(k in (own.tags ?? {})));
  const change = (k: string, desiredValue: string | undefined, action: string, verb: string): Change => ({
    path: mapPath(operatorKey(k) ? "tags" : own.field, k),
    key: k,
    setting,
    observed: actual[k],
    desired: desiredValue,
    actions: "replace" in opts.actions ? [opts.actions.replace] : [action],
    disruption: "none",
    description: `${label}: ${verb} ${k}`,
    group,
    ...(isReservedTagKey(k) ? { ownership: true } : {}),
  });
  const set = "replace" in opts.actions ? opts.actions.replace : opts.actions.set;
  const remove = "replace" in opts.actions ? opts.actions.replace : opts.actions.remove;
  return [
    ...Object.entries(plan.set).map(([k, v]) => change(k, v, set, "set")),
    ...plan.remove.map((k) => change(k, undefined, remove, "removed")),
  ];
}

/** The tag plan that `changes` (from {@link tagChanges}, possibly a subset) carry out. */
export function tagPlanOf(changes: readonly Change[]): TagPlan {
  const set: TagMap = {};
  const remove: string[] = [];
  for (const c of changes) {
    if (c.key === undefined) throw new Error(`${c.path} is not a tag change`);
    if (c.desired === undefined) remove.push(c.key);
    else set[c.key] = String(c.desired);
  }
  return { set: sortedTags(set), remove: remove.sort() };
}

/** Writes the tag `changes` (a subset of {@link tagChanges}) onto a resource that has `actual`. */
export async function applyTagChanges(
  changes: readonly Change[],
  actual: Readonly<TagMap>,
  writer: TagWriter,
): Promise<TagMap> {
  return await applyTagPlan(tagPlanOf(changes), actual, writer);
}
