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
