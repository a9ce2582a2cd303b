/**
 * The instance attributes EC2 changes in place on a running or stopped instance: the security
 * groups, termination and stop protection, the shutdown behaviour, detailed monitoring and the
 * CPU credit option. An attribute the spec leaves unset is neither read nor written.
 *
 * The security groups and the monitoring state come with the DescribeInstances answer every poll
 * reads already. The protections and the shutdown behaviour are read with one
 * DescribeInstanceAttribute each, the credit option with DescribeInstanceCreditSpecifications,
 * and only for the attributes the spec sets. The credit option is read and set only while the
 * instance's type is burstable: a type change to a burstable one (which the run state makes last)
 * gets it at the next reconcile. ModifyInstanceCreditSpecification answers per instance; an
 * instance it did not change is a failure of the call, with EC2's code. Each attribute that
 * differs is one change on its own apply group (its own call). Pure functions over the SDK's
 * shapes; the plan (plan.ts) reads and makes the calls.
 */
import type {
  DescribeInstanceAttributeCommandOutput,
  Instance,
  InstanceAttributeName,
  ModifyInstanceAttributeCommandInput,
  ModifyInstanceCreditSpecificationCommandOutput,
} from "@aws-sdk/client-ec2";
import { BURSTABLE_FAMILIES, type Ec2InstanceSpec } from "../../api/v1/index.ts";
import { AwsError } from "../../aws/errors.ts";
import type { Change } from "../common/changes.ts";
import { inPlaceChange } from "./instance-settings.ts";

/** The spec fields of this module. */
export type AttributeSpec = Pick<
  Ec2InstanceSpec,
  | "securityGroups"
  | "disableApiTermination"
  | "disableApiStop"
  | "instanceInitiatedShutdownBehavior"
  | "monitoring"
  | "creditSpecification"
>;

/** The drift `setting` names of this module (the spec field names). */
export const ATTRIBUTE_SETTINGS = [
  "securityGroups",
  "disableApiTermination",
  "disableApiStop",
  "instanceInitiatedShutdownBehavior",
  "monitoring",
  "creditSpecification",
] as const;

/** One attribute read with DescribeInstanceAttribute. */
export interface DescribedAttribute {
  readonly setting: "disableApiTermination" | "disableApiStop" | "instanceInitiatedShutdownBehavior";
  readonly attribute: InstanceAttributeName;
  /** The value the spec asks for, undefined when unset (not managed). */
  want(spec: AttributeSpec): string | boolean | undefined;
  /** The value in EC2's answer. */
  have(out: DescribeInstanceAttributeCommandOutput): string | boolean | undefined;
  /** The ModifyInstanceAttribute input that writes `value`. */
  modify(instanceId: string, value: string | boolean): ModifyInstanceAttributeCommandInput;
}

/**
 * The attributes read with DescribeInstanceAttribute, in the order they are read and repaired.
 * The shutdown behaviour is written in the Attribute/Value form, which every EC2 implementation
 * takes for it.
 */
export const DESCRIBED_ATTRIBUTES: readonly DescribedAttribute[] = Object.freeze([
  {
    setting: "disableApiTermination",
    attribute: "disableApiTermination",
    want: (spec) => spec.disableApiTermination,
    have: (out) => out.DisableApiTermination?.Value,
    modify: (InstanceId, value) => ({ InstanceId, DisableApiTermination: { Value: value === true } }),
  },
  {
    setting: "disableApiStop",
    attribute: "disableApiStop",
    want: (spec) => spec.disableApiStop,
    have: (out) => out.DisableApiStop?.Value,
    modify: (InstanceId, value) => ({ InstanceId, DisableApiStop: { Value: value === true } }),
  },
  {
    setting: "instanceInitiatedShutdownBehavior",
    attribute: "instanceInitiatedShutdownBehavior",
    want: (spec) => spec.instanceInitiatedShutdownBehavior,
    have: (out) => out.InstanceInitiatedShutdownBehavior?.Value,
    modify: (InstanceId, value) => ({
      InstanceId,
      Attribute: "instanceInitiatedShutdownBehavior",
      Value: String(value),
    }),
  },
]);

/** The change of a described attribute, when EC2 answered `have` and the spec wants `want`. */
export function describedAttributeChange(
  a: DescribedAttribute,
  have: string | boolean | undefined,
  want: string | boolean,
): Change | undefined {
  if (have === want) return undefined;
  return inPlaceChange(a.setting, have, want, "ec2:ModifyInstanceAttribute", `${a.setting}: ${String(want)}`);
}

