/**
 * References between objects of one namespace (a dead-letter queueRef, a notification queueRef,
 * a bucketRef): the cache index key of the object referred to, the objects that refer to a
 * changed object, found through such an index, as the keys to enqueue, whether the object
 * referred to is usable as its current spec says, and which statements of a policy a grant
 * would collide with.
 */
import { ConditionType, isConditionTrue, type Condition } from "../../api/v1/index.ts";
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

/**
 * Whether `o` is Ready and Synced with its current spec reconciled (status.observedGeneration
 * caught up with metadata.generation): what it grants or sets by that spec is in place in AWS.
 */
export function readyAsSpecified(o: {
  readonly metadata: { readonly generation?: number | undefined };
  readonly status?:
    | {
        readonly observedGeneration?: number | undefined;
        readonly conditions?: readonly Condition[] | undefined;
      }
    | undefined;
}): boolean {
  const conditions = o.status?.conditions;
  return (
    (o.status?.observedGeneration ?? -1) >= (o.metadata.generation ?? 0) &&
    isConditionTrue(conditions, ConditionType.Ready) &&
    isConditionTrue(conditions, ConditionType.Synced)
  );
}

/** The Sids of the statements of `policy` that are also among `sids` (the Sids a grant manages). */
export function conflictingSids(
  policy: { readonly Statement: readonly object[] } | undefined,
  sids: readonly string[],
): string[] {
  const taken = new Set(sids);
  return (policy?.Statement ?? []).flatMap((st) => {
    const sid = (st as { Sid?: unknown }).Sid;
    return typeof sid === "string" && taken.has(sid) ? [sid] : [];
  });
}
