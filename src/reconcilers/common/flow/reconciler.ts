/**
 * The reconcile flow shared by every managed kind, as a state machine over one object. Per
 * reconcile, in order:
 *
 * 1. **Read** the object from the cache; gone means done (and its per-key state is forgotten,
 *    ./key-state.ts). **Connect** it to the driver of its AWS account (./connector.ts), whose
 *    account ID goes into its status.
 * 2. **Observe only** (`managementPolicy: ObserveOnly`, ../management-policy.ts): release a
 *    finalizer left from when it was managed, observe, report; nothing else.
 * 3. **Finalize** an object being deleted: with `deletionPolicy: Retain` release the finalizer
 *    and leave AWS alone; with Delete observe and hand the observation to the driver's delete
 *    (polling with `requeueAfter` while AWS works, never blocking a worker) and release the
 *    finalizer once nothing of ours is left.
 * 4. **Ensure** the resource, after adding the finalizer (before anything can exist in AWS):
 *    - resolve the object's references to other objects (the kind's `references`, from the shared
 *      cache, no AWS call), once, for the create or the plan below: one not ready yet makes the
 *      object wait (DependencyNotReadyError), one that can never serve fails terminally
 *      (InvalidSpecError), before an AWS call is made; observe-only objects and deletions resolve none;
 *    - observe (a create the rate budget deferred, of an unchanged object, skips it);
 *    - not visible yet (a resource this object created moments ago may still appear): requeue
 *      on the transition curve, never create;
 *    - absent: create (./create.ts);
 *    - present but foreign: adopt only when the ownership rules allow it (../ownership.ts: never
 *      from an object that still exists, only when asked, and, beyond what a gone object of the
 *      same namespace left, only with the cluster admin's grant: the install's for the operator's
 *      own identity, the AwsAccount's for its objects), else fail terminally with the rule's
 *      reason, writing nothing to AWS;
 *    - present and ours, or adopted: the driver plans the changes (../changes.ts); a refusal
 *      that holds everything fails terminally, and ./change-policy.ts decides the rest by the
 *      object's policies: apply them (for an adopted resource the tag changes are what adopts
 *      it), report them as drift (`driftPolicy: Report`), or hold them for approval
 *      (`changePolicy: Approve`). Changes the plan refuses (a setting not changed in place) make
 *      Synced=False, reason DriftNotRepaired, with a Warning Event when the report is new.
 * 5. **Report**: write the outputs ConfigMap of `spec.writeOutputsTo` when a value changed
 *    (../outputs.ts; one that exists and is not the object's makes it Ready=False, reason
 *    OutputConflict), then the status when it changed (./status-writer.ts), conditions stamped
 *    with the generation (./conditions.ts).
 * 6. **Requeue**: short doubling intervals while the resource is in transition, else the poll
 *    period (the object's `compute.cloud.com/poll-interval`, ../timing.ts, else the operator's),
 *    marked as a poll (`Result.poll`). When the controller says a reconcile is such a poll (and no
 *    change event hinted at the object, nor a reconcile request), its AWS calls draw on the polls'
 *    share of the rate budgets, behind real work (src/aws/poll-scope.ts), and what it drew is
 *    reported to `polls` (src/aws/poll-demand.ts), which works out the poll interval the share
 *    allows.
 *
 * Every status a reconcile writes also records the object's timing annotations (../timing.ts):
 * the PollIntervalValid condition (a Warning Event when it turns False) and the reconcile request
 * it handles (`status.lastHandledReconcileAt`); a request makes the reconcile observe afresh.
 *
 * Before all of these, a **paused** object (the `compute.cloud.com/paused: "true"` annotation,
 * ../pause.ts) is only reported: Synced=False, reason Paused, before any connection to its
 * account, so no AWS call and no finalizer change is made for it; its deletion waits.
 *
 * A failure anywhere is planned by ./failure.ts (conditions, Event, requeue or error) and
 * executed here; a failure of the operator's access is looked at again on the long access
 * backoff of ./key-state.ts, which the next reconcile that does not fail ends.
 */
