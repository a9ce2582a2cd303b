import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import { blockDeviceMappings, needsAmiRootDevice, runInstancesInput, sameUserData } from "./launch.ts";

const base: Ec2InstanceSpec = {
  instanceType: "t3.micro",
  desiredState: "running",
  amiId: "ami-1e749f67",
  region: "eu-west-1",
  managementPolicy: "Full",
  deletionPolicy: "Delete",
  adoptExisting: false,
  onDeletedOutOfBand: "Recreate",
  driftPolicy: "Repair",
  changePolicy: "Auto",
};
const tags = { Name: "web", "compute.cloud.com/uid": "u-1" };

describe("runInstancesInput", () => {
  it("launches exactly one instance with the token, tagged at launch on instance and volumes", () => {
    const input = runInstancesInput(base, { token: "u-1-1", tags });
    assert.equal(input.MinCount, 1);
    assert.equal(input.MaxCount, 1);
    assert.equal(input.ClientToken, "u-1-1");
    assert.equal(input.ImageId, "ami-1e749f67");
    assert.equal(input.InstanceType, "t3.micro");
    const expectedTags = [
      { Key: "Name", Value: "web" },
      { Key: "compute.cloud.com/uid", Value: "u-1" },
    ];
    assert.deepEqual(input.TagSpecifications, [
      { ResourceType: "instance", Tags: expectedTags },
      { ResourceType: "volume", Tags: expectedTags },
    ]);
  });

  it("leaves out every optional parameter the spec leaves out", () => {
    const input = runInstancesInput(base, { token: "t", tags });
    for (const key of [
      "KeyName",
      "Placement",
      "UserData",
      "SubnetId",
      "SecurityGroupIds",
      "NetworkInterfaces",
      "BlockDeviceMappings",
      "DisableApiTermination",
      "DisableApiStop",
      "InstanceInitiatedShutdownBehavior",
      "Monitoring",
      "CreditSpecification",
      "InstanceMarketOptions",
      "HibernationOptions",
      "PrivateIpAddress",
    ]) {
      assert.equal(key in input, false, `${key} should be absent`);
    }
  });

  it("launches with the protections, shutdown behaviour, monitoring and CPU credits the spec sets", () => {
    const input = runInstancesInput(
      {
        ...base,
        disableApiTermination: true,
        disableApiStop: false,
        instanceInitiatedShutdownBehavior: "terminate",
        monitoring: true,
        creditSpecification: "unlimited",
      },
      { token: "t", tags },
    );
    assert.equal(input.DisableApiTermination, true);
    assert.equal(input.DisableApiStop, false);
    assert.equal(input.InstanceInitiatedShutdownBehavior, "terminate");
    assert.deepEqual(input.Monitoring, { Enabled: true });
    assert.deepEqual(input.CreditSpecification, { CpuCredits: "unlimited" });
  });

  it("launches a one-time Spot Instance, with tenancy, placement group, private address and hibernation", () => {
    const input = runInstancesInput(
      {
        ...base,
        availabilityZone: "eu-west-1b",
        subnet: "subnet-01234567",
        marketOptions: { marketType: "spot", maxPrice: "0.05" },
        placement: { tenancy: "dedicated", groupName: "cluster-a" },
        privateIpAddress: "10.0.0.5",
        hibernation: true,
      },
      { token: "t", tags },
    );
    assert.deepEqual(input.InstanceMarketOptions, {
      MarketType: "spot",
      SpotOptions: {
        SpotInstanceType: "one-time",
        InstanceInterruptionBehavior: "terminate",
        MaxPrice: "0.05",
      },
    });
    assert.deepEqual(input.Placement, {
      AvailabilityZone: "eu-west-1b",
      Tenancy: "dedicated",
      GroupName: "cluster-a",
    });
    assert.equal(input.PrivateIpAddress, "10.0.0.5");
    assert.equal(input.SubnetId, "subnet-01234567");
    assert.deepEqual(input.HibernationOptions, { Configured: true });
    const spot = runInstancesInput({ ...base, marketOptions: { marketType: "spot" } }, { token: "t", tags });
    assert.equal("MaxPrice" in (spot.InstanceMarketOptions?.SpotOptions ?? {}), false, "On-Demand price cap");
  });

  it("puts the private address on the network interface when the launch uses one", () => {
    const input = runInstancesInput(
      { ...base, subnet: "subnet-01234567", associatePublicIP: true, privateIpAddress: "10.0.0.5" },
      { token: "t", tags },
    );
    assert.equal("PrivateIpAddress" in input, false);
    assert.equal(input.NetworkInterfaces?.[0]?.PrivateIpAddress, "10.0.0.5");
  });

  it("compares user data with EC2's base64 of it as bytes, so its encoding is never drift", () => {
    const text = "#!/bin/bash\necho héllo\n";
    const b64 = Buffer.from(text, "utf8").toString("base64");
    assert.equal(sameUserData(text, b64), true);
    assert.equal(sameUserData(text, `${b64.slice(0, 8)}\n${b64.slice(8)}`), true, "line breaks");
    assert.equal(sameUserData("ab", "YWI"), true, "no padding");
    assert.equal(sameUserData(text, Buffer.from("#!/bin/sh\n").toString("base64")), false);
    assert.equal(sameUserData("", undefined), true, "none reported and none wanted");
    assert.equal(sameUserData(text, undefined), false);
  });

  it("base64-encodes user data given as plain UTF-8 text", () => {
    const userData = "#!/bin/bash\necho héllo\n";
    const input = runInstancesInput({ ...base, userData }, { token: "t", tags });
    assert.equal(Buffer.from(input.UserData ?? "", "base64").toString("utf8"), userData);
  });

  it("passes key pair, zone, subnet and security groups at the top level without associatePublicIP", () => {
    const input = runInstancesInput(
      {
        ...base,
        keyPair: "ops",
        availabilityZone: "eu-west-1b",
        subnet: "subnet-0123456789abcdef0",
        securityGroups: ["sg-01234567", "sg-89abcdef"],
      },
      { token: "t", tags },
    );
    assert.equal(input.KeyName, "ops");
    assert.deepEqual(input.Placement, { AvailabilityZone: "eu-west-1b" });
    assert.equal(input.SubnetId, "subnet-0123456789abcdef0");
    assert.deepEqual(input.SecurityGroupIds, ["sg-01234567", "sg-89abcdef"]);
    assert.equal(input.NetworkInterfaces, undefined);
  });

  it("moves subnet and groups onto a network interface when associatePublicIP is set with a subnet", () => {
    for (const associatePublicIP of [true, false]) {
      const input = runInstancesInput(
        { ...base, subnet: "subnet-01234567", securityGroups: ["sg-01234567"], associatePublicIP },
        { token: "t", tags },
      );
      assert.deepEqual(input.NetworkInterfaces, [
        {
          DeviceIndex: 0,
          SubnetId: "subnet-01234567",
          AssociatePublicIpAddress: associatePublicIP,
          DeleteOnTermination: true,
          Groups: ["sg-01234567"],
        },
      ]);
      assert.equal(input.SubnetId, undefined, "EC2 rejects a subnet at both levels");
      assert.equal(input.SecurityGroupIds, undefined, "EC2 rejects groups at both levels");
    }
  });

  it("ignores associatePublicIP without a subnet (the default VPC's setting applies)", () => {
    const input = runInstancesInput({ ...base, associatePublicIP: true }, { token: "t", tags });
    assert.equal(input.NetworkInterfaces, undefined);
  });

  it("maps the root volume to the AMI's root device when the spec does not name it", () => {
    const spec: Ec2InstanceSpec = {
      ...base,
      storage: { rootVolume: { size: 10, type: "gp3", encrypted: true } },
    };
    assert.equal(needsAmiRootDevice(spec), true);
    const input = runInstancesInput(spec, { token: "t", tags, amiRootDeviceName: "/dev/sda1" });
    assert.deepEqual(input.BlockDeviceMappings, [
      {
        DeviceName: "/dev/sda1",
        Ebs: { DeleteOnTermination: true, VolumeSize: 10, VolumeType: "gp3", Encrypted: true },
      },
    ]);
  });

  it("refuses to guess a root device name it was not given", () => {
    const spec: Ec2InstanceSpec = { ...base, storage: { rootVolume: { size: 10 } } };
    assert.throws(() => runInstancesInput(spec, { token: "t", tags }), /root device name/);
  });
});

