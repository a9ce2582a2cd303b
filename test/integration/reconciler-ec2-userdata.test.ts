/**
 * Ec2Instance user data against moto: set at launch and compared as EC2 returns it (base64) with
 * no false drift; a no-op reconcile writes nothing and a steady poll reads it once; new user data
 * on a running instance waits with RestartRequired, touching nothing, until restartForUpdate lets
 * the operator stop, modify and start it; user data changed out of band is put back; user data
 * removed from the spec is left alone and no longer read.
 *
 * moto differs from EC2 here as in reconciler-ec2-runstate.test.ts: a stopped instance is listed
 * `stopped` at once, and ModifyInstanceAttribute(UserData) is accepted on a running instance (EC2
 * refuses it with IncorrectInstanceState), so the restart test checks the order of the calls.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DescribeInstanceAttributeCommand,
  ModifyInstanceAttributeCommand,
  StopInstancesCommand,
} from "@aws-sdk/client-ec2";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";

const RESTART_CALLS = ["StopInstances", "ModifyInstanceAttribute", "StartInstances"];
const FIRST = "#!/bin/sh\necho 'héllo' > /tmp/first\n";
const SECOND = "#cloud-config\nruncmd:\n  - echo second\n";
const base64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

describe("Ec2Instance user data", () => {
  const env = new Ec2Env({ ns: "ec2-userdata" }).hooks();
  let id = "";

  const userData = async (): Promise<string> => {
    const out = await env
      .ec2()
      .send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: "userData" }));
    return Buffer.from(out.UserData?.Value ?? "", "base64").toString("utf8");
  };
  const restartCalls = (): string[] =>
    env.proxy.calls.map((c) => c.operation).filter((op) => RESTART_CALLS.includes(op));
  const settled = () =>
    env.waitUntil(
      "scripted",
      "running, Ready and Synced for its generation",
      (o) =>
        o?.status?.state === "running" &&
        ready(o)?.status === "True" &&
        cond(o, "Synced")?.status === "True" &&
        cond(o, "Synced")?.observedGeneration === o.metadata.generation,
    );

  it("launches with the user data, and finds no drift in EC2's base64 of it", async () => {
    await env.create("scripted", { userData: FIRST });
    const obj = await env.waitReady("scripted", 60_000);
    id = obj.status?.instanceId ?? "";
    assert.equal(await userData(), FIRST);
    await env.waitEvent("scripted", "Normal", "Created");
    const mutations = env.mutations();
    await env.waitPolls(2);
    assert.deepEqual(env.mutations(), mutations, "no mutating call: the user data matches");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("scripted", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("reads the user data once per steady poll, beside DescribeInstances", async () => {
    await env.waitPolls(1);
    const reconciles = 2;
    const calls = (await env.callsOfReconciles("scripted", reconciles, "ec2")).map((c) => c.operation);
    assert.deepEqual([...new Set(calls)].sort(), ["DescribeInstanceAttribute", "DescribeInstances"]);
    assert.equal(calls.filter((c) => c === "DescribeInstances").length, reconciles);
    assert.equal(calls.filter((c) => c === "DescribeInstanceAttribute").length, reconciles);
  });

  it("holds new user data for a running instance with RestartRequired, touching nothing", async () => {
    const mutations = env.mutations();
    await env.patch("scripted", { spec: { userData: SECOND } });
    const refused = await env.waitUntil(
      "scripted",
      "Synced=False, RestartRequired",
      (o) => cond(o, "Synced")?.status === "False" && cond(o, "Synced")?.reason === "RestartRequired",
    );
    assert.match(cond(refused, "Synced")?.message ?? "", /^new userData needs the instance stopped/);
    assert.equal(ready(refused)?.status, "True", "the running instance stays Ready");
    await env.waitEvent("scripted", "Warning", "RestartRequired");
    await env.waitPolls(2);
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.equal(await userData(), FIRST);
    assert.equal((await env.instance(id))?.State?.Name, "running");
  });

  it("with restartForUpdate stops the instance, writes the user data and starts it again", async () => {
    const before = restartCalls().length;
    await env.patch("scripted", { spec: { restartForUpdate: true } });
    await settled();
    assert.equal(await userData(), SECOND);
    assert.deepEqual(restartCalls().slice(before), RESTART_CALLS);
    assert.ok(
      (await env.events("scripted")).some((e) => e.reason === "Updated" && /\buserData\b/.test(e.message)),
      "an Updated Event naming userData",
    );
    await env.waitPolls(2);
    assert.equal(restartCalls().length, before + 3, "nothing re-sent once the user data matches");
  });

  it("puts back user data changed out of band while the instance was stopped", async () => {
    const ec2 = env.ec2();
    await ec2.send(new StopInstancesCommand({ InstanceIds: [id] }));
    await ec2.send(
      new ModifyInstanceAttributeCommand({
        InstanceId: id,
        Attribute: "userData",
        Value: base64("#!/bin/sh\n"),
      }),
    );
    await waitFor(
      "the user data put back and the instance running",
      async () => (await userData()) === SECOND && (await env.instance(id))?.State?.Name === "running",
      WAIT_MS,
      200,
    );
    await settled();
  });

  it("leaves user data removed from the spec alone, and stops reading it", async () => {
    const patched = await env.patch("scripted", { spec: { userData: null } });
    const generation = patched.metadata.generation;
    await env.waitUntil(
      "scripted",
      `Synced observed generation ${generation}`,
      (o) => cond(o, "Synced")?.observedGeneration === generation,
    );
    await env.ec2().send(
      new ModifyInstanceAttributeCommand({
        InstanceId: id,
        Attribute: "userData",
        Value: base64("other\n"),
      }),
    );
    await env.waitPolls(1);
    const reads = env.proxy.count("DescribeInstanceAttribute");
    const mutations = env.mutations();
    const polls = env.reconcilesOf("scripted");
    await env.waitPolls(3);
    assert.ok(env.reconcilesOf("scripted") - polls >= 2);
    assert.equal(env.proxy.count("DescribeInstanceAttribute"), reads, "user data no longer read");
    assert.deepEqual(env.mutations(), mutations, "nothing written");
    assert.equal(await userData(), "other\n");
  });
});
