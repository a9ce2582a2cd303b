import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import { AwsError } from "../../aws/errors.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { contextFor } from "../common/testing/context.ts";
import { Ec2InstanceDriver } from "./driver.ts";
import { creditRefusal, isBurstable, monitoringDrift, securityGroupsDrift } from "./instance-attributes.ts";
import type { Ec2InstanceObject } from "./model.ts";
import { described, planAndApply } from "./testing/apply.ts";
import { FakeEc2 } from "./testing/fake-ec2.ts";

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

const owner = { uid: "uid-a", namespace: "default", name: "a", kind: "Ec2Instance" };

function object(over: Partial<Ec2InstanceSpec>): Ec2InstanceObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "Ec2Instance",
    metadata: { name: "a", namespace: "default", uid: "uid-a", generation: 1 },
    spec: { ...base, ...over },
    status: {},
  };
}

/**
 * A driver over a fake EC2 holding one owned running instance; `update` plans its changes and
 * applies them once, as the flow does, and returns those applied; `plan` only plans.
 */
function setup(instance: Partial<Instance> = {}) {
  const clock = new FakeClock(Date.parse("2025-01-01T00:00:00Z"));
  const ec2 = new FakeEc2(() => clock.now());
  const driver = new Ec2InstanceDriver({ aws: ec2.source(), clock });
  const i = ec2.add({ ...instance, tags: ownershipTags(owner) });
  const id = i.InstanceId ?? "";
  /** Runs `p` while stepping the clock past the batch windows it meets (lookups by tag). */
  const run = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    const settled = p.then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    void settled.then(() => (done = true));
    for (let n = 0; n < 10 && !done; n++) await clock.advance(10);
    const r = await settled;
    if (!r.ok) throw r.e;
    return r.v;
  };
  const remove = async (obj: Ec2InstanceObject) => {
    const doomed = { ...obj, metadata: { ...obj.metadata, deletionTimestamp: "2025-01-01T00:00:00Z" } };
    const current = structuredClone(ec2.instances.get(id) ?? {});
    return await run(
      driver.delete(
        doomed,
        { exists: true, resource: current, ownership: "owned" },
        contextFor(doomed, "instanceId"),
      ),
    );
  };
  const observed = () => ({
    exists: true as const,
    resource: structuredClone(ec2.instances.get(id) ?? {}),
    ownership: "owned" as const,
  });
  const update = async (obj: Ec2InstanceObject) =>
    described((await planAndApply(driver, obj, observed(), contextFor(obj, "instanceId"))).applied);
  const plan = async (obj: Ec2InstanceObject) =>
    (await driver.plan(obj, observed(), contextFor(obj, "instanceId"))).changes;
  return { ec2, id, update, plan, remove };
}

describe("security groups and monitoring, from the DescribeInstances answer", () => {
  const instance: Instance = {
    SecurityGroups: [{ GroupId: "sg-2" }, { GroupId: "sg-1" }],
    Monitoring: { State: "disabled" },
  };

  it("compares the groups as a set, and leaves them alone when unset", () => {
    assert.equal(securityGroupsDrift({ securityGroups: ["sg-1", "sg-2"] }, instance), undefined);
    assert.deepEqual(securityGroupsDrift({ securityGroups: ["sg-3", "sg-1"] }, instance), ["sg-1", "sg-3"]);
    assert.deepEqual(securityGroupsDrift({ securityGroups: ["sg-1"] }, instance), ["sg-1"]);
    assert.equal(securityGroupsDrift({}, instance), undefined);
  });

  it("counts a monitoring change under way as made, and leaves monitoring alone when unset", () => {
    assert.equal(monitoringDrift({ monitoring: true }, instance), true);
    assert.equal(monitoringDrift({ monitoring: false }, instance), undefined);
    assert.equal(monitoringDrift({ monitoring: true }, { Monitoring: { State: "pending" } }), undefined);
    assert.equal(monitoringDrift({ monitoring: false }, { Monitoring: { State: "disabling" } }), undefined);
    assert.equal(monitoringDrift({ monitoring: false }, { Monitoring: { State: "enabled" } }), false);
    assert.equal(monitoringDrift({}, { Monitoring: { State: "enabled" } }), undefined);
  });
});

describe("the CPU credit option", () => {
  it("belongs to the burstable families only", () => {
    for (const t of ["t2.micro", "t3.nano", "t3a.large", "t4g.medium"]) assert.equal(isBurstable(t), true, t);
    for (const t of ["m5.large", "t3", "c7g.xlarge", "xt3.micro", "", undefined])
      assert.equal(isBurstable(t), false, String(t));
  });

  it("takes an instance ModifyInstanceCreditSpecification did not change for the call's failure", () => {
    const out = {
      UnsuccessfulInstanceCreditSpecifications: [
        { InstanceId: "i-2", Error: { Code: "IncorrectInstanceState" as const, Message: "not now" } },
      ],
    };
    assert.equal(creditRefusal(out, "i-1"), undefined);
    assert.equal(creditRefusal({}, "i-1"), undefined);
    const err = creditRefusal(out, "i-2");
    assert.equal(err?.code, "IncorrectInstanceState");
    assert.equal(err?.info.service, "ec2");
    assert.match(err?.message ?? "", /not now/);
  });
});