describe("blockDeviceMappings", () => {
  it("uses the spec's root device name without asking the AMI", () => {
    const spec: Ec2InstanceSpec = { ...base, storage: { rootVolume: { size: 30, deviceName: "/dev/xvda" } } };
    assert.equal(needsAmiRootDevice(spec), false);
    assert.deepEqual(blockDeviceMappings(spec.storage, undefined), [
      { DeviceName: "/dev/xvda", Ebs: { DeleteOnTermination: true, VolumeSize: 30 } },
    ]);
  });

  it("maps nothing for the root when it sets no size, type or encryption", () => {
    const spec: Ec2InstanceSpec = { ...base, storage: { rootVolume: { deviceName: "/dev/xvda" } } };
    assert.equal(needsAmiRootDevice(spec), false);
    assert.deepEqual(blockDeviceMappings(spec.storage, undefined), []);
    assert.equal(needsAmiRootDevice(base), false);
  });

  it("adds data volumes deleted with the instance, type and encryption only when given", () => {
    const storage = {
      additionalVolumes: [
        { deviceName: "/dev/sdf", size: 20, type: "gp3" as const, encrypted: true },
        { deviceName: "/dev/sdg", size: 125 },
      ],
    };
    assert.deepEqual(blockDeviceMappings(storage, undefined), [
      {
        DeviceName: "/dev/sdf",
        Ebs: { DeleteOnTermination: true, VolumeSize: 20, VolumeType: "gp3", Encrypted: true },
      },
      { DeviceName: "/dev/sdg", Ebs: { DeleteOnTermination: true, VolumeSize: 125 } },
    ]);
  });

  it("encrypts with the KMS key given, keeps a volume past termination and restores a snapshot", () => {
    const key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const spec: Ec2InstanceSpec = {
      ...base,
      storage: {
        rootVolume: { deviceName: "/dev/xvda", kmsKeyId: key },
        additionalVolumes: [
          { deviceName: "/dev/sdf", size: 20, kmsKeyId: "alias/data", deleteOnTermination: false },
          { deviceName: "/dev/sdg", snapshotId: "snap-0123456789abcdef0" },
          { deviceName: "/dev/sdh", size: 8, encrypted: false },
        ],
      },
    };
    assert.deepEqual(blockDeviceMappings(spec.storage, undefined), [
      // A key implies Encrypted: EC2 refuses KmsKeyId without it.
      { DeviceName: "/dev/xvda", Ebs: { DeleteOnTermination: true, Encrypted: true, KmsKeyId: key } },
      {
        DeviceName: "/dev/sdf",
        Ebs: { DeleteOnTermination: false, VolumeSize: 20, Encrypted: true, KmsKeyId: "alias/data" },
      },
      // No size: EC2 takes the snapshot's.
      { DeviceName: "/dev/sdg", Ebs: { DeleteOnTermination: true, SnapshotId: "snap-0123456789abcdef0" } },
      { DeviceName: "/dev/sdh", Ebs: { DeleteOnTermination: true, VolumeSize: 8, Encrypted: false } },
    ]);
  });

  it("maps a root volume that only sets deleteOnTermination, on the AMI's root device", () => {
    const spec: Ec2InstanceSpec = { ...base, storage: { rootVolume: { deleteOnTermination: false } } };
    assert.equal(needsAmiRootDevice(spec), true);
    assert.deepEqual(blockDeviceMappings(spec.storage, "/dev/sda1"), [
      { DeviceName: "/dev/sda1", Ebs: { DeleteOnTermination: false } },
    ]);
  });

  it("tags the volumes with volumeTags instead of the instance's tags when given", () => {
    const volumeTags = { team: "data", "compute.cloud.com/uid": "u-1" };
    const input = runInstancesInput(base, { token: "t", tags, volumeTags });
    assert.deepEqual(input.TagSpecifications, [
      {
        ResourceType: "instance",
        Tags: [
          { Key: "Name", Value: "web" },
          { Key: "compute.cloud.com/uid", Value: "u-1" },
        ],
      },
      {
        ResourceType: "volume",
        Tags: [
          { Key: "compute.cloud.com/uid", Value: "u-1" },
          { Key: "team", Value: "data" },
        ],
      },
    ]);
  });

  it("passes volume performance, metadata options and the instance profile at launch", () => {
    const input = runInstancesInput(
      {
        instanceType: "t3.micro",
        amiId: "ami-12345678",
        region: "us-east-1",
        iamInstanceProfile: "arn:aws:iam::123456789012:instance-profile/web",
        metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
        storage: {
          rootVolume: { deviceName: "/dev/xvda", type: "gp3", iops: 4000, throughput: 250 },
          additionalVolumes: [{ deviceName: "/dev/sdf", size: 100, type: "io2", iops: 16000 }],
        },
        managementPolicy: "Full",
        deletionPolicy: "Delete",
        adoptExisting: false,
        onDeletedOutOfBand: "Recreate",
      } as Ec2InstanceSpec,
      { token: "t", tags: {} },
    );
    assert.deepEqual(input.IamInstanceProfile, { Arn: "arn:aws:iam::123456789012:instance-profile/web" });
    assert.deepEqual(input.MetadataOptions, { HttpTokens: "required", HttpPutResponseHopLimit: 2 });
    assert.deepEqual(
      input.BlockDeviceMappings?.map((m) => [m.DeviceName, m.Ebs?.Iops, m.Ebs?.Throughput]),
      [
        ["/dev/xvda", 4000, 250],
        ["/dev/sdf", 16000, undefined],
      ],
    );
    const named = runInstancesInput(
      {
        instanceType: "t3.micro",
        amiId: "ami-12345678",
        region: "us-east-1",
        iamInstanceProfile: "web",
        managementPolicy: "Full",
        deletionPolicy: "Delete",
        adoptExisting: false,
        onDeletedOutOfBand: "Recreate",
      } as Ec2InstanceSpec,
      { token: "t", tags: {} },
    );
    assert.deepEqual(named.IamInstanceProfile, { Name: "web" });
  });
});
