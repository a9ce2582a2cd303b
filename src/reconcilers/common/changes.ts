/**
 * Change sets: what differs between a resource and its object's spec, as data. A kind computes
 * one from the spec and what it observed ({@link ResourceDriver.plan}), without writing to AWS;
 * the shared flow alone decides what to do with it (apply it, report it as drift, hold it for
 * approval, or show it in `kubeprovisioner plan`) and alone decides that an empty set means no
 * write. Applying goes group by group through {@link ChangeSet.apply}: a group is what AWS takes
 * in one call (or a short fixed sequence of calls, as EC2 tags: create then delete), and the
 * driver's apply step no longer compares anything.
 */
import { createHash } from "node:crypto";
import type { JsonValue } from "../../api/schema/openapi.ts";
import type { DriverContext } from "./driver-context.ts";

/**
 * What applying a change does to the resource: `none` (changed in place, nothing interrupted),
 * `restart` (an EC2 stop and start), `replace` (the resource is deleted and created again), or
 * `refused`: the operator does not apply it (the setting is immutable, or it needs a human), and
 * says why in {@link Change.refusal}.
 */
export type Disruption = "none" | "restart" | "replace" | "refused";

/** Why a change is refused: a condition reason (CamelCase) and a message for a human. */
export interface Refusal {
  readonly reason: string;
  readonly message: string;
  /**
   * Nothing else of the set may be applied while this change is refused (an instance type change
   * that needs a restart the spec does not allow: the other changes would be made against a run
   * state the spec does not have). Without it, the other changes are applied and this one is
   * reported. @default false
   */
  readonly holdsAll?: boolean;
}

/**
 * One difference between the resource and the spec.
 *
 * Values are JSON as the spec writes them (`observed` absent: the resource lacks the setting;
 * `desired` absent: applying removes it). A secret value is never carried: {@link SENSITIVE}
 * stands in for it.
 */
export interface Change {
  /**
   * The spec path the change concerns: `spec.versioning`, `spec.tags.team`,
   * `spec.lifecycleRules[id=logs]`, `spec.instanceType`. Tags the operator adds beside the spec
   * (its ownership tags and `--default-tags`) are under `tags.<key>`.
   */
  readonly path: string;
  /** The key within a map setting the change concerns (a tag key), when it concerns one. */
  readonly key?: string | undefined;
  /** The setting it belongs to: one of the kind's `driftSettings` (or `reportedSettings` when refused). */
  readonly setting: string;
  readonly observed?: JsonValue | undefined;
  readonly desired?: JsonValue | undefined;
  /** The IAM actions applying it calls (`s3:PutBucketVersioning`), in call order; none when refused. */
  readonly actions: readonly string[];
  readonly disruption: Disruption;
  /** Set exactly when `disruption` is `refused`. */
  readonly refusal?: Refusal | undefined;
  /** A short phrase for Events (`versioning: Suspended -> Enabled`); equal phrases are said once. */
  readonly description: string;
  /** The apply group: changes of one group are applied by one {@link ChangeSet.apply} call. */
  readonly group: string;
  /** The change writes one of the operator's ownership tags (what adopting a resource writes). */
  readonly ownership?: boolean | undefined;
}

/** What a kind computed for one observed resource: the changes, and how to apply them. */
export interface ChangeSet {
  /** In the order they are applied; empty when the resource is in sync. */
  readonly changes: readonly Change[];
  /**
   * Applies `changes`, all of group `group` and none refused, to the observed resource; the flow
   * calls it once per group, in the order the groups first appear in {@link changes}
   * ({@link applyChangeSet}). The flow passes each group whole, except the tags: of those it may
   * apply the ownership changes alone (adopting a resource whose other drift is only reported),
   * so a tag group writes exactly the keys it is given.
   */
  apply(group: string, changes: readonly Change[], ctx: DriverContext): Promise<void>;
}

/** The value shown in place of a secret one (user data). */
export const SENSITIVE = "(sensitive value)";

/**
 * The path of `key` in the map at `field`: `spec.tags.team`, or `spec.tags["app.kubernetes.io/name"]`
 * for a key that is not a plain identifier.
 */
