/**
 * The RunInstances request for an Ec2Instance spec: a pure function of the spec, the idempotency
 * token, the tags and (when the spec sizes the root volume without naming it) the AMI's root
 * device name. Kept free of I/O so every field mapping is unit-tested.
 */
import type {
  BlockDeviceMapping,
  HttpTokensState,
  InstanceMetadataEndpointState,
  Placement,
  RunInstancesCommandInput,
  VolumeType,
} from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec, Ec2InstanceStorage } from "../../api/v1/index.ts";
import { toEc2Tags, type TagMap } from "../../aws/ownership.ts";

/** What {@link runInstancesInput} needs besides the spec. */
export interface LaunchParams {
  /** Idempotency token, passed as ClientToken. */
  token: string;
  /** Every tag the instance carries from launch: user tags plus ownership tags. */
  tags: TagMap;
  /**
   * Every tag its volumes carry from launch when the spec sets `volumeTags` (those plus the
   * ownership tags); otherwise the volumes carry {@link tags}.
   */
  volumeTags?: TagMap | undefined;
  /**
   * Root device name of the AMI, needed only when {@link needsAmiRootDevice} says so (the spec
   * sizes, types or encrypts the root volume without naming its device).
   */
  amiRootDeviceName?: string | undefined;
}

/** Whether the root volume has settings that need a block device mapping. */
function rootVolumeHasSettings(storage: Ec2InstanceStorage | undefined): boolean {
  const root = storage?.rootVolume;
  return (
    root !== undefined &&
    (root.size !== undefined ||
      root.type !== undefined ||
      root.encrypted !== undefined ||
      root.iops !== undefined ||
      root.throughput !== undefined ||
      root.kmsKeyId !== undefined ||
      root.deleteOnTermination !== undefined)
  );
}

/**
 * Whether building the request needs the AMI's root device name (DescribeImages): the spec sets
 * root volume size, type or encryption and leaves `deviceName` out.
 */
export function needsAmiRootDevice(spec: Ec2InstanceSpec): boolean {
  return rootVolumeHasSettings(spec.storage) && spec.storage?.rootVolume?.deviceName === undefined;
}

/** Block device mappings for the spec's storage; empty when the AMI's defaults apply. */
export function blockDeviceMappings(
  storage: Ec2InstanceStorage | undefined,
  amiRootDeviceName: string | undefined,
): BlockDeviceMapping[] {
  const out: BlockDeviceMapping[] = [];
  const root = storage?.rootVolume;
  if (root !== undefined && rootVolumeHasSettings(storage)) {
    const deviceName = root.deviceName ?? amiRootDeviceName;
    if (deviceName === undefined) {
      throw new Error("the AMI's root device name is needed to map the root volume");
    }
    out.push({
      DeviceName: deviceName,
      Ebs: {
        // Unless asked for, a root volume outliving its instance is a leak nobody wanted.
        DeleteOnTermination: root.deleteOnTermination ?? true,
        ...(root.size !== undefined ? { VolumeSize: root.size } : {}),
        ...(root.type !== undefined ? { VolumeType: root.type as VolumeType } : {}),
        ...encryptionOf(root),
        ...(root.iops !== undefined ? { Iops: root.iops } : {}),
        ...(root.throughput !== undefined ? { Throughput: root.throughput } : {}),
      },
    });
  }
  for (const v of storage?.additionalVolumes ?? []) {
    out.push({
      DeviceName: v.deviceName,
      Ebs: {
        DeleteOnTermination: v.deleteOnTermination ?? true,
        ...(v.size !== undefined ? { VolumeSize: v.size } : {}),
        ...(v.snapshotId !== undefined ? { SnapshotId: v.snapshotId } : {}),
        ...(v.type !== undefined ? { VolumeType: v.type as VolumeType } : {}),
        ...encryptionOf(v),
        ...(v.iops !== undefined ? { Iops: v.iops } : {}),
        ...(v.throughput !== undefined ? { Throughput: v.throughput } : {}),
      },
    });
  }
  return out;
}

