/**
 * Kubernetes Events about our objects (`kubectl describe ec2instance x` shows them). Recording is
 * fire-and-forget: {@link EventRecorder.event} queues and returns at once, never throws and never
 * waits on the API server, so a reconcile is never slowed or failed by an Event. One
 * {@link EventBroadcaster} per process writes the queue in order through one worker.
 */
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import { systemClock, type Clock, type TimerHandle } from "../clock.ts";
import type { KubeObject } from "../kube/object.ts";
import { silentLogger, type Logger } from "../logging.ts";
import type { Runnable } from "../manager/runnable.ts";
import { httpStatusOf } from "../kube/errors.ts";
import type { KubeRequester } from "../kube/rest.ts";
import { counter, defaultRegistry } from "../metrics/registry.ts";
import { EventCorrelator, type EventCorrelatorOptions, type EventIdentity } from "./correlator.ts";

/** `Normal` for the expected, `Warning` for what a human may need to look at. */
export type EventType = "Normal" | "Warning";

/** An object an Event can be about: it must say what it is. */
export type EventSubject = KubeObject & { apiVersion: string; kind: string };

/** Records Events about objects on behalf of one component (a controller). */
export interface EventRecorder {
  /**
   * Queues an Event about `obj`. Returns at once; never throws. `reason` is a short UpperCamelCase
   * word (`Created`, `CreateFailed`); `message` is for humans. Identical repeats are aggregated into
   * one Event with a rising `count`; an object that gets too many Events has the excess dropped.
   */
  event(obj: EventSubject, type: EventType, reason: string, message: string): void;
}

/** Options of {@link EventBroadcaster}. */
export interface EventBroadcasterOptions extends EventCorrelatorOptions {
  client: KubeRequester;
  /** Events waiting to be written; more are dropped. @default 1000 */
  queueSize?: number;
  /** Attempts per write when the API server fails. @default 3 */
  maxAttempts?: number;
  /** Wait before the first retry, doubled after each. @default 1000 */
  retryDelayMs?: number;
  /** How long a stop waits for queued Events to be written. @default 5000 */
  flushTimeoutMs?: number;
  /** `source.host` and part of `reportingInstance`. @default os.hostname() */
  host?: string;
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** @default defaultRegistry */
  registry?: Registry;
}

interface Pending {
  readonly ev: EventIdentity;
  readonly resourceVersion: string | undefined;
  readonly at: number;
}

interface CoreEvent {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  count?: number;
}

const MAX_MESSAGE = 1024;
const MAX_REASON = 128;

/**
 * Owns the Event queue and its single writer. Hand out recorders with {@link recorderFor}; add
 * the broadcaster to the manager (it runs on every replica) so a graceful stop flushes the queue.
 */
export class EventBroadcaster implements Runnable {
  readonly name = "event-broadcaster";
  readonly needLeaderElection = false;
  readonly #client: KubeRequester;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #correlator: EventCorrelator;
  readonly #queueSize: number;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;
  readonly #flushTimeoutMs: number;
  readonly #host: string;
  readonly #dropped;
  readonly #written;
  readonly #queue: Pending[] = [];
  #worker: Promise<void> | undefined;
  #closed = false;
  #seq = 0;