export function mapPath(field: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${field}.${key}` : `${field}[${JSON.stringify(key)}]`;
}

/**
 * The path of the element of the list at `field` whose `idField` is `id`:
 * `spec.lifecycleRules[id=logs]`.
 */
export function listItemPath(field: string, idField: string, id: string): string {
  return `${field}[${idField}=${id}]`;
}

/**
 * The creation of a resource as one change: at path `spec`, the spec as its desired value (so a
 * hash over it changes with the spec), and the IAM actions the create calls.
 */
export function creationChange(spec: unknown, noun: string, actions: readonly string[]): Change {
  return {
    path: "spec",
    setting: "create",
    desired: JSON.parse(JSON.stringify(spec)) as JsonValue,
    actions,
    disruption: "none",
    description: `create the ${noun}`,
    group: "create",
  };
}

/** An empty change set. */
export const IN_SYNC: ChangeSet = Object.freeze({
  changes: Object.freeze([]) as readonly Change[],
  apply: async (group: string): Promise<void> => {
    throw new Error(`no change of group ${group} to apply: the set is empty`);
  },
});

/** A refused change of `setting` at `path`, left as it is with `refusal`. */
export function refusedChange(
  parts: Omit<Change, "actions" | "disruption" | "refusal" | "group"> & { refusal: Refusal },
): Change {
  return { ...parts, actions: [], disruption: "refused", group: `refused:${parts.path}` };
}

/** The changes of `set` that may be applied (not refused), grouped by apply group in set order. */
export function applicableGroups(changes: readonly Change[]): Map<string, Change[]> {
  const groups = new Map<string, Change[]>();
  for (const c of changes) {
    if (c.disruption === "refused") continue;
    const g = groups.get(c.group);
    if (g === undefined) groups.set(c.group, [c]);
    else g.push(c);
  }
  return groups;
}

/** The refused changes of a set. */
export function refusedChanges(changes: readonly Change[]): Change[] {
  return changes.filter((c) => c.disruption === "refused");
}

/** The first refused change that holds every other change back, or undefined. */
export function holdingRefusal(changes: readonly Change[]): Change | undefined {
  return changes.find((c) => c.disruption === "refused" && c.refusal?.holdsAll === true);
}

/** The distinct descriptions of `changes`, in order, joined for an Event. */
export function describeChanges(changes: readonly Change[]): string {
  return [...new Set(changes.map((c) => c.description))].join("; ");
}

/**
 * A change as data alone (what status, plans and hashes carry): the apply group and the Event
 * phrase are left out, keys in a fixed order.
 */
export interface ChangeData {
  readonly path: string;
  readonly observed?: JsonValue;
  readonly desired?: JsonValue;
  readonly actions: readonly string[];
  readonly disruption: Disruption;
  readonly reason?: string;
  readonly message?: string;
}

/** {@link ChangeData} of a change. */
export function changeData(c: Change): ChangeData {
  return {
    path: c.path,
    ...(c.observed !== undefined ? { observed: c.observed } : {}),
    ...(c.desired !== undefined ? { desired: c.desired } : {}),
    actions: [...c.actions],
    disruption: c.disruption,
    ...(c.refusal !== undefined ? { reason: c.refusal.reason, message: c.refusal.message } : {}),
  };
}

/**
 * A stable hash of a change set for the object at `generation`: the hex SHA-256 of the changes as
 * data (canonical JSON, sorted keys) and the generation, first 16 characters. The same
 * differences of the same spec give the same hash on every replica and every run; a change in
 * AWS gives another, and so does every spec edit, even one whose changes show the same (a new
 * secret value is shown as {@link SENSITIVE} on both sides).
 */
export function changeSetHash(changes: readonly Change[], generation: number): string {
  const data = { generation, changes: changes.map(changeData) };
  return createHash("sha256").update(canonicalJson(data)).digest("hex").slice(0, 16);
}

/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/**
 * A change set built from groups: each group's changes and the function that applies a subset
 * of them. For drivers: `changeSetOf([[tagChanges, applyTags], [versioning, applyVersioning]])`.
 */
export function changeSetOf(
  groups: readonly (readonly [
    readonly Change[],
    (changes: readonly Change[], ctx: DriverContext) => Promise<void>,
  ])[],
): ChangeSet {
  const changes: Change[] = [];
  const appliers = new Map<string, (changes: readonly Change[], ctx: DriverContext) => Promise<void>>();
  for (const [group, apply] of groups) {
    for (const c of group) {
      changes.push(c);
      if (c.disruption !== "refused") appliers.set(c.group, apply);
    }
  }
  if (changes.length === 0) return IN_SYNC;
  return {
    changes,
    apply: async (group, subset, ctx) => {
      const apply = appliers.get(group);
      if (apply === undefined) throw new Error(`no change of group ${group} to apply`);
      if (subset.length > 0) await apply(subset, ctx);
    },
  };
}

/**
 * Applies the changes of `set` that are not refused (and that `only` keeps), group by group in
 * set order; returns the changes applied. The one place a change set is applied.
 */
export async function applyChangeSet(
  set: ChangeSet,
  ctx: DriverContext,
  only?: (c: Change) => boolean,
): Promise<Change[]> {
  const applied: Change[] = [];
  for (const [group, changes] of applicableGroups(set.changes)) {
    const chosen = only === undefined ? changes : changes.filter(only);
    if (chosen.length === 0) continue;
    await set.apply(group, chosen, ctx);
    applied.push(...chosen);
  }
  return applied;
}
