/**
 * The Ec2Instance reconciler end to end: the operator (`node src/main.ts`) against a real
 * kube-apiserver and moto, every AWS call going through a counting proxy. Lifecycle: launch with
 * the spec's parameters, a no-op second reconcile, tag drift repair, out-of-band termination
 * (Recreate and Report), delete, Retain, and a subnet launch outside us-east-1.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { startMoto, type Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";
import { Ec2Fixture, MUTATING_EC2, tagMap } from "./reconciler-ec2-fixture.ts";

const NS = "ec2-lifecycle";
const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

describe("Ec2Instance reconciler: lifecycle", () => {
  let cp: ControlPlane;
  let moto: Moto;
  let proxy: AwsProxy;
  let op: OperatorProcess;
  let f: Ec2Fixture;

  before(async () => {
    [cp, moto] = await Promise.all([startControlPlane({ installCRDs: true }), startMoto()]);
    proxy = await startAwsProxy(moto.endpoint);
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      awsEnv: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: cp.dir,
      args: ["--leader-elect=false", "--poll-interval=2s"],
    });
    f = new Ec2Fixture(cp, moto, NS, () => op);
  });
  after(async () => {
    f?.destroy();
    await op?.stop();
    await proxy?.stop();
    await moto?.stop();
    await cp?.stop();
  });

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
    assert.equal(proxy.count("RunInstances"), 1);
    const { stdout } = await cp.kubectl(["get", "ec2", "web", "-n", NS, "-o", "wide", "--no-headers"]);
    const cols = stdout.trim().split(/\s+/);
    assert.deepEqual(
      [cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]],
      ["web", "t3.micro", "running", inst?.PublicIpAddress, id, "True"],
    );
    assert.deepEqual(cols.slice(-3), ["Available", "us-east-1", inst?.PrivateIpAddress]);
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await f.waitReady("web");
    await waitFor("Created event", () => f.hasEvent("web", "Normal", "Created"), 10_000);
    await f.waitReconciles(2); // the writes of the launch have settled
    const writes = await f.sum(WRITES, "method", "rest_client_requests_total");
    const mutations = MUTATING_EC2.map((m) => proxy.count(m));
    const describes = proxy.count("DescribeInstances");
    const bumped = await f.patch("web", { metadata: { annotations: { "test/bump": "1" } } });
    await f.waitReconciles(3);
    const now = await f.get("web");
    assert.equal(now?.metadata.resourceVersion, bumped.metadata.resourceVersion, "the object was written");
    assert.equal(await f.sum(WRITES, "method", "rest_client_requests_total"), writes, "Kubernetes writes");
    assert.deepEqual(
      MUTATING_EC2.map((m) => proxy.count(m)),
      mutations,
      "mutating AWS calls",
    );
    assert.ok(proxy.count("DescribeInstances") > describes, "the instance was observed");
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
      30_000,
      200,
    );
    assert.ok(await f.hasEvent("web", "Normal", "Updated"));
    await f.patch("web", { spec: { tags: { env: "prod", team: "a" } } });
    await waitFor(
      "spec tags applied",
      async () => tagMap((await f.instance(id))?.Tags).team === "a",
      30_000,
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
      (o) => o?.status?.createAttempt === 2 && f.ready(o)?.status === "True",
    );
    assert.ok(await f.hasEvent("web", "Warning", "DeletedOutOfBand"));
    const id = obj?.status?.instanceId ?? "";
    assert.notEqual(id, oldId);
    assert.equal((await f.instance(oldId))?.State?.Name, "terminated");
    assert.equal(tagMap((await f.instance(id))?.Tags).team, "a", "relaunched with the current tags");
    assert.equal((await f.liveInstancesOf(obj?.metadata.uid ?? "")).length, 1);
  });

  it("only reports an out-of-band termination when onDeletedOutOfBand is Report", async () => {
    await f.create("reported", { onDeletedOutOfBand: "Report" });
    const obj = await f.waitReady("reported");
    const launches = proxy.count("RunInstances");
    await f.ec2().send(new TerminateInstancesCommand({ InstanceIds: [obj.status?.instanceId ?? ""] }));
    await f.waitUntil("reported", "DeletedOutOfBand", (o) => f.ready(o)?.reason === "DeletedOutOfBand");
    assert.ok(await f.hasEvent("reported", "Warning", "DeletedOutOfBand"));
    await f.waitReconciles(3); // several polls later nothing was launched
    assert.equal(proxy.count("RunInstances"), launches);
    assert.equal((await f.get("reported"))?.status?.createAttempt, 1);
  });

  it("terminates the instance on delete, then releases the object", async () => {
    const obj = await f.waitReady("web");
    const id = obj.status?.instanceId ?? "";
    const terminations = proxy.count("TerminateInstances");
    await cp.request("DELETE", `${f.base}/web`);
    await cp.request("DELETE", `${f.base}/reported`);
    await f.waitUntil("web", "object gone", (o) => o === undefined);
    assert.equal((await f.instance(id))?.State?.Name, "terminated");
    assert.equal(
      proxy.count("TerminateInstances"),
      terminations + 1,
      "the terminated 'reported' one is not terminated again",
    );
    await f.waitUntil("reported", "object gone", (o) => o === undefined);
  });

  it("leaves the instance running with deletionPolicy Retain", async () => {
    await f.create("kept", { deletionPolicy: "Retain" });
    const obj = await f.waitReady("kept");
    const terminations = proxy.count("TerminateInstances");
    await cp.request("DELETE", `${f.base}/kept`);
    await f.waitUntil("kept", "object gone", (o) => o === undefined);
    const inst = await f.instance(obj.status?.instanceId ?? "");
    assert.equal(inst?.State?.Name, "running");
    assert.equal(
      tagMap(inst?.Tags)[OWNERSHIP_TAGS.uid],
      obj.metadata.uid,
      "ownership tags kept for a later adoption",
    );
    assert.equal(proxy.count("TerminateInstances"), terminations);
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
    await cp.request("DELETE", `${f.base}/sydney`);
    await f.waitUntil("sydney", "object gone", (o) => o === undefined);
    assert.equal((await f.instance(obj.status?.instanceId ?? "", region))?.State?.Name, "terminated");
  });
});
