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
 * Makes `obj` ready for the cache: `metadata.managedFields` removed, then deep-frozen.
 * Takes ownership of `obj` (it is modified in place) unless it is already frozen, in which case a
 * copy is made. The result is the object consumers receive; mutate a `structuredClone` of it.
 */
export function prepareForCache<T extends KubeObject>(obj: T): Readonly<T> {
  let target = obj;
  if (target.metadata?.managedFields !== undefined) {
    if (Object.isFrozen(target) || Object.isFrozen(target.metadata)) target = structuredClone(target);
    delete target.metadata.managedFields;
  }
  return deepFreeze(target);
}
