/**
 * The reconcile flow shared by every managed kind. Per reconcile, in order:
 *
 * 1. Read the object from the cache; gone means done.
 *    Resolve its AWS account (./account.ts: the hook src/accounts implements), unless the
 *    reconcile makes no AWS call; each account has its own driver (./account-drivers.ts).
 * 2. Being deleted: with `deletionPolicy: Retain` release the finalizer and leave AWS alone;
 *    with Delete observe and hand the observation to the driver's delete (polling with `requeueAfter` while AWS works, never
 *    blocking a worker) and release the finalizer once nothing of ours is left.
 * 3. Add the finalizer before anything can exist in AWS.
 * 4. Observe. Absent: record the idempotency token (from UID and create attempt) in status
 *    BEFORE calling AWS, then create. Present but foreign: adopt only when the ownership rules
 *    allow it (./ownership.ts: never from an object that still exists, only when asked, and only
 *    resources this operator once tagged while `--adoption=disabled`), else fail terminally with
 *    the rule's reason. Present and ours, or adopted: update (repair drift; for an adopted
 *    resource that writes this object's tags, which is what adopts it).
 * 5. Write the outputs ConfigMap of `spec.writeOutputsTo` when a value changed (./outputs.ts); one
 *    that exists and is not the object's makes it Ready=False, reason OutputConflict.
 *    Write status only when it changed (deep equality), conditions stamped with the generation.
 * 6. Requeue: short doubling intervals while the resource is in transition, else the poll period.
 *
 * An object with `managementPolicy: ObserveOnly` takes none of these steps: it only observes and
 * reports, after releasing a finalizer left from when it was managed (./management-policy.ts).
 *
 * Errors: a call the client-side rate budget deferred (NoPermitYetError) requeues the object for
 * its booked slot (a deferred create is then sent without observing again: ./deferred-creates.ts);
 * throttled and retryable AWS errors are thrown (rate-limited retry); they are recorded as
 * Synced=False only once they persist (see {@link FailureStreaks}: 3 consecutive failed reconciles
 * of the object spanning at least 30 s), so a failure that a retry heals never reaches the object;
 * terminal ones set Ready/Synced=False with the AWS code and a stable message, emit
 * a Warning Event and end in a TerminalError, so a broken spec does not hot-loop; the next spec
 * change (a new generation) tries again.
 */
