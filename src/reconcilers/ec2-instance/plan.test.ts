import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { applicableGroups, SENSITIVE, type Change } from "../common/changes.ts";
import { contextFor } from "../common/testing/context.ts";
import { Ec2InstanceDriver } from "./driver.ts";
import { encodeUserData } from "./launch.ts";
import type { Ec2InstanceObject } from "./model.ts";
import { planAndApply } from "./testing/apply.ts";
import { FakeEc2 } from "./testing/fake-ec2.ts";

const owner = { uid: "uid-a", namespace: "default", name: "a", kind: "Ec2Instance" };
const PROFILE_ARN = "arn:aws:iam::123456789012:instance-profile/web";

const base: Ec2InstanceSpec = {
  instanceType: "t3.micro",
  desiredState: "running",
  amiId: "ami-1e749f67",
  region: "eu-west-1",
  managementPolicy: "Full",
  deletionPolicy: "Delete",
  adoptExisting: false,
  onDeletedOutOfBand: "Recreate",
  driftPolicy: "Repair",
  changePolicy: "Auto",
};

/** A spec that sets every setting the operator keeps in line after launch. */
const full: Ec2InstanceSpec = {
  ...base,
  tags: { team: "web" },
  metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
  iamInstanceProfile: "web",
  securityGroups: ["sg-2", "sg-1"],
  disableApiTermination: true,
  instanceInitiatedShutdownBehavior: "terminate",
  monitoring: true,
  creditSpecification: "unlimited",
  userData: "#!/bin/sh\necho hello\n",
  volumeTags: { backup: "daily" },
  storage: {
    rootVolume: { size: 10, deleteOnTermination: true },
    additionalVolumes: [
      { deviceName: "/dev/sdf", size: 20, deleteOnTermination: true, snapshotId: "snap-1" },
    ],
  },
};

function object(spec: Ec2InstanceSpec): Ec2InstanceObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "Ec2Instance",
    metadata: { name: "a", namespace: "default", uid: "uid-a", generation: 1 },
    spec,
    status: {},
  };
}

/** A fake EC2 holding one owned instance in line with {@link full}. */
function setup(over: Partial<Instance> = {}) {
  const clock = new FakeClock(Date.parse("2025-01-01T00:00:00Z"));
  const ec2 = new FakeEc2(() => clock.now());
  const driver = new Ec2InstanceDriver({ aws: ec2.source(), clock });
  const volumeTags = { ...ownershipTags(owner), backup: "daily" };
  const root = ec2.addVolume({ Size: 10, tags: volumeTags });
  const data = ec2.addVolume({ Size: 20, SnapshotId: "snap-1", tags: volumeTags });
  const i = ec2.add({
    InstanceType: "t3.micro",
    RootDeviceName: "/dev/xvda",
    BlockDeviceMappings: [
      { DeviceName: "/dev/xvda", Ebs: { VolumeId: root.VolumeId, DeleteOnTermination: true } },
      { DeviceName: "/dev/sdf", Ebs: { VolumeId: data.VolumeId, DeleteOnTermination: true } },
    ],
    MetadataOptions: { HttpTokens: "required", HttpPutResponseHopLimit: 2, HttpEndpoint: "enabled" },
    IamInstanceProfile: { Arn: PROFILE_ARN },
    SecurityGroups: [{ GroupId: "sg-1" }, { GroupId: "sg-2" }],
    Monitoring: { State: "enabled" },
    ...over,
    tags: { ...ownershipTags(owner), team: "web" },
  });
  const id = i.InstanceId ?? "";
  Object.assign(ec2.attributesOf(id), {
    disableApiTermination: true,
    shutdownBehavior: "terminate",
    cpuCredits: "unlimited",
    userData: encodeUserData(full.userData ?? ""),
  });
  const observed = () => ({
    exists: true as const,
    resource: structuredClone(ec2.instances.get(id) ?? {}),
    ownership: "owned" as const,
  });
  const ctx = (obj: Ec2InstanceObject) => contextFor(obj, "instanceId");
  const plan = async (spec: Ec2InstanceSpec) =>
    (await driver.plan(object(spec), observed(), ctx(object(spec)))).changes;
  const apply = (spec: Ec2InstanceSpec) => planAndApply(driver, object(spec), observed(), ctx(object(spec)));
  const mutating = () => ec2.calls.filter((c) => !/^Describe/.test(c.op)).map((c) => `ec2:${c.op}`);
  return {
    ec2,
    driver,
    ctx,
    id,
    root: root.VolumeId ?? "",
    data: data.VolumeId ?? "",
    plan,
    apply,
    mutating,
  };
}

/** The actions a plan lists, as the calls applying it make them: each group's distinct actions, in order. */
function plannedCalls(changes: readonly Change[]): string[] {
  return [...applicableGroups(changes).values()].flatMap((group) => [
    ...new Set(group.flatMap((c) => c.actions)),
  ]);
}

