/**
 * The identity of the object that owns an AWS resource, as the ownership tags name it. Every
 * driver derives it the same way, from the object's metadata and kind.
 */
import type { Owner } from "../../aws/ownership.ts";
import type { ManagedObject } from "./managed-object.ts";

/** The UID of `obj`. @throws Error when the object has none (it was never stored). */
export function uidOf(obj: Pick<ManagedObject, "metadata">): string {
  const uid = obj.metadata.uid;
  if (uid === undefined || uid === "") throw new Error("the object has no metadata.uid");
  return uid;
}

/** The owner of the AWS resource of `obj`, an object of kind `kind`. */
export function ownerOf(obj: Pick<ManagedObject, "metadata">, kind: string): Owner {
  return {
    uid: uidOf(obj),
    namespace: obj.metadata.namespace ?? "",
    name: obj.metadata.name ?? "",
    kind,
  };
}