/**
 * The encryption of a volume as EC2 takes it: a KMS key implies `Encrypted: true` (EC2 refuses a
 * key without it), otherwise `encrypted` as the spec sets it.
 */
function encryptionOf(v: { encrypted?: boolean | undefined; kmsKeyId?: string | undefined }): {
  Encrypted?: boolean;
  KmsKeyId?: string;
} {
  if (v.kmsKeyId !== undefined) return { Encrypted: true, KmsKeyId: v.kmsKeyId };
  return v.encrypted !== undefined ? { Encrypted: v.encrypted } : {};
}

/**
 * The RunInstances input launching exactly one instance for `spec`.
 *
 * - `ClientToken` is the recorded token, so a retried launch returns the first instance on AWS.
 * - Tags go in `TagSpecifications` for the instance and its volumes: the instance carries its
 *   ownership tags from the first moment it exists, so a lookup by tag can always find it. The
 *   volumes carry the instance's tags, or `volumeTags` (with the ownership tags) when set.
 * - `associatePublicIP` needs a network interface specification, which in turn needs a subnet;
 *   without `subnet` the field is left to the default VPC's setting. With the interface, subnet
 *   security groups and the private address move onto it (EC2 rejects them at both levels).
 * - A one-time Spot Instance (`marketOptions`) is terminated when EC2 interrupts it.
 * - `userData` is plain text in the spec and base64 on the wire.
 * - The in-place attributes (protections, shutdown behaviour, monitoring, CPU credits) go with
 *   the launch when the spec sets them, so a new instance needs no repair.
 */
export function runInstancesInput(spec: Ec2InstanceSpec, params: LaunchParams): RunInstancesCommandInput {
  const tags = toEc2Tags(params.tags);
  const groups =
    spec.securityGroups !== undefined && spec.securityGroups.length > 0
      ? [...spec.securityGroups]
      : undefined;
  const useInterface = spec.subnet !== undefined && spec.associatePublicIP !== undefined;
  const mappings = blockDeviceMappings(spec.storage, params.amiRootDeviceName);
  const placement = placementOf(spec);
  const privateIp = spec.privateIpAddress !== undefined ? { PrivateIpAddress: spec.privateIpAddress } : {};
  return {
    ImageId: spec.amiId,
    InstanceType: spec.instanceType as RunInstancesCommandInput["InstanceType"],
    MinCount: 1,
    MaxCount: 1,
    ClientToken: params.token,
    ...(spec.keyPair !== undefined ? { KeyName: spec.keyPair } : {}),
    ...(spec.iamInstanceProfile !== undefined
      ? { IamInstanceProfile: profileSpecifier(spec.iamInstanceProfile) }
      : {}),
    ...(spec.metadataOptions !== undefined && Object.keys(spec.metadataOptions).length > 0
      ? { MetadataOptions: metadataOptionsRequest(spec.metadataOptions) }
      : {}),
    ...(placement !== undefined ? { Placement: placement } : {}),
    ...(spec.userData !== undefined ? { UserData: encodeUserData(spec.userData) } : {}),
    ...(useInterface
      ? {
          NetworkInterfaces: [
            {
              DeviceIndex: 0,
              SubnetId: spec.subnet,
              AssociatePublicIpAddress: spec.associatePublicIP,
              DeleteOnTermination: true,
              ...(groups !== undefined ? { Groups: groups } : {}),
              ...privateIp,
            },
          ],
        }
      : {
          ...(spec.subnet !== undefined ? { SubnetId: spec.subnet } : {}),
          ...privateIp,
          ...(groups !== undefined ? { SecurityGroupIds: groups } : {}),
        }),
    ...(mappings.length > 0 ? { BlockDeviceMappings: mappings } : {}),
    ...(spec.disableApiTermination !== undefined
      ? { DisableApiTermination: spec.disableApiTermination }
      : {}),
    ...(spec.disableApiStop !== undefined ? { DisableApiStop: spec.disableApiStop } : {}),
    ...(spec.instanceInitiatedShutdownBehavior !== undefined
      ? { InstanceInitiatedShutdownBehavior: spec.instanceInitiatedShutdownBehavior }
      : {}),
    ...(spec.monitoring !== undefined ? { Monitoring: { Enabled: spec.monitoring } } : {}),
    ...(spec.creditSpecification !== undefined
      ? { CreditSpecification: { CpuCredits: spec.creditSpecification } }
      : {}),
    ...(spec.marketOptions !== undefined
      ? {
          InstanceMarketOptions: {
            MarketType: spec.marketOptions.marketType,
            SpotOptions: {
              SpotInstanceType: "one-time",
              InstanceInterruptionBehavior: "terminate",
              ...(spec.marketOptions.maxPrice !== undefined ? { MaxPrice: spec.marketOptions.maxPrice } : {}),
            },
          },
        }
      : {}),
    ...(spec.hibernation !== undefined ? { HibernationOptions: { Configured: spec.hibernation } } : {}),
    TagSpecifications: [
      { ResourceType: "instance", Tags: tags },
      { ResourceType: "volume", Tags: params.volumeTags !== undefined ? toEc2Tags(params.volumeTags) : tags },
    ],
  };
}

