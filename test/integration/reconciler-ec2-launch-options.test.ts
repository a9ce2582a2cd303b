/**
 * Ec2Instance launch options fixed at creation, against moto: a one-time Spot Instance with a
 * maximum price, a tenancy and placement group, a private address in its subnet and hibernation,
 * launched in one RunInstances; a no-op reconcile writes nothing and a steady poll reads only
 * DescribeInstances (these options cost no read at rest); admission keeps them immutable on the
 * served object.
 *
 * Where moto differs from EC2: it honours the private address, marks the instance `spot` and
 * reports HibernationOptions, but ignores the maximum price, the tenancy and the placement group
 * (it does not check that the group exists); the request carrying them is checked in
 * launch.test.ts. moto never interrupts a Spot Instance, and it needs a size on a root volume
 * mapping that EC2 would size from the AMI.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CreateSubnetCommand, DescribeVpcsCommand } from "@aws-sdk/client-ec2";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance launch options fixed at creation", () => {
  const env = new Ec2Env({ ns: "ec2-launch-options" }).hooks();
  let id = "";

  it("launches a one-time Spot Instance at a fixed private address, hibernation enabled", async () => {
    const ec2 = env.ec2();
    const vpcs = await ec2.send(
      new DescribeVpcsCommand({ Filters: [{ Name: "is-default", Values: ["true"] }] }),
    );
    const subnet = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcs.Vpcs?.[0]?.VpcId, CidrBlock: "172.31.210.0/24" }),
    );
    const launches = env.proxy.count("RunInstances");
    await env.create("spot", {
      subnet: subnet.Subnet?.SubnetId ?? "",
      availabilityZone: subnet.Subnet?.AvailabilityZone ?? "",
      privateIpAddress: "172.31.210.17",
      marketOptions: { marketType: "spot", maxPrice: "0.05" },
      placement: { tenancy: "default", groupName: "options-cluster" },
      hibernation: true,
      storage: { rootVolume: { deviceName: "/dev/sda1", size: 10, encrypted: true } },
    });
    const obj = await env.waitReady("spot", 60_000);
    id = obj.status?.instanceId ?? "";
    const i = await env.instance(id);
    assert.equal(i?.PrivateIpAddress, "172.31.210.17");
    assert.equal(obj.status?.privateIP, "172.31.210.17");
    assert.equal(i?.SubnetId, subnet.Subnet?.SubnetId);
    assert.equal(i?.InstanceLifecycle, "spot");
    assert.equal(i?.HibernationOptions?.Configured, true);
    assert.equal(env.proxy.count("RunInstances") - launches, 1, "one launch");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("spot", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("spot", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("reads only DescribeInstances per steady poll", async () => {
    await env.waitPolls(1);
    const reconciles = 2;
    const calls = (await env.callsOfReconciles("spot", reconciles, "ec2")).map((c) => c.operation);
    assert.deepEqual([...new Set(calls)], ["DescribeInstances"]);
    assert.equal(calls.length, reconciles);
  });

  it("refuses changing, adding or removing a launch option on the served object", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ privateIpAddress: "172.31.210.18" }, "privateIpAddress is immutable"],
      [{ marketOptions: null }, "marketOptions is immutable"],
      [{ marketOptions: { marketType: "spot", maxPrice: "0.10" } }, "marketOptions is immutable"],
      [{ placement: { tenancy: "dedicated" } }, "placement is immutable"],
      [{ hibernation: false }, "hibernation is immutable"],
    ];
    for (const [spec, message] of cases) {
      const res = await env.cp.request(
        "PATCH",
        `/apis/compute.cloud.com/v1/namespaces/${env.ns}/ec2instances/spot`,
        { spec },
        "application/merge-patch+json",
      );
      assert.equal(res.status, 422, `${JSON.stringify(spec)}: ${res.text}`);
      assert.match(res.text, new RegExp(message), JSON.stringify(spec));
    }
    assert.equal((await env.instance(id))?.State?.Name, "running");
  });
});
