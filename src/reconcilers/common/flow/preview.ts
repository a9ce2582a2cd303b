/**
 * What the flow would do for one object, computed without doing it: the reading half of the
 * state machine of ./reconciler.ts (connect, resolve references, observe, the ownership rules,
 * the driver's change set, the object's drift and change policies), stopping before every write. This is what
 * `kubeprovisioner plan` shows per object. It makes AWS reads only (the observation and the
 * reads of the driver's plan) and no Kubernetes call beyond the cache and the account's Secret.
 */
import { recordedIdOf, type ManagedObject, type ObjectAccount, type ResourceDriver } from "../driver.ts";
import { changeData, creationChange, holdingRefusal, type ChangeData } from "../changes.ts";
import type { KindTraits } from "../kind-traits.ts";
import { observesOnly } from "../management-policy.ts";
import { adoptionGrant, adoptionRefusal, type InstallAdoption, type OwnerDirectory } from "../ownership.ts";
import { isPaused } from "../pause.ts";
import type { Connector } from "./connector.ts";
import { approvalOf, changesToApply } from "./change-policy.ts";
import { flowFacts } from "./facts.ts";
import type { Logger } from "../../../runtime/logging.ts";

/**
 * What the operator would do for an object:
 * - `create`: the resource does not exist and would be created (`changes`: the creation);
 * - `update`: changes would be applied;
 * - `adopt`: an existing resource would be adopted (its ownership tags written) and changed;
 * - `in-sync`: nothing differs;
 * - `report`: differences exist and would be reported, not repaired (`driftPolicy: Report`);
 * - `refused`: the operator would not act (an ownership rule, an immutable or held change);
 * - `observe`: the object only observes its resource (`managementPolicy: ObserveOnly`);
 * - `delete`: the object is being deleted;
 * - `paused`: the object carries the paused annotation;
 * - `wait`: the operator waits (a dependency not ready, a resource not listed yet);
 * - `error`: the plan could not be made (`message` says why).
 */
export type PlanAction =
  | "create"
  | "update"
  | "adopt"
  | "in-sync"
  | "report"
  | "refused"
  | "observe"
  | "delete"
  | "paused"
  | "wait"
  | "error";

/** The plan of one object; see docs/plan.md for its JSON form. */
export interface ObjectPlan {
  action: PlanAction;
  /** The changes, in the order they would be applied (refused ones included, flagged). */
  changes: ChangeData[];
  /** For `refused`, `wait` and `error` (and a held plan): a condition reason. */
  reason?: string;
  message?: string;
  /**
   * Under `changePolicy: Approve`: the hash the annotation compute.cloud.com/approved-changes
   * must carry for the changes to be applied, and whether it already does.
   */
  approval?: { hash: string; approved: boolean };
}

/** What a preview needs from the flow. */
export interface PreviewDeps<T extends ManagedObject, R, Ref = undefined> {
  readonly connector: Connector<T, R, Ref>;
  /** What the object's references resolve to, from the shared cache (as for the flow). */
  readonly references: (obj: T) => Ref;
  readonly owners: OwnerDirectory;
  readonly adoption: InstallAdoption;
  readonly logger: Logger;
}

/** The plan of `obj`; see the module comment. Never throws for the object's own failures. */
export async function previewObject<T extends ManagedObject, R, Ref = undefined>(
  deps: PreviewDeps<T, R, Ref>,
  obj: T,
  signal: AbortSignal,
): Promise<ObjectPlan> {
  try {
    return await preview(deps, obj, signal);
  } catch (err) {
    const e = err as Error & { reason?: unknown };
    const reason = typeof e.reason === "string" ? e.reason : undefined;
    const waits = e.name === "DependencyNotReadyError" || e.name === "NotReadyRetryError";
    return {
      action: waits ? "wait" : reason !== undefined && e.name === "InvalidSpecError" ? "refused" : "error",
      changes: [],
      ...(reason !== undefined ? { reason } : {}),
      message: e.message,
    };
  }
}

