/**
 * Event sources: they turn informer events into requests. A source maps each event to zero or
 * more object keys (its own key, its controller owner's key, or whatever a map function returns),
 * filters adds and updates through predicates, and hands the keys to the controller's queue. The
 * event's object never travels further than this file.
 */
import type { Logger } from "../logging.ts";
import type { KubeObject, ResourceType } from "../kube/object.ts";
import type { Predicate } from "./predicates.ts";
import type { Request } from "./reconciler.ts";

/** Callbacks an informer invokes after updating its cache. */
export interface InformerEventHandler<T extends KubeObject> {
  onAdd(obj: T, isInInitialList: boolean): void;
  onUpdate(oldObj: T, newObj: T): void;
  onDelete(obj: T): void;
}

/**
 * The part of a shared informer a controller needs. A handler added after the informer has
 * synced must be sent an `onAdd` for every cached object (client-go semantics), so a controller
 * started late still sees every object once.
 */
export interface InformerLike<T extends KubeObject> {
  /** Registers a handler; the returned registration, when there is one, can remove it. */
  addEventHandler(handler: InformerEventHandler<T>): { remove(): void } | void;
  hasSynced(): boolean;
  waitForCacheSync(signal: AbortSignal): Promise<unknown>;
}

/** Maps an object to the requests it should trigger. */
export type MapFunc<T extends KubeObject> = (obj: T) => readonly Request[];

/** Options shared by every source. */
export interface SourceOptions<T extends KubeObject> {
  /**
   * All must pass for an add or update to enqueue. Deletes are never filtered.
   * @default []
   */
  predicates?: readonly Predicate<T>[];
}

/** Where an enqueued request comes from, when that is more than "something changed". */
export interface EnqueueOrigin {
  /** The object is in the informer's initial list, or its replay to a handler added late. */
  readonly initialList?: boolean;
}

/**
 * A type-erased event source the controller can start. Obtain one from {@link kindSource},
 * {@link ownerSource} or {@link mappedSource}.
 */
export interface EventSource {
  /** For logs: what the source watches and how it maps. */
  readonly description: string;
  /**
   * Registers the source's handler on its informer. The handler never throws into the informer:
   * a throwing predicate is logged and treated as passing (an extra reconcile is harmless, a lost
   * one is not); a throwing map function is logged and enqueues nothing for that object.
   * Returns a function that removes the handler again (a no-op for informers that cannot).
   * `enqueue` is told when the object comes from the informer's initial list (or its replay to
   * a handler added late): what the cache holds, not a change.
   */
  attach(enqueue: (req: Request, origin?: EnqueueOrigin) => void, logger: Logger): () => void;
  hasSynced(): boolean;
  waitForCacheSync(signal: AbortSignal): Promise<unknown>;
}

/** Enqueues the object's own key (controller-runtime's `For` / `EnqueueRequestForObject`). */
export function kindSource<T extends KubeObject>(
  informer: InformerLike<T>,
  opts: SourceOptions<T> = {},
): EventSource {
  return makeSource("kind", informer, (obj) => [requestOf(obj)], opts);
}

/**
 * Identifies the owner kind for {@link ownerSource}. A `ResourceType` fits. `group` is matched
 * against the owner reference's `apiVersion` when given; `namespaced` (default true) decides
 * whether the owner key carries the owned object's namespace.
 */
export interface OwnerKind {
  kind: string;
  group?: string;
  namespaced?: boolean;
}

/**
 * Enqueues the key of the object's controller owner (the owner reference with
 * `controller: true`) when that owner is of the given kind (controller-runtime's `Owns`). On
 * update, owners of both the old and the new object are enqueued, so a change of owner wakes both.
 */
export function ownerSource<T extends KubeObject>(
  informer: InformerLike<T>,
  owner: string | OwnerKind | ResourceType,
  opts: SourceOptions<T> = {},
): EventSource {
  const spec: OwnerKind = typeof owner === "string" ? { kind: owner } : owner;
  return makeSource(`owner(${spec.kind})`, informer, controllerOwnerMapper(spec), opts);
}

/** Enqueues whatever `map` returns for the object (controller-runtime's `Watches` + map func). */
export function mappedSource<T extends KubeObject>(
  informer: InformerLike<T>,
  map: MapFunc<T>,
  opts: SourceOptions<T> = {},
): EventSource {
  return makeSource("mapped", informer, map, opts);
}

/** The request naming `obj` itself. */
export function requestOf(obj: KubeObject): Request {
  const ns = obj.metadata.namespace;
  return ns ? { namespace: ns, name: obj.metadata.name ?? "" } : { name: obj.metadata.name ?? "" };
}

/**
 * The map function of {@link ownerSource}: the request for `obj`'s controller owner, if it has
 * one of the given kind. Owner references never cross namespaces, so a namespaced owner is looked
 * for in the owned object's namespace, and a cluster-scoped object cannot have a namespaced owner.
 */
export function controllerOwnerMapper(owner: OwnerKind): MapFunc<KubeObject> {
  const namespaced = owner.namespaced ?? true;
  return (obj) => {
    const ref = obj.metadata.ownerReferences?.find((r) => r.controller === true);
    if (ref === undefined || ref.kind !== owner.kind) return [];
    if (owner.group !== undefined && groupOf(ref.apiVersion) !== owner.group) return [];
    if (!namespaced) return [{ name: ref.name }];
    const ns = obj.metadata.namespace;
    return ns ? [{ namespace: ns, name: ref.name }] : [];
  };
}

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}

function makeSource<T extends KubeObject>(
  kind: string,
  informer: InformerLike<T>,
  map: MapFunc<T>,
  opts: SourceOptions<T>,
): EventSource {
  const predicates = opts.predicates ?? [];
  const description = `${kind} source`;
  return {
    description,
    hasSynced: () => informer.hasSynced(),
    waitForCacheSync: (signal) => informer.waitForCacheSync(signal),
    attach(enqueue, logger) {
      const emit = (objs: readonly T[], origin?: EnqueueOrigin): void => {
        for (const obj of objs) {
          let reqs: readonly Request[];
          try {
            reqs = map(obj);
          } catch (err) {
            logger.error(
              { err, source: description, object: requestOf(obj) },
              "event source map function failed",
            );
            continue;
          }
          for (const req of reqs) enqueue(req, origin);
        }
      };
      const passes = (test: (p: Predicate<T>) => boolean, obj: T): boolean => {
        try {
          return predicates.every(test);
        } catch (err) {
          logger.error(
            { err, source: description, object: requestOf(obj) },
            "predicate failed; enqueueing anyway",
          );
          return true;
        }
      };
      const registration = informer.addEventHandler({
        onAdd(obj, isInInitialList) {
          if (passes((p) => p.create(obj, isInInitialList), obj))
            emit([obj], isInInitialList ? { initialList: true } : undefined);
        },
        onUpdate(oldObj, newObj) {
          if (passes((p) => p.update(oldObj, newObj), newObj))
            emit(oldObj === newObj ? [newObj] : [oldObj, newObj]);
        },
        onDelete(obj) {
          emit([obj]);
        },
      });
      return () => registration?.remove();
    },
  };
}
