import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import type { ExportContext, ExportedResource, ListedResource } from "../common/export.ts";
import { contextFor } from "../common/testing/context.ts";
import { Ec2InstanceDriver } from "./driver.ts";
import { Ec2InstanceExporter } from "./export.ts";
import { encodeUserData } from "./launch.ts";
import type { Ec2InstanceObject } from "./model.ts";
import { FakeEc2 } from "./testing/fake-ec2.ts";

const REGION = "eu-west-1";
const PROFILE_ARN = "arn:aws:iam::123456789012:instance-profile/web";
const KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b";
const USER_DATA = "#!/bin/sh\necho 'password=s3cret' > /etc/app.conf\n";

const ctx: ExportContext = { signal: new AbortController().signal, refOf: () => undefined };

async function listAll(exporter: Ec2InstanceExporter, region = REGION): Promise<ListedResource[]> {
  const out: ListedResource[] = [];
  for await (const l of exporter.list(region, new AbortController().signal)) out.push(l);
  return out;
}

/** A fake EC2 with one instance that has a setting for every spec field, and its volumes. */
function estate(over: Partial<Instance> = {}, attributes: Partial<ReturnType<FakeEc2["attributesOf"]>> = {}) {
  const clock = new FakeClock(Date.parse("2025-01-01T00:00:00Z"));
  const ec2 = new FakeEc2(() => clock.now());
  const root = ec2.addVolume({
    Size: 16,
    VolumeType: "gp3",
    Iops: 3000,
    Throughput: 250,
    Encrypted: true,
    KmsKeyId: KEY_ARN,
    SnapshotId: "snap-0123456789abcdef0",
  });
  const data = ec2.addVolume({
    Size: 200,
    VolumeType: "io2",
    Iops: 4000,
    Encrypted: false,
    SnapshotId: "snap-0fedcba9876543210",
  });
  const logs = ec2.addVolume({ Size: 500, VolumeType: "st1", Iops: 500, Encrypted: false });
  const i = ec2.add({
    InstanceType: "t3.large",
    ImageId: "ami-0abcdef1234567890",
    SubnetId: "subnet-0123456789abcdef0",
    KeyName: "ops",
    PrivateIpAddress: "10.0.1.17",
    Placement: { AvailabilityZone: "eu-west-1b", Tenancy: "default", GroupName: "cluster-a" },
    RootDeviceName: "/dev/xvda",
    BlockDeviceMappings: [
      { DeviceName: "/dev/xvda", Ebs: { VolumeId: root.VolumeId, DeleteOnTermination: true } },
      { DeviceName: "/dev/sdg", Ebs: { VolumeId: logs.VolumeId, DeleteOnTermination: true } },
      { DeviceName: "/dev/sdf", Ebs: { VolumeId: data.VolumeId, DeleteOnTermination: false } },
    ],
    MetadataOptions: { HttpTokens: "required", HttpPutResponseHopLimit: 2, HttpEndpoint: "enabled" },
    IamInstanceProfile: { Arn: PROFILE_ARN },
    SecurityGroups: [{ GroupId: "sg-0bbbbbbbbbbbbbbbb" }, { GroupId: "sg-0aaaaaaaaaaaaaaaa" }],
    Monitoring: { State: "enabled" },
    NetworkInterfaces: [
      {
        Attachment: { DeviceIndex: 0 },
        Association: { PublicIp: "203.0.113.9", IpOwnerId: "amazon" },
      },
    ],
    ...over,
    tags: {
      Name: "web-1",
      team: "web",
      "aws:cloudformation:stack-name": "legacy",
    },
  });
  const id = i.InstanceId ?? "";
  Object.assign(ec2.attributesOf(id), {
    disableApiTermination: true,
    disableApiStop: true,
    shutdownBehavior: "terminate",
    cpuCredits: "unlimited",
    userData: encodeUserData(USER_DATA),
    ...attributes,
  });
  const exporter = new Ec2InstanceExporter(ec2.source());
  return { ec2, clock, exporter, id };
}

async function exportOne(e: ReturnType<typeof estate>): Promise<ExportedResource> {
  const listed = await listAll(e.exporter);
  const one = listed.find((l) => l.id === e.id);
  assert.ok(one, "the instance is listed");
  const read = await e.exporter.read(one, ctx);
  assert.ok(read, "the instance is read");
  return read;
}

