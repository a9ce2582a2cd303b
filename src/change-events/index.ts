/**
 * Change events: the operator hears AWS's own change events instead of only polling. EventBridge
 * rules put them into an SQS queue (docs/aws.md, "Change events"): the operator's own
 * (`--change-events`, read with its own credentials) and one per AwsAccount that names one
 * (`spec.changeEvents.queue`, read with the account's role). While it leads, it reads each queue
 * (./consumer.ts), maps every event to the objects that own the resource it names (./router.ts,
 * through each kind's naming table and the cache index) and enqueues them at once. An event is
 * only a hint: the reconcile it causes observes AWS the way a poll does.
 *
 * While an object's queue is read, its safety-net poll stretches to `--poll-interval-with-events`
 * ({@link ChangeEvents.pollIntervalMs}); when the queue cannot be read, the objects it covers are
 * enqueued again spread over one normal poll interval, so they go back to `--poll-interval` at
 * once. The state shows as the ChangeEvents condition of each AwsAccount whose queue it is, and
 * for the operator's own queue as Events on the operator's Pod ($POD_NAMESPACE/$POD_NAME) and the
 * `kubeprovisioner_change_events_queue_healthy` gauge.
 */
import { GetCallerIdentityCommand } from "@aws-sdk/client-sts";
import type { Registry } from "prom-client";
import { accountNameOf, accountReady, NamespaceResource } from "../accounts/resolver.ts";
import { accountIdOfRole, sessionNameOf } from "../accounts/sessions.ts";
import {
  API_VERSION,
  AwsAccountResource,
  ChangeEventsReason,
  setCondition,
  type AwsAccount,
} from "../api/v1/index.ts";
import type { AwsClientSource } from "../aws/clients.ts";
import { OPERATOR_USER_AGENT } from "../aws/clients.ts";
import { parseQueueAddress, QueueAddressError, type QueueAddress } from "../aws/queue-address.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import type { ChangeHint, ResyncHooks } from "../reconcilers/common/resync.ts";
import type { Client } from "../runtime/client/index.ts";
import type { Clock } from "../runtime/clock.ts";
import type { InformerProvider } from "../runtime/controller/index.ts";
import type { EventRecorder } from "../runtime/events/recorder.ts";
import { isConflict } from "../runtime/kube/errors.ts";
import { keyOf, type KubeObject, type ResourceType } from "../runtime/kube/object.ts";
import type { Request } from "../runtime/controller/reconciler.ts";
import type { Logger } from "../runtime/logging.ts";
import type { Runnable } from "../runtime/manager/runnable.ts";
import { ChannelSource } from "./channel-source.ts";
import { QueueConsumer, type Handled } from "./consumer.ts";
import {
  isOwnCall,
  MalformedEventError,
  parseChangeEvent,
  type ChangeEvent,
  type OwnIdentities,
} from "./event.ts";
import { ChangeEventMetrics } from "./metrics.ts";
import { CHANGE_EVENT_INDEX, type ChangeEventNaming } from "./naming.ts";
import { isSupported, route, type RoutableKind } from "./router.ts";

/** A kind that change events may concern. */
export interface EventKind {
  readonly resource: ResourceType;
  readonly changeEvents?: ChangeEventNaming | undefined;
}

/** Options of {@link ChangeEvents}. */
export interface ChangeEventsOptions {
  readonly kinds: readonly EventKind[];
  /** The shared cache (objects, namespaces, AwsAccounts) and status writes of AwsAccounts. */
  readonly client: Client;
  readonly informers: InformerProvider;
  /** The operator's own queue (`--change-events`), read with its own credentials. */
  readonly queue: QueueAddress | undefined;
  /** The operator's own clients. */
  readonly aws: AwsClientSource;
  /** The clients of an AwsAccount (its assumed role). */
  readonly accountClients: (account: Readonly<AwsAccount>) => AwsClientSource;
  /** The poll period while an object's queue is read, in ms (`--poll-interval-with-events`). */
  readonly pollIntervalWithEventsMs: number;
  /** The normal poll period, in ms (`--poll-interval`). */
  readonly pollIntervalMs: number;
  /** The region of a queue URL that names none, and of STS. */
  readonly region: string | undefined;
  readonly recorder: EventRecorder;
  /** The operator's Pod, the subject of Events about its own queue. */
  readonly pod: { readonly namespace: string; readonly name: string } | undefined;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Receivers per queue. @default 3 */
  readonly receivers?: number;
}