import { ConditionType, FINALIZER, getCondition } from "../../../api/v1/index.ts";
import type { PollDemand } from "../../../aws/poll-demand.ts";
import { inPollScope, pollScope } from "../../../aws/poll-scope.ts";
import type { Clock } from "../../../runtime/clock.ts";
import { hasFinalizer } from "../../../runtime/client/finalizers.ts";
import type {
  ReconcileContext,
  Reconciler,
  Request,
  Result,
} from "../../../runtime/controller/reconciler.ts";
import type { EventRecorder } from "../../../runtime/events/recorder.ts";
import { apiVersionOf, keyOf, type ResourceType } from "../../../runtime/kube/object.ts";
import {
  InvalidSpecError,
  recordedIdOf,
  type DriverContext,
  type ManagedObject,
  type ObjectAccount,
  type Observation,
  type ResourceDriver,
} from "../driver.ts";
import { DEFAULT_POLL_INTERVAL_MS } from "../defaults.ts";
import type { KindTraits } from "../kind-traits.ts";
import type { DriftRepairMetrics } from "../metrics.ts";
import {
  observedView,
  observeOnlyFieldsCleared,
  observesOnly,
  releasedMessage,
} from "../management-policy.ts";
import type { OutputWriter } from "../outputs.ts";
import { isPaused, pausedCondition } from "../pause.ts";
import {
  annotatedPollInterval,
  invalidPollIntervalEvent,
  reconcileRequest,
  withTimingStatus,
} from "../timing.ts";
import {
  adoptionGrant,
  adoptionRefusal,
  NO_ADOPTION,
  type InstallAdoption,
  type OwnerDirectory,
} from "../ownership.ts";
import { Reason } from "../reasons.ts";
import {
  available,
  failing,
  notTrue,
  reconciled,
  type ConditionSet,
  type ConditionValue,
} from "./conditions.ts";
import type { Connector } from "./connector.ts";
import { createAbsent, type CreateDeps } from "./create.ts";
import { flowFacts, reconciledAtGeneration } from "./facts.ts";
import { planFailure } from "./failure.ts";
import { accessRetryCurve, KeyStates } from "./key-state.ts";
import type { IamAction } from "../iam.ts";
import { clearedStatus, StatusWriter, type ManagedObjectClient } from "./status-writer.ts";
import { applyChangeSet, describeChanges, holdingRefusal, refusedChanges, type Change } from "../changes.ts";
import type { ChangeHint } from "../resync.ts";
import { decideChanges, type ChangeDecision } from "./change-policy.ts";

export type { ManagedObjectClient };

export interface ManagedReconcilerOptions<T extends ManagedObject, R, Ref = undefined> {
  resource: ResourceType;
  client: ManagedObjectClient<T>;
  /** Connects each object to the driver of its AWS account (./connector.ts). */
  connector: Connector<T, R, Ref>;
  /**
   * What the object's references to other objects resolve to, from the shared cache (no AWS
   * call); handed to the driver's create and plan.
   * @throws DependencyNotReadyError while a referenced object is missing or not ready.
   * @throws InvalidSpecError when a reference can never serve.
   */
  references: (obj: T) => Ref;
  recorder: EventRecorder;
  clock: Clock;
  /** Who the objects named by other resources' ownership tags are (the shared cache). */
  owners: OwnerDirectory;
  /**
   * Who may adopt among the objects acting with the operator's own identity (`--adoption`,
   * `--adoption-namespaces`); an AwsAccount grants its own objects. @default NO_ADOPTION: none
   */
  adoption?: InstallAdoption;
  /** Steady-state poll period that catches drift, in ms. @default 300_000 */
  pollIntervalMs?: number;
  /**
   * The steady poll period of one object, when it differs per object (../resync.ts); an object's
   * `compute.cloud.com/poll-interval` annotation (../timing.ts) goes before it. @default pollIntervalMs
   */
  pollIntervalFor?: (obj: Readonly<T>) => number;
  /**
   * Whether a change event enqueued `key` since its last reconcile, and what it said
   * (../resync.ts; undefined: none); asking clears it. @default never
   */
  takeChangeHint?: (key: string) => ChangeHint | undefined;
  /** First poll interval while the resource is in transition, in ms. @default 2000 */
  pendingInitialMs?: number;
  /** Largest poll interval while the resource is in transition, in ms. @default 30_000 */
  pendingMaxMs?: number;
  /**
   * What polls cost the AWS rate budgets (src/aws/poll-demand.ts): each complete poll reports
   * what it drew, and a deferred one books what its previous poll drew. @default not counted
   */
  polls?: Pick<PollDemand, "expected" | "polled" | "scheduled" | "forget"> | undefined;
  /** Counts each drift repair (the `Updated` Event). @default not counted */
  driftRepairs?: Pick<DriftRepairMetrics, "repaired" | "reported">;
  /** When a retryable failure is recorded on the object. @default 3 failures over 30 s */
  failureReport?: { minFailures?: number; minDurationMs?: number };
  /**
   * The IAM actions the kind's driver calls (its registry entry), so that an AccessDenied names
   * the action the failed call needs. @default none: the action is named after the call
   */
  iam?: readonly IamAction[];
  /** Writes the ConfigMap of `spec.writeOutputsTo`. @default the kind has no outputs */
  outputs?: Pick<OutputWriter<T>, "sync">;
}

