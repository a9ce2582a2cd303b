import { systemClock, type Clock, type TimerHandle } from "../clock.ts";
import { apiVersionOf, keyOf, type KubeObject, type ResourceType } from "../kube/object.ts";
import type { RestClient } from "../kube/rest.ts";
import { silentLogger, type Logger } from "../logging.ts";
import { prepareForCache } from "./freeze.ts";
import { restListerWatcher, type ListerWatcher } from "./lister-watcher.ts";
import { Reflector, type ReflectorSink, type ReflectorTuning } from "./reflector.ts";
import { ObjectStore, type IndexFunc, type Store } from "./store.ts";

/**
 * Callbacks for cache changes. They run synchronously, after the store reflects the change, in
 * registration order; one that throws is logged and the others still run. Keep them short
 * (enqueue a key): the next event waits for them.
 */
export interface EventHandler<T> {
  /** A new object. `isInInitialList` is true for the first list and for replays to late handlers. */
  onAdd?(obj: Readonly<T>, isInInitialList: boolean): void;
  /**
   * A changed object, or a periodic resync: then `oldObj === newObj` (the same reference), and
   * nothing was asked of the API server.
   */
  onUpdate?(oldObj: Readonly<T>, newObj: Readonly<T>): void;
  /** A deleted object, with its final (or, after a relist, its last known) state. */
  onDelete?(obj: Readonly<T>): void;
}

/** Returned by {@link SharedInformer.addEventHandler}. */
export interface HandlerRegistration {
  /** Stops delivery to this handler; idempotent. */
  remove(): void;
  /** Whether this handler has been told about every object of the informer's initial list. */
  hasSynced(): boolean;
}

/** Options of {@link SharedInformer}; the factory fills them from its own. */
export interface SharedInformerOptions<T extends KubeObject> extends ReflectorTuning {
  resource: ResourceType;
  /** Used to build the lister-watchers unless `listerWatcherFor` is given. */
  rest?: RestClient;
  /** Builds the list/watch calls for one namespace (undefined: all namespaces). */
  listerWatcherFor?: (namespace: string | undefined) => ListerWatcher<T>;
  /** Watch only these namespaces (ignored for cluster-scoped kinds). @default all namespaces */
  namespaces?: string[];
  /** Period of the resync (jittered by ±10%); 0 disables it. @default 36_000_000 (10 h) */
  resyncPeriodMs?: number;
  /**
   * Cache only the objects matching this label selector (`app=x,tier!=db`), filtered by the API
   * server; used with `rest` (a `listerWatcherFor` applies its own filter). @default every object
   */
  labelSelector?: string;
}

interface Registration<T> {
  handler: EventHandler<T>;
  active: boolean;
}

/** Default resync period: 10 hours, as controller-runtime's SyncPeriod. */
export const DEFAULT_RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/**
 * One cache of one resource type, fed by one reflector per watched namespace (or one
 * cluster-wide), shared by every handler in the process.
 *
 * Guarantees: the store is updated before handlers hear of a change; objects are deep-frozen
 * and stripped of `managedFields` and of kubectl's last-applied annotation; an update is delivered only when the resourceVersion changed
 * (except resync, which re-delivers every cached object as `onUpdate(obj, obj)` without any API
 * request); after a relist, cached objects missing from the new list are delivered as deletes
 * carrying their last known state; a handler that throws never stops the watch.
 */
export class SharedInformer<T extends KubeObject> {
  readonly resource: ResourceType;
  readonly #store: ObjectStore<T>;
  readonly #opts: SharedInformerOptions<T>;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #resyncMs: number;
  readonly #scopes: (string | undefined)[];
  readonly #syncedScopes = new Set<string | undefined>();
  #handlers: Registration<T>[] = [];
  #syncWaiters: (() => void)[] = [];
  #running = false;
  #stopped = false;
  #resyncTimer: TimerHandle | undefined;

  constructor(opts: SharedInformerOptions<T>) {
    if (opts.rest === undefined && opts.listerWatcherFor === undefined) {
      throw new Error("SharedInformer needs `rest` or `listerWatcherFor`");
    }
    this.resource = opts.resource;
    this.#opts = opts;
    this.#log = (opts.logger ?? silentLogger).child({ informer: resourceLabel(opts.resource) });
    this.#store = new ObjectStore<T>({ logger: this.#log });
    this.#clock = opts.clock ?? systemClock;
    this.#random = opts.random ?? Math.random;
    this.#resyncMs = opts.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    const ns =
      opts.resource.namespaced && opts.namespaces && opts.namespaces.length > 0
        ? [...new Set(opts.namespaces)]
        : [];
    this.#scopes = ns.length > 0 ? ns : [undefined];
  }

  /** The read-only cache. */
  get store(): Store<T> {
    return this.#store;
  }

  /**
   * Registers a handler. When objects are already cached it first receives `onAdd(obj, true)`
   * for each of them, synchronously, before this method returns; from then on it receives every
   * change. Handlers may be added before or after the informer starts.
   */
  addEventHandler(handler: EventHandler<T>): HandlerRegistration {
    const reg: Registration<T> = { handler, active: true };
    this.#handlers.push(reg);
    if (handler.onAdd !== undefined) {
      for (const obj of this.#store.list()) {
        if (!reg.active) break;
        this.#call(() => handler.onAdd?.(obj, true));
      }
    }
    return {
      remove: () => {
        reg.active = false;
        this.#handlers = this.#handlers.filter((r) => r !== reg);
      },
      hasSynced: () => this.hasSynced(),
    };
  }

  /**
   * Adds an index to the store (computed at once for cached objects).
   * @throws Error when an index of that name exists.
   */
  addIndexer(name: string, fn: (obj: T) => string[]): void {
    this.#store.addIndexer(name, fn as IndexFunc<T>);
  }

