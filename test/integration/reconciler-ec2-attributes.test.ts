/**
 * Ec2Instance attributes changed in place against the test AWS: security groups, termination and
 * stop protection, the shutdown behaviour, detailed monitoring and the CPU credit option. Set at
 * launch; a no-op reconcile writes nothing; a steady poll reads DescribeInstances plus one read
 * per attribute the spec sets that DescribeInstances does not report; drift is put back with an
 * Updated Event naming the setting, and the next reconciles make no mutating call; a spec change
 * is applied in place, once; an attribute removed from the spec is left alone and no longer read.
 *
 * The test AWS answers MonitorInstances, UnmonitorInstances and the CPU credit calls as EC2
 * does (test/README.md, "The wraps"), except that a monitoring change is done at once: EC2's
 * DescribeInstances reports `pending` or `disabling` for a while, which the operator counts as
 * the change made. Where moto still differs from EC2: RunInstances ignores DisableApiTermination
 * (moto's instance starts unprotected), so the first reconcile after the launch sets it with
 * ModifyInstanceAttribute; on EC2 the launch sets it and no repair follows.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateSecurityGroupCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstanceCreditSpecificationsCommand,
  ModifyInstanceAttributeCommand,
  ModifyInstanceCreditSpecificationCommand,
  UnmonitorInstancesCommand,
  type InstanceAttributeName,
} from "@aws-sdk/client-ec2";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance attributes changed in place", () => {
  const env = new Ec2Env({ ns: "ec2-attributes" }).hooks();
  const groups: string[] = [];
  let id = "";

  const attribute = async (name: InstanceAttributeName): Promise<string | boolean | undefined> => {
    const out = await env
      .ec2()
      .send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: name }));
    return (
      out.DisableApiTermination?.Value ??
      out.DisableApiStop?.Value ??
      out.InstanceInitiatedShutdownBehavior?.Value
    );
  };
  const groupsOf = async (): Promise<string[]> =>
    ((await env.instance(id))?.SecurityGroups ?? []).map((g) => g.GroupId ?? "").sort();
  const monitoring = async (): Promise<string | undefined> => (await env.instance(id))?.Monitoring?.State;
  const credits = async (): Promise<string | undefined> => {
    const out = await env.ec2().send(new DescribeInstanceCreditSpecificationsCommand({ InstanceIds: [id] }));
    return out.InstanceCreditSpecifications?.find((c) => c.InstanceId === id)?.CpuCredits;
  };
  /** Asserts that the next two reconciles of the object make no mutating AWS call. */
  const settled = async (): Promise<void> => {
    const mutations = env.mutations();
    await env.waitReconcilesOf("guarded", 2);
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls after the repair");
  };
  const updated = async (setting: string): Promise<void> => {
    await waitFor(
      `an Updated Event naming ${setting}`,
      async () =>
        (await env.events("guarded")).some(
          (e) => e.reason === "Updated" && new RegExp(`\\b${setting}\\b`).test(e.message),
        ),
      15_000,
      150,
    );
  };

  it("launches with its security groups, protection, shutdown behaviour, monitoring and credits", async () => {
    for (const name of ["web", "admin"]) {
      const out = await env
        .ec2()
        .send(new CreateSecurityGroupCommand({ GroupName: `attributes-${name}`, Description: name }));
      assert.ok(out.GroupId);
      groups.push(out.GroupId);
    }
    await env.create("guarded", {
      securityGroups: [groups[0] ?? ""],
      disableApiTermination: true,
      disableApiStop: false,
      instanceInitiatedShutdownBehavior: "terminate",
      monitoring: true,
      creditSpecification: "unlimited",
    });
    const obj = await env.waitReady("guarded", 60_000);
    id = obj.status?.instanceId ?? "";
    const launch = await env.instance(id);
    assert.deepEqual(await groupsOf(), [groups[0]]);
    assert.equal(launch?.Monitoring?.State, "enabled", "RunInstances Monitoring.Enabled");
    assert.equal(await attribute("instanceInitiatedShutdownBehavior"), "terminate");
    assert.equal(await attribute("disableApiStop"), false);
    // moto drops DisableApiTermination at launch; the operator's first repair sets it.
    await waitFor(
      "termination protection on",
      async () => (await attribute("disableApiTermination")) === true,
      WAIT_MS,
      200,
    );
    assert.equal(await credits(), "unlimited", "RunInstances CreditSpecification");
    assert.equal(env.proxy.count("MonitorInstances"), 0, "set at launch, not repaired");
    assert.equal(env.proxy.count("ModifyInstanceCreditSpecification"), 0, "set at launch, not repaired");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("guarded", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("guarded", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("reads, per steady poll, DescribeInstances and one call per attribute it does not report", async () => {
    await env.waitPolls(1);
    const reconciles = 3;
    const calls = (await env.callsOfReconciles("guarded", reconciles, "ec2")).map((c) => c.operation);
    const count = (op: string): number => calls.filter((c) => c === op).length;
    assert.deepEqual([...new Set(calls)].sort(), [
      "DescribeInstanceAttribute",
      "DescribeInstanceCreditSpecifications",
      "DescribeInstances",
    ]);
    assert.equal(count("DescribeInstances"), reconciles, "one DescribeInstances per poll");
    // disableApiTermination, disableApiStop and instanceInitiatedShutdownBehavior: one read each.
    assert.equal(count("DescribeInstanceAttribute"), 3 * reconciles, "three attribute reads per poll");
    assert.equal(count("DescribeInstanceCreditSpecifications"), reconciles, "one credit read per poll");
  });

  it("puts back security groups, protection, shutdown behaviour, monitoring and credits changed out of band", async () => {
    const ec2 = env.ec2();
    await ec2.send(new UnmonitorInstancesCommand({ InstanceIds: [id] }));
    await ec2.send(
      new ModifyInstanceCreditSpecificationCommand({
        InstanceCreditSpecifications: [{ InstanceId: id, CpuCredits: "standard" }],
      }),
    );
    await ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: id, Groups: [groups[1] ?? ""] }));
    await ec2.send(
      new ModifyInstanceAttributeCommand({ InstanceId: id, DisableApiTermination: { Value: false } }),
    );
    await ec2.send(
      new ModifyInstanceAttributeCommand({
        InstanceId: id,
        Attribute: "instanceInitiatedShutdownBehavior",
        Value: "stop",
      }),
    );
    await waitFor(
      "the attributes put back",
      async () =>
        JSON.stringify(await groupsOf()) === JSON.stringify([groups[0]]) &&
        (await attribute("disableApiTermination")) === true &&
        (await attribute("instanceInitiatedShutdownBehavior")) === "terminate" &&
        (await monitoring()) === "enabled" &&
        (await credits()) === "unlimited",
      WAIT_MS,
      200,
    );
    await updated("securityGroups");
    await updated("disableApiTermination");
    await updated("instanceInitiatedShutdownBehavior");
    await updated("monitoring: detailed");
    await updated("creditSpecification: unlimited");
    assert.equal(env.proxy.count("MonitorInstances"), 1, "monitoring turned on again, once");
    assert.equal(env.proxy.count("ModifyInstanceCreditSpecification"), 1, "credits set again, once");
    await settled();
  });

  it("applies new security groups, stop protection, basic monitoring and standard credits in place on the running instance", async () => {
    const stops = env.proxy.count("StopInstances");
    const sorted = [...groups].sort();
    const unmonitors = env.proxy.count("UnmonitorInstances");
    const creditChanges = env.proxy.count("ModifyInstanceCreditSpecification");
    await env.patch("guarded", {
      spec: {
        securityGroups: sorted,
        disableApiStop: true,
        monitoring: false,
        creditSpecification: "standard",
      },
    });
    await waitFor(
      "both groups, stop protection, basic monitoring and standard credits",
      async () =>
        JSON.stringify(await groupsOf()) === JSON.stringify(sorted) &&
        (await attribute("disableApiStop")) === true &&
        (await monitoring()) === "disabled" &&
        (await credits()) === "standard",
      WAIT_MS,
      200,
    );
    await updated("disableApiStop");
    await updated("monitoring: basic");
    await updated("creditSpecification: standard");
    assert.equal(env.proxy.count("UnmonitorInstances"), unmonitors + 1, "monitoring turned off once");
    assert.equal(env.proxy.count("ModifyInstanceCreditSpecification"), creditChanges + 1, "credits set once");
    await settled();
    assert.equal(env.proxy.count("StopInstances"), stops, "no restart");
    assert.equal((await env.instance(id))?.State?.Name, "running");
    assert.equal(ready(await env.get("guarded"))?.status, "True");
  });

  it("leaves an attribute removed from the spec alone, and stops reading it", async () => {
    const patched = await env.patch("guarded", {
      spec: { securityGroups: null, instanceInitiatedShutdownBehavior: null, creditSpecification: null },
    });
    const generation = patched.metadata.generation;
    await env.waitUntil(
      "guarded",
      `Synced observed generation ${generation}`,
      (o) => cond(o, "Synced")?.observedGeneration === generation,
    );
    const ec2 = env.ec2();
    await ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: id, Groups: [groups[1] ?? ""] }));
    await ec2.send(
      new ModifyInstanceAttributeCommand({
        InstanceId: id,
        Attribute: "instanceInitiatedShutdownBehavior",
        Value: "stop",
      }),
    );
    await env.waitPolls(1);
    const mutations = env.mutations();
    const reconciles = 2;
    const calls = (await env.callsOfReconciles("guarded", reconciles, "ec2")).map((c) => c.operation);
    assert.deepEqual(env.mutations(), mutations, "nothing written");
    assert.deepEqual(await groupsOf(), [groups[1]], "groups left as changed out of band");
    assert.equal(await attribute("instanceInitiatedShutdownBehavior"), "stop");
    // Only the two protections are still read.
    assert.equal(calls.filter((c) => c === "DescribeInstanceAttribute").length, 2 * reconciles);
    assert.ok(!calls.includes("DescribeInstanceCreditSpecifications"), "credits no longer read");
  });

  it("lifts the protections so the object can be deleted", async () => {
    await env.patch("guarded", { spec: { disableApiTermination: false, disableApiStop: false } });
    await waitFor(
      "protections off",
      async () =>
        (await attribute("disableApiTermination")) === false && (await attribute("disableApiStop")) === false,
      WAIT_MS,
      200,
    );
  });
});
