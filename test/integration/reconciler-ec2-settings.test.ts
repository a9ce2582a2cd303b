/**
 * Ec2Instance hardening against moto: IMDSv2 metadata options, an IAM instance profile and gp3
 * volume performance at launch; metadata drift repaired with an Updated Event; a changed profile
 * replaced in place; a no-op reconcile with every field set writes nothing, and a steady poll
 * reads one DescribeInstances and nothing else; the outputs ConfigMap holds the instance's ID and
 * addresses and follows a new public address.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AllocateAddressCommand,
  AssociateAddressCommand,
  DescribeIamInstanceProfileAssociationsCommand,
  DescribeVolumesCommand,
  ModifyInstanceMetadataOptionsCommand,
} from "@aws-sdk/client-ec2";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance settings: metadata options, instance profile, volume performance", () => {
  const env = new Ec2Env({ ns: "ec2-settings" }).hooks();

  it("launches an IMDSv2 instance with a profile and a tuned gp3 root volume", async () => {
    await env.moto.createInstanceProfile("web");
    await env.moto.createInstanceProfile("worker");
    await env.create("hardened", {
      desiredState: "running",
      restartForUpdate: true,
      metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
      iamInstanceProfile: "web",
      storage: {
        rootVolume: { deviceName: "/dev/sda1", size: 20, type: "gp3", iops: 4000, throughput: 250 },
      },
      writeOutputsTo: { configMapName: "hardened-instance" },
    });
    const obj = await env.waitReady("hardened", 60_000);
    const i = await env.instance(obj.status?.instanceId ?? "");
    assert.equal(i?.MetadataOptions?.HttpTokens, "required");
    assert.equal(i?.MetadataOptions?.HttpPutResponseHopLimit, 2);
    assert.match(i?.IamInstanceProfile?.Arn ?? "", /:instance-profile\/web$/);
    const vols = await env.ec2().send(
      new DescribeVolumesCommand({
        Filters: [{ Name: "attachment.instance-id", Values: [obj.status?.instanceId ?? ""] }],
      }),
    );
    const root = vols.Volumes?.find((v) => v.Attachments?.[0]?.Device === "/dev/sda1");
    assert.equal(root?.VolumeType, "gp3");
    assert.equal(root?.Size, 20);
    const s = obj.status;
    const present = (m: Record<string, string | undefined>): Record<string, string> =>
      Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => e[1] !== undefined));
    assert.ok(s?.instanceId && s.privateIP && s.privateDNS, "EC2 reports an ID and private address");
    assert.deepEqual(
      (await env.configMap("hardened-instance"))?.data,
      present({
        INSTANCE_ID: s.instanceId,
        PRIVATE_IP: s.privateIP,
        PUBLIC_IP: s.publicIP,
        PRIVATE_DNS: s.privateDNS,
        PUBLIC_DNS: s.publicDNS,
      }),
    );
    // moto applies iops and throughput on CreateVolume and ModifyVolume only, not to the volumes
    // RunInstances makes: the launch request's mapping is checked in launch.test.ts.
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("hardened", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("hardened", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("reads one DescribeInstances per steady poll with every field set, and nothing else", async () => {
    await env.waitPolls(1);
    const reconciles = 4;
    const calls = (await env.callsOfReconciles("hardened", reconciles, "ec2")).map((c) => c.operation);
    assert.deepEqual([...new Set(calls)], ["DescribeInstances"], "only the instance is read");
    // The only EC2 object of this file: each poll (2 s apart, snapshot age limit 1 s) reads it once.
    assert.equal(calls.length, reconciles, `${calls.length} DescribeInstances for ${reconciles} polls`);
  });

  it("puts IMDSv2 back after it was loosened, with an Updated Event", async () => {
    const id = (await env.get("hardened"))?.status?.instanceId ?? "";
    await env
      .ec2()
      .send(new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, HttpTokens: "optional" }));
    await waitFor(
      "IMDSv2 required again",
      async () => (await env.instance(id))?.MetadataOptions?.HttpTokens === "required",
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming metadataOptions",
      async () =>
        (await env.events("hardened")).some(
          (e) => e.reason === "Updated" && /metadataOptions/.test(e.message),
        ),
      15_000,
      150,
    );
  });

  it("replaces the instance profile when the spec names another", async () => {
    await env.patch("hardened", { spec: { iamInstanceProfile: "worker" } });
    const id = (await env.get("hardened"))?.status?.instanceId ?? "";
    const association = async (): Promise<string> =>
      (
        await env.ec2().send(
          new DescribeIamInstanceProfileAssociationsCommand({
            Filters: [{ Name: "instance-id", Values: [id] }],
          }),
        )
      ).IamInstanceProfileAssociations?.[0]?.IamInstanceProfile?.Arn ?? "";
    await waitFor(
      "profile replaced",
      async () => /:instance-profile\/worker$/.test(await association()),
      WAIT_MS,
      200,
    );
    await env.waitReconciles(3, "requeue_after");
    assert.equal(
      env.proxy.count("ReplaceIamInstanceProfileAssociation"),
      1,
      "replaced once, not on every poll",
    );
    assert.equal(ready(await env.get("hardened"))?.status, "True");
  });

  it("writes the new public address into the outputs ConfigMap when an Elastic IP is associated", async () => {
    const id = (await env.get("hardened"))?.status?.instanceId ?? "";
    const eip = await env.ec2().send(new AllocateAddressCommand({ Domain: "vpc" }));
    assert.ok(eip.PublicIp);
    await env.ec2().send(new AssociateAddressCommand({ InstanceId: id, AllocationId: eip.AllocationId }));
    assert.equal((await env.instance(id))?.PublicIpAddress, eip.PublicIp, "moto moved the public address");
    const cm = await env.waitConfigMap(
      "hardened-instance",
      `PUBLIC_IP ${eip.PublicIp}`,
      (c) => c?.data?.PUBLIC_IP === eip.PublicIp,
    );
    assert.equal(cm?.data?.INSTANCE_ID, id);
    // The outputs are written before the status, in the same reconcile: the status may come a moment later.
    await waitFor(
      `status.publicIP ${eip.PublicIp}`,
      async () => (await env.get("hardened"))?.status?.publicIP === eip.PublicIp,
      WAIT_MS,
      200,
    );
  });
});
