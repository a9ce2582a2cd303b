/**
 * A plan as data (the JSON of `kubeprovisioner plan -o json`, documented in docs/plan.md, schema
 * version 1) and as text for a terminal. Version 1 only grows: fields are added, never renamed or
 * given another meaning.
 */
import type { JsonValue } from "../api/schema/openapi.ts";
import type { ChangeData } from "../reconcilers/common/changes.ts";
import type { ObjectPlan, PlanAction } from "../reconcilers/common/kind.ts";

/** The plan of one object, with which object it is. */
export type PlannedObject = ObjectPlan & {
  kind: string;
  namespace: string;
  name: string;
  /** The manifest file and document it was read from (`-f`). */
  source?: string;
};

/** What a plan counts. */
export interface PlanSummary {
  objects: number;
  create: number;
  update: number;
  adopt: number;
  inSync: number;
  report: number;
  refused: number;
  observe: number;
  delete: number;
  paused: number;
  wait: number;
  error: number;
  /** Changes to apply (refused ones excluded). */
  changes: number;
  /** Changes that restart a resource (an EC2 stop and start). */
  restarts: number;
  replacements: number;
  /** Changes the operator refuses. */
  refusedChanges: number;
  /** Objects whose changes wait for approval (changePolicy Approve). */
  awaitingApproval: number;
}

/** A whole plan. */
export interface Plan {
  schemaVersion: 1;
  objects: PlannedObject[];
  summary: PlanSummary;
}

const ACTION_FIELD: Record<PlanAction, keyof PlanSummary> = {
  create: "create",
  update: "update",
  adopt: "adopt",
  "in-sync": "inSync",
  report: "report",
  refused: "refused",
  observe: "observe",
  delete: "delete",
  paused: "paused",
  wait: "wait",
  error: "error",
};

/** The summary of `objects`. */
export function summarize(objects: readonly PlannedObject[]): PlanSummary {
  const s: PlanSummary = {
    objects: objects.length,
    create: 0,
    update: 0,
    adopt: 0,
    inSync: 0,
    report: 0,
    refused: 0,
    observe: 0,
    delete: 0,
    paused: 0,
    wait: 0,
    error: 0,
    changes: 0,
    restarts: 0,
    replacements: 0,
    refusedChanges: 0,
    awaitingApproval: 0,
  };
  for (const o of objects) {
    s[ACTION_FIELD[o.action]] += 1;
    if (o.approval?.approved === false) s.awaitingApproval += 1;
    const applies = o.action === "create" || o.action === "update" || o.action === "adopt";
    for (const c of o.changes) {
      if (c.disruption === "refused") s.refusedChanges += 1;
      else if (applies) {
        s.changes += 1;
        if (c.disruption === "restart") s.restarts += 1;
        if (c.disruption === "replace") s.replacements += 1;
      }
    }
  }
  return s;
}

/** The plan as text. */
export function renderPlan(plan: Plan): string {
  const lines: string[] = [];
  for (const o of plan.objects) {
    const who = `${o.kind} ${o.namespace}/${o.name}`;
    const why =
      o.message !== undefined ? `: ${o.reason !== undefined ? `${o.reason}: ` : ""}${o.message}` : "";
    lines.push(`${who}: ${o.action}${o.action === "in-sync" ? "" : why}`);
    if (o.action === "create") {
      lines.push(`  + create  [${(o.changes[0]?.actions ?? []).join(", ")}]`);
    } else {
      for (const c of o.changes) lines.push(`  ${changeLine(c, o.action === "report")}`);
    }
    if (o.approval !== undefined) {
      lines.push(
        o.approval.approved
          ? `  approved (compute.cloud.com/approved-changes=${o.approval.hash})`
          : `  waits for approval: kubectl annotate ${o.kind.toLowerCase()} -n ${o.namespace} ${o.name} ` +
              `compute.cloud.com/approved-changes=${o.approval.hash} --overwrite`,
      );
    }
  }
  const s = plan.summary;
  lines.push(
    "",
    `Plan: ${s.create} to create, ${s.update} to update, ${s.adopt} to adopt, ${s.inSync} in sync` +
      `${s.report > 0 ? `, ${s.report} drifted (reported)` : ""}; ` +
      `${s.changes} change(s), ${s.restarts} restart(s), ${s.replacements} replacement(s), ` +
      `${s.refusedChanges} refused` +
      `${s.awaitingApproval > 0 ? `; ${s.awaitingApproval} awaiting approval` : ""}` +
      `${s.wait > 0 ? `; ${s.wait} waiting` : ""}${s.error > 0 ? `; ${s.error} error(s)` : ""}.`,
  );
  return `${lines.join("\n")}\n`;
}

/** One change as a line: `~ path: observed -> desired  [actions]`, with its disruption. */
function changeLine(c: ChangeData, reported: boolean): string {
  const show = (v: JsonValue | undefined): string => {
    const text = JSON.stringify(v);
    return text.length > 120 ? `${text.slice(0, 117)}...` : text;
  };
  const mark =
    c.disruption === "refused" ? "x" : c.observed === undefined ? "+" : c.desired === undefined ? "-" : "~";
  const values =
    c.observed === undefined && c.desired === undefined
      ? ""
      : c.observed === undefined
        ? `: ${show(c.desired)}`
        : c.desired === undefined
          ? `: ${show(c.observed)} -> (none)`
          : `: ${show(c.observed)} -> ${show(c.desired)}`;
  const note =
    c.disruption === "refused"
      ? `  refused${c.reason !== undefined ? ` (${c.reason})` : ""}${c.message !== undefined ? `: ${c.message}` : ""}`
      : `${c.disruption === "none" ? "" : `  ${c.disruption.toUpperCase()}`}  [${c.actions.join(", ")}]` +
        (reported ? "  reported, not repaired" : "");
  return `${mark} ${c.path}${values}${note}`;
}
