/**
 * Per-object timing, for every kind alike, from two annotations:
 *
 * - `compute.cloud.com/poll-interval`: the object's own steady poll period, in place of the
 *   operator's (`--poll-interval`, or `--poll-interval-with-events` while change events for its
 *   account are read). A duration as `--poll-interval` takes it (Go's syntax: "30s", "10m",
 *   "1h30m"; src/config/duration.ts), from {@link MIN_POLL_INTERVAL_MS} to
 *   {@link MAX_POLL_INTERVAL_MS}. The object carries the condition `PollIntervalValid` while it has
 *   the annotation: True when the value applies, False (reason `InvalidPollInterval`, with a
 *   Warning Event when that begins) when it is no duration or out of bounds; the operator's
 *   interval then applies and the rest of the reconcile goes on as ever.
 *
 *   The bounds: the annotation is anyone's who may edit the object, while the flag (at least 1 s)
 *   is the cluster admin's, and every poll draws on the AWS read budgets the whole estate shares
 *   (src/aws/rate-budget.ts, src/aws/poll-demand.ts). At 10 s a bucket with every setting (7 reads
 *   a poll) takes 0.7 reads/s, 3 % of the polls' share of the default S3 budget (50 % of 50/s),
 *   as much as 30 such buckets at the default 5 minutes; below that, a poll comes as often as the
 *   transition polls of a resource that is changing (2 s to 30 s), and catching a change within
 *   seconds is what change events are for. At 24 h drift is still found once a day; an object
 *   that should not be looked at more rarely than that is better paused or observed only.
 *
 * - `compute.cloud.com/reconcile-requested-at`: a value other than the object's
 *   `status.lastHandledReconcileAt` (conventionally the time of the request, as `date -u
 *   +%Y-%m-%dT%H:%M:%SZ` writes it) asks for one reconcile now. That reconcile is real work, never
 *   a poll, and observes the resource afresh (never from a shared snapshot); the status it writes
 *   echoes the value in `status.lastHandledReconcileAt`, so later reconciles do not take it as a
 *   request again. A request to a paused object is handled when the pause ends.
 *
 * The controller enqueues an object when either annotation changes (./setup.ts). This module holds
 * the pure decisions; the flow (./flow/reconciler.ts) executes them.
 */
import {
  ConditionStatus,
  ConditionType,
  getCondition,
  POLL_INTERVAL_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  removeCondition,
  setCondition,
} from "../../api/v1/index.ts";
import { DurationSyntaxError, formatDuration, parseDuration } from "../../config/duration.ts";
import type { ManagedObject, ManagedStatus } from "./driver.ts";
import type { ConditionValue } from "./flow/conditions.ts";
import { Reason } from "./reasons.ts";

/** The shortest poll period the annotation may set, in ms: 10 s. */
export const MIN_POLL_INTERVAL_MS = 10_000;

/** The longest poll period the annotation may set, in ms: 24 h. */
export const MAX_POLL_INTERVAL_MS = 86_400_000;

/** The bounds as a user writes them. */
const BOUNDS = `${MIN_POLL_INTERVAL_MS / 1000}s to ${MAX_POLL_INTERVAL_MS / 3_600_000}h`;

/** How much of a refused value a message quotes. */
const QUOTED_CHARS = 64;

/** What an object's poll-interval annotation says: a period that applies, or why it does not. */
export type PollIntervalSetting =
  | { readonly intervalMs: number; readonly text: string }
  | { readonly problem: string; readonly text: string };

/** The poll-interval annotation of `obj`, judged; undefined when it has none. */
export function pollIntervalSetting(obj: Pick<ManagedObject, "metadata">): PollIntervalSetting | undefined {
  const text = obj.metadata.annotations?.[POLL_INTERVAL_ANNOTATION];
  if (text === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (!(err instanceof DurationSyntaxError)) throw err;
    return { text, problem: "is not a duration (a number and a unit, as in 30s, 10m or 1h30m)" };
  }
  if (ms < MIN_POLL_INTERVAL_MS)
    return { text, problem: `is shorter than ${formatDuration(MIN_POLL_INTERVAL_MS)}` };
  if (ms > MAX_POLL_INTERVAL_MS)
    return { text, problem: `is longer than ${MAX_POLL_INTERVAL_MS / 3_600_000}h` };
  return { text, intervalMs: ms };
}