async function preview<T extends ManagedObject, R, Ref>(
  deps: PreviewDeps<T, R, Ref>,
  obj: T,
  signal: AbortSignal,
): Promise<ObjectPlan> {
  if (isPaused(obj)) return { action: "paused", changes: [], message: "the object is paused" };
  const { driver, account } = await deps.connector.connect(obj, signal);
  const { traits } = deps.connector;
  const ctx = {
    logger: deps.logger,
    signal,
    flow: { ...flowFacts(obj, traits.idField), changeHinted: true },
  };
  if (observesOnly(obj)) {
    const obs = await driver.observe(obj, ctx);
    return {
      action: "observe",
      changes: [],
      message: obs.exists
        ? `the ${traits.noun} is only observed (managementPolicy ObserveOnly)`
        : `the ${traits.noun} is only observed and does not exist`,
    };
  }
  if (obj.metadata.deletionTimestamp !== undefined) {
    return {
      action: "delete",
      changes: [],
      message:
        obj.spec.deletionPolicy === "Retain"
          ? `the object is being deleted; the ${traits.noun} is left in AWS (deletionPolicy Retain)`
          : `the object is being deleted, and its ${traits.noun} with it (deletionPolicy Delete)`,
    };
  }
  const refs = deps.references(obj);
  const obs = await driver.observe(obj, ctx);
  if (!obs.exists) {
    if (obs.appearing !== undefined) return { action: "wait", changes: [], message: obs.appearing };
    return createPlan(obj, driver, traits, refs);
  }
  if (obs.ownership === "foreign") {
    const refusal = adoptionRefusal(obj, obs.foreign, {
      noun: traits.noun,
      directory: deps.owners,
      grant: adoptionGrant(obj.metadata.namespace ?? "", account as ObjectAccount | undefined, deps.adoption),
    });
    if (refusal !== undefined)
      return { action: "refused", changes: [], reason: refusal.reason, message: refusal.message };
  }
  const set = await driver.plan(obj, obs, ctx, refs);
  const all = set.changes.map(changeData);
  const holding = holdingRefusal(set.changes);
  if (holding?.refusal !== undefined) {
    return {
      action: "refused",
      changes: all,
      reason: holding.refusal.reason,
      message: holding.refusal.message,
    };
  }
  const adopting = obs.ownership === "foreign";
  const applying = changesToApply(obj, set.changes, adopting);
  const approval = approvalOf(obj, applying);
  const refused = set.changes.find((c) => c.refusal !== undefined)?.refusal;
  const action: PlanAction = adopting
    ? "adopt"
    : applying.length > 0
      ? "update"
      : obj.spec.driftPolicy === "Report" && set.changes.length > 0
        ? "report"
        : refused !== undefined
          ? "refused"
          : "in-sync";
  return {
    action,
    changes: all,
    ...(approval !== undefined ? { approval } : {}),
    ...(action === "refused" && refused !== undefined
      ? { reason: refused.reason, message: refused.message }
      : {}),
  };
}

/** The plan of an object whose resource does not exist. */
function createPlan<T extends ManagedObject, R, Ref>(
  obj: T,
  driver: ResourceDriver<T, R, Ref>,
  traits: KindTraits<T>,
  refs: Ref,
): ObjectPlan {
  const recorded = recordedIdOf(obj, traits.idField);
  if (recorded !== undefined && obj.spec.onDeletedOutOfBand === "Report") {
    return {
      action: "refused",
      changes: [],
      reason: "DeletedOutOfBand",
      message: `the ${traits.noun} ${recorded} was deleted outside the operator; onDeletedOutOfBand is Report, not recreating`,
    };
  }
  const creation = creationChange(obj.spec, traits.noun, driver.createActions(obj, refs));
  // A create already under way (its token recorded, nothing recorded yet) is not gated again; a
  // recreate after an out-of-band deletion is.
  const underWay = obj.status?.createToken !== undefined && recorded === undefined;
  const approval = underWay ? undefined : approvalOf(obj, [creation]);
  return {
    action: "create",
    changes: [changeData(creation)],
    ...(approval !== undefined ? { approval } : {}),
  };
}
