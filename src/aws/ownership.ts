/**
 * Ownership tags: the reconcilers put these on every AWS resource they create, find their
 * resources by them before any create (so a crash between create and status write cannot yield
 * a duplicate), and refuse to touch a resource carrying another object's UID.
 *
 * Also the tag-shape conversions for the three services: EC2 `{Key, Value}[]`, S3 `TagSet`
 * (the same shape, with both fields required) and SQS `Record<string, string>`.
 */

import { MANAGED_BY_VALUE, OWNERSHIP_TAGS, RESERVED_TAG_PREFIX } from "../api/v1/group.ts";

/** Prefix reserved for the operator's own tags; user tags under it are dropped. */
export const OWNERSHIP_TAG_PREFIX: string = RESERVED_TAG_PREFIX;
/** Tag key marking a resource as created by this operator. */
export const MANAGED_BY_TAG: string = OWNERSHIP_TAGS.managedBy;
export { MANAGED_BY_VALUE };
/** Tag key holding the UID of the owning Kubernetes object: the authoritative identity. */
export const UID_TAG: string = OWNERSHIP_TAGS.uid;
/** Tag key holding the namespace of the owning object. */
export const NAMESPACE_TAG: string = OWNERSHIP_TAGS.namespace;
/** Tag key holding the name of the owning object, for humans and the console. */
export const NAME_TAG: string = OWNERSHIP_TAGS.name;
/** Tag key holding the kind of the owning object. */
export const KIND_TAG: string = OWNERSHIP_TAGS.kind;

/** AWS caps tag values at 256 characters (S3, EC2, SQS alike). */
export const MAX_TAG_VALUE_LENGTH = 256;

/** A string-to-string tag map, the form the reconcilers work in. */
export type TagMap = Record<string, string>;

/** The Kubernetes object owning an AWS resource. */
export interface Owner {
  uid: string;
  namespace: string;
  name: string;
  /** Kind of the owning object (Ec2Instance, S3Bucket, SqsQueue). */
  kind: string;
}

/** An EC2 tag as the SDK types it (both fields optional in responses). */
export interface Ec2Tag {
  Key?: string | undefined;
  Value?: string | undefined;
}

/** An S3 tag as `PutBucketTagging` requires it. */
export interface S3Tag {
  Key: string | undefined;
  Value: string | undefined;
}

/** The ownership tags for `owner`. Each value fits the AWS tag value limit of 256 characters. */
export function ownershipTags(owner: Owner): TagMap {
  return {
    [MANAGED_BY_TAG]: MANAGED_BY_VALUE,
    [UID_TAG]: owner.uid,
    [NAMESPACE_TAG]: owner.namespace,
    [NAME_TAG]: owner.name.slice(0, MAX_TAG_VALUE_LENGTH),
    [KIND_TAG]: owner.kind,
  };
}

/**
 * Whether `tags` name the object `namespace/name` of `kind` (whatever its UID): the test for
 * adopting a resource left behind by an earlier object of the same name.
 */
export function namesOwner(tags: Readonly<TagMap>, owner: Omit<Owner, "uid">): boolean {
  return (
    tags[NAMESPACE_TAG] === owner.namespace &&
    tags[NAME_TAG] === owner.name.slice(0, MAX_TAG_VALUE_LENGTH) &&
    tags[KIND_TAG] === owner.kind
  );
}

/**
 * Whether `key` is reserved by AWS (`aws:cloudformation:stack-name`, `aws:autoscaling:...`):
 * AWS writes these itself and refuses to let a caller change or delete them.
 */
export function isAwsTagKey(key: string): boolean {
  return key.toLowerCase().startsWith("aws:");
}

/** Whether `key` lies under the operator's reserved prefix. */
export function isReservedTagKey(key: string): boolean {
  return key.startsWith(OWNERSHIP_TAG_PREFIX);
}

/**
 * The tags a resource owned by `owner` should carry: the user's tags plus the ownership tags.
 * User tags under {@link OWNERSHIP_TAG_PREFIX} are dropped, so a user can neither override nor
 * forge ownership. Keys come out sorted, so equal inputs give identical (deep-equal) maps.
 */
export function desiredTags(userTags: Readonly<TagMap> | undefined, owner: Owner): TagMap {
  const merged: TagMap = {};
  for (const [k, v] of Object.entries(userTags ?? {})) {
    if (!isReservedTagKey(k)) merged[k] = v;
  }
  Object.assign(merged, ownershipTags(owner));
  return sortedTags(merged);
}

