/**
 * Errors of the cached client, one class per failed step. Errors from the API server itself
 * arrive unchanged as `ApiError` / `TransportError` (src/runtime/kube/errors.ts).
 */
import type { ResourceType } from "../kube/object.ts";

/**
 * A cache read found the kind's informer not (yet) synced. Reading anyway could mistake a
 * missing object for a deleted one, so the client refuses; the reconcile fails and is retried.
 */
export class CacheNotSyncedError extends Error {
  override readonly name = "CacheNotSyncedError";
  readonly resource: ResourceType;

  constructor(resource: ResourceType) {
    super(`cache of ${resource.plural}.${resource.group || "core"} has not synced; is its informer started?`);
    this.resource = resource;
  }
}

/**
 * A write was asked for with an object it cannot be built from: no name, no namespace for a
 * namespaced kind, or no resourceVersion for an optimistic-concurrency update.
 */
export class InvalidObjectError extends Error {
  override readonly name = "InvalidObjectError";

  constructor(message: string) {
    super(message);
  }
}

/**
 * Adding or removing a finalizer kept hitting 409 Conflict: another writer changed the object
 * between each re-read and write, `attempts` times in a row. The last conflict is the `cause`.
 */
export class FinalizerConflictError extends Error {
  override readonly name = "FinalizerConflictError";
  readonly attempts: number;

  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause });
    this.attempts = attempts;
  }
}
