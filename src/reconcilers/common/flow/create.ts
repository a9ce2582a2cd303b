/**
 * The absent branch of the flow: the observation found nothing, and nothing is on its way to
 * appearing. In order:
 *
 * 1. A resource recorded in status was deleted outside the operator: with
 *    `onDeletedOutOfBand: Report` report it (one Warning when first seen) and stop; else warn,
 *    clear what the driver described, and create again under the next attempt's token.
 * 2. Record the create intent before calling AWS: the token (from UID and attempt), Ready=False
 *    reason Creating and `createRequestedAt`, the one clock of the create
 *    (FlowFacts.createStartedAt). A crash after the AWS call is then retried with the same token,
 *    and the ownership lookup finds what the first call made. Once recorded it is not written
 *    again (a create that keeps failing does not churn the status), except that its time is
 *    renewed when the create is retried long after it or for a generation the Ready condition
 *    does not describe yet (a spec fixed after a terminal failure): createRequestedAt bounds the
 *    window in which an untagged bucket can be this object's (s3-bucket/crash-window.ts).
 * 3. Under `spec.changePolicy: Approve`, a create not yet under way waits for its approval
 *    (./change-policy.ts): the plan (the spec and the create's actions) goes to
 *    `status.pendingChanges`, Ready=False with the gate's reason, and nothing is sent.
 * 4. Create. A create the rate budget deferred is remembered (./key-state.ts) and the object is
 *    requeued for the booked slot; a created one gets the Created Event.
 */
import { ConditionType, getCondition } from "../../../api/v1/index.ts";
import { NoPermitYetError } from "../../../aws/errors.ts";
import type { Clock } from "../../../runtime/clock.ts";
import type { Result } from "../../../runtime/controller/reconciler.ts";
import type { EventRecorder } from "../../../runtime/events/recorder.ts";
import { recordedIdOf, type DriverContext, type ManagedObject, type ResourceDriver } from "../driver.ts";
import type { KindTraits } from "../kind-traits.ts";
import { Reason } from "../reasons.ts";
import { CREATE_REQUEST_RENEW_MS, createToken, requestedWithin } from "../token.ts";
import { creationChange } from "../changes.ts";
import { gateChanges } from "./change-policy.ts";
import { notTrue, reconciled } from "./conditions.ts";
import { permitRequeue } from "./failure.ts";
import type { KeyStates } from "./key-state.ts";
import { clearedStatus, type StatusWriter } from "./status-writer.ts";

/** What the absent branch needs from the flow. */
export interface CreateDeps<T extends ManagedObject, R, Ref = undefined> {
  readonly driver: ResourceDriver<T, R, Ref>;
  readonly traits: KindTraits<T>;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly keys: KeyStates;
  /** Delay of the object's next steady-state poll. */
  steadyPoll(obj: Readonly<T>): number;
}

/**
 * How the absent branch ended: with the resource created, or with the reconcile's result
 * (`wait`: an expected wait, which neither is nor ends a failure).
 */
export type CreateOutcome<R> = { readonly created: R } | { readonly result: Result; readonly wait?: boolean };

/**
 * The absent branch for the object `writer` holds, whose references resolved to `refs`; see the
 * module comment.
 */