import { isDeepStrictEqual } from "node:util";
import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  FINALIZER,
  getCondition,
  setCondition,
  type Condition,
} from "../../api/v1/index.ts";
import { AwsError, NoPermitYetError } from "../../aws/errors.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { ResourceClient } from "../../runtime/client/index.ts";
import { hasFinalizer } from "../../runtime/client/finalizers.ts";
import {
  TerminalError,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "../../runtime/controller/reconciler.ts";
import type { EventRecorder } from "../../runtime/events/recorder.ts";
import { isConflict } from "../../runtime/kube/errors.ts";
import { apiVersionOf, keyOf, type ResourceType } from "../../runtime/kube/object.ts";
import { accountForReconcile, type AccountResolver } from "./account.ts";
import {
  DependencyNotReadyError,
  InvalidSpecError,
  NotReadyRetryError,
  recordedIdOf,
  type DriverContext,
  type ManagedObject,
  type ManagedStatus,
  type Observation,
  type ResourceDriver,
} from "./driver.ts";
import { DeferredCreates } from "./deferred-creates.ts";
import { FailureStreaks, type FailureStreakOptions } from "./failure-streak.ts";
import { flowFacts, FlowReason } from "./flow-facts.ts";
import type { DriftRepairMetrics } from "./metrics.ts";
import type { OutputWriter } from "./outputs.ts";
import { adoptionRefusal, type AdoptionPolicy, type OwnerDirectory } from "./ownership.ts";
import {
  observedView,
  observeOnlyFieldsCleared,
  observesOnly,
  releasedMessage,
} from "./management-policy.ts";
import { PendingBackoff } from "./pending-backoff.ts";
import { CREATE_REQUEST_RENEW_MS, createToken, requestedWithin } from "./token.ts";

/** The part of a `ResourceClient` the flow uses. */
export type ManagedObjectClient<T extends ManagedObject> = Pick<
  ResourceClient<T>,
  "get" | "addFinalizer" | "removeFinalizer" | "updateStatus"
>;

export interface ManagedReconcilerOptions<T extends ManagedObject, R> {
  resource: ResourceType;
  client: ManagedObjectClient<T>;
  driver: ResourceDriver<T, R>;
  recorder: EventRecorder;
  clock: Clock;
  /** Who the objects named by other resources' ownership tags are (the shared cache). */
  owners: OwnerDirectory;
  /** Whether resources this operator never tagged may be adopted. @default "enabled" */
  adoption?: AdoptionPolicy;
  /** Steady-state poll period that catches drift, in ms. @default 300_000 */
  pollIntervalMs?: number;
  /** The steady poll period of one object, when it differs per object (./resync.ts). @default pollIntervalMs */
  pollIntervalFor?: (obj: Readonly<T>) => number;
  /** Whether a change event enqueued `key` since its last reconcile (./resync.ts); asking clears it. @default never */
  takeChangeHint?: (key: string) => boolean;
  /** First poll interval while the resource is in transition, in ms. @default 2000 */
  pendingInitialMs?: number;
  /** Largest poll interval while the resource is in transition, in ms. @default 30_000 */
  pendingMaxMs?: number;
  /** Counts each drift repair (the `Updated` Event). @default not counted */
  driftRepairs?: Pick<DriftRepairMetrics, "repaired">;
  /** When a retryable failure is recorded on the object. @default 3 failures over 30 s */
  failureReport?: Omit<FailureStreakOptions, "clock">;
  /** Writes the ConfigMap of `spec.writeOutputsTo`. @default the kind has no outputs */
  outputs?: Pick<OutputWriter<T>, "sync">;
  /** Resolves each object's AWS account (./account.ts). @default every call with the driver's own clients */
  accounts?: AccountResolver;
}

export { FlowReason };

/**
 * The observation found nothing yet, but a resource this object created moments ago may still
 * appear (eventual consistency). Retried with backoff; never taken for an out-of-band deletion,
 * which would create a second resource.
 */
export class ResourceNotVisibleError extends Error {
  override readonly name = "ResourceNotVisibleError";
}

/** Status fields the flow itself writes; every other status field is the driver's description. */
const FLOW_STATUS_FIELDS: ReadonlySet<string> = new Set([
  "observedGeneration",
  "conditions",
  "createToken",
  "createAttempt",
  "createRequestedAt",
] satisfies (keyof ManagedStatus)[]);

/** The shared reconcile flow; see the module comment. */
export class ManagedResourceReconciler<T extends ManagedObject, R> implements Reconciler {
  readonly #o: Required<
    Omit<
      ManagedReconcilerOptions<T, R>,
      | "pendingInitialMs"
      | "pendingMaxMs"
      | "driftRepairs"
      | "failureReport"
      | "outputs"
      | "accounts"
      | "pollIntervalFor"
      | "takeChangeHint"
    >
  > &
    Pick<
      ManagedReconcilerOptions<T, R>,
      "driftRepairs" | "outputs" | "accounts" | "pollIntervalFor" | "takeChangeHint"
    >;
  readonly #pending: PendingBackoff;
  readonly #blocked = new PendingBackoff({ initialMs: 5000, maxMs: 300_000 });
  readonly #failures: FailureStreaks;
  readonly #deferred: DeferredCreates;

  constructor(opts: ManagedReconcilerOptions<T, R>) {
    this.#o = { pollIntervalMs: 300_000, adoption: "enabled", ...opts };
    if (!(this.#o.pollIntervalMs > 0))
      throw new RangeError(`pollIntervalMs must be > 0, got ${this.#o.pollIntervalMs}`);
    this.#pending = new PendingBackoff({
      ...(opts.pendingInitialMs !== undefined ? { initialMs: opts.pendingInitialMs } : {}),
      ...(opts.pendingMaxMs !== undefined ? { maxMs: opts.pendingMaxMs } : {}),
    });
    this.#failures = new FailureStreaks({ ...opts.failureReport, clock: opts.clock });
    this.#deferred = new DeferredCreates(opts.clock);
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const key = keyOf(req);
    const changeHinted = this.#o.takeChangeHint?.(key) === true;
    const cached = this.#o.client.get(req);
    if (cached === undefined) {
      this.#pending.reset(key);
      this.#blocked.reset(key);
      this.#failures.reset(key);
      this.#deferred.reset(key);
      return {};
    }
    // The cache hands out frozen objects: work on a copy, with its type meta filled in.
    const obj = structuredClone(cached) as T;
    obj.apiVersion = apiVersionOf(this.#o.resource);
    obj.kind = this.#o.resource.kind;
    // The latest stored version of the object: every write replaces it, so a failure is recorded
    // on top of what this reconcile already wrote (the token), with a current resourceVersion.
    const cur: Current<T> = { obj };
    const dctx: DriverContext = {
      logger: ctx.logger,
      signal: ctx.signal,
      flow: changeHinted
        ? { ...flowFacts(obj, this.#o.driver.idField), changeHinted }
        : flowFacts(obj, this.#o.driver.idField),
    };
    let result: Result;
    try {
      dctx.account = await accountForReconcile(this.#o.accounts, obj, this.#o.driver, ctx.signal);
      if (observesOnly(obj)) result = await this.#observeOnly(cur, key, dctx);
      else if (obj.metadata.deletionTimestamp !== undefined) result = await this.#finalize(cur, key, dctx);
      else {
        if (!hasFinalizer(obj, FINALIZER)) {
          cur.obj = withTypeMeta(
            await this.#o.client.addFinalizer(obj, FINALIZER, { signal: ctx.signal }),
            obj,
          );
        }
        result = await this.#ensure(cur, key, dctx);
      }
    } catch (err) {
      return await this.#fail(cur, key, err, ctx);
    }
    this.#failures.reset(key);
    return result;
  }

  async #finalize(cur: Current<T>, key: string, ctx: DriverContext): Promise<Result> {
    const obj = cur.obj;
    if (!hasFinalizer(obj, FINALIZER)) return {};
    const { driver, recorder, client } = this.#o;
    if (obj.spec.deletionPolicy === "Retain") {
      await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      recorder.event(
        obj,
        "Normal",
        "Retained",
        `deletionPolicy is Retain: the ${driver.noun} was left in AWS`,
      );
      this.#pending.reset(key);
      return {};
    }
    const outcome = await driver.delete(obj, await driver.observe(obj, ctx), ctx);
    if (!outcome.done && outcome.blocked === true) {
      // Blocked until a human acts (empties the bucket): report it, keep the finalizer and look
      // again with a bounded backoff (5 s doubling to 5 min), so the object goes soon after the
      // obstacle does instead of after the rate limiter's ~17-minute ceiling.
      await this.#writeStatus(
        cur,
        this.#withConditions(obj, { ready: [ConditionStatus.False, outcome.reason, outcome.message] }),
      );
      recorder.event(obj, "Warning", outcome.reason, outcome.message);
      return { requeueAfter: this.#blocked.next(key) };
    }
    this.#blocked.reset(key);
    if (outcome.done) {
      await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      if (outcome.leftInPlace !== undefined) recorder.event(obj, "Normal", "Released", outcome.leftInPlace);
      else recorder.event(obj, "Normal", "Deleted", `the ${driver.noun} was deleted from AWS`);
      this.#pending.reset(key);
      return {};
    }
    const status: NonNullable<T["status"]> = {
      ...this.#withConditions(obj, { ready: [ConditionStatus.False, FlowReason.Deleting, outcome.message] }),
      ...(outcome.state !== undefined ? { state: outcome.state } : {}),
    };
    await this.#writeStatus(cur, status);
    return { requeueAfter: this.#pending.next(key) };
  }

  /**
   * An object with `managementPolicy: ObserveOnly` (./management-policy.ts): release the
   * finalizer a managed past left (never deleting anything), then observe and report.
   */
  async #observeOnly(cur: Current<T>, key: string, ctx: DriverContext): Promise<Result> {
    const { driver, recorder, client } = this.#o;
    const obj = cur.obj;
    if (hasFinalizer(obj, FINALIZER)) {
      const stored = await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      recorder.event(obj, "Normal", "Released", releasedMessage(driver.noun));
      if (stored === undefined) return {};
      cur.obj = withTypeMeta(stored, obj);
    }
    this.#blocked.reset(key);
    if (ctx.flow.deleting) {
      this.#pending.reset(key);
      return {};
    }
    const view = observedView(await driver.observe(cur.obj, ctx), cur.obj, driver);
    const base = cur.obj.status ?? {};
    const next = { ...(view.clear ? clearedStatus(base) : base), ...view.status } as NonNullable<T["status"]>;
    // The outputs ConfigMap (a Kubernetes write, never an AWS one) follows a resource that exists,
    // and keeps its last values while it does not, as for a managed object.
    const conflict = view.clear ? undefined : await this.#writeOutputs({ ...cur.obj, status: next }, ctx);
    await this.#writeStatus(
      cur,
      this.#withConditions(
        { ...cur.obj, status: next },
        conflict ?? { ready: view.ready, synced: [ConditionStatus.True, FlowReason.ReconcileSuccess, ""] },
      ),
    );
    this.#pending.reset(key);
    return { requeueAfter: this.#steadyPoll(cur.obj) };
  }

  async #ensure(cur: Current<T>, key: string, ctx: DriverContext): Promise<Result> {
    let obj = cur.obj;
    const { driver, recorder } = this.#o;
    // A create the rate budget deferred, of an object unchanged since, is sent again at once.
    const obs: Observation<R> = this.#deferred.resume(key, obj.metadata.resourceVersion)
      ? { exists: false }
      : await driver.observe(obj, ctx);
    if (!obs.exists && obs.appearing !== undefined) throw new ResourceNotVisibleError(obs.appearing);

    if (obs.exists && obs.ownership === "foreign") {
      const refusal = adoptionRefusal(obj, obs.foreign, {
        noun: driver.noun,
        directory: this.#o.owners,
        adoption: this.#o.adoption,
      });
      if (refusal !== undefined)
        throw new InvalidSpecError(refusal.reason, refusal.message, { notReady: true });
    }

    let resource: R;
    let status: NonNullable<T["status"]> = { ...(obj.status ?? {}) } as NonNullable<T["status"]>;
    if (!obs.exists) {
      const recorded = recordedIdOf(obj, driver.idField);
      let attempt = obj.status?.createAttempt ?? 0;
      if (recorded !== undefined) {
        const message = `the ${driver.noun} ${recorded} was deleted outside the operator`;
        if (obj.spec.onDeletedOutOfBand === "Report") {
          // Warn once, when the loss is first seen: every later poll finds the same state, and
          // a repeated Event would be a Kubernetes write per poll for as long as nobody acts.
          const seen = getCondition(obj.status?.conditions, ConditionType.Ready);
          if (seen?.status !== ConditionStatus.False || seen.reason !== ConditionReason.DeletedOutOfBand) {
            recorder.event(
              obj,
              "Warning",
              ConditionReason.DeletedOutOfBand,
              `${message}; spec.onDeletedOutOfBand is Report, not recreating`,
            );
          }
          status = this.#withConditions(obj, {
            ready: [ConditionStatus.False, ConditionReason.DeletedOutOfBand, message],
            synced: [ConditionStatus.True, FlowReason.ReconcileSuccess, ""],
          });
          status.state = "Missing";
          await this.#writeStatus(cur, status);
          this.#pending.reset(key);
          return { requeueAfter: this.#steadyPoll(cur.obj) };
        }
        recorder.event(obj, "Warning", ConditionReason.DeletedOutOfBand, `${message}; recreating it`);
        attempt += 1;
        status = clearedStatus(status);
      } else if (attempt === 0) {
        attempt = 1;
      }
      const token = createToken(obj.metadata.uid ?? "", attempt);
      // Record the token before the create: a crash after the AWS call is then retried with the
      // same token, and the ownership lookup above finds what the first call made. Once recorded
      // it is not written again (so a create that keeps failing does not churn the status), except
      // that its time is renewed when the create is retried long after it: createRequestedAt
      // bounds the window in which an untagged bucket can be this object's (crash-window.ts).
      const now = this.#o.clock.now();
      if (
        obj.status?.createToken !== token ||
        obj.status.createAttempt !== attempt ||
        !requestedWithin(obj.status.createRequestedAt, now, CREATE_REQUEST_RENEW_MS)
      ) {
        const intent = {
          ...this.#withConditions(
            { ...obj, status },
            {
              ready: [ConditionStatus.False, FlowReason.Creating, `creating the ${driver.noun}`],
            },
          ),
          createToken: token,
          createAttempt: attempt,
          createRequestedAt: new Date(now).toISOString(),
        };
        obj = await this.#writeStatus(cur, intent);
      }
      try {
        resource = await driver.create(obj, token, ctx);
      } catch (err) {
        if (err instanceof NoPermitYetError)
          this.#deferred.defer(key, obj.metadata.resourceVersion, err.retryAfterMs);
        throw err;
      }
      recorder.event(obj, "Normal", "Created", `created the ${driver.noun}`);
    } else {
      const changes = await driver.update(obj, obs, ctx);
      resource = obs.resource;
      const described = changes.map((c) => c.description).join("; ");
      if (obs.ownership === "foreign") {
        const what = changes.length > 0 ? `: ${described}` : "";
        recorder.event(obj, "Normal", "Adopted", `adopted the existing ${driver.noun}${what}`);
      } else if (changes.length > 0) {
        recorder.event(obj, "Normal", "Updated", `repaired drift: ${described}`);
        for (const setting of new Set(changes.map((c) => c.setting))) {
          this.#o.driftRepairs?.repaired(setting);
        }
      }
    }

    const { status: described, readiness } = driver.describe(resource, obj);
    const next = { ...(obj.status ?? {}), ...described, ...observeOnlyFieldsCleared(driver) } as NonNullable<
      T["status"]
    >;
    const conflict = await this.#writeOutputs({ ...obj, status: next }, ctx);
    const withConds = this.#withConditions(
      { ...obj, status: next },
      conflict ?? {
        ready: readiness.ready
          ? [ConditionStatus.True, FlowReason.Available, readiness.message]
          : [ConditionStatus.False, readiness.reason, readiness.message],
        synced: [ConditionStatus.True, FlowReason.ReconcileSuccess, ""],
      },
    );
    await this.#writeStatus(cur, withConds);
    if (readiness.pending) return { requeueAfter: this.#pending.next(key) };
    this.#pending.reset(key);
    return { requeueAfter: this.#steadyPoll(cur.obj) };
  }

  /**
   * Writes the outputs ConfigMap of `obj` (with the status just computed). Returns the
   * OutputConflict conditions when the ConfigMap is not the object's, after a Warning Event the
   * first time it is seen (a lasting conflict makes no write per poll).
   */
  async #writeOutputs(
    obj: T,
    ctx: DriverContext,
  ): Promise<
    { ready: readonly [string, string, string]; synced: readonly [string, string, string] } | undefined
  > {
    const outputs = this.#o.outputs;
    if (outputs === undefined) return undefined;
    const reported =
      getCondition(obj.status?.conditions, ConditionType.Ready)?.reason === ConditionReason.OutputConflict;
    const message = await outputs.sync(obj, {
      signal: ctx.signal,
      logger: ctx.logger,
      conflictReported: reported,
    });
    if (message === undefined) return undefined;
    if (!reported) this.#o.recorder.event(obj, "Warning", ConditionReason.OutputConflict, message);
    const conflict = [ConditionStatus.False, ConditionReason.OutputConflict, message] as const;
    return { ready: conflict, synced: conflict };
  }

  /**
   * Delay of the next steady-state poll: the object's poll period (`pollIntervalFor`, else
   * `pollIntervalMs`), or with `driver.alignPolls` the time
   * to the first multiple of the period (on the clock's epoch) at least half a period away.
   */
  #steadyPoll(obj: Readonly<T>): number {
    const period = this.#o.pollIntervalFor?.(obj) ?? this.#o.pollIntervalMs;
    if (this.#o.driver.alignPolls !== true) return period;
    const now = this.#o.clock.now();
    return Math.ceil((now + period / 2) / period) * period - now;
  }

  /**
   * Records a failure on the object (a retryable one only once it persists), then rethrows it in
   * the form the controller expects.
   */
  async #fail(cur: Current<T>, key: string, err: unknown, ctx: ReconcileContext): Promise<Result> {
    const obj = cur.obj;
    if (isConflict(err)) {
      // The cache was behind the API server (typically our own write of a moment ago). Not a
      // failure: the newer version reaches the cache as an update event that enqueues the key
      // again; the short requeue is only a bound in case that event was already consumed.
      ctx.logger.debug("object changed since it was read from the cache; looking again");
      return { requeueAfter: CONFLICT_REQUEUE_MS };
    }
    if (err instanceof NoPermitYetError) {
      // Nothing was sent: the rate budget booked a permit for later. The worker goes back to
      // other objects meanwhile; not a failure.
      ctx.logger.debug({ retryAfterMs: err.retryAfterMs }, err.message);
      return { requeueAfter: Math.max(1, err.retryAfterMs) };
    }
    const { recorder } = this.#o;
    if (err instanceof DependencyNotReadyError) {
      const waiting = [ConditionStatus.False, err.reason, err.message] as const;
      await this.#writeStatusQuietly(
        cur,
        this.#withConditions(obj, { ready: waiting, synced: waiting }),
        ctx,
      );
      return { requeueAfter: this.#steadyPoll(obj) };
    }
    if (err instanceof NotReadyRetryError) {
      const status = this.#withConditions(obj, { synced: [ConditionStatus.False, err.reason, err.message] });
      await this.#writeStatusQuietly(cur, status, ctx);
      throw err;
    }
    let terminal: { reason: string; message: string; notReady?: boolean } | undefined;
    let retryable: { reason: string; message: string } | undefined;
    if (err instanceof InvalidSpecError) {
      terminal = { reason: err.reason, message: err.message, notReady: err.notReady };
    } else if (err instanceof AwsError) {
      const info = err.info;
      const reason = conditionReason(info.code);
      const message = `${info.operation}: ${info.message}`;
      if (info.kind === "terminal") terminal = { reason, message };
      else retryable = { reason, message };
    }
    if (terminal !== undefined) {
      this.#failures.reset(key);
      // A recorded resource keeps its Ready condition, unless the failure refuses it to this object.
      const keepReady = recordedIdOf(obj, this.#o.driver.idField) !== undefined && terminal.notReady !== true;
      const status = this.#withConditions(obj, {
        synced: [ConditionStatus.False, terminal.reason, terminal.message],
        ...(keepReady ? {} : { ready: [ConditionStatus.False, terminal.reason, terminal.message] as const }),
      });
      await this.#writeStatusQuietly(cur, status, ctx);
      recorder.event(obj, "Warning", terminal.reason, terminal.message);
      throw new TerminalError(terminal.message, { cause: err });
    }
    if (retryable !== undefined && this.#failures.fail(key)) {
      const status = this.#withConditions(obj, {
        synced: [ConditionStatus.False, retryable.reason, retryable.message],
      });
      await this.#writeStatusQuietly(cur, status, ctx);
    }
    throw err;
  }

  /** Status of `obj` with the given conditions set, stamped with the object's generation. */
  #withConditions(
    obj: T,
    set: {
      ready?: readonly [string, string, string];
      synced?: readonly [string, string, string];
    },
  ): NonNullable<T["status"]> {
    const generation = obj.metadata.generation ?? 0;
    let conditions: Condition[] = [...(obj.status?.conditions ?? [])];
    const now = this.#o.clock.now();
    for (const [type, value] of [
      [ConditionType.Ready, set.ready],
      [ConditionType.Synced, set.synced],
    ] as const) {
      if (value === undefined) continue;
      const [status, reason, message] = value;
      conditions = setCondition(
        conditions,
        { type, status: status as Condition["status"], reason, message, observedGeneration: generation },
        now,
      );
    }
    return { ...(obj.status ?? {}), observedGeneration: generation, conditions } as NonNullable<T["status"]>;
  }

  /**
   * Writes `status` through the status subresource when it differs from what the object has,
   * with the object's resourceVersion (a stale cache gets a 409 and a retry, never an overwrite).
   * Returns the object as stored.
   */
  async #writeStatus(cur: Current<T>, status: NonNullable<T["status"]>): Promise<T> {
    const obj = cur.obj;
    if (isDeepStrictEqual(normalize(obj.status ?? {}), normalize(status))) return obj;
    cur.obj = withTypeMeta(await this.#o.client.updateStatus({ ...obj, status }), obj);
    return cur.obj;
  }

  async #writeStatusQuietly(
    cur: Current<T>,
    status: NonNullable<T["status"]>,
    ctx: ReconcileContext,
  ): Promise<void> {
    try {
      await this.#writeStatus(cur, status);
    } catch (err) {
      ctx.logger.debug({ err }, "could not record the failure in status");
    }
  }
}

/** Requeue after a 409 from a stale cache read. */
const CONFLICT_REQUEUE_MS = 1000;

/** The object as last stored during one reconcile. */
interface Current<T> {
  obj: T;
}

/** `stored` with the type meta of `like` (write responses may omit it). */
function withTypeMeta<T extends ManagedObject>(stored: T, like: T): T {
  stored.apiVersion = like.apiVersion;
  stored.kind = like.kind;
  return stored;
}

/** `status` with every field the driver describes cleared (the resource is gone). */
function clearedStatus<S extends object>(status: S): S {
  const out: Record<string, unknown> = { ...(status as Record<string, unknown>) };
  for (const k of Object.keys(out)) if (!FLOW_STATUS_FIELDS.has(k)) out[k] = undefined;
  return out as S;
}

/** JSON form without undefined members, as the API server stores it. */
function normalize(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

/** AWS codes contain dots (`InvalidAMIID.NotFound`); condition reasons may not. */
export function conditionReason(code: string): string {
  const r = code.replace(/[^A-Za-z0-9_,:]/g, "_").replace(/^[^A-Za-z]+/, "");
  return r.length > 0 ? r.slice(0, 1024) : "AwsError";
}

export type { ManagedStatus };