/** What a step of the flow ends with: the reconcile's result; `wait`: an expected wait, no success. */
interface Step extends Result {
  readonly wait?: boolean;
}

/** One reconcile of one object: its status writer, key, driver context and connection. */
interface Run<T extends ManagedObject, R, Ref> {
  readonly writer: StatusWriter<T>;
  readonly key: string;
  readonly ctx: DriverContext;
  /** The driver of the object's account. */
  readonly driver: ResourceDriver<T, R, Ref>;
  readonly account: ObjectAccount | undefined;
  /** What a change event said about the latest change of the resource, if one enqueued the object. */
  readonly hint: ChangeHint | undefined;
}

/** What an ensured resource is reported with: the refused changes left as they are, and the policy decision. */
interface Outcome<R> {
  readonly resource: R;
  readonly refused: readonly Change[];
  readonly decision: ChangeDecision | undefined;
  /** The resource is foreign and its adoption waits for approval. */
  readonly heldAdoption?: boolean;
}

/** The shared reconcile flow; see the module comment. */
export class ManagedResourceReconciler<T extends ManagedObject, R, Ref = undefined> implements Reconciler {
  readonly #o: ManagedReconcilerOptions<T, R, Ref> & { pollIntervalMs: number; adoption: InstallAdoption };
  readonly #keys: KeyStates;
  /** What is fixed about the kind (noun, idField, alignPolls, ...). */
  readonly #traits: KindTraits<T>;

