import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance, Volume } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import {
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
    assert.deepEqual(deleteOnTerminationDrift(spec, instance), [{ deviceName: "/dev/sdf", want: true }]);
    assert.deepEqual(deleteOnTerminationDrift(base, instance), []);
  });

  it("reports a volume of the spec that is not attached, naming its device", () => {
    assert.deepEqual(detachedDrift(spec, instance), [
      {
        setting: "volumeAttachment",
        description: "storage.additionalVolumes[/dev/sdg]: not attached to the instance",
        reportOnly: true,
      },
    ]);
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

  it("reports each volume setting the spec sets that differs, and nothing the spec leaves out", () => {
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
      volumeSettingsDrift(spec, instance, volumes).map((d) => [d.setting, d.description, d.reportOnly]),
      [
        ["volumeSize", "storage.rootVolume (/dev/xvda).size: 10 GiB in the spec, 12 GiB on vol-root", true],
        [
          "volumeKmsKeyId",
          `storage.additionalVolumes[/dev/sdf].kmsKeyId: ${KEY} in the spec, arn:aws:kms:us-east-1:123456789012:key/other on vol-f`,
          true,
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
