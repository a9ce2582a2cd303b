/**
 * Ec2Instance run state against moto: desiredState stops and starts the instance, an instance
 * stopped out of band is started again, instanceType changes while stopped, a type change on a
 * running instance without restartForUpdate ends in RestartRequired and touches nothing, and with
 * restartForUpdate the operator stops, modifies and starts it.
 *
 * moto differs from EC2 here: StopInstances answers `stopping` but DescribeInstances lists the
 * instance `stopped` at once (StartInstances: `pending`, then `running` at once), and it accepts
 * ModifyInstanceAttribute(InstanceType) on a running instance, which EC2 refuses with
 * IncorrectInstanceState. So these tests never see a transition (the polls through `stopping`
 * and `pending` are covered in driver.test.ts against an in-memory EC2 that keeps them), and the
 * restart test checks the order of the calls, so it cannot pass by moto's leniency.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StopInstancesCommand } from "@aws-sdk/client-ec2";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { Ec2Env, type Ec2Obj } from "./reconciler-ec2-fixture.ts";

const RUN_STATE_CALLS = ["StopInstances", "ModifyInstanceAttribute", "StartInstances"];

describe("Ec2Instance run state: desiredState, instanceType, restartForUpdate", () => {
  const env = new Ec2Env({ ns: "ec2-runstate" }).hooks();

  /** The run-state calls the proxy has seen so far, in order. */
  const runStateCalls = (): string[] =>
    env.proxy.calls.map((c) => c.operation).filter((op) => RUN_STATE_CALLS.includes(op));
  /** Waits until the object reports `state` and Ready=True for its current generation. */
  const settledIn = (name: string, state: string, timeoutMs = WAIT_MS): Promise<Ec2Obj | undefined> =>
    env.waitUntil(
      name,
      `${state} and Ready`,
      (o) =>
        o?.status?.state === state &&
        ready(o)?.status === "True" &&
        ready(o)?.observedGeneration === o.metadata.generation,
      timeoutMs,
    );
  /** How often an Updated Event matching `pattern` was emitted (repeats are one Event with a count). */
  const updatedEvents = async (name: string, pattern: RegExp): Promise<number> =>
    (await env.events(name))
      .filter((e) => e.reason === "Updated" && pattern.test(e.message))
      .reduce((n, e) => n + ((e as { count?: number }).count ?? 1), 0);

  it("launches an instance for desiredState stopped, stops it, and calls it Ready", async () => {
    const before = runStateCalls().length;
    await env.create("parked", { desiredState: "stopped" });
    const obj = await settledIn("parked", "stopped", 60_000);
    const id = obj?.status?.instanceId ?? "";
    assert.equal((await env.instance(id))?.State?.Name, "stopped");
    assert.deepEqual(runStateCalls().slice(before), ["StopInstances"]);
    assert.equal(ready(obj)?.reason, "Available");
    assert.equal(ready(obj)?.message, "the instance is stopped, as spec.desiredState asks");
    const { stdout } = await env.cp.kubectl([
      "get",
      "ec2",
      "parked",
      "-n",
      env.ns,
      "-o",
      "wide",
      "--no-headers",
    ]);
    const cols = stdout.trim().split(/\s+/);
    assert.deepEqual(
      [cols[2], cols.at(-2), cols.at(-1)],
      ["stopped", "stopped", "Full"],
      "State, Desired and Policy columns",
    );
  });

  it("starts it when desiredState turns running, with an Updated Event naming the setting", async () => {
    const before = runStateCalls().length;
    await env.patch("parked", { spec: { desiredState: "running" } });
    const obj = await settledIn("parked", "running");
    assert.equal((await env.instance(obj?.status?.instanceId ?? ""))?.State?.Name, "running");
    assert.deepEqual(runStateCalls().slice(before), ["StartInstances"]);
    assert.equal(await updatedEvents("parked", /desiredState: running/), 1);
  });

  it("starts an instance stopped out of band again", async () => {
    const id = (await env.get("parked"))?.status?.instanceId ?? "";
    const before = runStateCalls().length;
    const repairs = (): Promise<number> =>
      env.op.metric("kubeprovisioner_drift_repairs_total", { kind: "Ec2Instance", setting: "desiredState" });
    const repaired = await repairs();
    await env.ec2().send(new StopInstancesCommand({ InstanceIds: [id] }));
    await waitFor(
      "the instance running again",
      async () => (await env.instance(id))?.State?.Name === "running" && runStateCalls().length > before,
      WAIT_MS,
      200,
    );
    await settledIn("parked", "running");
    assert.deepEqual(runStateCalls().slice(before), ["StartInstances"]);
    assert.equal(await updatedEvents("parked", /desiredState: running/), 2);
    assert.equal(await repairs(), repaired + 1, "counted as a desiredState drift repair");
    await env.waitPolls(2);
    assert.deepEqual(runStateCalls().slice(before), ["StartInstances"], "started once, not on every poll");
  });

  it("changes the type of a stopped instance without starting it", async () => {
    await env.patch("parked", { spec: { desiredState: "stopped" } });
    const stopped = await settledIn("parked", "stopped");
    const id = stopped?.status?.instanceId ?? "";
    const before = runStateCalls().length;
    await env.patch("parked", { spec: { instanceType: "t3.small" } });
    await waitFor(
      "the type changed",
      async () => (await env.instance(id))?.InstanceType === "t3.small",
      WAIT_MS,
      200,
    );
    await settledIn("parked", "stopped");
    await env.waitPolls(2);
    assert.deepEqual(runStateCalls().slice(before), ["ModifyInstanceAttribute"]);
    assert.equal((await env.instance(id))?.State?.Name, "stopped");
    assert.equal(await updatedEvents("parked", /instanceType: t3\.small \(was t3\.micro\)/), 1);
  });

  it("refuses a type change on a running instance without restartForUpdate: RestartRequired, nothing touched", async () => {
    await env.create("busy");
    const obj = await settledIn("busy", "running", 60_000);
    const id = obj?.status?.instanceId ?? "";
    const mutations = env.mutations();
    await env.patch("busy", { spec: { instanceType: "t3.large" } });
    const refused = await env.waitUntil(
      "busy",
      "Synced=False, RestartRequired",
      (o) => cond(o, "Synced")?.status === "False" && cond(o, "Synced")?.reason === "RestartRequired",
    );
    assert.match(
      cond(refused, "Synced")?.message ?? "",
      /instanceType t3\.micro -> t3\.large needs the instance stopped/,
    );
    assert.equal(ready(refused)?.status, "True", "the running instance stays Ready");
    await env.waitEvent("busy", "Warning", "RestartRequired");
    // Terminal until the spec changes: after the reconciles of the change, of its own status write
    // and of a poll scheduled before the change (up to 1.5 periods later), the object is not
    // reconciled again, and nothing was sent to EC2.
    await env.waitPolls(3);
    const reconciles = env.reconcilesOf("busy");
    await env.waitPolls(3);
    assert.equal(env.reconcilesOf("busy"), reconciles, "no retry of a terminal refusal");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    const i = await env.instance(id);
    assert.deepEqual([i?.State?.Name, i?.InstanceType], ["running", "t3.micro"]);
  });

  it("with restartForUpdate stops the instance, changes its type and starts it again", async () => {
    const id = (await env.get("busy"))?.status?.instanceId ?? "";
    const before = runStateCalls().length;
    await env.patch("busy", { spec: { restartForUpdate: true } });
    const done = await env.waitUntil(
      "busy",
      "running t3.large, Ready and Synced",
      (o) =>
        o?.status?.state === "running" &&
        ready(o)?.status === "True" &&
        cond(o, "Synced")?.status === "True" &&
        ready(o)?.observedGeneration === o.metadata.generation,
    );
    assert.ok(done);
    const i = await env.instance(id);
    assert.deepEqual([i?.State?.Name, i?.InstanceType], ["running", "t3.large"]);
    assert.deepEqual(runStateCalls().slice(before), [
      "StopInstances",
      "ModifyInstanceAttribute",
      "StartInstances",
    ]);
    await env.waitPolls(2);
    assert.equal(runStateCalls().length, before + 3, "nothing re-sent once the type matches");
  });
});
