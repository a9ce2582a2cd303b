/**
 * References between objects of one namespace (a dead-letter queueRef, a notification queueRef,
 * a bucketRef): the cache index key of the object referred to, and the objects that refer to a
 * changed object, found through such an index, as the keys to enqueue.
 */
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";

/** The index key of the object `name` in `namespace`: `namespace/name`. */
export function referenceKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

/**
 * The keys of the objects that refer to `changed`, found through `byIndex` (an index whose
 * values are {@link referenceKey}s): one lookup, whatever the number of objects in the namespace.
 */
export function referrers(
  byIndex: (key: string) => readonly Readonly<KubeObject>[],
  changed: KubeObject,
): Request[] {
  return byIndex(referenceKey(changed.metadata.namespace, changed.metadata.name ?? "")).map((o) => ({
    namespace: o.metadata.namespace ?? "",
    name: o.metadata.name ?? "",
  }));
}