/** The poll period the annotation of `obj` sets, in ms; undefined when it sets none (absent or refused). */
export function annotatedPollInterval(obj: Pick<ManagedObject, "metadata">): number | undefined {
  const setting = pollIntervalSetting(obj);
  return setting !== undefined && "intervalMs" in setting ? setting.intervalMs : undefined;
}

/** The PollIntervalValid condition for `setting`. */
export function pollIntervalCondition(setting: PollIntervalSetting): ConditionValue {
  if ("intervalMs" in setting)
    return {
      status: ConditionStatus.True,
      reason: Reason.PollIntervalSet,
      message: `polled every ${formatDuration(setting.intervalMs)}, as the ${POLL_INTERVAL_ANNOTATION} annotation says`,
    };
  return {
    status: ConditionStatus.False,
    reason: Reason.InvalidPollInterval,
    message:
      `the ${POLL_INTERVAL_ANNOTATION} annotation "${quoted(setting.text)}" ${setting.problem}: it takes ` +
      `a duration from ${BOUNDS}; the operator's poll interval applies`,
  };
}

/** `text`, cut to {@link QUOTED_CHARS} characters with "..." when longer. */
function quoted(text: string): string {
  const chars = [...text];
  return chars.length > QUOTED_CHARS ? `${chars.slice(0, QUOTED_CHARS).join("")}...` : text;
}

/**
 * The reconcile request `obj` carries and has not had handled: the value of its
 * reconcile-requested-at annotation when that differs from `status.lastHandledReconcileAt`.
 */
export function reconcileRequest(obj: Pick<ManagedObject, "metadata" | "status">): string | undefined {
  const value = obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  return value !== undefined && value !== obj.status?.lastHandledReconcileAt ? value : undefined;
}

/**
 * `status` with what the timing annotations of `obj` record in it: the PollIntervalValid condition
 * (stamped with the object's generation; removed when the annotation is gone) and, when `handled`
 * is a request this reconcile handles, `lastHandledReconcileAt`.
 */
export function withTimingStatus<S extends ManagedStatus>(
  status: S,
  obj: Pick<ManagedObject, "metadata">,
  handled: string | undefined,
  now: number,
): S {
  const setting = pollIntervalSetting(obj);
  const type = ConditionType.PollIntervalValid;
  let { conditions } = status;
  if (setting !== undefined) {
    const value = pollIntervalCondition(setting);
    conditions = setCondition(
      conditions,
      { type, ...value, observedGeneration: obj.metadata.generation ?? 0 },
      now,
    );
  } else if (getCondition(conditions, type) !== undefined) {
    conditions = removeCondition(conditions, type);
  }
  return {
    ...status,
    ...(conditions !== status.conditions ? { conditions } : {}),
    ...(handled !== undefined ? { lastHandledReconcileAt: handled } : {}),
  };
}

/**
 * The Warning Event to emit when the PollIntervalValid condition turned False or changed its
 * message between `before` (the status a reconcile started from) and `after` (the status it
 * left stored): undefined when there is none to emit.
 */
export function invalidPollIntervalEvent(
  before: ManagedStatus | undefined,
  after: ManagedStatus | undefined,
): { reason: string; message: string } | undefined {
  const now = getCondition(after?.conditions, ConditionType.PollIntervalValid);
  if (now?.status !== ConditionStatus.False) return undefined;
  const was = getCondition(before?.conditions, ConditionType.PollIntervalValid);
  if (was?.status === now.status && was.reason === now.reason && was.message === now.message)
    return undefined;
  return { reason: now.reason, message: now.message };
}
