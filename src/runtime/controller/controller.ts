/**
 * The controller: event sources feed keys into a rate-limiting work queue, and a fixed pool of
 * async workers takes keys off it and calls the reconciler, applying controller-runtime's result
 * rules to decide whether and when each key comes back.
 */
import { randomUUID } from "node:crypto";
import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.ts";
import { keyOf, parseKey, type KubeObject, type ResourceType } from "../kube/object.ts";
import { silentLogger, type Logger } from "../logging.ts";
import type { Runnable } from "../manager/runnable.ts";
import { defaultRegistry } from "../metrics/registry.ts";
import { controllerMetrics, initControllerMetrics, type ControllerMetrics } from "./metrics.ts";
import {
  isPanicLike,
  isTerminalError,
  type ReconcileCause,
  type Reconciler,
  type Result,
} from "./reconciler.ts";
import {
  kindSource,
  mappedSource,
  ownerSource,
  type EnqueueOrigin,
  type EventSource,
  type InformerLike,
  type MapFunc,
  type OwnerKind,
  type SourceOptions,
} from "./sources.ts";
import { newControllerQueue, type ControllerQueue } from "./queue.ts";
import { CacheSyncTimeoutError, ControllerStartedError } from "./errors.ts";

/** Options of {@link Controller}; normalised once by the constructor. */
export interface ControllerOptions {
  /**
   * Unique per process: the `controller` label of every metric, the queue's name and the
   * `controller` field of every log line.
   */
  name: string;
  reconciler: Reconciler;
  /**
   * Number of workers, hence of reconciles running at once (for different keys; one key is
   * never reconciled twice at once whatever this number).
   * @default 1
   */
  maxConcurrentReconciles?: number;
  /**
   * The queue the controller owns (it shuts it down on stop). Inject one for tests or a custom
   * rate limiter.
   * @default a RateLimitingQueue named after the controller, with defaultControllerRateLimiter()
   */
  queue?: ControllerQueue;
  /** @default silentLogger */
  logger?: Logger;
  /** @default systemClock */
  clock?: Clock;
  /** Where the `controller_runtime_*` metrics are registered. @default defaultRegistry */
  registry?: Registry;
  /**
   * How long `start` waits for the sources' caches to sync before it rejects with a
   * {@link CacheSyncTimeoutError}, in milliseconds.
   * @default 120_000
   */
  cacheSyncTimeout?: number;
  /**
   * How long, after the stop signal, in-flight reconciles may run before their `signal` is
   * aborted and `start` resolves without waiting for them, in milliseconds.
   * @default 30_000
   */
  gracefulShutdownTimeout?: number;
}

/**
 * Runs one reconciler over the keys its event sources produce.
 *
 * Guarantees:
 * - One key is never reconciled by two workers at once (the queue's single-flight rule), and
 *   every key taken from the queue is handed back with `done` in a `finally`, so no return path
 *   or exception can strand it.
 * - Result rules (controller-runtime): success → `forget`; `requeueAfter > 0` → `forget` then
 *   `addAfter`; a thrown error → `addRateLimited` (per-key exponential backoff); a
 *   {@link TerminalError} → no requeue. Errors are logged and counted; no exception escapes a
 *   worker.
 * - Each reconcile is told its cause: `poll` when the key comes back only for the poll its last
 *   reconcile asked for (`Result.poll`), or only for the cache's initial list when the controller
 *   starts; `work` when anything else enqueued it, before it came back or while it was being
 *   reconciled. The reconciler hears of each key the initial list enqueues as a poll when it is
 *   enqueued (`Reconciler.pollQueued`), so it can count the whole replay as due.
 * - Workers start only after every source's cache has synced, so a reconcile never mistakes an
 *   unsynced cache for a deleted object.
 * - On stop no new reconcile starts; in-flight ones finish, bounded by `gracefulShutdownTimeout`.
 *
 * Event handlers are registered on the informers when `start` runs (not when a source is added),
 * so a controller that never becomes leader queues nothing. A controller starts once.
 */
export class Controller implements Runnable {
  readonly name: string;
  readonly needLeaderElection = true;
  readonly #reconciler: Reconciler;
  readonly #workers: number;
  readonly #queue: ControllerQueue;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #metrics: ControllerMetrics;
  readonly #cacheSyncTimeout: number;
  readonly #gracefulShutdownTimeout: number;
  readonly #sources: EventSource[] = [];
  #started = false;
  /**
   * Keys whose next reconcile is a poll: their last reconcile ended with a poll requeue (or they
   * came with the initial list), and nothing has enqueued them since.
   */
  readonly #polls = new Set<string>();
  /** Keys being reconciled, each with whether something enqueued it meanwhile. */
  readonly #active = new Map<string, boolean>();
  /** Set once the stop signal fired: workers then hand keys back without reconciling them. */
  #stopping = false;
  #inFlight = 0;