/** A copy of `tags` with keys in ascending order. */
export function sortedTags(tags: Readonly<TagMap>): TagMap {
  const out: TagMap = {};
  for (const k of Object.keys(tags).sort()) out[k] = tags[k] ?? "";
  return out;
}

/** How an AWS resource relates to a Kubernetes object, judged by its tags. */
export type Ownership = "owned" | "foreign-owner" | "unmanaged";

/**
 * `owned` when the UID tag equals `uid`; `foreign-owner` when it names another UID (another
 * object, possibly in another cluster, manages it); `unmanaged` when it has no UID tag.
 */
export function ownershipOf(tags: Readonly<TagMap>, uid: string): Ownership {
  const tagged = tags[UID_TAG];
  if (tagged === undefined) return "unmanaged";
  return tagged === uid ? "owned" : "foreign-owner";
}

/** The changes that turn `actual` into `desired`. */
export interface TagDiff {
  /** Keys to create or overwrite, with their desired values. */
  readonly set: TagMap;
  /** Keys to delete. */
  readonly remove: string[];
}

/**
 * The difference between the tags a resource has and the tags it should have. `aws:` keys are
 * never removed (AWS refuses to). With
 * `keepForeign` (the default) keys the operator did not put there are kept: only keys in
 * `previouslyManaged` or under the reserved prefix are removed when absent from `desired`, so
 * tags added by other tools (cost allocation, AWS Backup) survive drift repair.
 */
export function diffTags(
  desired: Readonly<TagMap>,
  actual: Readonly<TagMap>,
  options: { previouslyManaged?: readonly string[]; keepForeign?: boolean } = {},
): TagDiff {
  const keepForeign = options.keepForeign ?? true;
  const managed = new Set(options.previouslyManaged ?? []);
  const set: TagMap = {};
  for (const [k, v] of Object.entries(desired)) {
    if (actual[k] !== v) set[k] = v;
  }
  const remove: string[] = [];
  for (const k of Object.keys(actual)) {
    if (k in desired || isAwsTagKey(k)) continue;
    if (!keepForeign || managed.has(k) || isReservedTagKey(k)) remove.push(k);
  }
  return { set: sortedTags(set), remove: remove.sort() };
}

/** Whether a {@link TagDiff} changes anything. */
export function isEmptyDiff(diff: TagDiff): boolean {
  return diff.remove.length === 0 && Object.keys(diff.set).length === 0;
}

/** Tag map -> EC2 `Tags` (sorted by key). */
export function toEc2Tags(tags: Readonly<TagMap>): { Key: string; Value: string }[] {
  return Object.keys(tags)
    .sort()
    .map((Key) => ({ Key, Value: tags[Key] ?? "" }));
}

/** EC2 `Tags` -> tag map; entries without a key are skipped, a missing value becomes "". */
export function fromEc2Tags(tags: readonly Ec2Tag[] | undefined): TagMap {
  const out: TagMap = {};
  for (const t of tags ?? []) {
    if (t.Key !== undefined) out[t.Key] = t.Value ?? "";
  }
  return sortedTags(out);
}

/** Tag map -> S3 `Tagging.TagSet` (sorted by key). */
export function toS3TagSet(tags: Readonly<TagMap>): { Key: string; Value: string }[] {
  return toEc2Tags(tags);
}

/** S3 `TagSet` -> tag map. */
export function fromS3TagSet(tagSet: readonly S3Tag[] | undefined): TagMap {
  return fromEc2Tags(tagSet);
}

/** Tag map -> SQS `tags` / `Tags` (a plain record, sorted by key). */
export function toSqsTags(tags: Readonly<TagMap>): TagMap {
  return sortedTags(tags);
}

/** SQS `Tags` -> tag map. */
export function fromSqsTags(tags: Readonly<Record<string, string | undefined>> | undefined): TagMap {
  const out: TagMap = {};
  for (const [k, v] of Object.entries(tags ?? {})) out[k] = v ?? "";
  return sortedTags(out);
}

/**
 * EC2 `Filters` selecting resources owned by `uid` (for DescribeInstances before any create).
 * Add a state filter if terminated instances must be excluded.
 */
export function ec2OwnershipFilters(uid: string): { Name: string; Values: string[] }[] {
  return [
    { Name: `tag:${UID_TAG}`, Values: [uid] },
    { Name: `tag:${MANAGED_BY_TAG}`, Values: [MANAGED_BY_VALUE] },
  ];
}
