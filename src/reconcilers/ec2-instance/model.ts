/**
 * How the operator reads an EC2 instance: its status fields, whether it still
 * counts as existing, which of several candidates is the one, its tags, and the DescribeInstances
 * filters that find an object's instances by tag (its readiness depends on the spec: run-state.ts).
 * Pure functions over the SDK's shapes.
 */
import type { Filter, Instance } from "@aws-sdk/client-ec2";
import type { Ec2Instance, Ec2InstanceStatus } from "../../api/v1/index.ts";
import {
  ec2OwnershipFilters,
  fromEc2Tags,
  KIND_TAG,
  MAX_TAG_VALUE_LENGTH,
  NAME_TAG,
  NAMESPACE_TAG,
  type Owner,
  type TagMap,
} from "../../aws/ownership.ts";
import type { ManagedObject } from "../common/driver.ts";

/** An Ec2Instance as the shared flow handles it. */
export type Ec2InstanceObject = Ec2Instance & ManagedObject;

/** What the driver knows about an instance: EC2's own description of it. */
export type Ec2InstanceView = Instance;

/** The ID of an instance EC2 described; every instance it describes has one. */
export function requireId(instance: Instance): string {
  if (instance.InstanceId === undefined) throw new Error("EC2 answered with an instance without an ID");
  return instance.InstanceId;
}

/** Instance states that still hold an instance (everything but `terminated`). */
export const LIVE_STATES = ["pending", "running", "shutting-down", "stopping", "stopped"] as const;

/** The state name of `instance`, or "unknown" when EC2 did not say. */
export function stateOf(instance: Instance): string {
  return instance.State?.Name ?? "unknown";
}

/**
 * Whether the instance no longer counts as existing. A `terminated` instance stays listed for
 * about an hour on AWS (moto keeps it for good) but is gone for every purpose of the operator.
 */
export function isGone(instance: Instance): boolean {
  return stateOf(instance) === "terminated";
}

/**
 * RFC 3339 in whole seconds (`2024-05-01T12:00:00Z`): stable across observations, so the status
 * does not churn on a sub-second difference between the RunInstances answer and a later
 * DescribeInstances.
 */
export function formatLaunchTime(t: Date | string | undefined): string | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  if (!Number.isFinite(ms)) return undefined;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Empty strings (EC2 reports `PublicDnsName: ""` for an instance without one) become undefined. */
function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

/** The instance-specific status fields. Every key is present, undefined when EC2 has no value. */
export type InstanceStatusFields = Required<
  Pick<
    Ec2InstanceStatus,
    "instanceId" | "state" | "publicIP" | "privateIP" | "publicDNS" | "privateDNS" | "launchTime"
  >
>;

/**
 * Status fields describing `instance`. Every field is set, absent ones to undefined, so a value
 * that disappears (a public IP after a stop) is removed from status rather than left stale.
 */
export function instanceStatus(instance: Instance): {
  [K in keyof InstanceStatusFields]: InstanceStatusFields[K] | undefined;
} {
  return {
    instanceId: nonEmpty(instance.InstanceId),
    state: stateOf(instance),
    publicIP: nonEmpty(instance.PublicIpAddress),
    privateIP: nonEmpty(instance.PrivateIpAddress),
    publicDNS: nonEmpty(instance.PublicDnsName),
    privateDNS: nonEmpty(instance.PrivateDnsName),
    launchTime: formatLaunchTime(instance.LaunchTime),
  };
}

const STATE_PREFERENCE: Readonly<Record<string, number>> = {
  running: 0,
  pending: 1,
  stopping: 2,
  stopped: 3,
  "shutting-down": 4,
  terminated: 5,
};

/**
 * The one instance to manage among several carrying this object's ownership tags (possible only
 * where ClientToken is not honoured, or after a manual copy of tags). Deterministic: the one
 * launched with `createToken`, else the liveliest state, else the earliest launch, else the
 * smallest ID; the same set always gives the same answer.
 */
export function pickInstance(
  candidates: readonly Instance[],
  createToken: string | undefined,
): Instance | undefined {
  const launchMs = (i: Instance): number =>
    i.LaunchTime === undefined ? Number.MAX_SAFE_INTEGER : new Date(i.LaunchTime).getTime();
  return [...candidates].sort((a, b) => {
    const ta = createToken !== undefined && a.ClientToken === createToken ? 0 : 1;
    const tb = createToken !== undefined && b.ClientToken === createToken ? 0 : 1;
    if (ta !== tb) return ta - tb;
    const sa = STATE_PREFERENCE[stateOf(a)] ?? 6;
    const sb = STATE_PREFERENCE[stateOf(b)] ?? 6;
    if (sa !== sb) return sa - sb;
    const la = launchMs(a);
    const lb = launchMs(b);
    if (la !== lb) return la - lb;
    return (a.InstanceId ?? "").localeCompare(b.InstanceId ?? "");
  })[0];
}

/** The tags of `instance` as a map. */
export function instanceTags(instance: Instance): TagMap {
  return fromEc2Tags(instance.Tags);
}

/** Filters selecting the live (not terminated) instances carrying the UID tag `uid`. */
export function ownedFilters(uid: string): Filter[] {
  return [...ec2OwnershipFilters(uid), { Name: "instance-state-name", Values: [...LIVE_STATES] }];
}

/**
 * Filters selecting instances tagged with `owner`'s namespace, name and kind, whatever their UID:
 * candidates for adoption. Instances shutting down or terminated are not candidates.
 */
export function namedFilters(owner: Omit<Owner, "uid">): Filter[] {
  return [
    { Name: `tag:${NAMESPACE_TAG}`, Values: [owner.namespace] },
    { Name: `tag:${NAME_TAG}`, Values: [owner.name.slice(0, MAX_TAG_VALUE_LENGTH)] },
    { Name: `tag:${KIND_TAG}`, Values: [owner.kind] },
    { Name: "instance-state-name", Values: LIVE_STATES.filter((s) => s !== "shutting-down") },
  ];
}