describe("Ec2InstanceDriver.plan: attributes changed in place", () => {
  it("plans each differing attribute as its own group, with the call that applies it, and writes nothing", async () => {
    const { ec2, id, plan } = setup({
      InstanceType: "t3.micro",
      SecurityGroups: [{ GroupId: "sg-1" }],
      Monitoring: { State: "enabled" },
    });
    ec2.attributesOf(id).disableApiStop = true;
    const changes = await plan(
      object({
        securityGroups: ["sg-2", "sg-1"],
        disableApiTermination: true,
        disableApiStop: true,
        instanceInitiatedShutdownBehavior: "terminate",
        monitoring: false,
        creditSpecification: "unlimited",
      }),
    );
    assert.deepEqual(
      changes.map((c) => [c.path, c.observed, c.desired, c.actions, c.disruption, c.group]),
      [
        [
          "spec.securityGroups",
          ["sg-1"],
          ["sg-1", "sg-2"],
          ["ec2:ModifyInstanceAttribute"],
          "none",
          "securityGroups",
        ],
        [
          "spec.disableApiTermination",
          false,
          true,
          ["ec2:ModifyInstanceAttribute"],
          "none",
          "disableApiTermination",
        ],
        [
          "spec.instanceInitiatedShutdownBehavior",
          "stop",
          "terminate",
          ["ec2:ModifyInstanceAttribute"],
          "none",
          "instanceInitiatedShutdownBehavior",
        ],
        ["spec.monitoring", true, false, ["ec2:UnmonitorInstances"], "none", "monitoring"],
        [
          "spec.creditSpecification",
          "standard",
          "unlimited",
          ["ec2:ModifyInstanceCreditSpecification"],
          "none",
          "creditSpecification",
        ],
      ],
    );
    assert.deepEqual(
      ec2.calls.map((c) => c.op),
      [
        "DescribeInstanceAttribute",
        "DescribeInstanceAttribute",
        "DescribeInstanceAttribute",
        "DescribeInstanceCreditSpecifications",
      ],
      "planning only reads",
    );
  });

  it("reads and writes nothing for attributes the spec leaves unset", async () => {
    const { ec2, update } = setup({
      SecurityGroups: [{ GroupId: "sg-1" }],
      Monitoring: { State: "enabled" },
    });
    assert.deepEqual(await update(object({})), []);
    assert.deepEqual(ec2.calls, []);
  });

  it("reads each described attribute the spec sets once, and writes only those that differ", async () => {
    const { ec2, id, update } = setup();
    ec2.attributesOf(id).disableApiStop = true;
    const obj = object({
      disableApiTermination: true,
      disableApiStop: true,
      instanceInitiatedShutdownBehavior: "terminate",
    });
    const changes = await update(obj);
    assert.deepEqual(
      changes.map((c) => c.setting),
      ["disableApiTermination", "instanceInitiatedShutdownBehavior"],
    );
    assert.equal(ec2.count("DescribeInstanceAttribute"), 3);
    assert.deepEqual(
      ec2.calls.filter((c) => c.op === "ModifyInstanceAttribute").map((c) => c.input),
      [
        { InstanceId: id, DisableApiTermination: { Value: true } },
        { InstanceId: id, Attribute: "instanceInitiatedShutdownBehavior", Value: "terminate" },
      ],
    );
    assert.deepEqual(await update(obj), [], "in line after one repair");
    assert.equal(ec2.count("ModifyInstanceAttribute"), 2);
  });

  it("turns detailed monitoring on and off, and does not ask again while EC2 is changing it", async () => {
    const { ec2, id, update } = setup({ Monitoring: { State: "disabled" } });
    assert.deepEqual(await update(object({ monitoring: true })), [
      { setting: "monitoring", description: "monitoring: detailed" },
    ]);
    assert.deepEqual(ec2.calls.at(-1), {
      op: "MonitorInstances",
      region: "eu-west-1",
      input: { InstanceIds: [id] },
    });
    assert.deepEqual(await update(object({ monitoring: true })), [], "pending counts as on");
    const instance = ec2.instances.get(id);
    if (instance !== undefined) instance.Monitoring = { State: "enabled" };
    assert.equal((await update(object({ monitoring: false })))[0]?.setting, "monitoring");
    assert.equal(ec2.count("UnmonitorInstances"), 1);
    assert.equal(ec2.count("MonitorInstances"), 1);
  });

  it("sets the CPU credit option when EC2 reports another, and reads it only when set", async () => {
    const { ec2, id, update } = setup({ InstanceType: "t3.micro" });
    assert.deepEqual(await update(object({ creditSpecification: "unlimited" })), [
      { setting: "creditSpecification", description: "creditSpecification: unlimited" },
    ]);
    assert.deepEqual(ec2.calls.at(-1)?.input, {
      InstanceCreditSpecifications: [{ InstanceId: id, CpuCredits: "unlimited" }],
    });
    assert.deepEqual(await update(object({ creditSpecification: "unlimited" })), []);
    assert.equal(ec2.count("ModifyInstanceCreditSpecification"), 1);
    assert.equal(ec2.count("DescribeInstanceCreditSpecifications"), 2);
    await update(object({}));
    assert.equal(ec2.count("DescribeInstanceCreditSpecifications"), 2, "not read once unset");
  });

  it("sets the credit option only once the instance's type is burstable, after a type change", async () => {
    const { ec2, update } = setup({ InstanceType: "m5.large", State: { Name: "stopped" } });
    const obj = object({
      instanceType: "t3.micro",
      desiredState: "stopped",
      creditSpecification: "unlimited",
    });
    assert.deepEqual(
      (await update(obj)).map((c) => c.setting),
      ["instanceType"],
      "the type first: an m5.large has no credit option",
    );
    assert.equal(ec2.count("DescribeInstanceCreditSpecifications"), 0);
    assert.equal(ec2.count("ModifyInstanceCreditSpecification"), 0);
    assert.deepEqual(
      (await update(obj)).map((c) => c.setting),
      ["creditSpecification"],
      "the credit option at the next reconcile",
    );
    assert.deepEqual(await update(obj), []);
  });

  it("fails with EC2's code when ModifyInstanceCreditSpecification leaves the instance as it was", async () => {
    const { ec2, id, update } = setup({ InstanceType: "t3.micro" });
    ec2.creditRefusals.set(id, "IncorrectInstanceState");
    await assert.rejects(update(object({ creditSpecification: "unlimited" })), (err: unknown) => {
      assert.ok(err instanceof AwsError);
      assert.equal(err.code, "IncorrectInstanceState");
      assert.equal(err.kind, "retryable");
      assert.equal(err.info.operation, "ModifyInstanceCreditSpecification");
      return true;
    });
    ec2.creditRefusals.set(id, "InstanceCreditSpecification.NotSupported");
    await assert.rejects(update(object({ creditSpecification: "unlimited" })), (err: unknown) => {
      assert.ok(err instanceof AwsError);
      assert.equal(err.code, "InstanceCreditSpecification.NotSupported");
      assert.equal(err.kind, "terminal");
      return true;
    });
    assert.equal(ec2.attributesOf(id).cpuCredits, "standard", "unchanged");
  });

  it("sets the security groups in place, once", async () => {
    const { ec2, id, update } = setup({ SecurityGroups: [{ GroupId: "sg-1" }] });
    const obj = object({ securityGroups: ["sg-2", "sg-1"] });
    assert.deepEqual(await update(obj), [
      { setting: "securityGroups", description: "securityGroups: sg-1, sg-2" },
    ]);
    assert.deepEqual(ec2.calls.at(-1)?.input, { InstanceId: id, Groups: ["sg-1", "sg-2"] });
    assert.deepEqual(await update(obj), []);
  });

  it("leaves an instance in transition alone until it is running or stopped", async () => {
    const { ec2, update } = setup({ State: { Name: "stopping" }, Monitoring: { State: "disabled" } });
    await update(object({ monitoring: true, disableApiTermination: true, securityGroups: ["sg-1"] }));
    assert.deepEqual(ec2.calls, []);
  });
});