  constructor(opts: ControllerOptions) {
    if (!opts.name) throw new TypeError("Controller: name must not be empty");
    const workers = opts.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new TypeError(
        `Controller ${opts.name}: maxConcurrentReconciles must be a positive integer, got ${workers}`,
      );
    }
    this.name = opts.name;
    this.#reconciler = opts.reconciler;
    this.#workers = workers;
    this.#clock = opts.clock ?? systemClock;
    const registry = opts.registry ?? defaultRegistry;
    this.#queue = opts.queue ?? newControllerQueue({ name: opts.name, clock: this.#clock, registry });
    this.#logger = (opts.logger ?? silentLogger).child({ controller: opts.name });
    this.#metrics = controllerMetrics(registry);
    this.#cacheSyncTimeout = opts.cacheSyncTimeout ?? 120_000;
    this.#gracefulShutdownTimeout = opts.gracefulShutdownTimeout ?? 30_000;
    initControllerMetrics(this.#metrics, this.name, this.#workers);
  }

  /** Reconciles objects of the informer's kind on their own events (controller-runtime `For`). */
  for<T extends KubeObject>(informer: InformerLike<T>, opts?: SourceOptions<T>): this {
    return this.watch(kindSource(informer, opts));
  }

  /**
   * Reconciles the controller owner of objects of the informer's kind when they change
   * (controller-runtime `Owns`).
   */
  owns<T extends KubeObject>(
    informer: InformerLike<T>,
    owner: string | OwnerKind | ResourceType,
    opts?: SourceOptions<T>,
  ): this {
    return this.watch(ownerSource(informer, owner, opts));
  }

  /** Reconciles whatever `map` returns for objects of the informer's kind when they change. */
  watches<T extends KubeObject>(informer: InformerLike<T>, map: MapFunc<T>, opts?: SourceOptions<T>): this {
    return this.watch(mappedSource(informer, map, opts));
  }