  /** True once every watched namespace has been listed and its objects delivered to handlers. */
  hasSynced(): boolean {
    return this.#syncedScopes.size === this.#scopes.length;
  }

  /**
   * Resolves `true` once synced, `false` if `signal` aborts or the informer stops first. Waiting
   * before the informer starts is allowed.
   */
  waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (this.#stopped || signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        this.#syncWaiters = this.#syncWaiters.filter((w) => w !== waiter);
        resolve(false);
      };
      const waiter = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve(this.hasSynced());
      };
      this.#syncWaiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Runs the reflectors until `signal` aborts, then resolves. Usually called by the factory.
   * @throws Error when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running || this.#stopped)
      throw new Error(`informer ${resourceLabel(this.resource)} already started`);
    this.#running = true;
    const o = this.#opts;
    const reflectors = this.#scopes.map(
      (scope) =>
        new Reflector<T>({
          lw: o.listerWatcherFor
            ? o.listerWatcherFor(scope)
            : restListerWatcher<T>(o.rest as RestClient, o.resource, scope, o.labelSelector),
          sink: this.#sinkFor(scope),
          resourceLabel: resourceLabel(o.resource),
          clock: this.#clock,
          logger: this.#log,
          random: this.#random,
          registry: o.registry,
          pageSize: o.pageSize,
          watchTimeoutMs: o.watchTimeoutMs,
          inactivityTimeoutMs: o.inactivityTimeoutMs,
          backoff: o.backoff,
        }),
    );
    try {
      await Promise.all(reflectors.map((r) => r.run(signal)));
    } finally {
      this.#stopped = true;
      if (this.#resyncTimer !== undefined) this.#clock.clearTimeout(this.#resyncTimer);
      this.#resyncTimer = undefined;
      this.#notifySyncWaiters();
    }
  }

  #sinkFor(scope: string | undefined): ReflectorSink<T> {
    return {
      replace: (items) => this.#replace(scope, items),
      upsert: (obj) => this.#upsert(obj),
      remove: (obj) => this.#remove(obj),
    };
  }

  #prepare(obj: T): Readonly<T> {
    if (obj.apiVersion === undefined && !Object.isFrozen(obj)) obj.apiVersion = apiVersionOf(this.resource);
    if (obj.kind === undefined && !Object.isFrozen(obj)) obj.kind = this.resource.kind;
    return prepareForCache(obj);
  }

  #replace(scope: string | undefined, items: T[]): void {
    const initial = !this.#syncedScopes.has(scope);
    const added: Readonly<T>[] = [];
    const updated: [Readonly<T>, Readonly<T>][] = [];
    const deleted: Readonly<T>[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const obj = this.#prepare(item);
      const key = keyOf(obj);
      seen.add(key);
      const old = this.#store.get(key);
      if (old === undefined) {
        this.#store.set(obj);
        added.push(obj);
      } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        this.#store.set(obj);
        updated.push([old, obj]);
      }
    }
    const inScope = scope === undefined ? this.#store.list() : this.#store.list(scope);
    for (const obj of inScope) {
      const key = keyOf(obj);
      if (!seen.has(key)) {
        this.#store.delete(key);
        deleted.push(obj);
      }
    }
    // Every handler call below sees the complete new list in the store.
    for (const obj of added) this.#dispatch((h) => h.onAdd?.(obj, initial));
    for (const [old, obj] of updated) this.#dispatch((h) => h.onUpdate?.(old, obj));
    for (const obj of deleted) this.#dispatch((h) => h.onDelete?.(obj));
    if (!initial) {
      this.#log.info(
        { added: added.length, updated: updated.length, deleted: deleted.length },
        "relist applied",
      );
      return;
    }
    this.#syncedScopes.add(scope);
    if (this.hasSynced()) {
      this.#log.info({ objects: this.#store.size }, "cache synced");
      this.#notifySyncWaiters();
      this.#scheduleResync();
    }
  }

  #upsert(item: T): void {
    const obj = this.#prepare(item);
    const old = this.#store.get(keyOf(obj));
    if (old !== undefined && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    this.#store.set(obj);
    if (old === undefined) this.#dispatch((h) => h.onAdd?.(obj, false));
    else this.#dispatch((h) => h.onUpdate?.(old, obj));
  }

  #remove(item: T): void {
    const obj = this.#prepare(item);
    this.#store.delete(keyOf(obj));
    this.#dispatch((h) => h.onDelete?.(obj));
  }

  #scheduleResync(): void {
    if (this.#resyncMs <= 0 || this.#stopped) return;
    const delay = this.#resyncMs * (0.9 + 0.2 * this.#random());
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.#resyncTimer = undefined;
      if (this.#stopped) return;
      const objects = this.#store.list();
      this.#log.debug({ objects: objects.length }, "resync");
      for (const obj of objects) this.#dispatch((h) => h.onUpdate?.(obj, obj));
      this.#scheduleResync();
    }, delay);
  }

  #dispatch(fn: (h: EventHandler<T>) => void): void {
    // Handlers added during this dispatch were already replayed the store, which includes this
    // change: deliver to the ones registered when it began.
    const regs = this.#handlers;
    const n = regs.length;
    for (let i = 0; i < n; i++) {
      const reg = regs[i];
      if (reg?.active) this.#call(() => fn(reg.handler));
    }
  }

  #call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err }, "event handler threw; the informer continues");
    }
  }

  #notifySyncWaiters(): void {
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    for (const w of waiters) w();
  }
}

/** Metric and log label of a resource: `plural` for the core group, else `plural.group`. */
export function resourceLabel(r: ResourceType): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}
