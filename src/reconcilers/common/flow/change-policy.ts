/**
 * What the flow does with a change set (../changes.ts), by the object's policies; pure.
 *
 * - `spec.driftPolicy: Repair` (default) applies it; `Report` applies nothing of it (but the
 *   ownership tags of a resource being adopted: adopting is asked for, not drift) and records
 *   each differing path in `status.drift`: desired and observed values, when it was first seen,
 *   and who made the change when a change event said so. The Drifted condition says whether a
 *   path differs; each newly drifted path gets one Event.
 * - `spec.changePolicy: Approve` holds what would be applied (a creation included) until the
 *   annotation {@link APPROVED_CHANGES_ANNOTATION} carries the hash of exactly that set
 *   (`status.pendingChanges.hash`). An approval of a plan that has since moved is refused
 *   (StaleApproval) and the new plan is shown.
 *
 * Under `Repair` and `Auto` (the defaults) the object carries neither condition nor field.
 */
import type { JsonValue } from "../../../api/schema/openapi.ts";
import { MAX_DRIFT_ENTRIES, MAX_SHOWN_VALUE_BYTES } from "../../../api/v1/common.ts";
import {
  APPROVED_CHANGES_ANNOTATION,
  ConditionStatus,
  ConditionType,
  getCondition,
} from "../../../api/v1/index.ts";
import { changeData, changeSetHash, type Change, type ChangeData } from "../changes.ts";
import type { ManagedObject } from "../driver.ts";
import { Reason } from "../reasons.ts";
import type { ChangeHint } from "../resync.ts";
import { notTrue, type ConditionValue } from "./conditions.ts";

/** One entry of `status.drift`. */
export interface DriftEntry {
  path: string;
  desired?: JsonValue;
  observed?: JsonValue;
  since: string;
  changedBy?: string;
  changeEvent?: string;
  changedAt?: string;
}

/** `status.pendingChanges`. */
export interface PendingChanges {
  hash: string;
  changes: ChangeData[];
  total: number;
  restarts: number;
  refused: number;
}

/** An Event the flow emits for the decision. */
export interface PolicyEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** What to do with a change set, and what status records of it. */
export interface ChangeDecision {
  /** The changes to apply now (none refused). */
  readonly apply: readonly Change[];
  /** `status.drift` from now on; undefined: the field goes. */
  readonly drift: DriftEntry[] | undefined;
  /** `status.pendingChanges` from now on; undefined: the field goes. */
  readonly pendingChanges: PendingChanges | undefined;
  /** The Drifted condition (null: removed). */
  readonly drifted: ConditionValue | null;
  /** The ChangesPending condition (null: removed). */
  readonly changesPending: ConditionValue | null;
  /** Synced, when the decision sets it (changes held for approval). */
  readonly synced?: ConditionValue;
  /** The hash of the approved set being applied, for `status.appliedChanges`. */
  readonly appliedChanges?: string;
  readonly events: readonly PolicyEvent[];
}

/** The most Events one reconcile emits for newly drifted paths; the rest are counted in one more. */
const MAX_DRIFT_EVENTS = 5;

/**
 * The decision for the changes `changes` that the driver planned for `obj` (a holding refusal is
 * the caller's to handle first). `adopting`: the resource is not the object's yet, and applying
 * the ownership changes is what adopts it. `hint`: what a change event said about the latest
 * change. `nowMs`: the clock.
 */
export function decideChanges(
  obj: ManagedObject,
  changes: readonly Change[],
  opts: { adopting: boolean; nowMs: number; hint?: ChangeHint | undefined },
): ChangeDecision {
  const report = obj.spec.driftPolicy === "Report";
  const toApply = changesToApply(obj, changes, opts.adopting);
  const applying = new Set(toApply);
  const reported = report ? changes.filter((c) => !applying.has(c)) : [];
  const drift = report ? driftOf(obj, reported, opts.nowMs, opts.hint) : undefined;
  const gate = gateChanges(obj, toApply);
  return {
    apply: gate.approved ? toApply : [],
    drift: drift?.entries,
    pendingChanges: gate.pending,
    drifted: drift?.condition ?? null,
    changesPending: gate.condition,
    ...(gate.synced !== undefined ? { synced: gate.synced } : {}),
    ...(gate.applied !== undefined ? { appliedChanges: gate.applied } : {}),
    events: [...(drift?.events ?? []), ...gate.events],
  };
}

