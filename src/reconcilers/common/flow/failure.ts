/**
 * What the flow does with a reconcile that failed: one pure decision, {@link planFailure}, from
 * the error and a few facts about the object to the conditions to record, the Event to emit and
 * how the reconcile ends (a requeue after a delay, or an error for the controller's rate-limited
 * retry). The flow executes the plan; nothing else inspects a failure.
 *
 * - A write that met a newer version of the object (409 from a stale cache) is no failure: look
 *   again shortly (the newer version's watch event usually comes first).
 * - A call the client-side rate budget deferred (NoPermitYetError) sent nothing: requeue for the
 *   booked slot.
 * - A dependency that is not ready (DependencyNotReadyError): report it on Ready and Synced and
 *   wait for the steady poll (a change of the other object enqueues this one sooner).
 * - Something needed is not usable yet (NotReadyRetryError): report it on Synced at once and
 *   retry with the controller's backoff.
 * - A terminal failure (InvalidSpecError, a terminal AWS error): Synced=False, and Ready=False
 *   unless a resource is recorded and the failure does not refuse it to the object; one Warning
 *   Event; a TerminalError, so a broken spec does not hot-loop until it changes.
 * - A retryable AWS error (throttled, transient): counted in the object's failure streak and
 *   recorded on Synced only once it persists; rethrown for a rate-limited retry.
 * - Anything else is rethrown unrecorded.
 */
import { AwsError, NoPermitYetError } from "../../../aws/errors.ts";
import { TerminalError } from "../../../runtime/controller/reconciler.ts";
import { isConflict } from "../../../runtime/kube/errors.ts";
import { DependencyNotReadyError, InvalidSpecError, NotReadyRetryError } from "../driver.ts";
import { conditionReason } from "../reasons.ts";
import { failing, notTrue, type ConditionSet } from "./conditions.ts";

/** Requeue after a 409 from a stale cache read, in ms. */
export const CONFLICT_REQUEUE_MS = 1000;

/** What {@link planFailure} needs to know about the object. */
export interface FailureFacts {
  /** A resource identifier is recorded in the object's status. */
  readonly recorded: boolean;
  /** Delay of the object's next steady-state poll, in ms. */
  readonly steadyPollMs: number;
}

/** What to do about one failed reconcile. */
export interface FailurePlan {
  /** Conditions to record on the object (written quietly: a failed write changes nothing). */
  readonly conditions?: ConditionSet;
  /**
   * The object's failure streak: `count` this failure (and record {@link conditions} only once
   * the streak has persisted), `end` it, or `keep` it as it is.
   */
  readonly streak: "count" | "end" | "keep";
  /** A Warning Event to emit. */
  readonly event?: { readonly reason: string; readonly message: string };
  /** A debug log line: the failure is expected and handled. */
  readonly note?: { readonly message: string; readonly fields?: Readonly<Record<string, unknown>> };
  /** How the reconcile ends: requeued after a delay, or with an error for the controller. */
  readonly outcome: { readonly requeueAfter: number } | { readonly error: unknown };
}

/** The delay until a permit the rate budget booked, as a requeue (never 0: that means no requeue). */
export function permitRequeue(err: NoPermitYetError): { requeueAfter: number } {
  return { requeueAfter: Math.max(1, err.retryAfterMs) };
}

/** The plan for a reconcile that failed with `err`; pure. See the module comment. */
export function planFailure(err: unknown, facts: FailureFacts): FailurePlan {
  if (isConflict(err)) {
    return {
      streak: "keep",
      note: { message: "object changed since it was read from the cache; looking again" },
      outcome: { requeueAfter: CONFLICT_REQUEUE_MS },
    };
  }
  if (err instanceof NoPermitYetError) {
    return {
      streak: "keep",
      note: { message: err.message, fields: { retryAfterMs: err.retryAfterMs } },
      outcome: permitRequeue(err),
    };
  }
  if (err instanceof DependencyNotReadyError) {
    return {
      conditions: failing(err.reason, err.message),
      streak: "keep",
      outcome: { requeueAfter: facts.steadyPollMs },
    };
  }
  if (err instanceof NotReadyRetryError) {
    return {
      conditions: { synced: notTrue(err.reason, err.message) },
      streak: "keep",
      outcome: { error: err },
    };
  }
  if (err instanceof InvalidSpecError) return terminal(err, err.reason, err.message, err.notReady, facts);
  if (err instanceof AwsError) {
    const reason = conditionReason(err.info.code);
    const message = `${err.info.operation}: ${err.info.message}`;
    if (err.info.kind === "terminal") return terminal(err, reason, message, false, facts);
    return { conditions: { synced: notTrue(reason, message) }, streak: "count", outcome: { error: err } };
  }
  return { streak: "keep", outcome: { error: err } };
}

function terminal(
  err: unknown,
  reason: string,
  message: string,
  notReady: boolean,
  facts: FailureFacts,
): FailurePlan {
  // A recorded resource keeps its Ready condition, unless the failure refuses it to this object.
  const keepReady = facts.recorded && !notReady;
  return {
    conditions: keepReady ? { synced: notTrue(reason, message) } : failing(reason, message),
    streak: "end",
    event: { reason, message },
    outcome: { error: new TerminalError(message, { cause: err }) },
  };
}