describe("Ec2InstanceDriver.delete of an instance with termination protection", () => {
  it("is blocked with reason TerminationProtected while the spec does not lift the protection", async () => {
    const { ec2, id, remove } = setup();
    ec2.attributesOf(id).disableApiTermination = true;
    for (const spec of [{}, { disableApiTermination: true }]) {
      const outcome = await remove(object(spec));
      assert.equal(outcome.done, false);
      assert.equal(
        outcome.done === false && outcome.blocked === true && outcome.reason,
        "TerminationProtected",
      );
    }
    assert.equal(ec2.count("ModifyInstanceAttribute"), 0, "the protection is not lifted unasked");
    assert.equal(ec2.instances.get(id)?.State?.Name, "running");
  });

  it("lifts the protection when the spec sets disableApiTermination false, then terminates", async () => {
    const { ec2, id, remove } = setup();
    ec2.attributesOf(id).disableApiTermination = true;
    const obj = object({ disableApiTermination: false });
    const first = await remove(obj);
    assert.deepEqual(first, {
      done: false,
      message: `lifting termination protection of ${id} to terminate it`,
    });
    assert.equal(ec2.attributesOf(id).disableApiTermination, false);
    const second = await remove(obj);
    assert.equal(second.done === false && second.blocked !== true && second.state, "shutting-down");
    assert.equal(ec2.instances.get(id)?.State?.Name, "shutting-down");
  });
});