/** The object `kubeprovisioner export` writes for `spec`, switched to Full to adopt it. */
function adopting(spec: ExportedResource["spec"]): Ec2InstanceObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "Ec2Instance",
    metadata: { name: "web-1", namespace: "default", uid: "uid-web-1", generation: 2 },
    spec: {
      desiredState: "running",
      driftPolicy: "Repair",
      changePolicy: "Auto",
      onDeletedOutOfBand: "Recreate",
      ...(spec as Partial<Ec2InstanceSpec>),
      managementPolicy: "Full",
      deletionPolicy: "Retain",
      adoptExisting: true,
    } as Ec2InstanceSpec,
    status: {},
  };
}

/**
 * The round trip: the driver finds the instance the exported spec names and plans for it; every
 * change it lists is an ownership tag.
 */
async function roundTrip(e: ReturnType<typeof estate>, read: ExportedResource) {
  const driver = new Ec2InstanceDriver({ aws: e.ec2.source(), clock: e.clock });
  const obj = adopting(read.spec);
  // The lookup by ID waits for its batch window on the fake clock.
  const lookup = driver.observe(obj, contextFor(obj, "instanceId"));
  let done = false;
  void lookup.finally(() => (done = true)).catch(() => undefined);
  for (let n = 0; n < 10 && !done; n++) await e.clock.advance(10);
  const observed = await lookup;
  assert.equal(observed.exists, true);
  assert.ok(observed.exists);
  assert.equal(observed.resource.InstanceId, e.id);
  assert.equal(observed.ownership, "foreign");
  const before = e.ec2.calls.length;
  const set = await driver.plan(obj, observed, contextFor(obj, "instanceId"));
  const mutating = e.ec2.calls.slice(before).filter((c) => !c.op.startsWith("Describe"));
  assert.deepEqual(mutating, [], "planning writes nothing");
  return set.changes;
}

function assertOnlyOwnership(changes: Awaited<ReturnType<typeof roundTrip>>): void {
  const other = changes.filter((c) => c.ownership !== true);
  assert.deepEqual(
    other.map((c) => `${c.path}: ${c.description}`),
    [],
    "the plan lists nothing but the ownership tags",
  );
  assert.deepEqual(
    changes.map((c) => c.key).sort(),
    Object.keys(
      ownershipTags({ uid: "uid-web-1", namespace: "default", name: "web-1", kind: "Ec2Instance" }),
    ).sort(),
  );
}

describe("Ec2InstanceExporter.list", () => {
  it("pages through DescribeInstances, 1000 at a time, and skips instances shutting down or terminated", async () => {
    const ec2 = new FakeEc2();
    ec2.ownerId = "210987654321";
    const live: string[] = [];
    for (let n = 0; n < 2103; n++) {
      const state =
        n % 7 === 0 ? "terminated" : n % 11 === 0 ? "shutting-down" : n % 3 === 0 ? "stopped" : "running";
      const i = ec2.add({ State: { Name: state }, tags: n % 2 === 0 ? { Name: `node-${n}` } : {} });
      if (state !== "terminated" && state !== "shutting-down") live.push(i.InstanceId ?? "");
    }
    const listed = await listAll(new Ec2InstanceExporter(ec2.source()), "cn-north-1");
    assert.deepEqual(listed.map((l) => l.id).sort(), live.sort());
    const calls = ec2.calls.filter((c) => c.op === "DescribeInstances");
    const inputs = calls.map((c) => c.input as { MaxResults?: number; NextToken?: string });
    assert.equal(calls.length, Math.ceil(live.length / 1000));
    assert.ok(inputs.every((i) => i.MaxResults === 1000));
    assert.deepEqual(
      inputs.map((i) => i.NextToken),
      [undefined, "1000"].slice(0, calls.length),
    );
    const first = listed[0];
    assert.ok(first);
    assert.equal(first.region, "cn-north-1");
    assert.equal(first.arn, `arn:aws-cn:ec2:cn-north-1:210987654321:instance/${first.id}`);
    const named = listed.find((l) => ec2.tagsOf(l.id).Name !== undefined);
    const unnamed = listed.find((l) => ec2.tagsOf(l.id).Name === undefined);
    assert.equal(named?.awsName, ec2.tagsOf(named?.id ?? "").Name);
    assert.equal(unnamed?.awsName, unnamed?.id);
  });
});

