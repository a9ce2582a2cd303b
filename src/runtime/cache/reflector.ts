import type { Counter, Registry } from "prom-client";
import { systemClock, type Clock, type TimerHandle } from "../clock.ts";
import { ApiError, isGone, type Status } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { silentLogger, type Logger } from "../logging.ts";
import { counter, defaultRegistry } from "../metrics/registry.ts";
import { Backoff, type BackoffOptions } from "../backoff.ts";
import { RepeatedFailureLog } from "./failure-log.ts";
import type { ListerWatcher } from "./lister-watcher.ts";

/** Where a reflector delivers what it learns. Calls are synchronous and in stream order. */
export interface ReflectorSink<T extends KubeObject> {
  /** A complete list: the reflector's slice of the cache must now equal `items`. */
  replace(items: T[], resourceVersion: string): void;
  /** An ADDED or MODIFIED event. */
  upsert(obj: T): void;
  /** A DELETED event; `obj` is the object's final state. */
  remove(obj: T): void;
}

/** Options of {@link Reflector}. */
export interface ReflectorOptions<T extends KubeObject> extends ReflectorTuning {
  lw: ListerWatcher<T>;
  sink: ReflectorSink<T>;
  /** Metric label, e.g. `configmaps` or `ec2instances.compute.cloud.com`. */
  resourceLabel: string;
}

/**
 * How a reflector lists and watches; shared by the informer and the factory options, which pass
 * them through unchanged.
 */
export interface ReflectorTuning {
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** @default defaultRegistry */
  registry?: Registry;
  /** Objects per list page. @default 500 */
  pageSize?: number;
  /**
   * Server-side watch timeout. @default a random duration between 5 and 10 minutes per watch,
   * as client-go does, so that reconnects of many clients spread out.
   */
  watchTimeoutMs?: number;
  /**
   * A watch that delivers nothing (no event, no bookmark) for this long is presumed dead (a
   * half-open connection) and is aborted and reopened. A quiet watch on kube-apiserver 1.36
   * receives its first bookmark about 120 s after it opens and one every 60 s after that, so a
   * healthy watch stays open; 240 s is below the shortest server-side timeout (5 min), so a dead
   * connection is noticed before the server would have ended the watch anyway.
   * @default 240_000
   */
  inactivityTimeoutMs?: number;
  /** Reconnect backoff. @default 800 ms doubling to 30 s, jittered */
  backoff?: BackoffOptions;
  /** Source of randomness in [0, 1). @default Math.random */
  random?: () => number;
}

/** Why a watch ended. */
type WatchOutcome = "closed" | "gone" | "error" | "inactive" | "stopped";

interface ReflectorMetrics {
  listRequests: Counter<"resource">;
  lists: Counter<"resource">;
  watches: Counter<"resource">;
  watchEnds: Counter<"resource" | "reason">;
}

function reflectorMetrics(registry: Registry): ReflectorMetrics {
  return {
    listRequests: counter(registry, {
      name: "reflector_list_requests_total",
      help: "List requests (pages) sent by reflectors.",
      labelNames: ["resource"],
    }),
    lists: counter(registry, {
      name: "reflector_lists_total",
      help: "Complete lists (initial lists and relists) applied by reflectors.",
      labelNames: ["resource"],
    }),
    watches: counter(registry, {
      name: "reflector_watches_total",
      help: "Watches opened by reflectors.",
      labelNames: ["resource"],
    }),
    watchEnds: counter(registry, {
      name: "reflector_watch_ends_total",
      help: "Watches that ended, by reason: closed (server timeout), gone (410, relist), error, inactive.",
      labelNames: ["resource", "reason"],
    }),
  };
}

/**
 * Keeps a {@link ReflectorSink} equal to the server's state of one collection: a paged list, then
 * a watch from the list's resourceVersion, forever.
 *
 * - Lists are paged (`limit`/`continue`); a 410 on a continue token restarts the list from the
 *   beginning. A list is applied only once complete.
 * - Watches ask for bookmarks, carry a server-side `timeoutSeconds`, and are aborted by an
 *   inactivity timeout. A normal end reconnects at once from the last resourceVersion; an
 *   error reconnects after a jittered backoff (800 ms .. 30 s by default).
 * - 410 Gone (as a response or as an ERROR event) triggers a relist; the sink's `replace` turns
 *   the difference into events.
 * - A sink call that throws is logged; it never ends the watch.
 * - A list or watch failure that repeats (a revoked credential, a missing permission) is logged
 *   once, then summed up at most every 5 minutes while it lasts, and its end once
 *   ({@link RepeatedFailureLog}); the retries themselves follow the backoff.
 */
export class Reflector<T extends KubeObject> {
  readonly #lw: ListerWatcher<T>;
  readonly #sink: ReflectorSink<T>;
  readonly #label: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: ReflectorMetrics;
  readonly #pageSize: number;
  readonly #watchTimeoutMs: number | undefined;
  readonly #inactivityMs: number;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  readonly #listFailures: RepeatedFailureLog;
  readonly #watchFailures: RepeatedFailureLog;
  #resourceVersion = "";

