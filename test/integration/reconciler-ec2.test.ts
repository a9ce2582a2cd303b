/**
 * The Ec2Instance reconciler end to end: the operator (the program under test) against a real
 * kube-apiserver and moto, every AWS call going through a counting proxy. Lifecycle: launch with
 * the spec's parameters, a no-op second reconcile, tag drift repair, out-of-band termination
 * (Recreate and Report), delete, Retain, and a subnet launch outside us-east-1.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateSubnetCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeInstanceAttributeCommand,
  DescribeVolumesCommand,
  DescribeVpcsCommand,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { Ec2Env, tagMap } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance reconciler: lifecycle", () => {
  const f = new Ec2Env({ ns: "ec2-lifecycle" }).hooks();

  it("launches the instance as specified and reports Ready with the status columns filled", async () => {
    await f.create("web", {
      userData: "#!/bin/bash\necho hello\n",
      tags: { env: "prod" },
      storage: {
        rootVolume: { size: 10, type: "gp3", encrypted: true },
        additionalVolumes: [{ deviceName: "/dev/sdf", size: 20, type: "gp3" }],
      },
    });
    const obj = await f.waitReady("web");
    const id = obj.status?.instanceId ?? "";
    const inst = await f.instance(id);
    assert.equal(inst?.State?.Name, "running");
    assert.equal(obj.status?.state, "running");
    assert.equal(obj.status?.publicIP, inst?.PublicIpAddress);
    assert.equal(obj.status?.privateIP, inst?.PrivateIpAddress);
    assert.equal(obj.status?.publicDNS, inst?.PublicDnsName);
    assert.equal(obj.status?.privateDNS, inst?.PrivateDnsName);
    assert.match(obj.status?.launchTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(obj.status?.createAttempt, 1);
    assert.equal(inst?.ClientToken, obj.status?.createToken, "launched with the recorded token");
    assert.equal(inst?.InstanceType, "t3.micro");
    const tags = tagMap(inst?.Tags);
    assert.equal(tags.env, "prod");
    assert.equal(tags[OWNERSHIP_TAGS.uid], obj.metadata.uid);
    assert.equal(tags[OWNERSHIP_TAGS.name], "web");
    assert.equal(tags[OWNERSHIP_TAGS.kind], "Ec2Instance");
    const userData = await f
      .ec2()
      .send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: "userData" }));
    assert.equal(
      Buffer.from(userData.UserData?.Value ?? "", "base64").toString("utf8"),
      "#!/bin/bash\necho hello\n",
    );
    const volumes = await f
      .ec2()
      .send(new DescribeVolumesCommand({ Filters: [{ Name: "attachment.instance-id", Values: [id] }] }));
    const byDevice = new Map((volumes.Volumes ?? []).map((v) => [v.Attachments?.[0]?.Device, v]));
    assert.equal(byDevice.get("/dev/sda1")?.Size, 10, "root resized on the AMI's root device");
    assert.equal(byDevice.get("/dev/sdf")?.Size, 20);
    assert.equal(f.proxy.count("RunInstances"), 1);
    const { stdout } = await f.cp.kubectl(["get", "ec2", "web", "-n", f.ns, "-o", "wide", "--no-headers"]);
    const cols = stdout.trim().split(/\s+/);
    assert.deepEqual(
      [cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]],
      ["web", "t3.micro", "running", inst?.PublicIpAddress, id, "True"],
    );
    assert.deepEqual(cols.slice(-5), ["Available", "us-east-1", inst?.PrivateIpAddress, "running", "Full"]);
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await f.waitReady("web");
    await f.waitEvent("web", "Normal", "Created", 10_000);
    await f.waitReconciles(2); // the writes of the launch have settled
    const writes = await f.kubeWrites();
    const mutations = f.mutations();
    const describes = f.proxy.count("DescribeInstances");
    const bumped = await f.patch("web", { metadata: { annotations: { "test/bump": "1" } } });
    await f.waitReconciles(3);
    const now = await f.get("web");
    assert.equal(now?.metadata.resourceVersion, bumped.metadata.resourceVersion, "the object was written");
    assert.equal(await f.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(f.mutations(), mutations, "mutating AWS calls");
    assert.ok(f.proxy.count("DescribeInstances") > describes, "the instance was observed");
  });

  it("repairs tag drift and applies tag changes from the spec", async () => {
    const obj = await f.waitReady("web");
    const id = obj.status?.instanceId ?? "";
    await f.ec2().send(
      new CreateTagsCommand({
        Resources: [id],
        Tags: [
          { Key: "rogue", Value: "1" },
          { Key: "env", Value: "dev" },
        ],
      }),
    );
    await f.ec2().send(new DeleteTagsCommand({ Resources: [id], Tags: [{ Key: OWNERSHIP_TAGS.name }] }));
    await waitFor(
      "tag drift repaired",
      async () => {
        const t = tagMap((await f.instance(id))?.Tags);
        return t.env === "prod" && !("rogue" in t) && t[OWNERSHIP_TAGS.name] === "web";
      },
      WAIT_MS,
      200,
    );
    await f.waitEvent("web", "Normal", "Updated"); // Events are written asynchronously, after the status
    await f.patch("web", { spec: { tags: { env: "prod", team: "a" } } });
    await waitFor(
      "spec tags applied",
      async () => tagMap((await f.instance(id))?.Tags).team === "a",
      WAIT_MS,
      200,
    );
    const now = await f.get("web");
    assert.equal(now?.status?.observedGeneration, 2);
    assert.equal(now?.status?.instanceId, id, "the same instance, not a new one");
  });

  it("relaunches an instance terminated out of band, with a Warning Event", async () => {
    const before = await f.waitReady("web");
    const oldId = before.status?.instanceId ?? "";
    await f.ec2().send(new TerminateInstancesCommand({ InstanceIds: [oldId] }));
    const obj = await f.waitUntil(
      "web",
      "relaunched",
      (o) => o?.status?.createAttempt === 2 && ready(o)?.status === "True",
    );
    await f.waitEvent("web", "Warning", "DeletedOutOfBand"); // Events are written asynchronously, after the status
    const id = obj?.status?.instanceId ?? "";
    assert.notEqual(id, oldId);
    assert.equal((await f.instance(oldId))?.State?.Name, "terminated");
    assert.equal(tagMap((await f.instance(id))?.Tags).team, "a", "relaunched with the current tags");
    assert.equal((await f.liveInstancesOf(obj?.metadata.uid ?? "")).length, 1);
  });

  it("only reports an out-of-band termination when onDeletedOutOfBand is Report", async () => {
    await f.create("reported", { onDeletedOutOfBand: "Report" });
    const obj = await f.waitReady("reported");
    const launches = f.proxy.count("RunInstances");
    await f.ec2().send(new TerminateInstancesCommand({ InstanceIds: [obj.status?.instanceId ?? ""] }));
    await f.waitUntil("reported", "DeletedOutOfBand", (o) => ready(o)?.reason === "DeletedOutOfBand");
    await f.waitEvent("reported", "Warning", "DeletedOutOfBand"); // Events are written asynchronously, after the status
    await f.waitReconciles(3); // several polls later nothing was launched
    assert.equal(f.proxy.count("RunInstances"), launches);
    assert.equal((await f.get("reported"))?.status?.createAttempt, 1);
  });

  it("terminates the instance on delete, then releases the object", async () => {
    const obj = await f.waitReady("web");
    const id = obj.status?.instanceId ?? "";
    const terminations = f.proxy.count("TerminateInstances");
    await f.delete("web");
    await f.delete("reported");
    await f.waitGone("web");
    assert.equal((await f.instance(id))?.State?.Name, "terminated");
    assert.equal(
      f.proxy.count("TerminateInstances"),
      terminations + 1,
      "the terminated 'reported' one is not terminated again",
    );
    await f.waitGone("reported");
  });

  it("leaves the instance running with deletionPolicy Retain", async () => {
    await f.create("kept", { deletionPolicy: "Retain" });
    const obj = await f.waitReady("kept");
    const terminations = f.proxy.count("TerminateInstances");
    await f.delete("kept");
    await f.waitGone("kept");
    const inst = await f.instance(obj.status?.instanceId ?? "");
    assert.equal(inst?.State?.Name, "running");
    assert.equal(
      tagMap(inst?.Tags)[OWNERSHIP_TAGS.uid],
      obj.metadata.uid,
      "ownership tags kept for a later adoption",
    );
    assert.equal(f.proxy.count("TerminateInstances"), terminations);
  });

  it("launches into a subnet with a public IP in a region other than us-east-1", async () => {
    const region = "ap-southeast-2";
    const vpcs = await f
      .ec2(region)
      .send(new DescribeVpcsCommand({ Filters: [{ Name: "is-default", Values: ["true"] }] }));
    const subnet = await f
      .ec2(region)
      .send(new CreateSubnetCommand({ VpcId: vpcs.Vpcs?.[0]?.VpcId, CidrBlock: "172.31.200.0/24" }));
    const subnetId = subnet.Subnet?.SubnetId ?? "";
    await f.create("sydney", {
      region,
      subnet: subnetId,
      associatePublicIP: true,
      availabilityZone: subnet.Subnet?.AvailabilityZone,
    });
    const obj = await f.waitReady("sydney");
    const inst = await f.instance(obj.status?.instanceId ?? "", region);
    assert.equal(inst?.SubnetId, subnetId);
    assert.ok(inst?.PublicIpAddress !== undefined && inst.PublicIpAddress !== "", "public IP associated");
    assert.equal(obj.status?.publicIP, inst?.PublicIpAddress);
    assert.equal(await f.instance(obj.status?.instanceId ?? "", "us-east-1"), undefined, "not in us-east-1");
    await f.delete("sydney");
    await f.waitGone("sydney");
    assert.equal((await f.instance(obj.status?.instanceId ?? "", region))?.State?.Name, "terminated");
  });
});