/**
 * The changes of `changes` the policies let be applied, before the approval gate: none refused,
 * and under driftPolicy Report only the ownership changes of a resource being adopted.
 */
export function changesToApply(obj: ManagedObject, changes: readonly Change[], adopting: boolean): Change[] {
  const applicable = changes.filter((c) => c.disruption !== "refused");
  if (obj.spec.driftPolicy !== "Report") return applicable;
  return adopting ? applicable.filter((c) => c.ownership === true) : [];
}

/** Under changePolicy Approve, the hash `toApply` needs approved, and whether the object approves it. */
export function approvalOf(
  obj: ManagedObject,
  toApply: readonly Change[],
): { hash: string; approved: boolean } | undefined {
  if (obj.spec.changePolicy !== "Approve" || toApply.length === 0) return undefined;
  const hash = changeSetHash(toApply, obj.metadata.generation ?? 0);
  return { hash, approved: obj.metadata.annotations?.[APPROVED_CHANGES_ANNOTATION] === hash };
}

/**
 * The gate of `spec.changePolicy` over `toApply` (the changes, or a creation as one change):
 * approved under Auto, with nothing to apply, or when the approval annotation carries the set's
 * hash; otherwise the plan goes to `status.pendingChanges`.
 */
export function gateChanges(
  obj: ManagedObject,
  toApply: readonly Change[],
): {
  approved: boolean;
  pending: PendingChanges | undefined;
  condition: ConditionValue | null;
  synced?: ConditionValue;
  events: PolicyEvent[];
  /** The hash of the set approved and about to be applied (`status.appliedChanges`). */
  applied?: string;
} {
  if (obj.spec.changePolicy !== "Approve")
    return { approved: true, pending: undefined, condition: null, events: [] };
  const none = notTrue(Reason.NoChangesPending, "");
  const asked = approvalOf(obj, toApply);
  if (asked === undefined) return { approved: true, pending: undefined, condition: none, events: [] };
  const { hash } = asked;
  const approval = obj.metadata.annotations?.[APPROVED_CHANGES_ANNOTATION];
  if (asked.approved) {
    return {
      approved: true,
      applied: hash,
      pending: undefined,
      condition: notTrue(Reason.NoChangesPending, `applied the approved changes ${hash}`),
      events: [
        {
          type: "Normal",
          reason: Reason.ChangesApproved,
          message: `applying the approved changes ${hash}: ${toApply.length} change(s)`,
        },
      ],
    };
  }
  // An approval of another set than this one, and not of the set last applied: a plan that moved
  // between being shown and being approved.
  const stale = approval !== undefined && approval !== obj.status?.appliedChanges;
  const reason = stale ? Reason.StaleApproval : Reason.AwaitingApproval;
  const message = stale
    ? `the approved plan ${approval} is stale (the spec or the resource changed since); nothing was ` +
      `applied: approve the new plan ${hash} (status.pendingChanges) with the annotation ${APPROVED_CHANGES_ANNOTATION}`
    : `${toApply.length} change(s) wait for approval: set the annotation ${APPROVED_CHANGES_ANNOTATION} ` +
      `to ${hash} to apply the plan in status.pendingChanges`;
  const pending = pendingOf(hash, toApply);
  const current = getCondition(obj.status?.conditions, ConditionType.ChangesPending);
  const events: PolicyEvent[] =
    current?.reason === reason && current.message === message
      ? []
      : [{ type: stale ? "Warning" : "Normal", reason, message }];
  return {
    approved: false,
    pending,
    condition: { status: ConditionStatus.True, reason, message },
    synced: notTrue(reason, message),
    events,
  };
}

/** `status.pendingChanges` for the plan `changes` with hash `hash`. */
function pendingOf(hash: string, changes: readonly Change[]): PendingChanges {
  return {
    hash,
    changes: changes.slice(0, MAX_DRIFT_ENTRIES).map((c) => shownData(changeData(c))),
    total: changes.length,
    restarts: changes.filter((c) => c.disruption === "restart").length,
    refused: changes.filter((c) => c.disruption === "refused").length,
  };
}