  constructor(opts: ReflectorOptions<T>) {
    this.#lw = opts.lw;
    this.#sink = opts.sink;
    this.#label = opts.resourceLabel;
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).child({ reflector: opts.lw.description });
    this.#metrics = reflectorMetrics(opts.registry ?? defaultRegistry);
    this.#pageSize = opts.pageSize ?? 500;
    this.#watchTimeoutMs = opts.watchTimeoutMs;
    this.#inactivityMs = opts.inactivityTimeoutMs ?? 240_000;
    this.#random = opts.random ?? Math.random;
    this.#backoff = new Backoff({ random: this.#random, ...opts.backoff });
    const failureLog = (step: string): RepeatedFailureLog =>
      new RepeatedFailureLog({
        log: this.#log,
        clock: this.#clock,
        message: `${step} failed`,
        recoveredMessage: `${step} succeeded again`,
      });
    this.#listFailures = failureLog("list");
    this.#watchFailures = failureLog("watch");
  }

  /** The resourceVersion the next watch starts from (`""` before the first list). */
  get lastSyncResourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#listAndApply(signal);
      } catch (err) {
        if (signal.aborted) break;
        const delay = this.#backoff.next();
        this.#listFailures.failed(err, { retryInMs: Math.round(delay) });
        if (!(await this.#sleep(delay, signal))) break;
        continue;
      }
      this.#listFailures.succeeded();
      // Watch until the history we hold is gone, then relist.
      for (;;) {
        const outcome = await this.#watchOnce(signal);
        if (outcome === "stopped") return;
        this.#metrics.watchEnds.inc({ resource: this.#label, reason: outcome });
        if (outcome === "closed") continue;
        if (outcome === "gone") {
          // The first 410 after a healthy period relists at once; repeated ones back off.
          const first = this.#backoff.failures === 0;
          const delay = this.#backoff.next();
          this.#log.info(
            { resourceVersion: this.#resourceVersion },
            "watch history expired (410); relisting",
          );
          if (!first && !(await this.#sleep(delay, signal))) return;
          break;
        }
        const delay = this.#backoff.next();
        // A failed watch was logged by #watchFailures; a silent one is logged here.
        if (outcome === "inactive")
          this.#log.info({ reason: outcome, retryInMs: Math.round(delay) }, "watch ended; reconnecting");
        if (!(await this.#sleep(delay, signal))) return;
      }
    }
  }

  async #listAndApply(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = "";
    let restarts = 0;
    for (;;) {
      let page;
      try {
        this.#metrics.listRequests.inc({ resource: this.#label });
        page = await this.#lw.list(
          { limit: this.#pageSize, ...(cont !== undefined ? { continue: cont } : {}) },
          signal,
        );
      } catch (err) {
        if (cont !== undefined && isGone(err) && restarts < 5) {
          restarts++;
          this.#log.info({ restarts }, "continue token expired (410); restarting the list");
          items.length = 0;
          cont = undefined;
          continue;
        }
        throw err;
      }
      for (const item of page.items ?? []) items.push(item);
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      cont = page.metadata?.continue || undefined;
      if (cont === undefined) break;
    }
    if (signal.aborted) return;
    this.#metrics.lists.inc({ resource: this.#label });
    this.#resourceVersion = resourceVersion;
    this.#safely("replace", () => this.#sink.replace(items, resourceVersion));
    this.#log.debug({ count: items.length, resourceVersion }, "listed");
  }

  async #watchOnce(signal: AbortSignal): Promise<WatchOutcome> {
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let inactive = false;
    let lastActivity = this.#clock.now();
    let timer: TimerHandle | undefined;
    const arm = (ms: number): void => {
      timer = this.#clock.setTimeout(() => {
        const idle = this.#clock.now() - lastActivity;
        if (idle >= this.#inactivityMs) {
          inactive = true;
          ac.abort(new Error(`watch silent for ${idle} ms`));
        } else {
          arm(this.#inactivityMs - idle);
        }
      }, ms);
    };
    arm(this.#inactivityMs);
    const opened = this.#clock.now();
    const timeoutSeconds =
      this.#watchTimeoutMs !== undefined
        ? Math.max(1, Math.round(this.#watchTimeoutMs / 1000))
        : Math.floor(300 + this.#random() * 300);
    this.#metrics.watches.inc({ resource: this.#label });
    try {
      const stream = this.#lw.watch(
        { resourceVersion: this.#resourceVersion, timeoutSeconds, allowWatchBookmarks: true },
        ac.signal,
      );
      for await (const ev of stream) {
        lastActivity = this.#clock.now();
        const obj = ev.object;
        if (ev.type === "ERROR") {
          const err = ApiError.fromStatus(obj as unknown as Status);
          if (isGone(err)) return "gone";
          this.#watchFailures.failed(err, { event: "ERROR" });
          return "error";
        }
        this.#watchFailures.succeeded();
        if (ev.type === "ADDED" || ev.type === "MODIFIED")
          this.#safely("upsert", () => this.#sink.upsert(obj));
        else if (ev.type === "DELETED") this.#safely("remove", () => this.#sink.remove(obj));
        const rv = obj.metadata?.resourceVersion;
        if (rv) this.#resourceVersion = rv;
        // Any event proves the connection healthy; forget earlier failures.
        if (this.#backoff.failures > 0) this.#backoff.reset();
      }
      if (signal.aborted) return "stopped";
      if (inactive) return "inactive";
      this.#watchFailures.succeeded();
      this.#backoff.reset();
      return "closed";
    } catch (err) {
      if (signal.aborted) return "stopped";
      if (inactive) return "inactive";
      if (isGone(err)) return "gone";
      this.#watchFailures.failed(err, { openForMs: this.#clock.now() - opened });
      return "error";
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      ac.abort();
    }
  }

  #safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err, step: what }, "applying a watch event failed; the watch continues");
    }
  }

  /** Sleeps on the clock; false when `signal` aborted first. */
  async #sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }
}
