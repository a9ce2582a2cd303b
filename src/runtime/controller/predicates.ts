/**
 * Predicates decide whether an informer event enqueues a key. They filter add and update events
 * only: deletes always enqueue (a missed delete would leak external resources), and a
 * reconcile's own `requeueAfter` never passes through a predicate, so polling cannot be
 * filtered away.
 */
import type { KubeObject } from "../kube/object.ts";

/**
 * Filters events before they reach the queue. Both functions must be pure and cheap: they run on
 * the informer's delivery path, once per event per controller.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  /** An object entered the cache (`isInInitialList` during the first list or a relist). */
  create(obj: T, isInInitialList: boolean): boolean;
  /**
   * An object changed. On a periodic resync `oldObj === newObj`; predicates comparing the two
   * therefore drop resyncs (rely on `requeueAfter` for polling, not on resync).
   */
  update(oldObj: T, newObj: T): boolean;
}

/**
 * Passes creates, and updates whose `metadata.generation` changed: spec edits and the start of
 * a deletion, but not status or metadata-only writes. Objects of kinds that never set a
 * generation never pass an update. Drops resync events.
 */
export function generationChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    create: () => true,
    update: (oldObj, newObj) => oldObj.metadata.generation !== newObj.metadata.generation,
  };
}

/**
 * Passes creates, and updates whose `metadata.resourceVersion` changed: every real write, but not
 * the periodic resync re-delivery of an unchanged object.
 */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    create: () => true,
    update: (oldObj, newObj) => oldObj.metadata.resourceVersion !== newObj.metadata.resourceVersion,
  };
}

/**
 * Passes creates, and updates that changed the annotations (every annotation when `keys` is
 * omitted, otherwise only the listed keys). Drops resync events.
 */
export function annotationChanged<T extends KubeObject = KubeObject>(keys?: readonly string[]): Predicate<T> {
  return {
    create: () => true,
    update: (oldObj, newObj) => mapChanged(oldObj.metadata.annotations, newObj.metadata.annotations, keys),
  };
}

/** Like {@link annotationChanged}, for labels. */
export function labelChanged<T extends KubeObject = KubeObject>(keys?: readonly string[]): Predicate<T> {
  return {
    create: () => true,
    update: (oldObj, newObj) => mapChanged(oldObj.metadata.labels, newObj.metadata.labels, keys),
  };
}

/** A predicate from functions; an omitted function passes every event of its type. */
export function custom<T extends KubeObject = KubeObject>(fns: Partial<Predicate<T>>): Predicate<T> {
  return {
    create: fns.create ?? (() => true),
    update: fns.update ?? (() => true),
  };
}

/** Passes an event only when every predicate does; `and()` passes everything. */
export function and<T extends KubeObject = KubeObject>(...preds: readonly Predicate<T>[]): Predicate<T> {
  return {
    create: (obj, initial) => preds.every((p) => p.create(obj, initial)),
    update: (oldObj, newObj) => preds.every((p) => p.update(oldObj, newObj)),
  };
}

/** Passes an event when at least one predicate does; `or()` passes nothing. */
export function or<T extends KubeObject = KubeObject>(...preds: readonly Predicate<T>[]): Predicate<T> {
  return {
    create: (obj, initial) => preds.some((p) => p.create(obj, initial)),
    update: (oldObj, newObj) => preds.some((p) => p.update(oldObj, newObj)),
  };
}

/** Inverts a predicate (deletes are still not filtered). */
export function not<T extends KubeObject = KubeObject>(pred: Predicate<T>): Predicate<T> {
  return {
    create: (obj, initial) => !pred.create(obj, initial),
    update: (oldObj, newObj) => !pred.update(oldObj, newObj),
  };
}

function mapChanged(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
  keys: readonly string[] | undefined,
): boolean {
  if (a === b) return false;
  const left = a ?? {};
  const right = b ?? {};
  const names = keys ?? [...new Set([...Object.keys(left), ...Object.keys(right)])];
  return names.some((k) => left[k] !== right[k]);
}