interface Reader {
  readonly consumer: QueueConsumer;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  /** The AwsAccounts (by name; undefined: the operator's own credentials) whose objects it covers. */
  covers: Set<string | undefined>;
}

/** Slices an unreadable queue's objects are enqueued in, spread over a poll interval. */
const FALLBACK_SLICES = 60;

/** See the module comment. */
export class ChangeEvents implements ResyncHooks, Runnable {
  readonly name = "change-events";
  readonly needLeaderElection = true;
  readonly #o: ChangeEventsOptions;
  readonly #metrics: ChangeEventMetrics;
  readonly #sources = new Map<string, ChannelSource>();
  /**
   * Per kind, the keys enqueued by an event and not reconciled since, with what the latest such
   * event said about the change (who made it, with which call, when).
   */
  readonly #hints = new Map<string, Map<string, ChangeHint>>();
  readonly #routable: RoutableKind[];
  readonly #readers = new Map<string, Reader>();
  readonly #timers = new Set<ReturnType<Clock["setTimeout"]>>();
  #ownArn: string | undefined;
  #askedOwnArn = false;
  #signal: AbortSignal | undefined;

  constructor(opts: ChangeEventsOptions) {
    this.#o = opts;
    this.#metrics = new ChangeEventMetrics(opts.registry);
    this.#routable = opts.kinds.flatMap((k) => {
      const naming = k.changeEvents;
      if (naming === undefined) return [];
      const objects = opts.client.resource<ManagedObject>(k.resource);
      return [
        {
          kind: k.resource.kind,
          naming,
          byName: (name: string) => objects.byIndex(CHANGE_EVENT_INDEX, name),
        },
      ];
    });
    // The AwsAccounts' queues follow their specs; the informer must exist before the cache syncs.
    opts.informers.informerFor<AwsAccount>(AwsAccountResource);
  }

  /** The event source of `resource`'s controller. */
  source(resource: ResourceType): ChannelSource {
    let s = this.#sources.get(resource.kind);
    if (s === undefined) {
      s = new ChannelSource();
      this.#sources.set(resource.kind, s);
    }
    return s;
  }

  takeHint(resource: ResourceType, key: string): ChangeHint | undefined {
    const keys = this.#hints.get(resource.kind);
    const hint = keys?.get(key);
    keys?.delete(key);
    return hint;
  }

  /** Enqueues `req` for `kind` as a change hint; false when its controller is not running. */
  #hint(kind: string, req: Request, hint: ChangeHint): boolean {
    let keys = this.#hints.get(kind);
    if (keys === undefined) this.#hints.set(kind, (keys = new Map()));
    const key = keyOf(req);
    const before = keys.get(key);
    keys.set(key, hint);
    if (this.#sources.get(kind)?.push(req) === true) return true;
    if (before === undefined) keys.delete(key);
    else keys.set(key, before);
    return false;
  }

  /** `--poll-interval-with-events` while the queue covering `obj`'s account is read, else `normalMs`. */
  pollIntervalMs(obj: Readonly<ManagedObject>, normalMs: number): number {
    const reader = this.#readerOf(this.#accountOf(obj));
    return reader?.consumer.healthy === true
      ? Math.max(normalMs, this.#o.pollIntervalWithEventsMs)
      : normalMs;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    if (this.#o.queue !== undefined) this.#startReader(this.#o.queue, this.#o.aws, undefined);
    const informer = this.#o.informers.informerFor<AwsAccount>(AwsAccountResource);
    const sync = (): void => this.#syncAccounts();
    const registration = informer.addEventHandler({ onAdd: sync, onUpdate: sync, onDelete: sync });
    sync();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    registration?.remove();
    for (const t of this.#timers) this.#o.clock.clearTimeout(t);
    this.#timers.clear();
    const readers = [...this.#readers.values()];
    this.#readers.clear();
    for (const r of readers) r.stop.abort();
    await Promise.all(readers.map((r) => r.done));
  }

  /** Handles one message body; see ./consumer.ts for what becomes of the message. */
  handle(queue: string, body: string): Handled {
    let event;
    try {
      event = parseChangeEvent(body);
    } catch (err) {
      if (err instanceof MalformedEventError) return { outcome: "dropped", reason: "malformed" };
      throw err;
    }
    if (!isSupported(event, this.#routable)) return { outcome: "dropped", reason: "unsupported" };
    if (event.call !== undefined && isOwnCall(event.call.caller, this.#ownIdentities(), event.account))
      return { outcome: "dropped", reason: "own_call" };
    const routed = route(event, this.#routable);
    if (routed.length === 0) return { outcome: "dropped", reason: "unowned" };
    const hint = hintOf(event);
    for (const r of routed) {
      for (const req of r.requests) {
        if (!this.#hint(r.kind.kind, req, hint)) return { outcome: "retry" };
        this.#o.logger.debug(
          { queue, kind: r.kind.kind, namespace: req.namespace, name: req.name },
          "change event enqueued an object",
        );
      }
      this.#metrics.matched.inc({ queue, kind: r.kind.kind });
    }
    if (event.timeMs !== undefined)
      this.#metrics.lag.observe({ queue }, Math.max(0, (this.#o.clock.now() - event.timeMs) / 1000));
    return { outcome: "enqueued" };
  }

  #accountOf(obj: Readonly<ManagedObject>): string | undefined {
    const ns = this.#o.client.resource<KubeObject>(NamespaceResource).get(obj.metadata.namespace ?? "");
    return accountNameOf(obj, ns);
  }

  #readerOf(account: string | undefined): Reader | undefined {
    for (const r of this.#readers.values()) if (r.covers.has(account)) return r;
    return undefined;
  }

  #ownIdentities(): OwnIdentities {
    const accounts = this.#o.client.resource<AwsAccount>(AwsAccountResource);
    const ownArn = this.#ownArn;
    return {
      userAgentToken: OPERATOR_USER_AGENT,
      arns: () => (ownArn !== undefined ? [ownArn] : []),
      sessions: () =>
        accounts.list().map((a) => ({
          accountId: accountIdOfRole(a.spec.roleArn),
          roleName: a.spec.roleArn.slice(a.spec.roleArn.lastIndexOf("/") + 1),
          sessionName: sessionNameOf(a.metadata.name ?? "", a.spec.sessionName),
        })),
    };
  }

  /** The ARN the operator's own calls carry in CloudTrail (GetCallerIdentity). */
  async #learnOwnArn(signal: AbortSignal): Promise<void> {
    try {
      const sts = await this.#o.aws.client("sts", this.#o.region ?? process.env.AWS_REGION ?? "us-east-1");
      const out = await sts.send(new GetCallerIdentityCommand({}), { abortSignal: signal });
      this.#ownArn = out.Arn;
    } catch (err) {
      if (!signal.aborted)
        this.#o.logger.info(
          { err },
          "the operator's own ARN is unknown; its calls are told by their user agent",
        );
    }
  }

  #startReader(address: QueueAddress, aws: AwsClientSource, account: string | undefined): Reader {
    if (!this.#askedOwnArn && this.#signal !== undefined) {
      this.#askedOwnArn = true;
      void this.#learnOwnArn(this.#signal);
    }
    const stop = new AbortController();
    const signal = this.#signal !== undefined ? AbortSignal.any([this.#signal, stop.signal]) : stop.signal;
    this.#metrics.init(
      address.url,
      this.#routable.map((k) => k.kind),
    );
    const reader: Reader = {
      consumer: new QueueConsumer({
        address,
        aws,
        handle: (body) => this.handle(address.url, body),
        onHealth: (healthy, problem) => this.#healthChanged(reader, address, healthy, problem),
        metrics: this.#metrics,
        logger: this.#o.logger,
        clock: this.#o.clock,
        ...(this.#o.receivers !== undefined ? { receivers: this.#o.receivers } : {}),
      }),
      stop,
      done: Promise.resolve(),
      covers: new Set([account]),
    };
    (reader as { done: Promise<void> }).done = reader.consumer.run(signal).catch((err: unknown) => {
      this.#o.logger.error({ err, queue: address.url }, "change-event reader failed");
    });
    this.#readers.set(address.url, reader);
    return reader;
  }

  /** Starts, stops and re-points the readers of the AwsAccounts' queues to match their specs. */
  #syncAccounts(): void {
    if (this.#signal?.aborted !== false) return;
    const accounts = this.#o.client.resource<AwsAccount>(AwsAccountResource).list();
    const wanted = new Map<
      string,
      { address: QueueAddress; account: Readonly<AwsAccount>; names: string[] }
    >();
    for (const a of accounts) {
      const text = a.spec.changeEvents?.queue;
      const name = a.metadata.name ?? "";
      if (text === undefined) {
        // No queue (any more): no condition claims one is read.
        if (a.status?.conditions?.some((c) => c.type === ChangeEventsReason.ChangeEvents) === true)
          void this.#dropAccountCondition(name);
        continue;
      }
      if (!accountReady(a)) continue;
      let address: QueueAddress;
      try {
        address = parseQueueAddress(text, this.#o.region);
      } catch (err) {
        if (!(err instanceof QueueAddressError)) throw err;
        void this.#setAccountCondition(name, false, ChangeEventsReason.InvalidQueue, err.message);
        continue;
      }
      const entry = wanted.get(address.url);
      if (entry === undefined) wanted.set(address.url, { address, account: a, names: [name] });
      else entry.names.push(name);
    }
    const own = this.#o.queue?.url;
    for (const [url, reader] of this.#readers) {
      if (url === own) {
        reader.covers = new Set([undefined, ...(wanted.get(url)?.names ?? [])]);
        continue;
      }
      if (!wanted.has(url)) {
        // Its objects were polled every hour on its account: back to the normal poll.
        if (reader.consumer.healthy) this.#fallBack(reader.covers);
        reader.stop.abort();
        this.#readers.delete(url);
      }
    }
    for (const [url, w] of wanted) {
      const reader =
        this.#readers.get(url) ?? this.#startReader(w.address, this.#o.accountClients(w.account), undefined);
      const covers = new Set<string | undefined>(w.names);
      if (url === own) covers.add(undefined);
      const added = w.names.filter((n) => !reader.covers.has(n));
      reader.covers = covers;
      for (const n of added)
        if (reader.consumer.healthy)
          void this.#setAccountCondition(n, true, ChangeEventsReason.Receiving, `reading ${url}`);
    }
  }

  #healthChanged(reader: Reader, address: QueueAddress, healthy: boolean, problem: string | undefined): void {
    const message = healthy
      ? `reading change events from ${address.url}; objects are polled every ${seconds(this.#o.pollIntervalWithEventsMs)}`
      : `cannot read change events from ${address.url} (${problem ?? "unknown error"}); objects are polled every ${seconds(this.#o.pollIntervalMs)}`;
    const reason = healthy ? ChangeEventsReason.Receiving : ChangeEventsReason.QueueUnreadable;
    for (const account of reader.covers) {
      if (account === undefined) this.#podEvent(healthy, reason, message);
      else void this.#setAccountCondition(account, healthy, reason, message);
    }
    if (!healthy) this.#fallBack(reader.covers);
  }

  /** Enqueues every object `covers` concerns, spread over one normal poll interval. */
  #fallBack(covers: ReadonlySet<string | undefined>): void {
    const due: { kind: string; req: { namespace: string; name: string } }[] = [];
    for (const k of this.#routable) {
      const resource = this.#o.kinds.find((x) => x.resource.kind === k.kind)?.resource;
      if (resource === undefined) continue;
      for (const obj of this.#o.client.resource<ManagedObject>(resource).list()) {
        if (!covers.has(this.#accountOf(obj))) continue;
        due.push({
          kind: k.kind,
          req: { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" },
        });
      }
    }
    const slices = Math.min(FALLBACK_SLICES, due.length);
    for (let i = 0; i < slices; i++) {
      const part = due.filter((_, j) => j % slices === i);
      const fire = (): void => {
        for (const d of part) this.#sources.get(d.kind)?.push(d.req);
      };
      if (i === 0) fire();
      else {
        const t = this.#o.clock.setTimeout(
          () => {
            this.#timers.delete(t);
            fire();
          },
          (i * this.#o.pollIntervalMs) / slices,
        );
        this.#timers.add(t);
      }
    }
  }

  #podEvent(healthy: boolean, reason: string, message: string): void {
    const pod = this.#o.pod;
    if (pod === undefined) return;
    this.#o.recorder.event(
      { apiVersion: "v1", kind: "Pod", metadata: { namespace: pod.namespace, name: pod.name } },
      healthy ? "Normal" : "Warning",
      reason,
      message,
    );
  }

  /** Removes the ChangeEvents condition of AwsAccount `name`; retried on a conflict. */
  async #dropAccountCondition(name: string): Promise<void> {
    const accounts = this.#o.client.resource<AwsAccount>(AwsAccountResource);
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur =
        attempt === 0 ? accounts.get(name) : await accounts.getLive({ name }).catch(() => undefined);
      const conditions = cur?.status?.conditions;
      if (cur === undefined || conditions?.some((c) => c.type === ChangeEventsReason.ChangeEvents) !== true)
        return;
      try {
        await accounts.updateStatus({
          ...structuredClone(cur),
          status: {
            ...cur.status,
            conditions: conditions.filter((c) => c.type !== ChangeEventsReason.ChangeEvents),
          },
        });
        return;
      } catch (err) {
        if (!isConflict(err)) {
          this.#o.logger.warn({ err, account: name }, "could not remove the ChangeEvents condition");
          return;
        }
      }
    }
  }

  /** Sets the ChangeEvents condition of AwsAccount `name`; retried on a conflict. */
  async #setAccountCondition(name: string, ok: boolean, reason: string, message: string): Promise<void> {
    const accounts = this.#o.client.resource<AwsAccount>(AwsAccountResource);
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur =
        attempt === 0 ? accounts.get(name) : await accounts.getLive({ name }).catch(() => undefined);
      if (cur === undefined) return;
      const was = cur.status?.conditions?.find((c) => c.type === ChangeEventsReason.ChangeEvents);
      if (was?.reason === reason && was.message === message) return;
      const conditions = setCondition(
        [...(cur.status?.conditions ?? [])],
        {
          type: ChangeEventsReason.ChangeEvents,
          status: ok ? "True" : "False",
          reason,
          message,
          observedGeneration: cur.metadata.generation ?? 0,
        },
        this.#o.clock.now(),
      );
      try {
        await accounts.updateStatus({ ...structuredClone(cur), status: { ...cur.status, conditions } });
        if (was?.reason !== reason)
          this.#o.recorder.event(
            { ...cur, apiVersion: API_VERSION, kind: "AwsAccount" },
            ok ? "Normal" : "Warning",
            reason,
            message,
          );
        return;
      } catch (err) {
        if (!isConflict(err)) {
          this.#o.logger.warn({ err, account: name }, "could not set the ChangeEvents condition");
          return;
        }
      }
    }
  }
}

function seconds(ms: number): string {
  return ms % 3_600_000 === 0
    ? `${ms / 3_600_000}h`
    : ms % 60_000 === 0
      ? `${ms / 60_000}m`
      : `${ms / 1000}s`;
}

/**
 * What `event` says about the change: for a CloudTrail event, who called (the caller's ARN, else
 * its principal ID), the call and when; for a service's own event, only when.
 */
function hintOf(event: ChangeEvent): ChangeHint {
  const caller = event.call?.caller.arn ?? event.call?.caller.principalId;
  return {
    ...(caller !== undefined ? { caller } : {}),
    ...(event.call !== undefined ? { eventName: event.call.eventName } : {}),
    ...(event.timeMs !== undefined ? { timeMs: event.timeMs } : {}),
  };
}
