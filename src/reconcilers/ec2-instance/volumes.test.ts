import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance, Volume } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import {
  deleteOnTerminationChange,
  deleteOnTerminationDrift,
  detachedDrift,
  needsVolumeRead,
  sameKmsKey,
  taggedVolumes,
  VOLUME_REPORTED_SETTINGS,
  volumeSettingsDrift,
} from "./volumes.ts";

const base: Ec2InstanceSpec = {
  instanceType: "t3.micro",
  desiredState: "running",
  amiId: "ami-1e749f67",
  region: "us-east-1",
  managementPolicy: "Full",
  deletionPolicy: "Delete",
  adoptExisting: false,
  onDeletedOutOfBand: "Recreate",
  driftPolicy: "Repair",
  changePolicy: "Auto",
};
const KEY = "1234abcd-12ab-34cd-56ef-1234567890ab";
const KEY_ARN = `arn:aws:kms:us-east-1:123456789012:key/${KEY}`;

const instance: Instance = {
  InstanceId: "i-1",
  RootDeviceName: "/dev/xvda",
  BlockDeviceMappings: [
    { DeviceName: "/dev/xvda", Ebs: { VolumeId: "vol-root", DeleteOnTermination: true } },
    { DeviceName: "/dev/sdf", Ebs: { VolumeId: "vol-f", DeleteOnTermination: false } },
    { DeviceName: "/dev/sdz", Ebs: { VolumeId: "vol-other", DeleteOnTermination: true } },
  ],
};
const spec: Ec2InstanceSpec = {
  ...base,
  storage: {
    rootVolume: { size: 10, deleteOnTermination: true },
    additionalVolumes: [
      { deviceName: "/dev/sdf", size: 20, type: "gp3", kmsKeyId: KEY, deleteOnTermination: true },
      { deviceName: "/dev/sdg", snapshotId: "snap-0123456789abcdef0" },
    ],
  },
};

describe("volume drift rules", () => {
  it("reads the volumes only for volumeTags, a kmsKeyId or a snapshotId", () => {
    assert.equal(needsVolumeRead(base), false);
    assert.equal(
      needsVolumeRead({ ...base, storage: { rootVolume: { size: 10, type: "gp3", iops: 4000 } } }),
      false,
      "sizes and types alone are launch-only",
    );
    assert.equal(needsVolumeRead({ ...base, volumeTags: {} }), true);
    assert.equal(needsVolumeRead({ ...base, storage: { rootVolume: { kmsKeyId: KEY } } }), true);
    assert.equal(needsVolumeRead(spec), true);
  });

  it("finds deleteOnTermination that differs only where the spec sets it and the volume is attached", () => {
    const drift = deleteOnTerminationDrift(spec, instance);
    assert.deepEqual(drift, [
      {
        deviceName: "/dev/sdf",
        path: "spec.storage.additionalVolumes[deviceName=/dev/sdf].deleteOnTermination",
        have: false,
        want: true,
      },
    ]);
    assert.deepEqual(drift.map(deleteOnTerminationChange), [
      {
        path: "spec.storage.additionalVolumes[deviceName=/dev/sdf].deleteOnTermination",
        setting: "volumeDeleteOnTermination",
        observed: false,
        desired: true,
        actions: ["ec2:ModifyInstanceAttribute"],
        disruption: "none",
        description: "storage.deleteOnTermination: /dev/sdf true",
        group: "volumeDeleteOnTermination",
      },
    ]);
    assert.deepEqual(deleteOnTerminationDrift(base, instance), []);
  });

  it("refuses a volume of the spec that is not attached, naming its device", () => {
    const [detached, ...rest] = detachedDrift(spec, instance);
    assert.deepEqual(rest, []);
    assert.deepEqual(
      [
        detached?.path,
        detached?.setting,
        detached?.observed,
        detached?.desired,
        detached?.actions,
        detached?.disruption,
        detached?.description,
        detached?.refusal?.reason,
        detached?.refusal?.holdsAll,
      ],
      [
        "spec.storage.additionalVolumes[deviceName=/dev/sdg]",
        "volumeAttachment",
        undefined,
        { deviceName: "/dev/sdg", snapshotId: "snap-0123456789abcdef0" },
        [],
        "refused",
        "storage.additionalVolumes[/dev/sdg]: not attached to the instance",
        "DriftNotRepaired",
        undefined,
      ],
    );
  });

  it("tags the root volume and the spec's volumes, never one attached on another device", () => {
    assert.deepEqual(
      [...taggedVolumes(spec, instance)],
      [
        ["/dev/sdf", "vol-f"],
        ["/dev/xvda", "vol-root"],
      ],
    );
  });

  it("refuses each volume setting the spec sets that differs, and nothing the spec leaves out", () => {
    const volumes: Volume[] = [
      { VolumeId: "vol-root", Size: 12, VolumeType: "gp2", Encrypted: false },
      {
        VolumeId: "vol-f",
        Size: 20,
        VolumeType: "gp3",
        Encrypted: true,
        KmsKeyId: "arn:aws:kms:us-east-1:123456789012:key/other",
      },
    ];
    assert.deepEqual(
      volumeSettingsDrift(spec, instance, volumes).map((d) => [
        d.path,
        d.setting,
        d.observed,
        d.desired,
        d.description,
        d.disruption,
        d.refusal?.reason,
      ]),
      [
        [
          "spec.storage.rootVolume.size",
          "volumeSize",
          12,
          10,
          "storage.rootVolume (/dev/xvda).size: 10 GiB in the spec, 12 GiB on vol-root",
          "refused",
          "DriftNotRepaired",
        ],
        [
          "spec.storage.additionalVolumes[deviceName=/dev/sdf].kmsKeyId",
          "volumeKmsKeyId",
          "arn:aws:kms:us-east-1:123456789012:key/other",
          KEY,
          `storage.additionalVolumes[/dev/sdf].kmsKeyId: ${KEY} in the spec, arn:aws:kms:us-east-1:123456789012:key/other on vol-f`,
          "refused",
          "DriftNotRepaired",
        ],
      ],
    );
    const same: Volume[] = [
      { VolumeId: "vol-root", Size: 10 },
      { VolumeId: "vol-f", Size: 20, VolumeType: "gp3", Encrypted: true, KmsKeyId: KEY_ARN },
    ];
    assert.deepEqual(volumeSettingsDrift(spec, instance, same), []);
    for (const d of volumeSettingsDrift(spec, instance, volumes))
      assert.ok(VOLUME_REPORTED_SETTINGS.includes(d.setting), d.setting);
  });

  it("compares a KMS key given as an ID or ARN with the key ARN EC2 reports", () => {
    assert.equal(sameKmsKey(KEY, KEY_ARN), true);
    assert.equal(sameKmsKey(KEY_ARN, KEY_ARN), true);
    assert.equal(sameKmsKey(KEY, KEY), true, "an emulator that echoes the ID");
    assert.equal(sameKmsKey(KEY, "arn:aws:kms:us-east-1:123456789012:key/x" + KEY), false);
    assert.equal(sameKmsKey(KEY_ARN, `arn:aws:kms:eu-west-1:123456789012:key/${KEY}`), false);
    assert.equal(sameKmsKey(KEY, undefined), false);
  });
});
