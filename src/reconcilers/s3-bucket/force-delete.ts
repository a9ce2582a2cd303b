/**
 * When spec.forceDelete may empty a bucket. For a bucket the object created, whenever it is true.
 * For a bucket the object adopted (taken over from outside the operator, or from another object),
 * only when it was set after the adoption: a manifest that asks for adoption and forceDelete at
 * once never empties a bucket someone else filled.
 *
 * The rule is kept in AWS, beside the ownership tags, so no loss of status can undo it: an object
 * that adopts a bucket while forceDelete is true writes the {@link FORCE_DELETE_HELD_TAG} (its
 * value: the object's generation at the adoption) in the same tag write that adopts it. While
 * the tag is there forceDelete is held: a deletion of the non-empty bucket waits with reason
 * BucketNotEmpty, as without forceDelete. The operator removes the tag when it sees forceDelete
 * false (in a steady reconcile or during the deletion); a forceDelete set true after that counts.
 * A set-and-reset the operator never saw in between leaves the hold in place: the safe side.
 */
import { OWNERSHIP_TAG_PREFIX, type TagMap } from "../../aws/ownership.ts";
import { InvalidSpecError } from "../common/driver.ts";
import { MAX_RESOURCE_TAGS } from "../common/tags.ts";
import type { S3BucketObject } from "./model.ts";

/** The tag that holds spec.forceDelete back on a bucket adopted while it was already true. */
export const FORCE_DELETE_HELD_TAG = `${OWNERSHIP_TAG_PREFIX}force-delete-held`;

/** The generation recorded by the hold on a bucket with `tags`, or undefined when forceDelete is not held. */
export function forceDeleteHeld(tags: Readonly<TagMap>): string | undefined {
  return tags[FORCE_DELETE_HELD_TAG];
}

/** Whether a deletion of the bucket with `tags` may empty it: forceDelete is true and not held. */
export function mayEmpty(obj: Pick<S3BucketObject, "spec">, tags: Readonly<TagMap>): boolean {
  return obj.spec.forceDelete && forceDeleteHeld(tags) === undefined;
}

/**
 * The tags the bucket should carry, `desired` plus the hold: written when the object adopts the
 * bucket (`adopting`) while forceDelete is true, kept while forceDelete stays true, dropped once
 * it is false.
 * @throws InvalidSpecError TooManyTags when the hold does not fit under AWS's tag limit.
 */
export function withForceDeleteHold(
  desired: Readonly<TagMap>,
  obj: Pick<S3BucketObject, "spec" | "metadata">,
  current: Readonly<TagMap>,
  adopting: boolean,
): TagMap {
  if (!obj.spec.forceDelete) return { ...desired };
  const held = adopting ? String(obj.metadata.generation ?? 0) : forceDeleteHeld(current);
  if (held === undefined) return { ...desired };
  if (Object.keys(desired).length >= MAX_RESOURCE_TAGS) {
    throw new InvalidSpecError(
      "TooManyTags",
      `AWS allows at most ${MAX_RESOURCE_TAGS} tags on a bucket; an adopted bucket with spec.forceDelete ` +
        `also carries the ${FORCE_DELETE_HELD_TAG} tag: remove one key from spec.tags, or set ` +
        `spec.forceDelete to false`,
    );
  }
  return { ...desired, [FORCE_DELETE_HELD_TAG]: held };
}

/** Why the deletion of a non-empty adopted bucket whose forceDelete is held waits. */
export function heldMessage(name: string, generation: string): string {
  return (
    `spec.forceDelete was already true when this object adopted bucket ${name} (generation ` +
    `${generation}), and an adopted bucket is emptied only by a forceDelete set after the adoption: ` +
    `set spec.forceDelete to false, wait until the operator has removed the ${FORCE_DELETE_HELD_TAG} ` +
    `tag from the bucket, then set it to true again`
  );
}
