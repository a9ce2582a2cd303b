/**
 * The cached client: cache reads, API-server writes, conflict-proof finalizers, not-found helpers.
 */
export { Client, DEFAULT_FIELD_MANAGER, type ClientOptions } from "./client.ts";
export {
  ResourceClient,
  type CacheProvider,
  type CachedInformerLike,
  type DeleteOptions,
  type DeleteResult,
  type ListOptions,
  type ObjectRef,
  type ResourceClientDeps,
  type RestLike,
  type WriteOptions,
} from "./resource-client.ts";
export {
  addFinalizer,
  hasFinalizer,
  removeFinalizer,
  type FinalizerOptions,
  type FinalizerTarget,
} from "./finalizers.ts";
export { patchContentType, type ApplyObject, type JsonPatchOp, type Patch } from "./patch.ts";
export { ignoreNotFound, isNotFound, rethrowUnlessNotFound } from "./not-found.ts";
export { CacheNotSyncedError, FinalizerConflictError, InvalidObjectError } from "./errors.ts";
