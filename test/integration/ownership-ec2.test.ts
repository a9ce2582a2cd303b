/**
 * Ownership rules for instances: an instance ID written into status is no proof of ownership.
 * An object whose status names an instance it did not launch never tags, untags or terminates
 * it, and is refused (NotOwned); deleting the object terminates only its own instance and reports
 * the other one Released.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RunInstancesCommand } from "@aws-sdk/client-ec2";
import { ready } from "../support/reconciler-env.ts";
import { Ec2Env, tagMap } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance ownership: a forged instance ID takes nothing", () => {
  const env = new Ec2Env({ ns: "team-a" }).hooks();

  it("refuses an instance named only by a forged status, and terminates only its own on delete", async () => {
    const run = await env.ec2().send(
      new RunInstancesCommand({
        ImageId: "ami-1e749f67",
        InstanceType: "t3.micro",
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: "Name", Value: "payroll-db" }] }],
      }),
    );
    const victimId = run.Instances?.[0]?.InstanceId ?? "";
    assert.notEqual(victimId, "");

    const created = await env.create("forger", { tags: { team: "a" } });
    const own = await env.waitReady("forger", 60_000);
    const ownId = own.status?.instanceId ?? "";
    assert.notEqual(ownId, victimId);

    // A tenant with write on status names the victim's instance as its own.
    const path = `${env.base}/forger`;
    const cur = (await env.cp.request("GET", path)).body as typeof own;
    const res = await env.cp.request("PUT", `${path}/status`, {
      ...cur,
      status: { ...cur.status, instanceId: victimId },
    });
    assert.equal(res.status, 200, res.text);
    const tagCalls = (): number => env.proxy.count("CreateTags") + env.proxy.count("DeleteTags");
    const tagsBefore = tagCalls();
    const refused = await env.waitReason("forger", "NotOwned");
    assert.match(ready(refused)?.message ?? "", /recorded in status/);
    assert.equal(tagCalls(), tagsBefore, "the victim is neither tagged nor untagged");
    assert.deepEqual(tagMap((await env.instance(victimId))?.Tags), { Name: "payroll-db" });

    await env.delete("forger");
    await env.waitGone("forger", 60_000);
    assert.equal((await env.instance(victimId))?.State?.Name, "running", "the victim still runs");
    assert.deepEqual(tagMap((await env.instance(victimId))?.Tags), { Name: "payroll-db" });
    const ownState = (await env.instance(ownId))?.State?.Name;
    assert.ok(ownState === "terminated" || ownState === "shutting-down", `own instance is ${ownState}`);
    assert.equal((await env.liveInstancesOf(created.metadata.uid)).length, 0);
    // The instance the object was refused is left in place: the Event says Released, not Deleted.
    await env.waitEvent("forger", "Normal", "Released");
    const released = (await env.events("forger")).find((e) => e.reason === "Released");
    assert.match(released?.message ?? "", new RegExp(`instance ${victimId} is not owned by this object`));
    assert.equal(await env.hasEvent("forger", "Normal", "Deleted"), false, "no Deleted Event");
  });
});
