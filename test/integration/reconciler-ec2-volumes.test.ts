/**
 * Ec2Instance volumes against moto: per-volume KMS key, snapshot and deleteOnTermination, and
 * volumeTags apart from the instance's tags. Set at launch (read back with DescribeInstances and
 * DescribeVolumes); a no-op reconcile writes nothing; a steady poll reads DescribeInstances and
 * one DescribeVolumes; deleteOnTermination and volume tags changed out of band are put back with
 * an Updated Event naming the setting; a detached or resized volume is reported (Synced=False,
 * DriftNotRepaired, a Warning Event naming the setting and the device), never repaired; volumeTags
 * removed from the spec are left alone; a volume kept past termination outlives the instance.
 *
 * Where moto differs from EC2:
 * - KMS: moto checks neither that the key exists nor that the operator may use it, and
 *   DescribeVolumes echoes the key as RunInstances was given it, where EC2 reports the key's ARN.
 *   The key here is a real moto KMS key, and the assertions accept its ID or ARN only.
 * - Snapshots: moto refuses a snapshot that does not exist, as EC2 does, and sizes the volume
 *   from it; it does not refuse a size below the snapshot's, which EC2 does.
 * - ModifyInstanceAttribute BlockDeviceMappings: moto applies DeleteOnTermination only, the one
 *   field the operator sends.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AttachVolumeCommand,
  CreateSnapshotCommand,
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteTagsCommand,
  DescribeVolumesCommand,
  DetachVolumeCommand,
  ModifyInstanceAttributeCommand,
  ModifyVolumeCommand,
  type Volume,
} from "@aws-sdk/client-ec2";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { Ec2Env, tagMap } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance volumes: KMS keys, snapshots, deleteOnTermination and volume tags", () => {
  const env = new Ec2Env({ ns: "ec2-volumes" }).hooks();
  let id = "";
  let key = { keyId: "", arn: "" };
  let snapshot = "";

  /** The instance's volumes by device, read straight from moto. */
  const volumes = async (): Promise<Map<string, Volume>> => {
    const out = await env
      .ec2()
      .send(new DescribeVolumesCommand({ Filters: [{ Name: "attachment.instance-id", Values: [id] }] }));
    return new Map((out.Volumes ?? []).map((v) => [v.Attachments?.[0]?.Device ?? "", v]));
  };
  const volumeId = async (device: string): Promise<string> => {
    const v = (await volumes()).get(device)?.VolumeId;
    assert.ok(v, `a volume on ${device}`);
    return v;
  };
  const keptOnTermination = async (device: string): Promise<boolean | undefined> =>
    (await env.instance(id))?.BlockDeviceMappings?.find((m) => m.DeviceName === device)?.Ebs
      ?.DeleteOnTermination;
  const event = async (type: string, reason: string, pattern: RegExp): Promise<void> => {
    await waitFor(
      `a ${type} ${reason} Event matching ${pattern}`,
      async () =>
        (await env.events("data")).some(
          (e) => e.type === type && e.reason === reason && pattern.test(e.message),
        ),
      15_000,
      150,
    );
  };

  it("launches with the KMS key, the snapshot, deleteOnTermination and the volume tags", async () => {
    key = await env.moto.createKmsKey();
    const ec2 = env.ec2();
    const source = await ec2.send(new CreateVolumeCommand({ AvailabilityZone: "us-east-1a", Size: 3 }));
    const snap = await ec2.send(new CreateSnapshotCommand({ VolumeId: source.VolumeId }));
    snapshot = snap.SnapshotId ?? "";
    await env.create("data", {
      tags: { role: "db" },
      volumeTags: { team: "data" },
      storage: {
        rootVolume: { deviceName: "/dev/sda1", size: 10, kmsKeyId: key.keyId },
        additionalVolumes: [
          { deviceName: "/dev/sdf", size: 20, type: "gp3", kmsKeyId: key.arn, deleteOnTermination: false },
          { deviceName: "/dev/sdg", snapshotId: snapshot },
        ],
      },
    });
    const obj = await env.waitReady("data", 60_000);
    id = obj.status?.instanceId ?? "";
    const vols = await volumes();
    const root = vols.get("/dev/sda1");
    const data = vols.get("/dev/sdf");
    const restored = vols.get("/dev/sdg");
    // EC2 reports the key's ARN; moto echoes what RunInstances was given.
    assert.equal(root?.Encrypted, true, "a key implies Encrypted");
    assert.ok([key.keyId, key.arn].includes(root.KmsKeyId ?? ""), `root key ${root.KmsKeyId}`);
    assert.equal(data?.Encrypted, true);
    assert.equal(data.KmsKeyId, key.arn);
    assert.equal(data.Size, 20);
    assert.equal(restored?.SnapshotId, snapshot);
    assert.equal(restored.Size, 3, "sized from the snapshot");
    assert.equal(await keptOnTermination("/dev/sda1"), true);
    assert.equal(await keptOnTermination("/dev/sdf"), false);
    assert.equal(await keptOnTermination("/dev/sdg"), true);
    for (const [device, v] of vols) {
      const tags = tagMap(v.Tags);
      assert.equal(tags.team, "data", `${device} carries volumeTags`);
      assert.equal(tags.role, undefined, `${device} does not carry the instance's tags`);
      assert.equal(tags[OWNERSHIP_TAGS.uid], obj.metadata.uid, `${device} carries the ownership tags`);
    }
    assert.equal(tagMap((await env.instance(id))?.Tags).team, undefined, "volumeTags stay off the instance");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("data", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("data", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.equal(cond(await env.get("data"), "Synced")?.status, "True", "no drift at rest");
  });

  it("reads, per steady poll, DescribeInstances and one DescribeVolumes", async () => {
    await env.waitPolls(1);
    const reconciles = 3;
    const calls = (await env.callsOfReconciles("data", reconciles, "ec2")).map((c) => c.operation);
    assert.deepEqual([...new Set(calls)].sort(), ["DescribeInstances", "DescribeVolumes"]);
    assert.equal(calls.filter((c) => c === "DescribeInstances").length, reconciles);
    assert.equal(calls.filter((c) => c === "DescribeVolumes").length, reconciles, "one volume read per poll");
  });

  it("puts back deleteOnTermination and volume tags changed out of band, with Updated Events", async () => {
    const ec2 = env.ec2();
    const sdf = await volumeId("/dev/sdf");
    await ec2.send(
      new ModifyInstanceAttributeCommand({
        InstanceId: id,
        BlockDeviceMappings: [{ DeviceName: "/dev/sdf", Ebs: { DeleteOnTermination: true } }],
      }),
    );
    await ec2.send(
      new CreateTagsCommand({
        Resources: [sdf],
        Tags: [
          { Key: "team", Value: "ops" },
          { Key: "stray", Value: "x" },
        ],
      }),
    );
    await ec2.send(new DeleteTagsCommand({ Resources: [sdf], Tags: [{ Key: OWNERSHIP_TAGS.uid }] }));
    await waitFor(
      "deleteOnTermination and the volume tags put back",
      async () => {
        const tags = tagMap((await volumes()).get("/dev/sdf")?.Tags);
        return (
          (await keptOnTermination("/dev/sdf")) === false &&
          tags.team === "data" &&
          !("stray" in tags) &&
          tags[OWNERSHIP_TAGS.uid] !== undefined
        );
      },
      WAIT_MS,
      200,
    );
    await event("Normal", "Updated", /storage\.deleteOnTermination: \/dev\/sdf false/);
    await event("Normal", "Updated", /volumeTags: \/dev\/sdf set .*team.*removed stray/);
    assert.equal(cond(await env.get("data"), "Synced")?.status, "True");
  });

  it("reports a detached volume and a resized one, naming the setting and the device, and repairs neither", async () => {
    const ec2 = env.ec2();
    const sdg = await volumeId("/dev/sdg");
    const reported = (setting: string): Promise<number> =>
      env.op.metric("kubeprovisioner_drift_reports_total", { kind: "Ec2Instance", setting });
    const detachedBefore = await reported("volumeAttachment");
    const mutations = env.mutations();
    await ec2.send(new DetachVolumeCommand({ VolumeId: sdg, InstanceId: id, Device: "/dev/sdg" }));
    const obj = await env.waitUntil(
      "data",
      "Synced=False DriftNotRepaired",
      (o) => cond(o, "Synced")?.reason === "DriftNotRepaired",
    );
    assert.match(
      cond(obj, "Synced")?.message ?? "",
      /storage\.additionalVolumes\[\/dev\/sdg\]: not attached/,
    );
    assert.equal(ready(obj)?.status, "True", "the instance is usable");
    await event("Warning", "DriftNotRepaired", /storage\.additionalVolumes\[\/dev\/sdg\]: not attached/);
    assert.equal(await reported("volumeAttachment"), detachedBefore + 1);
    // The report lasts: no more writes and no more Events while it does, and nothing is attached.
    await env.waitPolls(2);
    const writes = await env.kubeWrites();
    await env.waitPolls(2);
    assert.equal(await env.kubeWrites(), writes, "no write while the same drift lasts");
    assert.equal(await reported("volumeAttachment"), detachedBefore + 1, "counted once per report");
    assert.deepEqual(env.mutations(), mutations, "no mutating AWS call: reported, not repaired");

    await ec2.send(new AttachVolumeCommand({ VolumeId: sdg, InstanceId: id, Device: "/dev/sdg" }));
    await env.waitUntil("data", "Synced=True again", (o) => cond(o, "Synced")?.status === "True");

    await ec2.send(new ModifyVolumeCommand({ VolumeId: await volumeId("/dev/sdf"), Size: 30 }));
    const resized = await env.waitUntil(
      "data",
      "the resize reported",
      (o) => cond(o, "Synced")?.reason === "DriftNotRepaired",
    );
    assert.match(
      cond(resized, "Synced")?.message ?? "",
      /storage\.additionalVolumes\[\/dev\/sdf\]\.size: 20 GiB in the spec, 30 GiB on vol-/,
    );
    await event("Warning", "DriftNotRepaired", /storage\.additionalVolumes\[\/dev\/sdf\]\.size/);
    assert.equal((await volumes()).get("/dev/sdf")?.Size, 30, "never shrunk back");
    assert.deepEqual(env.mutations(), mutations, "no mutating AWS call");
  });

  it("refuses a change of the volumes at admission", async () => {
    await assert.rejects(
      env.patch("data", { spec: { storage: { rootVolume: { size: 12 } } } }),
      /storage is immutable/,
    );
  });

  it("leaves the volume tags alone once volumeTags is removed from the spec", async () => {
    const patched = await env.patch("data", { spec: { volumeTags: null } });
    const generation = patched.metadata.generation;
    await env.waitUntil(
      "data",
      `Synced observed generation ${generation}`,
      (o) => cond(o, "Synced")?.observedGeneration === generation,
    );
    const sdf = await volumeId("/dev/sdf");
    await env.ec2().send(new CreateTagsCommand({ Resources: [sdf], Tags: [{ Key: "team", Value: "ops" }] }));
    const tagWrites = env.proxy.count("CreateTags") + env.proxy.count("DeleteTags");
    await env.waitPolls(3);
    assert.equal(tagMap((await volumes()).get("/dev/sdf")?.Tags).team, "ops", "left as it is");
    assert.equal(env.proxy.count("CreateTags") + env.proxy.count("DeleteTags"), tagWrites, "no tag write");
  });

  it("keeps a volume with deleteOnTermination false after the instance is terminated", async () => {
    const sdf = await volumeId("/dev/sdf");
    // The root volume is deleted with the instance; /dev/sdg, attached again out of band with
    // EC2's default (deleteOnTermination false) and not managed for it, would be kept too.
    const root = await volumeId("/dev/sda1");
    await env.delete("data");
    await env.waitGone("data", 60_000);
    const out = await env
      .ec2()
      .send(new DescribeVolumesCommand({ Filters: [{ Name: "volume-id", Values: [sdf, root] }] }));
    const left = out.Volumes ?? [];
    assert.deepEqual(
      left.map((v) => v.VolumeId),
      [sdf],
      "the kept volume is left, the other deleted with the instance",
    );
    assert.equal(left[0]?.State, "available");
  });
});
