/**
 * Plan and apply, for the unit tests of the EC2 driver: the driver's change set for an observed
 * instance, applied as the shared flow applies one (../../common/changes.ts applyChangeSet),
 * nothing at all while a refused change holds every other one back.
 */
import type { Instance } from "@aws-sdk/client-ec2";
import { applyChangeSet, holdingRefusal, type Change, type ChangeSet } from "../../common/changes.ts";
import type { DriverContext, Observation } from "../../common/driver.ts";
import type { Ec2InstanceDriver } from "../driver.ts";
import type { Ec2InstanceObject } from "../model.ts";

/** What one plan-and-apply did. */
export interface Applied {
  readonly set: ChangeSet;
  /** The changes applied, in order (none when a refusal holds the set back). */
  readonly applied: readonly Change[];
  /** The refused changes of the set. */
  readonly refused: readonly Change[];
}

/** Plans the changes of `observed` for `obj` and applies them as the flow does. */
export async function planAndApply(
  driver: Ec2InstanceDriver,
  obj: Ec2InstanceObject,
  observed: Observation<Instance> & { exists: true },
  ctx: DriverContext,
): Promise<Applied> {
  const set = await driver.plan(obj, observed, ctx);
  const refused = set.changes.filter((c) => c.disruption === "refused");
  if (holdingRefusal(set.changes) !== undefined) return { set, applied: [], refused };
  return { set, applied: await applyChangeSet(set, ctx), refused };
}

/** The setting and Event phrase of each change, as tests compare them. */
export function described(changes: readonly Change[]): { setting: string; description: string }[] {
  return changes.map((c) => ({ setting: c.setting, description: c.description }));
}
