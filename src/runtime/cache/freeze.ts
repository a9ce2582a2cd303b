import type { KubeObject } from "../kube/object.ts";

/**
 * Freezes `value` and everything reachable from it. Already-frozen subtrees are skipped, so
 * freezing an object that shares parts with a cached one costs only the new parts.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) {
      if (typeof child === "object" && child !== null && !Object.isFrozen(child)) stack.push(child);
    }
  }
  return value;
}

/**
 * The annotation `kubectl apply` keeps a copy of the whole applied object in. No reconcile reads
 * it (nor `managedFields`); kept in the cache it would roughly double each applied object.
 */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Makes `obj` ready for the cache: `metadata.managedFields` and the
 * {@link LAST_APPLIED_ANNOTATION} removed (the cache keeps what reconciles read), then
 * deep-frozen. Takes ownership of `obj` (it is modified in place) unless it is already frozen, in
 * which case a copy is made. The result is the object consumers receive; mutate a
 * `structuredClone` of it.
 */
export function prepareForCache<T extends KubeObject>(obj: T): Readonly<T> {
  let target = obj;
  const annotations = target.metadata?.annotations;
  const lastApplied = annotations !== undefined && LAST_APPLIED_ANNOTATION in annotations;
  if (target.metadata?.managedFields !== undefined || lastApplied) {
    if (Object.isFrozen(target) || Object.isFrozen(target.metadata) || Object.isFrozen(annotations))
      target = structuredClone(target);
    delete target.metadata.managedFields;
    const a = target.metadata.annotations;
    if (lastApplied && a !== undefined) {
      delete a[LAST_APPLIED_ANNOTATION];
      if (Object.keys(a).length === 0) delete target.metadata.annotations;
    }
  }
  return deepFreeze(target);
}
