/**
 * The controller loop: reconciler contract and result rules, event sources and predicates, the
 * worker pool, and a builder that wires them to the shared informers.
 */
export {
  TerminalError,
  isTerminalError,
  isPanicLike,
  type Reconciler,
  type ReconcileContext,
  type Request,
  type Result,
} from "./reconciler.ts";
export { Controller, type ControllerOptions } from "./controller.ts";
export { CacheSyncTimeoutError, ControllerStartedError } from "./errors.ts";
export {
  newControllerQueue,
  type ControllerQueue,
  type ControllerQueueOptions,
  type QueueGetResult,
} from "./queue.ts";
export {
  controllerOwnerMapper,
  kindSource,
  mappedSource,
  ownerSource,
  requestOf,
  type EnqueueOrigin,
  type EventSource,
  type InformerEventHandler,
  type InformerLike,
  type MapFunc,
  type OwnerKind,
  type SourceOptions,
} from "./sources.ts";
export {
  and,
  annotationChanged,
  custom,
  generationChanged,
  labelChanged,
  not,
  or,
  resourceVersionChanged,
  type Predicate,
} from "./predicates.ts";
export {
  ControllerBuilder,
  newControllerManagedBy,
  type BuilderControllerOptions,
  type BuilderDeps,
  type InformerProvider,
} from "./builder.ts";
export {
  controllerMetrics,
  initControllerMetrics,
  reconcileResultLabels,
  reconcileTimeBuckets,
  type ControllerMetrics,
  type ReconcileResultLabel,
} from "./metrics.ts";