describe("Ec2InstanceExporter.read", () => {
  it("writes every setting the instance has in the spec's shape", async () => {
    const e = estate();
    const read = await exportOne(e);
    assert.equal(read.awsName, "web-1");
    assert.deepEqual(read.tags, {
      Name: "web-1",
      team: "web",
      "aws:cloudformation:stack-name": "legacy",
    });
    assert.deepEqual(read.spec, {
      region: REGION,
      instanceId: e.id,
      instanceType: "t3.large",
      amiId: "ami-0abcdef1234567890",
      desiredState: "running",
      availabilityZone: "eu-west-1b",
      subnet: "subnet-0123456789abcdef0",
      keyPair: "ops",
      securityGroups: ["sg-0aaaaaaaaaaaaaaaa", "sg-0bbbbbbbbbbbbbbbb"],
      privateIpAddress: "10.0.1.17",
      associatePublicIP: true,
      placement: { groupName: "cluster-a" },
      metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2, httpEndpoint: "enabled" },
      monitoring: true,
      disableApiTermination: true,
      disableApiStop: true,
      instanceInitiatedShutdownBehavior: "terminate",
      userData: USER_DATA,
      creditSpecification: "unlimited",
      iamInstanceProfile: PROFILE_ARN,
      storage: {
        rootVolume: {
          deviceName: "/dev/xvda",
          size: 16,
          type: "gp3",
          encrypted: true,
          kmsKeyId: KEY_ARN,
          iops: 3000,
          throughput: 250,
          deleteOnTermination: true,
        },
        additionalVolumes: [
          {
            deviceName: "/dev/sdf",
            size: 200,
            type: "io2",
            encrypted: false,
            snapshotId: "snap-0fedcba9876543210",
            iops: 4000,
            deleteOnTermination: false,
          },
          { deviceName: "/dev/sdg", size: 500, type: "st1", encrypted: false, deleteOnTermination: true },
        ],
      },
      tags: { Name: "web-1", team: "web" },
    });
    assert.deepEqual(read.omitted, []);
    assert.deepEqual(read.unresolved, []);
  });

  it("reads the profile association the instance description lags behind", async () => {
    const e = estate({ IamInstanceProfile: { Arn: "arn:aws:iam::123456789012:instance-profile/old" } });
    const instance = e.ec2.instances.get(e.id);
    assert.ok(instance);
    const read = e.exporter.read.bind(e.exporter);
    const listed = (await listAll(e.exporter)).find((l) => l.id === e.id);
    assert.ok(listed);
    // The association moved on after the listing described the instance.
    instance.IamInstanceProfile = { Arn: PROFILE_ARN };
    const out = await read(listed, ctx);
    assert.equal(out?.spec.iamInstanceProfile, PROFILE_ARN);
  });

  it("writes a stopped instance's state, and no credit option for a type without one", async () => {
    const e = estate({
      State: { Name: "stopped" },
      InstanceType: "m5.large",
      NetworkInterfaces: [{ Attachment: { DeviceIndex: 0 } }],
    });
    const read = await exportOne(e);
    assert.equal(read.spec.desiredState, "stopped");
    assert.equal(read.spec.creditSpecification, undefined);
    // A stopped instance without a public address tells nothing of how it was launched.
    assert.equal(read.spec.associatePublicIP, undefined);
    assert.equal(e.ec2.count("DescribeInstanceCreditSpecifications"), 0);
  });

  it("leaves out what the API cannot take, and says so", async () => {
    const e = estate(
      {
        BlockDeviceMappings: [],
        MetadataOptions: {
          HttpTokens: "optional",
          HttpPutResponseHopLimit: 1,
          HttpEndpoint: "enabled",
          HttpProtocolIpv6: "enabled",
        },
      },
      { userData: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe]).toString("base64") },
    );
    const windows = e.ec2.addVolume({
      Size: 30,
      VolumeType: "gp2",
      Iops: 100,
      Encrypted: false,
      tags: { backup: "daily" },
    });
    const instance = e.ec2.instances.get(e.id);
    assert.ok(instance);
    instance.BlockDeviceMappings = [
      { DeviceName: "xvdf", Ebs: { VolumeId: windows.VolumeId, DeleteOnTermination: true } },
    ];
    const read = await exportOne(e);
    assert.equal(read.spec.userData, undefined);
    assert.equal(read.spec.storage, undefined);
    assert.deepEqual(read.omitted, [
      "the metadata service's IPv6 endpoint",
      `the tags of volume ${windows.VolumeId} (spec.volumeTags is not written)`,
      "the user data, which is not UTF-8 text (compressed or binary)",
      `volume ${windows.VolumeId} on xvdf (deviceName xvdf is not a value the API accepts)`,
    ]);
    assertOnlyOwnership(await roundTrip(e, read));
  });

  it("names what a launch from the spec would not give the instance again", async () => {
    const e = estate({
      SourceDestCheck: false,
      CapacityReservationSpecification: { CapacityReservationPreference: "none" },
      MaintenanceOptions: { AutoRecovery: "disabled" },
      EnclaveOptions: { Enabled: true },
      Licenses: [
        {
          LicenseConfigurationArn:
            "arn:aws:license-manager:us-east-1:123456789012:license-configuration:lic-1",
        },
      ],
      InstanceLifecycle: "capacity-block",
    });
    const read = await exportOne(e);
    assert.deepEqual(read.omitted, [
      "Nitro Enclaves",
      "automatic recovery turned off",
      "capacity reservation preference none",
      "license configurations",
      "source/destination checking turned off",
      "the capacity-block lifecycle (a launch from the spec is on demand)",
    ]);
  });

  it("writes user data byte for byte, a byte order mark included", async () => {
    const text = "\uFEFF<powershell>Write-Host 'h\u00e9'</powershell>\r\n";
    const e = estate({}, { userData: encodeUserData(text) });
    const read = await exportOne(e);
    assert.equal(read.spec.userData, text);
    assertOnlyOwnership(await roundTrip(e, read));
  });

  it("answers undefined for an instance terminated since the listing", async () => {
    const e = estate();
    const listed = (await listAll(e.exporter)).find((l) => l.id === e.id);
    assert.ok(listed);
    const fresh = new Ec2InstanceExporter(e.ec2.source());
    const instance = e.ec2.instances.get(e.id);
    assert.ok(instance);
    instance.State = { Name: "terminated" };
    assert.equal(await fresh.read(listed, ctx), undefined);
  });
});

