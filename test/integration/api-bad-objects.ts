/**
 * Invalid objects of every kind, each with the fragments the API server's rejection must contain.
 */
import { longString, specWith, type Kind } from "./api-fixtures.ts";

/** One object admission must reject. */
export interface BadCase {
  name: string;
  kind: Kind;
  spec: Record<string, unknown>;
  /** Fragments the API server's error message must contain. */
  expect: string[];
}

export const badCases: BadCase[] = [
  // Ec2Instance
  {
    name: "EC2 without instanceType",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceType: undefined }),
    expect: ["spec.instanceType: Required value"],
  },
  {
    name: "EC2 without amiId",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { amiId: undefined }),
    expect: ["spec.amiId: Required value", "amiId is required unless managementPolicy is ObserveOnly"],
  },
  {
    name: "EC2 naming an instanceId while managed",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceId: "i-0123456789abcdef0" }),
    expect: ["spec.instanceId: Forbidden", "instanceId is allowed only with managementPolicy ObserveOnly"],
  },
  {
    name: "EC2 observing without an instanceId",
    kind: "Ec2Instance",
    spec: { region: "us-east-1", managementPolicy: "ObserveOnly" },
    expect: ["spec.instanceId: Required value"],
  },
  {
    name: "EC2 observing a malformed instanceId",
    kind: "Ec2Instance",
    spec: { region: "us-east-1", managementPolicy: "ObserveOnly", instanceId: "web-1" },
    expect: ["spec.instanceId", "should match"],
  },
  {
    name: "an unknown management policy",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { managementPolicy: "ReadOnly" }),
    expect: ["spec.managementPolicy", "Unsupported value"],
  },
  {
    name: "S3 observing without a bucketName",
    kind: "S3Bucket",
    spec: { region: "us-east-1", managementPolicy: "ObserveOnly" },
    expect: ["spec.bucketName: Required value"],
  },
  {
    name: "EC2 with a malformed AMI ID",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { amiId: "ami-XYZ" }),
    expect: ["spec.amiId", "should match"],
  },
  {
    name: "EC2 with an upper-case region",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { region: "US-EAST-1" }),
    expect: ["spec.region", "should match"],
  },
  {
    name: "EC2 with a zone outside its region",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { availabilityZone: "eu-west-1a" }),
    expect: ["spec.availabilityZone", "availabilityZone must be a zone of region"],
  },
  {
    name: "EC2 with a security group name instead of an ID",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { securityGroups: ["default"] }),
    expect: ["spec.securityGroups[0]", "should match"],
  },
  {
    name: "EC2 with a duplicate security group",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { securityGroups: ["sg-01234567", "sg-01234567"] }),
    expect: ["spec.securityGroups[1]", "Duplicate value"],
  },
  {
    name: "EC2 with 17 security groups",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      securityGroups: Array.from({ length: 17 }, (_, i) => `sg-${String(i).padStart(8, "0")}`),
    }),
    expect: ["spec.securityGroups", "must have at most 16 items"],
  },
  {
    name: "EC2 with a CPU credit option on a type that is not burstable",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceType: "m5.large", creditSpecification: "unlimited" }),
    expect: [
      "spec.creditSpecification",
      "creditSpecification applies to burstable instance types only (t2, t3, t3a, t4g)",
    ],
  },
  {
    name: "EC2 with an unknown shutdown behaviour",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceInitiatedShutdownBehavior: "hibernate" }),
    expect: ["spec.instanceInitiatedShutdownBehavior", "Unsupported value"],
  },
  {
    name: "EC2 one-time Spot Instance that should be stopped",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { marketOptions: { marketType: "spot" }, desiredState: "stopped" }),
    expect: [
      "spec.desiredState",
      "a one-time Spot Instance cannot be stopped: marketOptions needs desiredState running",
    ],
  },
  {
    name: "EC2 one-time Spot Instance allowed to restart",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { marketOptions: { marketType: "spot" }, restartForUpdate: true }),
    expect: ["spec.restartForUpdate", "marketOptions does not allow restartForUpdate"],
  },
  {
    name: "EC2 Spot Instance with a malformed maximum price",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { marketOptions: { marketType: "spot", maxPrice: "$0.05" } }),
    expect: ["spec.marketOptions.maxPrice", "should match"],
  },
  {
    name: "EC2 with a market other than spot",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { marketOptions: { marketType: "capacity-block" } }),
    expect: ["spec.marketOptions.marketType", "Unsupported value"],
  },
  {
    name: "EC2 with a private address but no subnet",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      privateIpAddress: "10.0.0.5",
      subnet: undefined,
      associatePublicIP: undefined,
    }),
    expect: [
      "spec.privateIpAddress",
      "privateIpAddress needs subnet: the address must lie in the subnet's range",
    ],
  },
  {
    name: "EC2 with a private address that is not IPv4",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { privateIpAddress: "10.0.0.256" }),
    expect: ["spec.privateIpAddress", "should match"],
  },
  {
    name: "EC2 hibernation without an encrypted root volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { hibernation: true, storage: { rootVolume: { size: 10 } } }),
    expect: [
      "spec.hibernation",
      "hibernation needs an encrypted root volume: set storage.rootVolume.encrypted: true",
    ],
  },
  {
    name: "EC2 with an unknown tenancy",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { placement: { tenancy: "shared" } }),
    expect: ["spec.placement.tenancy", "Unsupported value"],
  },
  {
    name: "EC2 booting from an st1 root volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { rootVolume: { type: "st1", size: 500 } } }),
    expect: ["spec.storage.rootVolume.type", 'Unsupported value: "st1"'],
  },
  {
    name: "EC2 with a 100 GiB sc1 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 100, type: "sc1" }] },
    }),
    expect: ["spec.storage.additionalVolumes[0]", "st1 and sc1 volumes must be at least 125 GiB"],
  },
  {
    name: "EC2 with a 2 GiB io1 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 2, type: "io1" }] },
    }),
    expect: ["io1 and io2 volumes must be at least 4 GiB"],
  },
  {
    name: "EC2 with a 20000 GiB gp3 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 20000 }] },
    }),
    expect: ["volumes larger than 16384 GiB must be of type io2"],
  },
  {
    name: "EC2 with a 2000 GiB magnetic root volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { rootVolume: { size: 2000, type: "standard" } } }),
    expect: ["spec.storage.rootVolume", "standard (magnetic) volumes can be at most 1024 GiB"],
  },
  {
    name: "EC2 with a data volume on the root device",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: {
        rootVolume: { deviceName: "/dev/xvda" },
        additionalVolumes: [{ deviceName: "/dev/xvda", size: 5 }],
      },
    }),
    expect: ["spec.storage", "an additional volume cannot use the root volume's deviceName"],
  },
  {
    name: "EC2 with two data volumes on one device",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: {
        additionalVolumes: [
          { deviceName: "/dev/sdf", size: 5 },
          { deviceName: "/dev/sdf", size: 6 },
        ],
      },
    }),
    expect: ["spec.storage.additionalVolumes[1]", "Duplicate value"],
  },
  // Ec2Instance volumes: KMS keys, snapshots, volume tags
  {
    name: "EC2 with a KMS key on a volume that is not encrypted",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { rootVolume: { encrypted: false, kmsKeyId: "1234abcd-12ab-34cd-56ef-1234567890ab" } },
    }),
    expect: [
      "spec.storage.rootVolume.kmsKeyId",
      "kmsKeyId encrypts the volume: it cannot go with encrypted: false",
    ],
  },
  {
    name: "EC2 with a KMS key that is neither a key ID, a key ARN nor an alias",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdf", size: 5, kmsKeyId: "my-key" }] },
    }),
    expect: ["spec.storage.additionalVolumes[0].kmsKeyId", "should match"],
  },
  {
    name: "EC2 with a bad snapshot ID",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdf", snapshotId: "snapshot-1" }] },
    }),
    expect: ["spec.storage.additionalVolumes[0].snapshotId", "should match"],
  },
  {
    name: "EC2 with a data volume of neither size nor snapshot",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { additionalVolumes: [{ deviceName: "/dev/sdf" }] } }),
    expect: [
      "spec.storage.additionalVolumes[0].size: Required value",
      "a volume needs size, or snapshotId to take the snapshot's size",
    ],
  },
  {
    name: "EC2 with a volume from a snapshot sized below the type's minimum",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: {
        additionalVolumes: [{ deviceName: "/dev/sdf", snapshotId: "snap-01234567", type: "st1", size: 100 }],
      },
    }),
    expect: ["spec.storage.additionalVolumes[0]", "st1 and sc1 volumes must be at least 125 GiB"],
  },
  {
    name: "EC2 with an aws: volume tag",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { volumeTags: { "aws:backup": "x" } }),
    expect: ["spec.volumeTags", "tag keys starting with aws: are reserved by AWS"],
  },
  {
    name: "EC2 forging an ownership tag on its volumes",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { volumeTags: { "compute.cloud.com/uid": "x" } }),
    expect: ["spec.volumeTags", "reserved for the operator's ownership tags"],
  },
  {
    name: "EC2 with a data volume without a device name",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { additionalVolumes: [{ size: 5 }] } }),
    expect: ["spec.storage.additionalVolumes[0].deviceName: Required value"],
  },
  {
    name: "EC2 with a bad device name",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { additionalVolumes: [{ deviceName: "sdf", size: 5 }] } }),
    expect: ["spec.storage.additionalVolumes[0].deviceName", "should match"],
  },
  {
    name: "EC2 with 16385 characters of user data",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { userData: longString(16385) }),
    expect: ["spec.userData", "Too long"],
  },
  {
    name: "EC2 with an unknown deletion policy",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { deletionPolicy: "Orphan" }),
    expect: ["spec.deletionPolicy", 'Unsupported value: "Orphan"'],
  },
  {
    name: "EC2 with an aws: tag",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { tags: { "aws:cloudformation:stack-name": "x" } }),
    expect: ["spec.tags", "tag keys starting with aws: are reserved by AWS"],
  },
  {
    name: "EC2 forging an ownership tag",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { tags: { "compute.cloud.com/uid": "x" } }),
    expect: ["spec.tags", "reserved for the operator's ownership tags"],
  },
  {
    name: "EC2 with an unknown out-of-band policy",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { onDeletedOutOfBand: "Ignore" }),
    expect: ["spec.onDeletedOutOfBand", 'Unsupported value: "Ignore"'],
  },
  // Ec2Instance hardening
  {
    name: "EC2 with iops on a gp2 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { rootVolume: { type: "gp2", iops: 3000 } } }),
    expect: ["iops applies to io1, io2 and gp3 volumes only"],
  },
  {
    name: "EC2 with an io2 volume without iops",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdf", size: 10, type: "io2" }] },
    }),
    expect: ["io1 and io2 volumes need iops"],
  },
  {
    name: "EC2 with throughput on an io1 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { rootVolume: { type: "io1", size: 10, iops: 500, throughput: 200 } },
    }),
    expect: ["throughput applies to gp3 volumes only"],
  },
  {
    name: "EC2 with a metadata hop limit of 65",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { metadataOptions: { httpPutResponseHopLimit: 65 } }),
    expect: ["spec.metadataOptions.httpPutResponseHopLimit", "should be less than or equal to 64"],
  },
  {
    name: "EC2 with unknown metadata tokens",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { metadataOptions: { httpTokens: "sometimes" } }),
    expect: ["spec.metadataOptions.httpTokens", "Unsupported value"],
  },
  {
    name: "EC2 with a role ARN as instance profile",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { iamInstanceProfile: "arn:aws:iam::123456789012:role/web" }),
    expect: ["spec.iamInstanceProfile", "should match"],
  },
  {
    name: "EC2 with an unknown desiredState",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { desiredState: "hibernated" }),
    expect: ["spec.desiredState", "Unsupported value", '"running"', '"stopped"'],
  },
  {
    name: "EC2 with restartForUpdate that is not a boolean",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { restartForUpdate: "yes" }),
    expect: ["spec.restartForUpdate", "must be of type boolean"],
  },
  {
    name: "EC2 with a malformed instance type",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceType: "T3 Micro" }),
    expect: ["spec.instanceType", "should match"],
  },
  // Tags (shared rules, checked on S3Bucket and SqsQueue)
  {
    name: "S3 with a 257-character tag value",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { tags: { env: longString(257) } }),
    expect: ["spec.tags.env", "Too long"],
  },
  {
    name: "S3 with a 129-character tag key",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { tags: { [longString(129)]: "v" } }),
    expect: ["spec.tags", "tag keys must be 1 to 128 characters"],
  },
  {
    name: "SQS with a tag key containing #",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { tags: { "cost#center": "v" } }),
    expect: ["spec.tags", "tag keys may contain only letters, digits, spaces and _ . : / = + - @"],
  },
  {
    name: "SQS with 46 tags (45 plus the 5 ownership tags is AWS's 50)",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      tags: Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`k${i}`, "v"])),
    }),
    expect: ["spec.tags", "must have at most 45 items"],
  },
  // S3Bucket
  {
    name: "S3 with upper-case letters in the name",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "My-Bucket" }),
    expect: ["spec.bucketName", "should match"],
  },
  {
    name: "S3 with a two-character name",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "ab" }),
    expect: ["spec.bucketName", "should be at least 3 chars long"],
  },
  {
    name: "S3 with adjacent periods",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "my..bucket" }),
    expect: ["spec.bucketName", "bucketName must not contain two adjacent periods"],
  },
  {
    name: "S3 named like an IP address",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "192.168.5.4" }),
    expect: ["bucketName must not be formatted as an IP address"],
  },
  {
    name: "S3 with a reserved prefix",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "xn--bucket" }),
    expect: ["bucketName must not start with the reserved prefixes"],
  },
  {
    name: "S3 with a reserved suffix",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "assets-s3alias" }),
    expect: ["bucketName must not end with the reserved suffixes"],
  },
  {
    name: "S3 with versioning as a string",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { versioning: "yes" }),
    expect: ["spec.versioning", "must be of type boolean"],
  },
  {
    name: "S3 without region",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { region: undefined }),
    expect: ["spec.region: Required value"],
  },
  {
    name: "S3 with a KMS key but AES256 encryption",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { encryption: { algorithm: "AES256", kmsKeyId: "alias/x" } }),
    expect: ["spec.encryption.kmsKeyId", "kmsKeyId is allowed only with algorithm aws:kms"],
  },
  {
    name: "S3 with an unknown encryption algorithm",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { encryption: { algorithm: "DES" } }),
    expect: ["spec.encryption.algorithm", "Unsupported value"],
  },
  {
    name: "S3 with an unknown object ownership",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { objectOwnership: "Everyone" }),
    expect: ["spec.objectOwnership", "Unsupported value"],
  },
  {
    name: "S3 with two lifecycle rules of one id",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [
        { id: "r", expirationDays: 1 },
        { id: "r", expirationDays: 2 },
      ],
    }),
    expect: ["spec.lifecycleRules[1]", "Duplicate value"],
  },
  {
    name: "S3 with a lifecycle rule that does nothing",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { lifecycleRules: [{ id: "idle", prefix: "logs/" }] }),
    expect: ["a lifecycle rule needs at least one action"],
  },
  {
    name: "S3 with a transition after expiration",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [{ id: "r", expirationDays: 30, transitions: [{ days: 60, storageClass: "GLACIER" }] }],
    }),
    expect: ["every transition must come before expirationDays"],
  },
  {
    name: "S3 with Object Lock on an unversioned bucket",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { objectLock: { enabled: true } }),
    expect: ["spec.versioning", "objectLock.enabled needs versioning: true"],
  },
  {
    name: "S3 with a default retention but Object Lock off",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      objectLock: { enabled: false, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
    }),
    expect: ["spec.objectLock.defaultRetention", "defaultRetention needs objectLock.enabled: true"],
  },
  {
    name: "S3 with a default retention of both days and years",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      objectLock: { enabled: true, defaultRetention: { mode: "COMPLIANCE", days: 1, years: 1 } },
    }),
    expect: ["defaultRetention needs exactly one of days or years"],
  },
  {
    name: "S3 with a default retention of neither days nor years",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      objectLock: { enabled: true, defaultRetention: { mode: "COMPLIANCE" } },
    }),
    expect: ["defaultRetention needs exactly one of days or years"],
  },
  {
    name: "S3 with an unknown retention mode and a retention beyond 100 years",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      objectLock: { enabled: true, defaultRetention: { mode: "LEGAL", years: 101 } },
    }),
    expect: [
      "spec.objectLock.defaultRetention.mode: Unsupported value",
      "spec.objectLock.defaultRetention.years",
    ],
  },
  {
    name: "S3 with a lifecycle rule aborting uploads by tag",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [{ id: "r", tags: { tier: "cold" }, abortIncompleteMultipartUploadDays: 7 }],
    }),
    expect: ["abortIncompleteMultipartUploadDays cannot be combined with tags"],
  },
  {
    name: "S3 with a lifecycle rule aborting uploads by object size",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [{ id: "r", objectSizeGreaterThan: 1024, abortIncompleteMultipartUploadDays: 7 }],
    }),
    expect: [
      "abortIncompleteMultipartUploadDays cannot be combined with objectSizeGreaterThan or objectSizeLessThan",
    ],
  },
  {
    name: "S3 with a lifecycle size range that selects nothing",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [
        { id: "empty", objectSizeGreaterThan: 2048, objectSizeLessThan: 1024, expirationDays: 1 },
        { id: "equal", objectSizeGreaterThan: 1024, objectSizeLessThan: 1024, expirationDays: 1 },
      ],
    }),
    expect: [
      "spec.lifecycleRules[0].objectSizeGreaterThan",
      "spec.lifecycleRules[1].objectSizeGreaterThan",
      "objectSizeGreaterThan must be less than objectSizeLessThan",
    ],
  },
  {
    name: "S3 with lifecycle sizes out of S3's range",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [
        { id: "negative", objectSizeGreaterThan: -1, expirationDays: 1 },
        { id: "zero", objectSizeLessThan: 0, expirationDays: 1 },
        { id: "huge", objectSizeLessThan: 54_975_581_388_801, expirationDays: 1 },
      ],
    }),
    expect: [
      "spec.lifecycleRules[0].objectSizeGreaterThan: Invalid value: -1",
      "spec.lifecycleRules[1].objectSizeLessThan: Invalid value: 0",
      "spec.lifecycleRules[2].objectSizeLessThan: Invalid value: 54975581388801",
    ],
  },
  {
    name: "S3 with a lifecycle tag filter of more than 10 tags",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [
        {
          id: "many",
          expirationDays: 1,
          tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"])),
        },
      ],
    }),
    expect: ["spec.lifecycleRules[0].tags: Too many: 11"],
  },
  {
    name: "S3 with a lifecycle tag filter of an empty key",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { lifecycleRules: [{ id: "empty", expirationDays: 1, tags: { "": "v" } }] }),
    expect: ["each lifecycle tag key must be 1-128 characters"],
  },
  {
    name: "S3 with a noncurrent transition after noncurrent expiration, and one class twice",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      lifecycleRules: [
        {
          id: "late",
          noncurrentVersionExpirationDays: 30,
          noncurrentVersionTransitions: [{ noncurrentDays: 60, storageClass: "GLACIER" }],
        },
        {
          id: "twice",
          noncurrentVersionTransitions: [
            { noncurrentDays: 30, storageClass: "GLACIER" },
            { noncurrentDays: 60, storageClass: "GLACIER" },
          ],
        },
      ],
    }),
    expect: [
      "every noncurrent version transition must come before noncurrentVersionExpirationDays",
      "each storage class may appear in one noncurrent version transition only",
    ],
  },
  {
    name: "S3 with more than 100 CORS rules",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      cors: Array.from({ length: 101 }, () => ({ allowedMethods: ["GET"], allowedOrigins: ["*"] })),
    }),
    expect: ["spec.cors: Too many: 101: must have at most 100 items"],
  },
  {
    name: "S3 with a CORS rule without methods or origins",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { cors: [{ allowedMethods: [], id: "r" }] }),
    expect: ["spec.cors[0].allowedOrigins: Required value", "spec.cors[0].allowedMethods"],
  },
  {
    name: "S3 with an unknown CORS method",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { cors: [{ allowedMethods: ["PATCH"], allowedOrigins: ["*"] }] }),
    expect: ["spec.cors[0].allowedMethods[0]: Unsupported value"],
  },
  {
    name: "S3 with CORS origins and headers of two wildcards",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      cors: [
        { allowedMethods: ["GET"], allowedOrigins: ["https://*.*.example.com"], allowedHeaders: ["x-*-*"] },
      ],
    }),
    expect: [
      "each origin may contain at most one * wildcard",
      "each header may contain at most one * wildcard",
    ],
  },
  {
    name: "S3 with a website of both documents and a redirect",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      publicAccessBlock: {},
      website: { indexDocument: "index.html", redirectAllRequestsTo: { hostName: "example.com" } },
    }),
    expect: ["website needs exactly one of indexDocument or redirectAllRequestsTo"],
  },
  {
    name: "S3 with a website error document beside a redirect",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      website: { errorDocument: "404.html", redirectAllRequestsTo: { hostName: "example.com" } },
    }),
    expect: ["spec.website.errorDocument", "errorDocument is allowed only with indexDocument"],
  },
  {
    name: "S3 with a website redirect of an unknown protocol",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      website: { redirectAllRequestsTo: { hostName: "example.com", protocol: "ftp" } },
    }),
    expect: ["spec.website.redirectAllRequestsTo.protocol: Unsupported value"],
  },
  {
    name: "S3 with a website index suffix holding a slash",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { publicAccessBlock: {}, website: { indexDocument: "docs/index.html" } }),
    expect: ["spec.website.indexDocument", "should match"],
  },
  {
    name: "S3 with a website but publicAccessBlock unset",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { website: { indexDocument: "index.html" } }),
    expect: [
      "spec.website",
      "website.indexDocument needs publicAccessBlock set with blockPublicPolicy: false and restrictPublicBuckets: false",
    ],
  },
  {
    name: "S3 with a website behind Block Public Access",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      publicAccessBlock: { blockPublicPolicy: true },
      website: { indexDocument: "index.html" },
    }),
    expect: ["the website endpoint serves only objects a public bucket policy lets anyone read"],
  },
  {
    name: "S3 with a policy Version that YAML turned into a timestamp",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      policy: { Version: "2012-10-17T00:00:00Z", Statement: [{ Effect: "Allow", Action: "s3:GetObject" }] },
    }),
    expect: ["spec.policy.Version", 'Quote it: Version: "2012-10-17"'],
  },
  {
    name: "SQS with a policy Version that YAML turned into a timestamp",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      policy: {
        Version: "2008-10-17T00:00:00Z",
        Statement: [{ Effect: "Allow", Action: "sqs:SendMessage" }],
      },
    }),
    expect: [
      "spec.policy.Version",
      "Version arrived as the timestamp 2008-10-17T00:00:00Z",
      'Quote it: Version: "2008-10-17"',
    ],
  },
  {
    name: "S3 with a policy Version IAM does not know",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      policy: { Version: "2013-01-01", Statement: [{ Effect: "Allow", Action: "s3:GetObject" }] },
    }),
    expect: [
      'spec.policy.Version: Invalid value: "2013-01-01": Version must be "2012-10-17" or "2008-10-17", not "2013-01-01"',
    ],
  },
  {
    name: "S3 with a policy effect other than Allow or Deny",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      policy: { Statement: [{ Effect: "Maybe", Action: "s3:GetObject", Resource: "*" }] },
    }),
    expect: ["spec.policy.Statement[0].Effect", "Unsupported value"],
  },
  // S3 event notifications (S3Bucket notifications, SqsQueue allowS3Notifications)
  {
    name: "S3 notification with both queueRef and queueArn",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: {
        queues: [
          {
            id: "n",
            events: ["s3:ObjectCreated:*"],
            queueRef: { name: "q" },
            queueArn: "arn:aws:sqs:us-east-1:123456789012:q",
          },
        ],
      },
    }),
    expect: ["a queue notification takes exactly one of queueRef and queueArn"],
  },
  {
    name: "S3 notification without a target",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { notifications: { queues: [{ id: "n", events: ["s3:ObjectCreated:*"] }] } }),
    expect: ["a queue notification takes exactly one of queueRef and queueArn"],
  },
  {
    name: "S3 notification with an unknown event type",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: { queues: [{ id: "n", events: ["s3:ObjectMade"], queueRef: { name: "q" } }] },
    }),
    expect: ["spec.notifications.queues[0].events[0]", "Unsupported value"],
  },
  {
    name: "S3 notification without events",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: { queues: [{ id: "n", events: [], queueRef: { name: "q" } }] },
    }),
    expect: ["spec.notifications.queues[0].events"],
  },
  {
    name: "S3 notification with a repeated event type",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: {
        queues: [{ id: "n", events: ["s3:ObjectCreated:*", "s3:ObjectCreated:*"], queueRef: { name: "q" } }],
      },
    }),
    expect: ["spec.notifications.queues[0].events[1]", "Duplicate value"],
  },
  {
    name: "S3 notifications with a repeated id",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: {
        queues: [
          { id: "n", events: ["s3:ObjectCreated:*"], queueRef: { name: "q" } },
          { id: "n", events: ["s3:ObjectRemoved:*"], queueRef: { name: "q" } },
        ],
      },
    }),
    expect: ["spec.notifications.queues[1]", "Duplicate value"],
  },
  {
    name: "S3 notification to a FIFO queue ARN",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      notifications: {
        queues: [
          { id: "n", events: ["s3:ObjectCreated:*"], queueArn: "arn:aws:sqs:us-east-1:123456789012:q.fifo" },
        ],
      },
    }),
    expect: ["spec.notifications.queues[0].queueArn"],
  },
  {
    name: "SQS FIFO queue allowing S3 notifications",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      fifo: true,
      queueName: "orders.fifo",
      allowS3Notifications: [{ bucketRef: { name: "b" } }],
    }),
    expect: ["S3 sends event notifications to standard queues only: allowS3Notifications needs fifo: false"],
  },
  {
    name: "SQS queue allowing one bucket twice",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      allowS3Notifications: [{ bucketRef: { name: "b" } }, { bucketRef: { name: "b" } }],
    }),
    expect: ["each bucketRef may appear once"],
  },
  {
    name: "SQS queue allowing no bucket",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { allowS3Notifications: [] }),
    expect: ["spec.allowS3Notifications"],
  },
  // S3 replication (S3Bucket replication)
  {
    name: "S3 replication without versioning",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      replication: {
        roleArn: "arn:aws:iam::123456789012:role/r",
        rules: [{ id: "r", priority: 1, destination: { bucketArn: "arn:aws:s3:::dest" } }],
      },
    }),
    expect: ["replication requires versioning: true (S3 replicates only from versioned buckets)"],
  },
  {
    name: "S3 replication destination with both bucketRef and bucketArn",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      replication: {
        roleArn: "arn:aws:iam::123456789012:role/r",
        rules: [
          { id: "r", priority: 1, destination: { bucketRef: { name: "d" }, bucketArn: "arn:aws:s3:::dest" } },
        ],
      },
    }),
    expect: ["a replication destination takes exactly one of bucketRef and bucketArn"],
  },
  {
    name: "S3 replication rules sharing a priority",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      replication: {
        roleArn: "arn:aws:iam::123456789012:role/r",
        rules: [
          { id: "a", priority: 1, destination: { bucketArn: "arn:aws:s3:::dest" } },
          { id: "b", priority: 1, destination: { bucketArn: "arn:aws:s3:::other" } },
        ],
      },
    }),
    expect: ["each replication rule needs its own priority"],
  },
  {
    name: "S3 replication with a role that is not an IAM role ARN",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      replication: {
        roleArn: "s3-replication",
        rules: [{ id: "r", priority: 1, destination: { bucketArn: "arn:aws:s3:::dest" } }],
      },
    }),
    expect: ["spec.replication.roleArn"],
  },
  {
    name: "S3 replication without rules",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      replication: { roleArn: "arn:aws:iam::123456789012:role/r", rules: [] },
    }),
    expect: ["spec.replication.rules"],
  },
  {
    name: "S3 replication rule without a destination",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      versioning: true,
      replication: { roleArn: "arn:aws:iam::123456789012:role/r", rules: [{ id: "r", priority: 1 }] },
    }),
    expect: ["spec.replication.rules[0].destination: Required value"],
  },
  // S3 server access logging (S3Bucket logging, allowLoggingFrom)
  {
    name: "S3 logging with both targetBucketRef and targetBucket",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { logging: { targetBucketRef: { name: "logs" }, targetBucket: "logs" } }),
    expect: ["logging takes exactly one of targetBucketRef and targetBucket"],
  },
  {
    name: "S3 logging without a target",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { logging: { targetPrefix: "x/" } }),
    expect: ["logging takes exactly one of targetBucketRef and targetBucket"],
  },
  {
    name: "S3 allowing one bucket's logs twice",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", {
      allowLoggingFrom: [{ bucketRef: { name: "b" } }, { bucketRef: { name: "b" } }],
    }),
    expect: ["each bucketRef may appear once"],
  },
  {
    name: "S3 allowing logs from no bucket",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { allowLoggingFrom: [] }),
    expect: ["spec.allowLoggingFrom"],
  },
  // SqsQueue settings
  {
    name: "SQS with content-based deduplication on a standard queue",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { contentBasedDeduplication: true }),
    expect: ["spec.contentBasedDeduplication", "contentBasedDeduplication applies to FIFO queues only"],
  },
  // FIFO high throughput
  {
    name: "SQS with a deduplication scope on a standard queue",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { deduplicationScope: "messageGroup" }),
    expect: ["spec.deduplicationScope", "deduplicationScope applies to FIFO queues only"],
  },
  {
    name: "SQS with a throughput limit on a standard queue",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { fifoThroughputLimit: "perQueue" }),
    expect: ["spec.fifoThroughputLimit", "fifoThroughputLimit applies to FIFO queues only"],
  },
  {
    name: "SQS FIFO with a per-group throughput limit and queue-wide deduplication",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      queueName: "orders.fifo",
      fifo: true,
      deduplicationScope: "queue",
      fifoThroughputLimit: "perMessageGroupId",
    }),
    expect: [
      "spec.fifoThroughputLimit",
      "fifoThroughputLimit perMessageGroupId requires deduplicationScope: messageGroup",
    ],
  },
  {
    name: "SQS FIFO with a per-group throughput limit and no deduplication scope",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      queueName: "orders.fifo",
      fifo: true,
      fifoThroughputLimit: "perMessageGroupId",
    }),
    expect: ["spec.fifoThroughputLimit", "requires deduplicationScope: messageGroup"],
  },
  {
    name: "SQS FIFO with an unknown deduplication scope",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: "orders.fifo", fifo: true, deduplicationScope: "group" }),
    expect: ["spec.deduplicationScope", "Unsupported value"],
  },
  {
    name: "SQS with both kinds of encryption",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { encryption: { sqsManaged: true, kmsKeyId: "alias/k" } }),
    expect: ["encryption takes exactly one of sqsManaged: true and kmsKeyId"],
  },
  {
    name: "SQS with a data key period but no KMS key",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { encryption: { sqsManaged: true, dataKeyReusePeriodSeconds: 300 } }),
    expect: ["dataKeyReusePeriodSeconds is allowed only with kmsKeyId"],
  },
  {
    name: "SQS redrive allow policy byQueue without a source queue",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { redriveAllowPolicy: { redrivePermission: "byQueue" } }),
    expect: [
      "redrivePermission byQueue needs at least one source queue in sourceQueueRefs or sourceQueueArns",
    ],
  },
  {
    name: "SQS redrive allow policy allowAll with source queues",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      redriveAllowPolicy: { redrivePermission: "allowAll", sourceQueueRefs: [{ name: "jobs" }] },
    }),
    expect: ["sourceQueueRefs and sourceQueueArns are allowed only with redrivePermission byQueue"],
  },
  {
    name: "SQS redrive allow policy with more than 10 source queues in all",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueRefs: Array.from({ length: 6 }, (_, i) => ({ name: `ref-${i}` })),
        sourceQueueArns: Array.from({ length: 5 }, (_, i) => `arn:aws:sqs:us-east-1:123456789012:arn-${i}`),
      },
    }),
    expect: ["SQS takes at most 10 source queues in a redrive allow policy"],
  },
  {
    name: "SQS redrive allow policy with an unknown permission and a malformed ARN",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      redriveAllowPolicy: { redrivePermission: "byName", sourceQueueArns: ["jobs"] },
    }),
    expect: [
      "spec.redriveAllowPolicy.redrivePermission: Unsupported value",
      "spec.redriveAllowPolicy.sourceQueueArns[0]",
    ],
  },
  {
    name: "SQS redrive allow policy naming a source queue twice",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueRefs: [{ name: "jobs" }, { name: "jobs" }],
      },
    }),
    expect: ["each source queue may appear once in sourceQueueRefs"],
  },
  {
    name: "SQS standard queue allowing a FIFO source queue by ARN",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueArns: ["arn:aws:sqs:us-east-1:123456789012:jobs.fifo"],
      },
    }),
    expect: ["each sourceQueueArns entry must be of this queue's type"],
  },
  {
    name: "SQS with a dead-letter queue by reference and by ARN",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      deadLetterQueue: {
        queueRef: { name: "dlq" },
        targetArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
        maxReceiveCount: 3,
      },
    }),
    expect: ["deadLetterQueue takes exactly one of queueRef and targetArn"],
  },
  {
    name: "SQS standard queue with a FIFO dead-letter queue ARN",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      deadLetterQueue: { targetArn: "arn:aws:sqs:us-east-1:123456789012:dlq.fifo", maxReceiveCount: 3 },
    }),
    expect: ["a FIFO queue needs a FIFO dead-letter queue"],
  },
  {
    name: "SQS with a redrive count of 0",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { deadLetterQueue: { queueRef: { name: "dlq" }, maxReceiveCount: 0 } }),
    expect: ["spec.deadLetterQueue.maxReceiveCount", "should be greater than or equal to 1"],
  },
  {
    name: "SQS with a delay over 900 s",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { delaySeconds: 901 }),
    expect: ["spec.delaySeconds", "should be less than or equal to 900"],
  },
  // SqsQueue
  {
    name: "SQS FIFO queue without the .fifo suffix",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { fifo: true }),
    expect: ["spec.queueName", "a FIFO queue's queueName must end with .fifo"],
  },
  {
    name: "SQS standard queue with the .fifo suffix",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: "orders.fifo" }),
    expect: ["spec.queueName", "which SQS reserves for FIFO queues"],
  },
  {
    name: "SQS with a 12-hour-and-one-second visibility timeout",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { visibilityTimeoutSeconds: 43201 }),
    expect: ["spec.visibilityTimeoutSeconds", "should be less than or equal to 43200"],
  },
  {
    name: "SQS with 59 seconds of retention",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { messageRetentionSeconds: 59 }),
    expect: ["spec.messageRetentionSeconds", "should be greater than or equal to 60"],
  },
  {
    name: "SQS with more than 14 days of retention",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { messageRetentionSeconds: 1209601 }),
    expect: ["spec.messageRetentionSeconds", "should be less than or equal to 1209600"],
  },
  {
    name: "SQS with a space in the name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: "my queue" }),
    expect: ["spec.queueName", "should match"],
  },
  {
    name: "SQS with an 81-character name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: longString(81) }),
    expect: ["spec.queueName", "Too long"],
  },
  // writeOutputsTo, shared by every kind
  {
    name: "SQS writing outputs to an upper-case ConfigMap name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { writeOutputsTo: { configMapName: "Orders" } }),
    expect: ["spec.writeOutputsTo.configMapName", "configMapName must be a DNS subdomain name"],
  },
  {
    name: "S3 writing outputs to a ConfigMap name ending in a dot",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { writeOutputsTo: { configMapName: "assets." } }),
    expect: ["spec.writeOutputsTo.configMapName", "configMapName must be a DNS subdomain name"],
  },
  {
    name: "EC2 writing outputs to a 254-character ConfigMap name",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { writeOutputsTo: { configMapName: "a".repeat(254) } }),
    expect: ["spec.writeOutputsTo.configMapName", "Too long"],
  },
  {
    name: "EC2 writing outputs to neither a ConfigMap nor a Secret",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { writeOutputsTo: {} }),
    expect: ["spec.writeOutputsTo", "writeOutputsTo needs configMapName, secretName or both"],
  },
  {
    name: "SQS writing outputs to an upper-case Secret name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { writeOutputsTo: { secretName: "Orders" } }),
    expect: ["spec.writeOutputsTo.secretName", "secretName must be a DNS subdomain name"],
  },
  {
    name: "S3 writing outputs to a 254-character Secret name",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { writeOutputsTo: { configMapName: "ok", secretName: "a".repeat(254) } }),
    expect: ["spec.writeOutputsTo.secretName", "Too long"],
  },
];