/** The attributes `spec` sets that need DescribeInstanceAttribute to be compared. */
export function describedAttributesOf(spec: AttributeSpec): DescribedAttribute[] {
  return DESCRIBED_ATTRIBUTES.filter((a) => a.want(spec) !== undefined);
}

/** The IDs of the security groups EC2 reports for the instance, sorted. */
export function securityGroupsOf(instance: Instance): string[] {
  return (instance.SecurityGroups ?? [])
    .map((g) => g.GroupId)
    .filter((id): id is string => id !== undefined && id !== "")
    .sort();
}

/** The security groups to set (sorted), when the spec names a set the instance does not have. */
export function securityGroupsDrift(spec: AttributeSpec, instance: Instance): string[] | undefined {
  const want = spec.securityGroups;
  if (want === undefined || want.length === 0) return undefined;
  const sorted = [...new Set(want)].sort();
  const have = securityGroupsOf(instance);
  const same = sorted.length === have.length && sorted.every((g, i) => g === have[i]);
  return same ? undefined : sorted;
}

/** The change of the security groups, when the spec names a set the instance does not have. */
export function securityGroupsChange(spec: AttributeSpec, instance: Instance): Change | undefined {
  const groups = securityGroupsDrift(spec, instance);
  if (groups === undefined) return undefined;
  return inPlaceChange(
    "securityGroups",
    securityGroupsOf(instance),
    groups,
    "ec2:ModifyInstanceAttribute",
    `securityGroups: ${groups.join(", ")}`,
  );
}

/**
 * Whether detailed monitoring is on as EC2 reports it. `pending` counts as on and `disabling` as
 * off: the change asked for is under way and is not asked for again.
 */
export function monitoringOn(instance: Instance): boolean {
  const state = instance.Monitoring?.State;
  return state === "enabled" || state === "pending";
}

/** The monitoring to turn on (true) or off (false), when the spec sets it and EC2 differs. */
export function monitoringDrift(spec: AttributeSpec, instance: Instance): boolean | undefined {
  const want = spec.monitoring;
  if (want === undefined || want === monitoringOn(instance)) return undefined;
  return want;
}

/** The change of detailed monitoring, when the spec sets it and EC2 differs. */
export function monitoringChange(spec: AttributeSpec, instance: Instance): Change | undefined {
  const on = monitoringDrift(spec, instance);
  if (on === undefined) return undefined;
  return inPlaceChange(
    "monitoring",
    !on,
    on,
    on ? "ec2:MonitorInstances" : "ec2:UnmonitorInstances",
    `monitoring: ${on ? "detailed" : "basic"}`,
  );
}

/** The change of the CPU credit option, when EC2 reports `have` and the spec sets another. */
export function creditChange(have: string | undefined, want: string): Change | undefined {
  if (have === want) return undefined;
  return inPlaceChange(
    "creditSpecification",
    have,
    want,
    "ec2:ModifyInstanceCreditSpecification",
    `creditSpecification: ${want}`,
  );
}

/** Whether instances of `instanceType` have a CPU credit option: a burstable family's (`t3.micro`). */
export function isBurstable(instanceType: string | undefined): boolean {
  const dot = instanceType?.indexOf(".") ?? -1;
  if (instanceType === undefined || dot <= 0) return false;
  return (BURSTABLE_FAMILIES as readonly string[]).includes(instanceType.slice(0, dot));
}

/**
 * The failure of a ModifyInstanceCreditSpecification that did not change instance `id` (EC2
 * lists it among the unsuccessful ones, with a code such as `IncorrectInstanceState` or
 * `InstanceCreditSpecification.NotSupported`), classified as the call's own error would be.
 */
export function creditRefusal(
  out: Pick<ModifyInstanceCreditSpecificationCommandOutput, "UnsuccessfulInstanceCreditSpecifications">,
  id: string,
): AwsError | undefined {
  const refused = out.UnsuccessfulInstanceCreditSpecifications?.find((u) => u.InstanceId === id);
  if (refused === undefined) return undefined;
  const { Code, Message } = refused.Error ?? {};
  return AwsError.from(
    {
      name: Code ?? "UnknownError",
      message: Message ?? "the instance's credit option was not changed",
      $fault: "client",
    },
    { service: "ec2", operation: "ModifyInstanceCreditSpecification" },
  );
}