describe("Ec2Instance export round trip", () => {
  it("plans nothing but the ownership tags for the exported spec of a running instance", async () => {
    const e = estate();
    assertOnlyOwnership(await roundTrip(e, await exportOne(e)));
  });

  it("plans nothing but the ownership tags for a stopped instance with other settings", async () => {
    const e = estate(
      {
        State: { Name: "stopped" },
        Monitoring: { State: "disabled" },
        IamInstanceProfile: undefined,
        MetadataOptions: { HttpTokens: "optional", HttpPutResponseHopLimit: 1, HttpEndpoint: "disabled" },
      },
      {
        disableApiTermination: false,
        disableApiStop: false,
        shutdownBehavior: "stop",
        cpuCredits: "standard",
        userData: undefined,
      },
    );
    const read = await exportOne(e);
    assert.equal(read.spec.monitoring, false);
    assert.equal(read.spec.userData, undefined);
    assertOnlyOwnership(await roundTrip(e, read));
  });

  it("finds drift once the instance changes after the export", async () => {
    const e = estate();
    const read = await exportOne(e);
    const instance = e.ec2.instances.get(e.id);
    assert.ok(instance);
    instance.Monitoring = { State: "disabled" };
    e.ec2.attributesOf(e.id).userData = encodeUserData("#!/bin/sh\necho changed\n");
    const changes = await roundTrip(e, read);
    assert.deepEqual(
      changes
        .filter((c) => c.ownership !== true)
        .map((c) => c.setting)
        .sort(),
      ["monitoring", "userData"],
    );
  });
});