describe("Ec2InstanceDriver.plan", () => {
  it("plans nothing for an instance in line with every setting the spec sets, reading only", async () => {
    const { ec2, plan, apply, mutating } = setup();
    assert.deepEqual(await plan(full), []);
    assert.deepEqual((await apply(full)).applied, []);
    assert.deepEqual(mutating(), [], "no mutating call");
    assert.ok(ec2.calls.length > 0, "the reads the settings need were made");
  });

  it("lists each difference with its path, values and calls, in the order they are applied, and applying makes exactly those calls", async () => {
    const { ec2, id, root, data, plan, apply, mutating } = setup({
      State: { Name: "stopped" },
      InstanceType: "t3.small",
      MetadataOptions: { HttpTokens: "optional", HttpPutResponseHopLimit: 2, HttpEndpoint: "enabled" },
      IamInstanceProfile: { Arn: "arn:aws:iam::123456789012:instance-profile/batch" },
      SecurityGroups: [{ GroupId: "sg-1" }],
      Monitoring: { State: "disabled" },
    });
    const instance = ec2.instances.get(id);
    if (instance !== undefined)
      instance.Tags = Object.entries({ ...ownershipTags(owner), team: "ops", stray: "x" }).map(
        ([Key, Value]) => ({
          Key,
          Value,
        }),
      );
    ec2.attributesOf(id).disableApiTermination = false;
    ec2.attributesOf(id).cpuCredits = "standard";
    const rootVolume = ec2.volumes.get(root);
    if (rootVolume !== undefined) rootVolume.Size = 12;
    const dataVolume = ec2.volumes.get(data);
    if (dataVolume !== undefined) dataVolume.Tags = [{ Key: "backup", Value: "weekly" }];
    const mapping = ec2.instances.get(id)?.BlockDeviceMappings?.find((m) => m.DeviceName === "/dev/sdf");
    if (mapping?.Ebs !== undefined) mapping.Ebs.DeleteOnTermination = false;
    // t3.small is burstable, so the credit option is planned beside the type change.
    const changes = await plan(full);
    assert.deepEqual(
      changes.map((c) => [c.path, c.observed, c.desired, c.actions.join(" "), c.disruption]),
      [
        ["spec.tags.team", "ops", "web", "ec2:CreateTags", "none"],
        ["spec.tags.stray", "x", undefined, "ec2:DeleteTags", "none"],
        [
          "spec.metadataOptions.httpTokens",
          "optional",
          "required",
          "ec2:ModifyInstanceMetadataOptions",
          "none",
        ],
        [
          "spec.iamInstanceProfile",
          "arn:aws:iam::123456789012:instance-profile/batch",
          "web",
          "ec2:ReplaceIamInstanceProfileAssociation",
          "none",
        ],
        ["spec.securityGroups", ["sg-1"], ["sg-1", "sg-2"], "ec2:ModifyInstanceAttribute", "none"],
        ["spec.disableApiTermination", false, true, "ec2:ModifyInstanceAttribute", "none"],
        ["spec.monitoring", false, true, "ec2:MonitorInstances", "none"],
        [
          "spec.creditSpecification",
          "standard",
          "unlimited",
          "ec2:ModifyInstanceCreditSpecification",
          "none",
        ],
        [
          "spec.storage.additionalVolumes[deviceName=/dev/sdf].deleteOnTermination",
          false,
          true,
          "ec2:ModifyInstanceAttribute",
          "none",
        ],
        ["spec.volumeTags.backup", "weekly", "daily", "ec2:CreateTags", "none"],
        ['volumeTags["compute.cloud.com/kind"]', undefined, "Ec2Instance", "ec2:CreateTags", "none"],
        [
          'volumeTags["compute.cloud.com/managed-by"]',
          undefined,
          "kubeprovisioner",
          "ec2:CreateTags",
          "none",
        ],
        ['volumeTags["compute.cloud.com/name"]', undefined, "a", "ec2:CreateTags", "none"],
        ['volumeTags["compute.cloud.com/namespace"]', undefined, "default", "ec2:CreateTags", "none"],
        ['volumeTags["compute.cloud.com/uid"]', undefined, "uid-a", "ec2:CreateTags", "none"],
        ["spec.storage.rootVolume.size", 12, 10, "", "refused"],
        ["spec.instanceType", "t3.small", "t3.micro", "ec2:ModifyInstanceAttribute", "none"],
        ["spec.desiredState", "stopped", "running", "ec2:StartInstances", "none"],
      ],
    );
    const size = changes.find((c) => c.path === "spec.storage.rootVolume.size");
    assert.equal(size?.refusal?.reason, "DriftNotRepaired");
    assert.equal(size?.setting, "volumeSize");
    assert.equal(
      changes.find((c) => c.path === "spec.volumeTags.backup")?.description,
      "volumeTags: /dev/sdf set backup",
    );
    assert.ok(
      changes.every((c) => c.ownership !== true),
      "neither the volumes' tags nor anything else here decides whose the instance is",
    );
    assert.deepEqual(mutating(), [], "planning writes nothing");

    await apply(full);
    assert.deepEqual(mutating(), plannedCalls(changes), "applying makes the calls the plan lists");
    assert.equal(ec2.instances.get(id)?.InstanceType, "t3.micro");
    assert.equal(ec2.instances.get(id)?.State?.Name, "pending");
    assert.equal(
      ec2.instances.get(id)?.IamInstanceProfile?.Arn,
      "arn:aws:iam::123456789012:instance-profile/web",
    );
    assert.deepEqual(Object.fromEntries((ec2.volumes.get(data)?.Tags ?? []).map((t) => [t.Key, t.Value])), {
      ...ownershipTags(owner),
      backup: "daily",
    });
    ec2.settle(id);
    const left = await plan(full);
    assert.deepEqual(
      left.map((c) => [c.path, c.disruption]),
      [["spec.storage.rootVolume.size", "refused"]],
      "only the refused change is left",
    );
  });

  it("restarts for new user data over two reconciles, its value never shown, each plan listing the calls of its own", async () => {
    const { ec2, id, plan, apply, mutating } = setup();
    const spec = { ...full, userData: "#!/bin/sh\necho bye\n", restartForUpdate: true };
    const stop = await plan(spec);
    assert.deepEqual(stop, [
      {
        path: "spec.userData",
        setting: "userData",
        observed: SENSITIVE,
        desired: SENSITIVE,
        actions: ["ec2:StopInstances"],
        disruption: "restart",
        description: "userData (stopping the instance to change it, then starting it)",
        group: "runState",
      },
    ]);
    await apply(spec);
    assert.deepEqual(mutating(), plannedCalls(stop));
    assert.deepEqual(await plan(spec), [], "nothing while stopping");
    ec2.settle(id);
    const start = await plan(spec);
    assert.deepEqual(
      start.map((c) => [c.path, c.observed, c.desired, c.actions.join(" "), c.disruption]),
      [
        ["spec.userData", SENSITIVE, SENSITIVE, "ec2:ModifyInstanceAttribute", "none"],
        ["spec.desiredState", "stopped", "running", "ec2:StartInstances", "none"],
      ],
    );
    const before = mutating().length;
    await apply(spec);
    assert.deepEqual(mutating().slice(before), plannedCalls(start));
    assert.equal(ec2.attributesOf(id).userData, encodeUserData("#!/bin/sh\necho bye\n"));
    ec2.settle(id);
    assert.deepEqual(await plan(spec), []);
    assert.ok(!JSON.stringify([stop, start]).includes("echo"), "no change carries the user data");
  });

  it("holds every change back while new user data needs a restart the spec does not allow", async () => {
    const { ec2, id, plan, apply, mutating } = setup({ Monitoring: { State: "disabled" } });
    ec2.attributesOf(id).userData = undefined;
    const changes = await plan(full);
    assert.deepEqual(
      changes.map((c) => [
        c.path,
        c.observed,
        c.desired,
        c.disruption,
        c.refusal?.reason,
        c.refusal?.holdsAll,
      ]),
      [
        ["spec.monitoring", false, true, "none", undefined, undefined],
        ["spec.userData", undefined, SENSITIVE, "refused", "RestartRequired", true],
      ],
    );
    const { applied } = await apply(full);
    assert.deepEqual(applied, []);
    assert.deepEqual(mutating(), [], "nothing applied");
  });

  it("associates a missing profile, and takes an association that is right already for in line", async () => {
    const { ec2, driver, ctx, id, plan, apply, mutating } = setup({ IamInstanceProfile: undefined });
    const [associate, ...rest] = await plan(full);
    assert.deepEqual(rest, []);
    assert.deepEqual(
      [associate?.path, associate?.observed, associate?.desired, associate?.actions],
      ["spec.iamInstanceProfile", undefined, "web", ["ec2:AssociateIamInstanceProfile"]],
    );
    await apply(full);
    assert.deepEqual(mutating(), ["ec2:AssociateIamInstanceProfile"]);
    // A description that lags behind the association (still the old profile): the association
    // is read, found right, and nothing is planned.
    const lagging = structuredClone(ec2.instances.get(id) ?? {});
    lagging.IamInstanceProfile = { Arn: "arn:aws:iam::123456789012:instance-profile/batch" };
    const obj = object(full);
    const set = await driver.plan(obj, { exists: true, resource: lagging, ownership: "owned" }, ctx(obj));
    assert.deepEqual(set.changes, []);
    assert.equal(ec2.count("DescribeIamInstanceProfileAssociations"), 1);
  });
});