export async function createAbsent<T extends ManagedObject, R, Ref = undefined>(
  deps: CreateDeps<T, R, Ref>,
  writer: StatusWriter<T>,
  key: string,
  ctx: DriverContext,
  refs: Ref,
): Promise<CreateOutcome<R>> {
  const { driver, traits, recorder } = deps;
  const obj = writer.stored;
  let status = { ...(obj.status ?? {}) } as NonNullable<T["status"]>;
  let attempt = obj.status?.createAttempt ?? 0;
  const recorded = recordedIdOf(obj, traits.idField);
  if (recorded !== undefined) {
    const message = `the ${traits.noun} ${recorded} was deleted outside the operator`;
    if (obj.spec.onDeletedOutOfBand === "Report") {
      await reportDeletedOutOfBand(deps, writer, message);
      deps.keys.settled(key);
      return { result: { requeueAfter: deps.steadyPoll(obj) } };
    }
    recorder.event(obj, "Warning", Reason.DeletedOutOfBand, `${message}; recreating it`);
    attempt += 1;
    status = clearedStatus(status);
  } else if (attempt === 0) {
    attempt = 1;
  }
  const token = createToken(obj.metadata.uid ?? "", attempt);
  if (obj.status?.createToken !== token && obj.spec.changePolicy === "Approve") {
    const gate = gateChanges(obj, [creationChange(obj.spec, traits.noun, driver.createActions(obj, refs))]);
    for (const e of gate.events) recorder.event(obj, e.type, e.reason, e.message);
    if (!gate.approved) {
      const reason = gate.synced ?? notTrue(Reason.AwaitingApproval, "");
      const held = writer.conditioned(
        { ready: reason, synced: reason, changesPending: gate.condition },
        { ...obj, status },
      );
      await writer.write({ ...held, pendingChanges: gate.pending });
      deps.keys.settled(key);
      return { result: { requeueAfter: deps.steadyPoll(obj) } };
    }
    status = { ...status, pendingChanges: undefined, appliedChanges: gate.applied };
    if (gate.condition !== null) {
      status = writer.conditioned({ changesPending: gate.condition }, { ...obj, status });
    }
  }
  const intended = await recordIntent(deps, writer, { ...obj, status }, token, attempt);
  let created: R;
  try {
    created = await driver.create(intended, token, ctx, refs);
  } catch (err) {
    if (!(err instanceof NoPermitYetError)) throw err;
    // Nothing was sent: the rate budget booked a permit for later. The worker goes back to
    // other objects meanwhile, and the create is sent again at the slot without observing.
    deps.keys.deferCreate(key, intended.metadata.resourceVersion, err.retryAfterMs);
    ctx.logger.debug({ retryAfterMs: err.retryAfterMs }, err.message);
    return { result: permitRequeue(err), wait: true };
  }
  recorder.event(intended, "Normal", "Created", `created the ${traits.noun}`);
  return { created };
}

/**
 * Ready=False, reason DeletedOutOfBand, `state: Missing`. Warns once, when the loss is first
 * seen: every later poll finds the same state, and a repeated Event would be a Kubernetes write
 * per poll for as long as nobody acts.
 */
async function reportDeletedOutOfBand<T extends ManagedObject>(
  deps: CreateDeps<T, unknown, unknown>,
  writer: StatusWriter<T>,
  message: string,
): Promise<void> {
  const obj = writer.stored;
  const seen = getCondition(obj.status?.conditions, ConditionType.Ready);
  if (seen?.status !== "False" || seen.reason !== Reason.DeletedOutOfBand) {
    deps.recorder.event(
      obj,
      "Warning",
      Reason.DeletedOutOfBand,
      `${message}; spec.onDeletedOutOfBand is Report, not recreating`,
    );
  }
  const status = writer.conditioned({
    ready: notTrue(Reason.DeletedOutOfBand, message),
    synced: reconciled,
  });
  status.state = "Missing";
  await writer.write(status);
}

/**
 * Records the create intent on `obj` (the stored object, perhaps with its described fields
 * cleared) unless it is recorded and recent for this generation; returns the object as stored.
 */
async function recordIntent<T extends ManagedObject>(
  deps: CreateDeps<T, unknown, unknown>,
  writer: StatusWriter<T>,
  obj: T,
  token: string,
  attempt: number,
): Promise<T> {
  const now = deps.clock.now();
  const ready = getCondition(obj.status?.conditions, ConditionType.Ready);
  if (
    obj.status?.createToken === token &&
    obj.status.createAttempt === attempt &&
    ready?.observedGeneration === obj.metadata.generation &&
    requestedWithin(obj.status.createRequestedAt, now, CREATE_REQUEST_RENEW_MS)
  ) {
    return writer.stored;
  }
  return writer.write({
    ...writer.conditioned({ ready: notTrue(Reason.Creating, `creating the ${deps.traits.noun}`) }, obj),
    createToken: token,
    createAttempt: attempt,
    createRequestedAt: new Date(now).toISOString(),
  });
}