/** The spec's plain-text user data as EC2 takes it in RunInstances: base64 of its UTF-8 bytes. */
export function encodeUserData(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/**
 * Whether the user data EC2 reports (DescribeInstanceAttribute `userData`: base64, absent when
 * the instance has none) is the spec's plain text. Compared as bytes after decoding, so padding
 * or line breaks in EC2's encoding are never drift.
 */
export function sameUserData(text: string, reported: string | undefined): boolean {
  const have = Buffer.from(reported ?? "", "base64");
  return have.equals(Buffer.from(text, "utf8"));
}

/**
 * The user data EC2 reports (DescribeInstanceAttribute `userData`, base64) as the spec writes it:
 * plain text, which {@link sameUserData} finds equal to what EC2 reports. Undefined when there
 * is none, or when its bytes are not UTF-8 text (compressed or binary user data), which the
 * spec's plain text cannot hold.
 */
export function decodeUserData(reported: string | undefined): string | undefined {
  if (reported === undefined || reported === "") return undefined;
  const bytes = Buffer.from(reported, "base64");
  if (bytes.length === 0) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The Placement of the launch: the zone, tenancy and placement group the spec sets, if any. */
function placementOf(spec: Ec2InstanceSpec): Placement | undefined {
  const p: Placement = {
    ...(spec.availabilityZone !== undefined ? { AvailabilityZone: spec.availabilityZone } : {}),
    ...(spec.placement?.tenancy !== undefined ? { Tenancy: spec.placement.tenancy } : {}),
    ...(spec.placement?.groupName !== undefined ? { GroupName: spec.placement.groupName } : {}),
  };
  return Object.keys(p).length > 0 ? p : undefined;
}

/** An instance profile as EC2 takes it: `{Arn}` for an ARN, else `{Name}`. */
export function profileSpecifier(profile: string): { Arn: string } | { Name: string } {
  return profile.startsWith("arn:") ? { Arn: profile } : { Name: profile };
}

/** The metadata options the spec sets, as RunInstances and ModifyInstanceMetadataOptions take them. */
export function metadataOptionsRequest(m: NonNullable<Ec2InstanceSpec["metadataOptions"]>): {
  HttpTokens?: HttpTokensState;
  HttpPutResponseHopLimit?: number;
  HttpEndpoint?: InstanceMetadataEndpointState;
} {
  return {
    ...(m.httpTokens !== undefined ? { HttpTokens: m.httpTokens } : {}),
    ...(m.httpPutResponseHopLimit !== undefined
      ? { HttpPutResponseHopLimit: m.httpPutResponseHopLimit }
      : {}),
    ...(m.httpEndpoint !== undefined ? { HttpEndpoint: m.httpEndpoint } : {}),
  };
}