/** A change's data with its values bounded for status. */
function shownData(d: ChangeData): ChangeData {
  const { observed, desired, ...rest } = d;
  return {
    ...rest,
    ...(observed !== undefined ? { observed: shownValue(observed) } : {}),
    ...(desired !== undefined ? { desired: shownValue(desired) } : {}),
  };
}

/** `v`, or a note of its size when its JSON is longer than status shows. */
export function shownValue(v: JsonValue): JsonValue {
  const bytes = Buffer.byteLength(JSON.stringify(v));
  return bytes <= MAX_SHOWN_VALUE_BYTES ? v : `(a value of ${bytes} bytes of JSON, not shown)`;
}

/** status.drift, the Drifted condition and the Events for the reported changes. */
function driftOf(
  obj: ManagedObject,
  reported: readonly Change[],
  nowMs: number,
  hint: ChangeHint | undefined,
): { entries: DriftEntry[] | undefined; condition: ConditionValue; events: PolicyEvent[] } {
  const previous = new Map((obj.status?.drift ?? []).map((e) => [e.path, e]));
  const now = new Date(nowMs).toISOString();
  const entries: DriftEntry[] = [];
  const fresh: DriftEntry[] = [];
  for (const c of reported) {
    const observed = c.observed === undefined ? undefined : shownValue(c.observed);
    const desired = c.desired === undefined ? undefined : shownValue(c.desired);
    const before = previous.get(c.path);
    const same =
      before !== undefined &&
      JSON.stringify(before.observed) === JSON.stringify(observed) &&
      JSON.stringify(before.desired) === JSON.stringify(desired);
    const entry: DriftEntry = same
      ? { ...(before as DriftEntry) }
      : {
          path: c.path,
          ...(desired !== undefined ? { desired } : {}),
          ...(observed !== undefined ? { observed } : {}),
          since: before?.since ?? now,
          ...attribution(hint),
        };
    entries.push(entry);
    if (before === undefined) fresh.push(entry);
  }
  const shown = entries.slice(0, MAX_DRIFT_ENTRIES);
  const paths = reported.map((c) => c.path);
  const condition: ConditionValue =
    reported.length === 0
      ? notTrue(Reason.NoDrift, "")
      : {
          status: ConditionStatus.True,
          reason: Reason.DriftDetected,
          message:
            `${reported.length} path(s) differ from the spec and are reported, not repaired ` +
            `(driftPolicy Report): ${paths.slice(0, 10).join(", ")}` +
            (paths.length > 10 ? ` and ${paths.length - 10} more` : ""),
        };
  const events: PolicyEvent[] = fresh.slice(0, MAX_DRIFT_EVENTS).map((e) => ({
    type: "Warning",
    reason: Reason.DriftDetected,
    message: driftMessage(e),
  }));
  if (fresh.length > MAX_DRIFT_EVENTS) {
    events.push({
      type: "Warning",
      reason: Reason.DriftDetected,
      message: `${fresh.length - MAX_DRIFT_EVENTS} more path(s) drifted; see status.drift`,
    });
  }
  return { entries: shown.length > 0 ? shown : undefined, condition, events };
}

/** The fields of a drift entry that say who made the change, from a change event's hint. */
function attribution(hint: ChangeHint | undefined): Partial<DriftEntry> {
  if (hint === undefined) return {};
  return {
    ...(hint.caller !== undefined ? { changedBy: hint.caller } : {}),
    ...(hint.eventName !== undefined ? { changeEvent: hint.eventName } : {}),
    ...(hint.timeMs !== undefined ? { changedAt: new Date(hint.timeMs).toISOString() } : {}),
  };
}

/** The Event of a newly drifted path. */
function driftMessage(e: DriftEntry): string {
  const show = (v: JsonValue | undefined): string => (v === undefined ? "(none)" : JSON.stringify(v));
  const by =
    e.changedBy !== undefined
      ? ` (changed by ${e.changedBy}${e.changeEvent !== undefined ? ` with ${e.changeEvent}` : ""})`
      : "";
  return `${e.path} drifted: desired ${show(e.desired)}, observed ${show(e.observed)}${by}; reported, not repaired (driftPolicy Report)`;
}