  /** Adds an event source. Only before {@link start}. */
  watch(source: EventSource): this {
    if (this.#started) throw new ControllerStartedError(this.name);
    this.#sources.push(source);
    return this;
  }

  /** Number of reconciles running right now. */
  get activeReconciles(): number {
    return this.#inFlight;
  }

  /**
   * Attaches the sources, waits for their caches, runs the workers until `signal` aborts, then
   * drains and detaches the sources' handlers from the informers. Resolves once stopped (or once the graceful timeout expired, after aborting the
   * in-flight reconciles' signals). Rejects with {@link CacheSyncTimeoutError} when the caches do
   * not sync in time, and with {@link ControllerStartedError} when called twice.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerStartedError(this.name);
    this.#started = true;
    const log = this.#logger;
    if (signal.aborted) {
      this.#queue.shutDown();
      return;
    }
    log.info({ sources: this.#sources.map((s) => s.description) }, "starting event sources");
    const enqueue = (req: { namespace?: string; name: string }, origin?: EnqueueOrigin): void => {
      const key = keyOf(req);
      // The cache's replay when the controller starts is a poll too; anything else is work.
      if (origin?.initialList === true && !this.#active.has(key)) {
        this.#polls.add(key);
        this.#reconciler.pollQueued?.(req);
      } else {
        this.#polls.delete(key);
        if (this.#active.has(key)) this.#active.set(key, true);
      }
      this.#queue.add(key);
    };
    const detach = this.#sources.map((source) => source.attach(enqueue, log));
    try {
      await this.#run(signal);
    } finally {
      for (const d of detach) d();
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    const log = this.#logger;
    const synced = await this.#waitForSync(signal);
    if (!synced) {
      this.#queue.shutDown();
      if (signal.aborted) return;
      throw new CacheSyncTimeoutError(this.name, this.#cacheSyncTimeout);
    }

    log.info({ workers: this.#workers }, "starting workers");
    const hardStop = new AbortController();
    const workers = Array.from({ length: this.#workers }, () => this.#runWorker(hardStop.signal));
    await abortedPromise(signal);

    this.#stopping = true;
    log.info({ inFlight: this.#inFlight }, "stopping: waiting for in-flight reconciles");
    const finished = Promise.all([this.#queue.shutDownWithDrain(), ...workers]).then(() => true);
    const timer = deferTimeout(this.#clock, this.#gracefulShutdownTimeout);
    const inTime = await Promise.race([finished, timer.promise]);
    timer.cancel();
    if (!inTime) {
      log.error(
        { inFlight: this.#inFlight, timeoutMs: this.#gracefulShutdownTimeout },
        "graceful shutdown timed out; aborting in-flight reconciles",
      );
      hardStop.abort(new Error(`controller ${this.name}: graceful shutdown timed out`));
      return;
    }
    log.info("all workers finished");
  }

  async #waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.#sources.every((s) => s.hasSynced())) return true;
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const timer = this.#clock.setTimeout(
      () => ac.abort(new CacheSyncTimeoutError(this.name, this.#cacheSyncTimeout)),
      this.#cacheSyncTimeout,
    );
    try {
      const all = Promise.all(this.#sources.map((s) => s.waitForCacheSync(ac.signal))).then(
        () => undefined,
        (err: unknown) => {
          if (!ac.signal.aborted) this.#logger.error({ err }, "waiting for cache sync failed");
        },
      );
      // An informer that ignores the signal must not hold the controller hostage.
      await Promise.race([all, abortedPromise(ac.signal)]);
    } finally {
      this.#clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
    return !signal.aborted && this.#sources.every((s) => s.hasSynced());
  }

  async #runWorker(signal: AbortSignal): Promise<void> {
    for (;;) {
      let got: Awaited<ReturnType<ControllerQueue["get"]>>;
      try {
        got = await this.#queue.get();
      } catch (err) {
        this.#logger.error({ err }, "work queue get failed; worker exiting");
        return;
      }
      if (got.shutdown) return;
      await this.#processItem(got.item, signal);
    }
  }

  /** Never throws; always hands `key` back to the queue with `done`. */
  async #processItem(key: string, signal: AbortSignal): Promise<void> {
    const controller = this.name;
    try {
      if (this.#stopping) return;
      this.#inFlight++;
      this.#metrics.activeWorkers.inc({ controller });
      const cause = this.#polls.delete(key) ? "poll" : "work";
      this.#active.set(key, false);
      try {
        await this.#reconcileHandler(key, cause, signal);
      } finally {
        this.#active.delete(key);
        this.#inFlight--;
        this.#metrics.activeWorkers.dec({ controller });
      }
    } catch (err) {
      this.#logger.error({ err, key }, "unexpected error while handling a reconcile result");
    } finally {
      this.#queue.done(key);
    }
  }

  async #reconcileHandler(key: string, cause: ReconcileCause, signal: AbortSignal): Promise<void> {
    const controller = this.name;
    const m = this.#metrics;
    const req = parseKey(key);
    const reconcileId = randomUUID();
    const logger = this.#logger.child({ namespace: req.namespace, name: req.name, reconcileId });
    const started = this.#clock.now();
    let result: Result | undefined;
    let failure: { err: unknown } | undefined;
    try {
      result = await this.#reconciler.reconcile(req, { logger, signal, reconcileId, cause });
    } catch (err) {
      failure = { err };
    }
    m.reconcileTime.observe({ controller }, Math.max(0, this.#clock.now() - started) / 1000);

    if (failure !== undefined) {
      const { err } = failure;
      if (isPanicLike(err)) {
        m.reconcilePanics.inc({ controller });
        logger.error({ err }, "observed a panic in reconciler");
      }
      if (isTerminalError(err)) {
        m.terminalReconcileErrors.inc({ controller });
      } else {
        this.#queue.addRateLimited(key);
      }
      m.reconcileErrors.inc({ controller });
      m.reconcileTotal.inc({ controller, result: "error" });
      logger.error({ err, terminal: isTerminalError(err) }, "reconciler error");
      return;
    }

    const after = result?.requeueAfter;
    this.#queue.forget(key);
    if (typeof after === "number" && Number.isFinite(after) && after > 0) {
      // A poll stays one only if nothing enqueued the key while it was being reconciled.
      if (result?.poll === true && this.#active.get(key) === false) this.#polls.add(key);
      this.#queue.addAfter(key, after);
      m.reconcileTotal.inc({ controller, result: "requeue_after" });
      logger.debug({ requeueAfterMs: after }, "reconcile done, requeueing after delay");
    } else {
      m.reconcileTotal.inc({ controller, result: "success" });
      logger.debug("reconcile succeeded");
    }
  }
}

/** Resolves (never rejects) once `signal` is aborted. */
function abortedPromise(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/** A promise resolving to `false` after `ms` on `clock`, unless cancelled first. */
function deferTimeout(clock: Clock, ms: number): { promise: Promise<false>; cancel(): void } {
  let handle: ReturnType<Clock["setTimeout"]> | undefined;
  const promise = new Promise<false>((resolve) => {
    handle = clock.setTimeout(() => resolve(false), ms);
  });
  return {
    promise,
    cancel: () => {
      if (handle !== undefined) clock.clearTimeout(handle);
    },
  };
}