  constructor(opts: EventBroadcasterOptions) {
    this.#client = opts.client;
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).child({ component: "events" });
    this.#correlator = new EventCorrelator(opts);
    this.#queueSize = opts.queueSize ?? 1000;
    this.#maxAttempts = opts.maxAttempts ?? 3;
    this.#retryDelayMs = opts.retryDelayMs ?? 1000;
    this.#flushTimeoutMs = opts.flushTimeoutMs ?? 5000;
    this.#host = opts.host ?? hostname();
    const registry = opts.registry ?? defaultRegistry;
    this.#dropped = counter(registry, {
      name: "kubeprovisioner_events_dropped_total",
      help: "Kubernetes Events not written, by reason (queue_full, rate_limited, closed, write_failed).",
      labelNames: ["reason"],
    });
    this.#written = counter(registry, {
      name: "kubeprovisioner_events_written_total",
      help: "Kubernetes Event writes, by operation (create, patch).",
      labelNames: ["operation"],
    });
  }

  /** A recorder whose Events name `component` as their source (e.g. `ec2instance-controller`). */
  recorderFor(component: string): EventRecorder {
    return { event: (obj, type, reason, message) => this.#enqueue(component, obj, type, reason, message) };
  }

  /** Resolves once every Event queued so far has been written or given up on. */
  async flush(): Promise<void> {
    while (this.#worker !== undefined) await this.#worker;
  }

  /** Waits for `signal`, then stops accepting Events and writes the queue for up to flushTimeoutMs. */
  async start(signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.#closed = true;
    if (this.#worker === undefined) return;
    let handle: TimerHandle | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      handle = this.#clock.setTimeout(() => resolve(false), this.#flushTimeoutMs);
    });
    const flushed = await Promise.race([this.flush().then(() => true), timedOut]);
    if (handle !== undefined) this.#clock.clearTimeout(handle);
    if (!flushed) {
      this.#dropped.inc({ reason: "closed" }, this.#queue.length);
      this.#log.warn({ pending: this.#queue.length }, "stopped with Events still queued");
      this.#queue.length = 0;
    }
  }

  #enqueue(component: string, obj: EventSubject, type: EventType, reason: string, message: string): void {
    try {
      if (this.#closed) {
        this.#dropped.inc({ reason: "closed" });
        return;
      }
      if (this.#queue.length >= this.#queueSize) {
        this.#dropped.inc({ reason: "queue_full" });
        this.#log.warn({ reason, object: obj.metadata.name }, "Event queue full; dropping Event");
        return;
      }
      const m = obj.metadata;
      this.#queue.push({
        ev: {
          component,
          object: {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            namespace: m.namespace ?? "",
            name: m.name ?? "",
            uid: m.uid ?? "",
          },
          type,
          reason: truncate(reason, MAX_REASON),
          message: truncate(message, MAX_MESSAGE),
        },
        resourceVersion: m.resourceVersion,
        at: this.#clock.now(),
      });
      this.#worker ??= this.#drain().finally(() => (this.#worker = undefined));
    } catch (err) {
      // Never let an Event break the caller.
      this.#log.error({ err }, "recording an Event failed");
    }
  }

  async #drain(): Promise<void> {
    await Promise.resolve(); // never write inside the caller's stack
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      try {
        await this.#write(next);
      } catch (err) {
        this.#dropped.inc({ reason: "write_failed" });
        this.#log.warn(
          { err, reason: next.ev.reason, object: next.ev.object.name },
          "writing an Event failed; dropping it",
        );
      }
    }
  }

  async #write(p: Pending): Promise<void> {
    const c = this.#correlator.correlate(p.ev, p.at);
    if (c.action === "drop") {
      this.#dropped.inc({ reason: "rate_limited" });
      this.#log.debug(
        { reason: p.ev.reason, object: p.ev.object.name },
        "Event rate limit reached for object; dropping Event",
      );
      return;
    }
    if (c.action === "patch") {
      const prev = c.previous;
      const count = prev.count + 1;
      try {
        await this.#retrying(() =>
          this.#client.request<CoreEvent>({
            method: "PATCH",
            path: `/api/v1/namespaces/${encodeURIComponent(prev.namespace)}/events/${encodeURIComponent(prev.name)}`,
            contentType: "application/merge-patch+json",
            body: { count, lastTimestamp: rfc3339(p.at) },
          }),
        );
        this.#written.inc({ operation: "patch" });
        this.#correlator.written(c.key, { ...prev, count, lastTimestamp: p.at }, p.at);
        return;
      } catch (err) {
        if (httpStatusOf(err) !== 404) throw err;
        // The Event expired on the server (default TTL 1h): start a new one.
        this.#correlator.forget(c.key);
      }
    }
    const namespace = p.ev.object.namespace || "default";
    const name = `${p.ev.object.name || "unknown"}.${this.#uniqueSuffix(p.at)}`;
    const created = await this.#retrying(() =>
      this.#client.request<CoreEvent>({
        method: "POST",
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
        body: this.#coreEvent(p, namespace, name),
      }),
    );
    this.#written.inc({ operation: "create" });
    this.#correlator.written(
      c.key,
      { name: created.metadata.name ?? name, namespace, count: 1, firstTimestamp: p.at, lastTimestamp: p.at },
      p.at,
    );
  }

  #coreEvent(p: Pending, namespace: string, name: string): unknown {
    const o = p.ev.object;
    return {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.name,
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.uid ? { uid: o.uid } : {}),
        ...(p.resourceVersion !== undefined ? { resourceVersion: p.resourceVersion } : {}),
      },
      type: p.ev.type,
      reason: p.ev.reason,
      message: p.ev.message,
      source: { component: p.ev.component, host: this.#host },
      reportingComponent: p.ev.component,
      reportingInstance: truncate(`${p.ev.component}-${this.#host}`, 128),
      firstTimestamp: rfc3339(p.at),
      lastTimestamp: rfc3339(p.at),
      count: 1,
    };
  }

  /** client-go names Events `<object>.<unix nanos in hex>`; a sequence keeps them unique within a ms. */
  #uniqueSuffix(at: number): string {
    return (BigInt(Math.floor(at)) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16);
  }

  async #retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const status = httpStatusOf(err);
        const retryable = status === undefined || status === 429 || status >= 500;
        if (!retryable || attempt >= this.#maxAttempts) throw err;
        await this.#clock.sleep(this.#retryDelayMs * 2 ** (attempt - 1));
      }
    }
  }
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 3)}...`;
}

/** Event timestamps are `metav1.Time`: RFC 3339 with whole seconds. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
