/**
 * The Ec2Instance kind: the shared reconcile flow with the EC2 driver, named `ec2instance` (the
 * `controller` label of its metrics and the Event source `ec2instance-controller`).
 *
 * Instance lookups of concurrent reconciles share DescribeInstances calls; the steady polls of
 * settled instances are answered from the snapshot those calls leave (prefetched for every
 * instance polled recently), so one call per poll round serves up to 1000 instances even with a
 * single worker.
 */
import { Ec2InstanceResource, ec2InstanceCrd } from "../../api/v1/index.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { EC2_INSTANCE_TRAITS } from "./traits.ts";
import { ec2InstanceOutputs } from "./outputs.ts";
import { ec2InstanceChangeEvents } from "./change-events.ts";
import { Ec2InstanceDriver } from "./driver.ts";
import { ec2InstanceExporter } from "./export.ts";
import type { Ec2InstanceObject, Ec2InstanceView } from "./model.ts";

export { DescribeBatcher } from "./describe-batcher.ts";
export { Ec2InstanceDriver } from "./driver.ts";
export type { Ec2InstanceObject, Ec2InstanceView } from "./model.ts";

/** The `ec2instance` controller's kind. */
export const ec2InstanceKind: KindModule = defineKind<Ec2InstanceObject, Ec2InstanceView>({
  traits: EC2_INSTANCE_TRAITS,
  name: "ec2instance",
  resource: Ec2InstanceResource,
  crd: ec2InstanceCrd,
  changeEvents: ec2InstanceChangeEvents,
  iam: [
    { action: "ec2:RunInstances" },
    { action: "ec2:DescribeInstances" },
    { action: "ec2:TerminateInstances" },
    // RunInstances tags the instance and its volumes at launch (TagSpecifications), which EC2
    // authorizes as ec2:CreateTags too.
    { action: "ec2:CreateTags", calls: ["CreateTags", "RunInstances"] },
    { action: "ec2:DeleteTags" },
    {
      action: "ec2:StopInstances",
      when: "only for desiredState stopped or a restart for a new instanceType or userData",
    },
    {
      action: "ec2:StartInstances",
      when: "only to start an instance that is stopped while desiredState is running",
    },
    {
      action: "ec2:ModifyInstanceAttribute",
      when:
        "only to change the instanceType or userData of a stopped instance, or for objects with " +
        "securityGroups, disableApiTermination, disableApiStop, instanceInitiatedShutdownBehavior " +
        "or a volume's deleteOnTermination",
    },
    {
      action: "ec2:DescribeInstanceAttribute",
      when:
        "only for objects with userData, disableApiTermination, disableApiStop or " +
        "instanceInitiatedShutdownBehavior, and by kubeprovisioner export",
    },
    { action: "ec2:MonitorInstances", when: "only for objects with monitoring" },
    { action: "ec2:UnmonitorInstances", when: "only for objects with monitoring" },
    {
      action: "ec2:DescribeInstanceCreditSpecifications",
      when: "only for objects with creditSpecification, and by kubeprovisioner export",
    },
    {
      action: "ec2:ModifyInstanceCreditSpecification",
      when: "only for objects with creditSpecification",
    },
    { action: "ec2:ModifyInstanceMetadataOptions", when: "only for objects with metadataOptions" },
    { action: "ec2:AssociateIamInstanceProfile", when: "only for objects with iamInstanceProfile" },
    {
      action: "ec2:ReplaceIamInstanceProfileAssociation",
      when: "only for objects with iamInstanceProfile",
    },
    {
      action: "ec2:DescribeIamInstanceProfileAssociations",
      when: "only for objects with iamInstanceProfile, and by kubeprovisioner export",
    },
    {
      action: "iam:PassRole",
      calls: ["RunInstances", "AssociateIamInstanceProfile", "ReplaceIamInstanceProfileAssociation"],
      when: "only for objects with iamInstanceProfile, on the profile's role",
    },
    {
      action: "ec2:DescribeVolumes",
      when: "only for objects with volumeTags or a volume's kmsKeyId or snapshotId, and by kubeprovisioner export",
    },
    ...[
      "kms:CreateGrant",
      "kms:Decrypt",
      "kms:DescribeKey",
      "kms:GenerateDataKeyWithoutPlaintext",
      "kms:ReEncrypt*",
    ].map((action) => ({
      action,
      calls: ["RunInstances"],
      when: "only for objects with a volume's kmsKeyId: EC2 uses the key on the operator's behalf at launch",
    })),
    {
      action: "ec2:DescribeImages",
      when: "only to find an AMI's root device name when the spec sets root volume settings without deviceName",
    },
  ],
  outputs: ec2InstanceOutputs,
  // An instance names no other object.
  references: () => () => undefined,
  exporter: (_deps, aws) => ec2InstanceExporter(aws),
  driver: (deps) =>
    new Ec2InstanceDriver({
      aws: deps.aws,
      clock: deps.clock,
      tagPolicy: deps.tagPolicy,
      pollIntervalMs: deps.pollIntervalMs,
    }),
});
