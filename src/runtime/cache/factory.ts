import type { KubeObject, ResourceType } from "../kube/object.ts";
import type { RestClient } from "../kube/rest.ts";
import { silentLogger, type Logger } from "../logging.ts";
import type { Runnable } from "../manager/runnable.ts";
import type { ListerWatcher } from "./lister-watcher.ts";
import type { ReflectorTuning } from "./reflector.ts";
import { SharedInformer } from "./shared-informer.ts";
import type { IndexFunc } from "./store.ts";

/** Options of {@link InformerFactory}, passed on to every informer it creates. */
export interface InformerFactoryOptions extends ReflectorTuning {
  rest: RestClient;
  /**
   * Replaces the list/watch calls built on `rest` (tests drive the reflector logic with an
   * in-memory fake this way); it gets the resource's label selector to apply. @default
   * restListerWatcher(rest, resource, namespace, labelSelector)
   */
  listerWatcherFor?: (
    resource: ResourceType,
    namespace: string | undefined,
    labelSelector: string | undefined,
  ) => ListerWatcher<KubeObject>;
  /** Watch only these namespaces (namespaced kinds). @default all namespaces */
  namespaces?: string[];
  /**
   * The namespaces the informer of a resource watches instead of `namespaces`, if any (a
   * resource the operator may read in a few namespaces only). @default `namespaces` for every resource
   */
  namespacesFor?: (resource: ResourceType) => string[] | undefined;
  /** Resync period, jittered ±10%; 0 disables. @default 36_000_000 (10 h) */
  resyncPeriodMs?: number;
  /**
   * The label selector restricting the informer of a resource, if any (controller-runtime's
   * per-object cache selector): that informer lists and watches only matching objects, so the
   * cache of a common kind (ConfigMaps) holds only the objects the operator cares about.
   * @default no selector for any resource
   */
  labelSelectorFor?: (resource: ResourceType) => string | undefined;
  /**
   * Further indexes of the informer of a resource, by name, added when the informer is created
   * (so every reader can rely on them). @default none beyond the namespace index
   */
  indexersFor?: (resource: ResourceType) => Readonly<Record<string, IndexFunc<KubeObject>>> | undefined;
}

/**
 * Hands out one {@link SharedInformer} per resource (group, version, plural) and runs them all:
 * the process-wide cache shared by every controller. Informers requested after `start` start at
 * once. A `Runnable` for the manager; it runs on every replica, leader or not.
 */
export class InformerFactory implements Runnable {
  readonly name = "informer-factory";
  readonly needLeaderElection = false;
  readonly #opts: InformerFactoryOptions;
  readonly #log: Logger;
  readonly #informers = new Map<string, SharedInformer<KubeObject>>();
  readonly #runs: Promise<void>[] = [];
  #signal: AbortSignal | undefined;
  #stopped = false;
  #onStopped: (() => void)[] = [];
  readonly #started = Promise.withResolvers<void>();

  constructor(opts: InformerFactoryOptions) {
    this.#opts = opts;
    this.#log = opts.logger ?? silentLogger;
  }

  /**
   * The informer of `resource`, created on first request. Every caller gets the same instance,
   * so `T` must agree between callers.
   */
  informerFor<T extends KubeObject>(resource: ResourceType): SharedInformer<T> {
    const key = `${resource.group}/${resource.version}/${resource.plural}`;
    let inf = this.#informers.get(key);
    if (inf === undefined) {
      const o = this.#opts;
      const labelSelector = o.labelSelectorFor?.(resource);
      const lw = o.listerWatcherFor;
      inf = new SharedInformer<KubeObject>({
        resource,
        rest: o.rest,
        logger: this.#log,
        listerWatcherFor:
          lw === undefined ? undefined : (ns: string | undefined) => lw(resource, ns, labelSelector),
        namespaces: o.namespacesFor?.(resource) ?? o.namespaces,
        labelSelector,
        resyncPeriodMs: o.resyncPeriodMs,
        clock: o.clock,
        registry: o.registry,
        pageSize: o.pageSize,
        watchTimeoutMs: o.watchTimeoutMs,
        inactivityTimeoutMs: o.inactivityTimeoutMs,
        backoff: o.backoff,
        random: o.random,
      });
      for (const [name, fn] of Object.entries(o.indexersFor?.(resource) ?? {})) inf.addIndexer(name, fn);
      this.#informers.set(key, inf);
      if (this.#signal !== undefined && !this.#stopped) this.#launch(inf, this.#signal);
    }
    return inf as unknown as SharedInformer<T>;
  }

  /** Every informer created so far. */
  informers(): SharedInformer<KubeObject>[] {
    return [...this.#informers.values()];
  }

  /**
   * Starts every informer, including ones requested later, and resolves once `signal` has
   * aborted and all of them have stopped.
   * @throws Error when called twice.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#signal !== undefined) throw new Error("informer factory already started");
    this.#signal = signal;
    this.#started.resolve();
    for (const inf of this.#informers.values()) this.#launch(inf, signal);
    if (!signal.aborted)
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    // Informers launched while the earlier ones were stopping are in #runs too.
    for (let settled = 0; settled < this.#runs.length;) {
      const n = this.#runs.length;
      await Promise.all(this.#runs.slice(settled, n));
      settled = n;
    }
    this.#stopped = true;
    const waiters = this.#onStopped;
    this.#onStopped = [];
    for (const w of waiters) w();
  }

  /** True when every informer created so far has synced (and at least the factory started). */
  hasSynced(): boolean {
    if (this.#signal === undefined) return false;
    for (const inf of this.#informers.values()) if (!inf.hasSynced()) return false;
    return true;
  }

  /**
   * Resolves `true` once every informer created so far (and any created while waiting) has
   * synced; `false` if `signal` aborts or the factory stops first. May be called before `start`.
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#stopped) return this.hasSynced();
    if (signal?.aborted) return false;
    const aborted = new Promise<boolean>((resolve) => {
      this.#onStopped.push(() => resolve(false));
      signal?.addEventListener("abort", () => resolve(false), { once: true });
    });
    if (
      this.#signal === undefined &&
      !(await Promise.race([this.#started.promise.then(() => true), aborted]))
    ) {
      return false;
    }
    for (;;) {
      const infs = [...this.#informers.values()];
      const ok = await Promise.race([
        Promise.all(infs.map((i) => i.waitForCacheSync(signal))).then((r) => r.every(Boolean)),
        aborted,
      ]);
      if (!ok) return false;
      if (this.#informers.size === infs.length) return true;
    }
  }

  #launch(inf: SharedInformer<KubeObject>, signal: AbortSignal): void {
    this.#runs.push(
      inf.run(signal).catch((err: unknown) => {
        this.#log.error({ err, resource: inf.resource.plural }, "informer stopped with an error");
      }),
    );
  }
}