  constructor(opts: ManagedReconcilerOptions<T, R, Ref>) {
    this.#o = {
      ...opts,
      pollIntervalMs: opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      adoption: opts.adoption ?? NO_ADOPTION,
    };
    this.#traits = opts.connector.traits;
    if (!(this.#o.pollIntervalMs > 0))
      throw new RangeError(`pollIntervalMs must be > 0, got ${this.#o.pollIntervalMs}`);
    this.#keys = new KeyStates({
      clock: opts.clock,
      pendingInitialMs: opts.pendingInitialMs,
      pendingMaxMs: opts.pendingMaxMs,
      minFailures: opts.failureReport?.minFailures,
      minDurationMs: opts.failureReport?.minDurationMs,
      accessRetry: accessRetryCurve(this.#o.pollIntervalMs),
    });
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const key = keyOf(req);
    const kind = this.#o.resource.kind;
    const hint = this.#o.takeChangeHint?.(key);
    const cached = this.#o.client.get(req);
    if (cached === undefined) {
      this.#keys.forget(key);
      this.#o.polls?.forget(kind, key);
      return {};
    }
    // The cache hands out frozen objects: work on a copy, with its type meta filled in.
    const obj = structuredClone(cached) as T;
    obj.apiVersion = apiVersionOf(this.#o.resource);
    obj.kind = kind;
    // A reconcile request (../timing.ts) is this reconcile's to handle, unless the object is
    // paused (it waits for the resume); every status written records it and the poll interval.
    const request = isPaused(obj) ? undefined : reconcileRequest(obj);
    const writer = new StatusWriter(this.#o.client, this.#o.clock, obj, (status, now) =>
      withTimingStatus(status, obj, request, now),
    );
    try {
      return await this.#reconcileRead(writer, key, ctx, hint !== undefined || request !== undefined, hint);
    } finally {
      const event = invalidPollIntervalEvent(obj.status, writer.stored.status);
      if (event !== undefined) this.#o.recorder.event(writer.stored, "Warning", event.reason, event.message);
    }
  }

  /**
   * The reconcile of the object `writer` holds, once read; `fresh`: a change event or a reconcile
   * request asks to observe the resource afresh.
   */
  async #reconcileRead(
    writer: StatusWriter<T>,
    key: string,
    ctx: ReconcileContext,
    fresh: boolean,
    hint: ChangeHint | undefined,
  ): Promise<Result> {
    const kind = this.#o.resource.kind;
    const obj = writer.stored;
    // A poll draws on the polls' share of the AWS budgets, behind real work, and tallies what it
    // drew. Only an object that is done is polled: a change event's hint, a reconcile request, an
    // object not yet reconciled at its generation (the initial list holds those too) or one with
    // anything in flight (a transition, a failure streak) is real work.
    const polled =
      ctx.cause === "poll" && !fresh && reconciledAtGeneration(obj) && !this.#keys.remembers(key);
    const facts = flowFacts(obj, this.#traits.idField);
    const dctx: DriverContext = {
      logger: ctx.logger,
      signal: ctx.signal,
      flow: {
        ...facts,
        pollIntervalMs: this.#pollPeriod(obj),
        ...(fresh ? { changeHinted: true } : {}),
        ...(polled ? { poll: true } : {}),
      },
    };
    const poll = polled ? pollScope(this.#o.polls?.expected(kind, key)) : undefined;
    const connected: { account?: ObjectAccount } = {};
    const pollGroup = () => ({ kind, account: connected.account?.name ?? "" });
    let step: Step;
    try {
      const run = (): Promise<Step> => this.#run(writer, key, dctx, ctx.signal, connected, hint);
      step = poll === undefined ? await run() : await inPollScope(poll, run);
    } catch (err) {
      const failed = await this.#fail(writer, key, err, ctx, poll !== undefined, connected.account?.name);
      // A deferred poll is still due: it counts at its kind's mean until one completes.
      if (failed.poll === true) this.#o.polls?.scheduled(pollGroup(), key, this.#pollPeriod(writer.stored));
      return failed;
    }
    const { wait, ...result } = step;
    this.#keys.accessRestored(key);
    if (wait !== true) this.#keys.streakEnded(key);
    if (result.poll === true) {
      const period = this.#pollPeriod(writer.stored);
      if (poll !== undefined) this.#o.polls?.polled(pollGroup(), key, period, poll.drawn);
      else this.#o.polls?.scheduled(pollGroup(), key, period);
    }
    return result;
  }

  /**
   * A key the controller's start enqueued as a poll (the cache's replay): a converged object's
   * poll is due from now, so it counts in the polls' demand at its group's mean until its poll
   * completes, however long the queue ahead of it. An object whose account the cache cannot tell
   * is counted by its reconcile instead.
   */
  pollQueued(req: Request): void {
    const polls = this.#o.polls;
    if (polls === undefined) return;
    const obj = this.#o.client.get(req);
    if (obj === undefined || isPaused(obj) || obj.metadata.deletionTimestamp !== undefined) return;
    if (!reconciledAtGeneration(obj)) return;
    const account = this.#o.connector.accountNameOf?.(obj);
    if (account === undefined) return;
    polls.scheduled({ kind: this.#o.resource.kind, account }, keyOf(req), this.#pollPeriod(obj));
  }

  /** The reconcile's steps after the read; `connected` gets the account the object was connected to. */
  async #run(
    writer: StatusWriter<T>,
    key: string,
    dctx: DriverContext,
    signal: AbortSignal,
    connected: { account?: ObjectAccount },
    hint: ChangeHint | undefined,
  ): Promise<Step> {
    const obj = writer.stored;
    if (isPaused(obj)) return await this.#paused(writer);
    const { driver, account } = await this.#o.connector.connect(obj, signal);
    if (account !== undefined) connected.account = account;
    const run: Run<T, R, Ref> = { writer, key, ctx: dctx, driver, account, hint };
    if (observesOnly(obj)) return await this.#observeOnly(run);
    if (obj.metadata.deletionTimestamp !== undefined) return await this.#finalize(run);
    return await this.#ensure(run);
  }

  /**
   * A paused object (../pause.ts): records Synced=False, reason Paused, with a Normal Event when
   * the pause (or a deletion waiting for it) begins, and nothing else. No requeue: removing the
   * annotation enqueues the object (the controller's predicate, ../setup.ts).
   */
  async #paused(writer: StatusWriter<T>): Promise<Step> {
    const obj = writer.stored;
    const deleting = obj.metadata.deletionTimestamp !== undefined;
    // Without the finalizer, nothing holds a deleted object back and nothing waits.
    if (deleting && !hasFinalizer(obj, FINALIZER)) return {};
    const synced = pausedCondition(deleting);
    const current = getCondition(obj.status?.conditions, ConditionType.Synced);
    if (current?.reason !== synced.reason || current.message !== synced.message)
      this.#o.recorder.event(obj, "Normal", Reason.Paused, synced.message);
    await writer.write(writer.conditioned({ synced }));
    return {};
  }

  async #finalize({ writer, key, ctx, driver }: Run<T, R, Ref>): Promise<Step> {
    const obj = writer.stored;
    if (!hasFinalizer(obj, FINALIZER)) return {};
    const { recorder, client } = this.#o;
    if (obj.spec.deletionPolicy === "Retain") {
      await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      recorder.event(
        obj,
        "Normal",
        "Retained",
        `deletionPolicy is Retain: the ${this.#traits.noun} was left in AWS`,
      );
      this.#keys.settled(key);
      return {};
    }
    const outcome = await driver.delete(obj, await driver.observe(obj, ctx), ctx);
    if (!outcome.done && outcome.blocked === true) {
      // Blocked until a human acts (empties the bucket): report it, keep the finalizer and look
      // again with a bounded backoff (./key-state.ts).
      await writer.write(writer.conditioned({ ready: notTrue(outcome.reason, outcome.message) }));
      recorder.event(obj, "Warning", outcome.reason, outcome.message);
      return { requeueAfter: this.#keys.nextBlockedLook(key) };
    }
    this.#keys.unblocked(key);
    if (outcome.done) {
      await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      if (outcome.leftInPlace !== undefined) recorder.event(obj, "Normal", "Released", outcome.leftInPlace);
      else recorder.event(obj, "Normal", "Deleted", `the ${this.#traits.noun} was deleted from AWS`);
      this.#keys.settled(key);
      return {};
    }
    const status = writer.conditioned({ ready: notTrue(Reason.Deleting, outcome.message) });
    if (outcome.state !== undefined) status.state = outcome.state;
    await writer.write(status);
    return { requeueAfter: this.#keys.nextPendingPoll(key) };
  }

  /**
   * An object with `managementPolicy: ObserveOnly` (../management-policy.ts): release the
   * finalizer a managed past left (never deleting anything), then observe and report.
   */
  async #observeOnly({ writer, key, ctx, driver, account }: Run<T, R, Ref>): Promise<Step> {
    const { recorder, client } = this.#o;
    if (hasFinalizer(writer.stored, FINALIZER)) {
      const obj = writer.stored;
      const stored = await client.removeFinalizer(obj, FINALIZER, { signal: ctx.signal });
      recorder.event(obj, "Normal", "Released", releasedMessage(this.#traits.noun));
      if (stored === undefined) return {};
      writer.storedAs(stored);
    }
    this.#keys.unblocked(key);
    if (ctx.flow.deleting) {
      this.#keys.settled(key);
      return {};
    }
    const obj = writer.stored;
    const view = observedView(await driver.observe(obj, ctx), obj, driver, this.#traits.noun);
    const base = obj.status ?? {};
    const next = { ...obj, status: { ...(view.clear ? clearedStatus(base) : base), ...view.status } } as T;
    if (!view.clear) recordAccount(next, account);
    // The outputs ConfigMap (a Kubernetes write, never an AWS one) follows a resource that exists,
    // and keeps its last values while it does not, as for a managed object.
    const conflict = view.clear ? undefined : await this.#writeOutputs(next, ctx);
    await writer.write(writer.conditioned(conflict ?? { ready: view.ready, synced: reconciled }, next));
    this.#keys.settled(key);
    return { requeueAfter: this.#steadyPoll(next), poll: true };
  }

  async #ensure(run: Run<T, R, Ref>): Promise<Step> {
    const { writer, key, ctx, driver } = run;
    if (!hasFinalizer(writer.stored, FINALIZER)) {
      writer.storedAs(await this.#o.client.addFinalizer(writer.stored, FINALIZER, { signal: ctx.signal }));
    }
    const obj = writer.stored;
    const refs = this.#o.references(obj);
    const obs: Observation<R> = this.#keys.resumesCreate(key, obj.metadata.resourceVersion)
      ? { exists: false }
      : await driver.observe(obj, ctx);
    let outcome: Outcome<R>;
    if (!obs.exists) {
      if (obs.appearing !== undefined) {
        // Never taken for an out-of-band deletion, which would create a second resource.
        ctx.logger.debug(obs.appearing);
        return { requeueAfter: this.#keys.nextPendingPoll(key), wait: true };
      }
      const created = await createAbsent(this.#createDeps(driver), writer, key, ctx, refs);
      if ("result" in created) return { ...created.result, wait: created.wait };
      outcome = { resource: created.created, refused: [], decision: undefined };
    } else {
      this.#refuseForeign(obj, obs, run.account);
      outcome = await this.#update(run, obj, obs, refs);
    }
    return await this.#report(run, outcome);
  }

  /**
   * Throws the ownership rules' refusal of a foreign resource, if they refuse it; `account` (the
   * object's AwsAccount, undefined for the operator's own identity) decides who grants adoption.
   */
  #refuseForeign(obj: T, obs: Observation<R> & { exists: true }, account: ObjectAccount | undefined): void {
    if (obs.ownership !== "foreign") return;
    const refusal = adoptionRefusal(obj, obs.foreign, {
      noun: this.#traits.noun,
      directory: this.#o.owners,
      grant: adoptionGrant(obj.metadata.namespace ?? "", account, this.#o.adoption),
    });
    if (refusal !== undefined)
      throw new InvalidSpecError(refusal.reason, refusal.message, { notReady: true });
  }

  /**
   * Plans the changes the observed resource needs and does with them what the object's policies
   * say (./change-policy.ts): applies them (or adopts the resource) with the Event and drift
   * metrics, reports them as drift, or holds them for approval. Returns what {@link #report}
   * records: the refused changes left as they are, and the decision.
   */
  async #update(
    { ctx, driver, hint }: Run<T, R, Ref>,
    obj: T,
    obs: Observation<R> & { exists: true },
    refs: Ref,
  ): Promise<Outcome<R>> {
    const { recorder } = this.#o;
    const set = await driver.plan(obj, obs, ctx, refs);
    const holding = holdingRefusal(set.changes);
    if (holding?.refusal !== undefined)
      throw new InvalidSpecError(holding.refusal.reason, holding.refusal.message);
    const adopting = obs.ownership === "foreign";
    const decision = decideChanges(obj, set.changes, { adopting, nowMs: this.#o.clock.now(), hint });
    for (const e of decision.events) recorder.event(obj, e.type, e.reason, e.message);
    const chosen = new Set(decision.apply);
    const applied = chosen.size === 0 ? [] : await applyChangeSet(set, ctx, (c) => chosen.has(c));
    const described = describeChanges(applied);
    const held = decision.pendingChanges !== undefined;
    if (adopting && !held) {
      const what = applied.length > 0 ? `: ${described}` : "";
      recorder.event(obj, "Normal", "Adopted", `adopted the existing ${this.#traits.noun}${what}`);
    } else if (!adopting && applied.length > 0) {
      recorder.event(obj, "Normal", "Updated", `repaired drift: ${described}`);
      for (const setting of new Set(applied.map((c) => c.setting))) this.#o.driftRepairs?.repaired(setting);
    }
    // Refused changes are reported as DriftNotRepaired unless driftPolicy Report lists them already.
    const refused =
      decision.drift === undefined && obj.spec.driftPolicy !== "Report" ? refusedChanges(set.changes) : [];
    return { resource: obs.resource, refused, decision, heldAdoption: adopting && held };
  }

  /**
   * Synced for the changes the plan refused and that were left as they are (none: reconciled). A
   * report that is new (another message than the current Synced condition) gets a Warning Event
   * and is counted per setting; a lasting one writes and emits nothing more.
   */
  #driftSynced(obj: T, refused: readonly Change[]): ConditionValue {
    if (refused.length === 0) return reconciled;
    const synced = notTrue(
      Reason.DriftNotRepaired,
      `drift not repaired (these settings are not changed in place): ${describeChanges(refused)}`,
    );
    const current = getCondition(obj.status?.conditions, ConditionType.Synced);
    if (current?.reason !== synced.reason || current.message !== synced.message) {
      this.#o.recorder.event(obj, "Warning", synced.reason, synced.message);
      for (const setting of new Set(refused.map((c) => c.setting))) this.#o.driftRepairs?.reported(setting);
    }
    return synced;
  }

  /** Describes the resource into status, writes the outputs and the status, and picks the requeue. */
  async #report(
    { writer, key, ctx, driver, account }: Run<T, R, Ref>,
    { resource, refused, decision, heldAdoption }: Outcome<R>,
  ): Promise<Step> {
    const obj = writer.stored;
    if (heldAdoption === true && decision !== undefined)
      return await this.#holdAdoption(writer, key, decision);
    const { status: described, readiness } = driver.describe(resource, obj);
    const next = {
      ...obj,
      status: {
        ...(obj.status ?? {}),
        ...described,
        ...observeOnlyFieldsCleared(this.#traits),
        drift: decision?.drift,
        pendingChanges: decision?.pendingChanges,
        appliedChanges: decision?.appliedChanges ?? obj.status?.appliedChanges,
      },
    } as T;
    recordAccount(next, account);
    const conflict = await this.#writeOutputs(next, ctx);
    // A create leaves the policies' conditions as its own branch set them.
    const policies =
      decision === undefined ? {} : { drifted: decision.drifted, changesPending: decision.changesPending };
    const conditions = conflict
      ? { ...conflict, ...policies }
      : {
          ready: readiness.ready
            ? available(readiness.message)
            : notTrue(readiness.reason, readiness.message),
          synced: decision?.synced ?? this.#driftSynced(obj, refused),
          ...policies,
        };
    await writer.write(writer.conditioned(conditions, next));
    if (readiness.pending) return { requeueAfter: this.#keys.nextPendingPoll(key) };
    this.#keys.settled(key);
    return { requeueAfter: this.#steadyPoll(next), poll: true };
  }

  /**
   * An adoption held for approval: the resource is not the object's yet, so nothing of it goes
   * into status (a recorded identifier would make it look the object's own): Ready=False with the
   * gate's reason, as for a held create, and the plan in status.pendingChanges.
   */
  async #holdAdoption(writer: StatusWriter<T>, key: string, decision: ChangeDecision): Promise<Step> {
    const obj = writer.stored;
    const held = decision.synced ?? notTrue(Reason.AwaitingApproval, "");
    const next = { ...obj, status: { ...(obj.status ?? {}), pendingChanges: decision.pendingChanges } } as T;
    const status = writer.conditioned(
      { ready: held, synced: held, changesPending: decision.changesPending, drifted: decision.drifted },
      next,
    );
    await writer.write(status);
    this.#keys.settled(key);
    return { requeueAfter: this.#steadyPoll(next), poll: true };
  }

  /**
   * Writes the outputs ConfigMap and Secret of `obj` (with the status just computed). Returns the
   * OutputConflict conditions when one is not the object's (OutputNotAllowed when the Secret may
   * not be written in its namespace), after a Warning Event the first time it is seen (a lasting
   * conflict makes no write per poll).
   */
  async #writeOutputs(obj: T, ctx: DriverContext): Promise<ConditionSet | undefined> {
    const outputs = this.#o.outputs;
    if (outputs === undefined) return undefined;
    const reported =
      getCondition(obj.status?.conditions, ConditionType.Ready)?.reason === Reason.OutputConflict;
    const refusal = await outputs.sync(obj, {
      signal: ctx.signal,
      logger: ctx.logger,
      conflictReported: reported,
    });
    if (refusal === undefined) return undefined;
    const ready = getCondition(obj.status?.conditions, ConditionType.Ready);
    if (ready?.reason !== refusal.reason || ready.message !== refusal.message)
      this.#o.recorder.event(obj, "Warning", refusal.reason, refusal.message);
    return failing(refusal.reason, refusal.message);
  }

  /**
   * Delay of the next steady-state poll: the object's poll period ({@link #pollPeriod}), or with
   * `driver.alignPolls` the time to the first multiple of that period (on the clock's epoch) at
   * least half a period away.
   */
  #steadyPoll(obj: Readonly<T>): number {
    const period = this.#pollPeriod(obj);
    if (this.#traits.alignPolls !== true) return period;
    const now = this.#o.clock.now();
    return Math.ceil((now + period / 2) / period) * period - now;
  }

  /**
   * The configured steady poll period of `obj`: its poll-interval annotation when that applies
   * (../timing.ts), else `pollIntervalFor`, else `pollIntervalMs`.
   */
  #pollPeriod(obj: Readonly<T>): number {
    return annotatedPollInterval(obj) ?? this.#o.pollIntervalFor?.(obj) ?? this.#o.pollIntervalMs;
  }

  #createDeps(driver: ResourceDriver<T, R, Ref>): CreateDeps<T, R, Ref> {
    return {
      driver,
      traits: this.#traits,
      recorder: this.#o.recorder,
      clock: this.#o.clock,
      keys: this.#keys,
      steadyPoll: (obj) => this.#steadyPoll(obj),
    };
  }

  /**
   * Executes the plan ./failure.ts makes for a failed reconcile. A poll that ends with a delay (a
   * deferred call among them) stays a poll; one that ends in an error is retried as work.
   */
  async #fail(
    writer: StatusWriter<T>,
    key: string,
    err: unknown,
    ctx: ReconcileContext,
    poll: boolean,
    account: string | undefined,
  ): Promise<Result> {
    const obj = writer.stored;
    const plan = planFailure(err, {
      ready: getCondition(obj.status?.conditions, ConditionType.Ready),
      recorded: recordedIdOf(obj, this.#traits.idField) !== undefined,
      steadyPollMs: this.#steadyPoll(obj),
      access: { account, iam: this.#o.iam, retry: this.#keys.accessRetry },
    });
    if (plan.note !== undefined) ctx.logger.debug({ ...plan.note.fields }, plan.note.message);
    let record = plan.conditions;
    if (plan.streak === "end") this.#keys.streakEnded(key);
    else if (plan.streak === "count" && !this.#keys.failed(key)) record = undefined;
    if (record !== undefined) await writer.writeQuietly(writer.conditioned(record), ctx.logger);
    if (plan.event !== undefined)
      this.#o.recorder.event(obj, "Warning", plan.event.reason, plan.event.message);
    if ("retryAccess" in plan.outcome) return { requeueAfter: this.#keys.nextAccessRetry(key) };
    if ("requeueAfter" in plan.outcome)
      return poll
        ? { requeueAfter: plan.outcome.requeueAfter, poll }
        : { requeueAfter: plan.outcome.requeueAfter };
    throw plan.outcome.error;
  }
}

/** Records in `obj`'s status the account ID its resource lives in, when an account was resolved. */
function recordAccount(obj: ManagedObject, account: ObjectAccount | undefined): void {
  if (account !== undefined && obj.status !== undefined) obj.status.accountId = account.accountId;
}
