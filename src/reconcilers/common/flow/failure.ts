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
 * - A dependency that is not ready (DependencyNotReadyError): report it on Ready and Synced, with
 *   one Warning Event when Ready did not already say so (a new wait, or a wait for something
 *   else), and wait for the steady poll (a change of the other object enqueues this one sooner).
 * - Something needed is not usable yet (NotReadyRetryError): report it on Synced at once and
 *   retry with the controller's backoff.
 * - A terminal failure (InvalidSpecError, a terminal AWS error): Synced=False, and Ready=False
 *   unless a resource is recorded and the failure does not refuse it to the object; one Warning
 *   Event; a TerminalError, so a broken spec does not hot-loop until it changes.
 * - A failure of the operator's access (a terminal AWS error with `access`: AccessDenied,
 *   UnauthorizedOperation, missing credentials): recorded like a terminal failure, with the AWS
 *   code as the reason and a message saying what to grant (the call's IAM action, who needs it,
 *   the policy file that allows it) and when it is tried again; then retried on the long access
 *   backoff (./key-state.ts), because fixing IAM changes nothing the operator could watch.
 * - A retryable AWS error (throttled, transient): counted in the object's failure streak and
 *   recorded on Synced only once it persists; rethrown for a rate-limited retry.
 * - Anything else is rethrown unrecorded.
 */
import { AwsError, NoPermitYetError, type AwsErrorInfo } from "../../../aws/errors.ts";
import { SERVICE_IAM_PREFIX } from "../../../aws/service.ts";
import { formatDuration } from "../../../config/duration.ts";
import type { ExponentialCurve } from "../../../runtime/backoff.ts";
import { TerminalError } from "../../../runtime/controller/reconciler.ts";
import { isConflict } from "../../../runtime/kube/errors.ts";
import { DependencyNotReadyError, InvalidSpecError, NotReadyRetryError } from "../driver.ts";
import { actionOfCall, type IamAction } from "../iam.ts";
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
  /** Who makes the object's calls and what its kind calls, for the message of an access failure. */
  readonly access: AccessFacts;
  /** The object's Ready condition as recorded before this reconcile, if any. */
  readonly ready?: { readonly reason: string; readonly message: string } | undefined;
}

/** What the message of an access failure says about who needs what, and when it is tried again. */
export interface AccessFacts {
  /** The AwsAccount whose role makes the calls; undefined for the operator's own identity. */
  readonly account?: string | undefined;
  /** The IAM actions the calls need (the kind's registry entry), to name a refused call's action. */
  readonly iam?: readonly IamAction[] | undefined;
  /** The backoff of access retries (./key-state.ts). */
  readonly retry: ExponentialCurve;
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
  /**
   * How the reconcile ends: requeued after a delay, with an error for the controller, or
   * requeued on the object's next access retry (./key-state.ts).
   */
  readonly outcome:
    { readonly requeueAfter: number } | { readonly error: unknown } | { readonly retryAccess: true };
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
    const reported = facts.ready?.reason === err.reason && facts.ready.message === err.message;
    return {
      conditions: failing(err.reason, err.message),
      streak: "keep",
      ...(reported ? {} : { event: { reason: err.reason, message: err.message } }),
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
    if (err.info.kind === "terminal" && err.info.access !== undefined) {
      const advised = `${message}${accessAdvice(err.info, facts.access)}`;
      return { ...terminal(err, reason, advised, false, facts), outcome: { retryAccess: true } };
    }
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

/** Where the operator's permissions and the tenant roles are explained. */
const POLICY_DOCS =
  "config/iam/policy.json allows it (config/iam/policy-tag-scoped.json on resources carrying the managed-by tag only); see docs/eks.md#2-the-iam-policy";
const ASSUME_ROLE_DOCS = "docs/accounts.md#iam-the-operators-role-and-the-tenant-role";

/**
 * What to append to the message of an access failure `info`: what to grant (for `denied`, the
 * call's IAM action and who needs it; the code's own hint already says it for the others) and
 * when the call is tried again. Stable: the same failure yields the same text.
 */
export function accessAdvice(info: AwsErrorInfo, facts: AccessFacts): string {
  const parts: string[] = [];
  if (info.access === "denied" && info.service !== "unknown") {
    const prefix = SERVICE_IAM_PREFIX[info.service];
    if (info.service === "sts" && info.operation === "AssumeRole") {
      parts.push(
        "the operator's IAM role needs sts:AssumeRole and sts:TagSession on the AwsAccount's role, and " +
          "that role's trust policy must allow both to the operator's role (with the external ID); see " +
          ASSUME_ROLE_DOCS,
      );
    } else {
      const who =
        facts.account !== undefined ? `the role of AwsAccount ${facts.account}` : "the operator's IAM role";
      parts.push(`${who} needs ${actionOfCall(facts.iam ?? [], prefix, info.operation)}: ${POLICY_DOCS}`);
    }
  }
  parts.push(retryNote(facts.retry));
  return parts.map((p) => `; ${p}`).join("");
}

/** When an access failure is tried again, as the message says it. */
function retryNote(curve: ExponentialCurve): string {
  return (
    `tried again after ${formatDuration(curve.initialMs)}, then at doubling intervals up to ` +
    `${formatDuration(curve.maxMs)} until it succeeds (at once when the spec changes)`
  );
}
