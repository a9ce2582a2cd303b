/**
 * The shared informer cache: list+watch reflectors feeding an indexed, read-only store and
 * event handlers, one informer per resource per factory.
 */
export { Backoff, type BackoffOptions } from "../backoff.ts";
export { InformerFactory, type InformerFactoryOptions } from "./factory.ts";
export { deepFreeze, LAST_APPLIED_ANNOTATION, prepareForCache } from "./freeze.ts";
export {
  restListerWatcher,
  type ListerWatcher,
  type ListOptions,
  type WatchOptions,
} from "./lister-watcher.ts";
export { Reflector, type ReflectorOptions, type ReflectorSink } from "./reflector.ts";
export {
  DEFAULT_RESYNC_PERIOD_MS,
  SharedInformer,
  resourceLabel,
  type EventHandler,
  type HandlerRegistration,
  type SharedInformerOptions,
} from "./shared-informer.ts";
export {
  CONTROLLER_UID_INDEX,
  NAMESPACE_INDEX,
  controllerUidIndex,
  ObjectStore,
  type IndexFunc,
  type ObjectStoreOptions,
  type Store,
} from "./store.ts";
