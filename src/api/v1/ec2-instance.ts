/**
 * The Ec2Instance kind: one EC2 instance, launched from an AMI, with its EBS volumes.
 *
 * Launch parameters are immutable: AWS cannot change the AMI, subnet, zone, key pair or block
 * devices of an instance. The instance type and the user data are mutable: applied while the
 * instance is stopped, and on a running one only when `restartForUpdate` lets the operator stop
 * and start it. Tags, the volume tags, the run state, the hardening
 * settings, the security groups, the in-place attributes (protections, shutdown behaviour,
 * monitoring, CPU credits) and the lifecycle policies are mutable. The volumes are fixed at
 * launch: their drift is reported, except deleteOnTermination, which is put back.
 */
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import * as s from "../schema/builder.ts";
import { buildCrd, type CustomResourceDefinition } from "../schema/crd.ts";
import {
  accountRefField,
  accountRefKept,
  adoptExistingField,
  commonStatusFields,
  deletionPolicyField,
  managementPolicyField,
  driftPolicyField,
  changePolicyField,
  onDeletedOutOfBandField,
  regionField,
  requiredToManage,
  tagsField,
  volumeTagsField,
  writeOutputsToField,
} from "./common.ts";
import type { API_VERSION } from "./group.ts";
import { CATEGORIES, GROUP, VERSION } from "./group.ts";
import { managementPolicyColumn, readyColumns, regionColumn, standardLabels } from "./printer.ts";

/** The burstable instance families, the only ones with a CPU credit option (`creditSpecification`). */
export const BURSTABLE_FAMILIES = Object.freeze(["t2", "t3", "t3a", "t4g"] as const);

/** Where the Ec2Instance kind is served. */
export const Ec2InstanceResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "ec2instances",
  kind: "Ec2Instance",
  namespaced: true,
});

const VOLUME_TYPES = ["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"] as const;
const ROOT_VOLUME_TYPES = ["gp2", "gp3", "io1", "io2", "standard"] as const;

/** Size limits that depend on the volume type (AWS EBS limits). */
const volumeSizeRules = [
  {
    rule: "!has(self.size) || !has(self.type) || !(self.type in ['st1', 'sc1']) || self.size >= 125",
    message: "st1 and sc1 volumes must be at least 125 GiB",
  },
  {
    rule: "!has(self.size) || !has(self.type) || !(self.type in ['io1', 'io2']) || self.size >= 4",
    message: "io1 and io2 volumes must be at least 4 GiB",
  },
  {
    rule: "!has(self.size) || !has(self.type) || self.type != 'standard' || self.size <= 1024",
    message: "standard (magnetic) volumes can be at most 1024 GiB",
  },
  {
    rule: "!has(self.size) || self.size <= 16384 || (has(self.type) && self.type == 'io2')",
    message: "volumes larger than 16384 GiB must be of type io2",
  },
];

const DEVICE_NAME_PATTERN = "^/dev/(sd|xvd)[a-z]{1,2}[0-9]{0,2}$";

/**
 * The managed settings of a volume: its KMS key and whether it outlives the instance. Set at
 * launch; drift of the key is reported (a volume is never re-encrypted in place), drift of
 * deleteOnTermination is put back.
 */
const volumeManagedSettings = {
  kmsKeyId: s.string({
    description:
      "The KMS key that encrypts the volume: a key ID, key ARN, alias name (alias/...) or alias ARN. " +
      "Implies encrypted: true (encrypted: false is refused with it); omit for the account's default " +
      "EBS key. EC2 needs the launching principal to use the key (kms:CreateGrant, kms:Decrypt, " +
      "kms:GenerateDataKeyWithoutPlaintext, kms:ReEncrypt*, kms:DescribeKey). Once launched, a " +
      "volume under another key than a key ID or ARN given here is reported " +
      "(DriftNotRepaired), never re-encrypted; an alias is not compared.",
    minLength: 1,
    maxLength: 2048,
    pattern:
      "^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias/[A-Za-z0-9/_-]{1,250}|" +
      "arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})|alias/[A-Za-z0-9/_-]{1,250}))$",
  }),
  deleteOnTermination: s.boolean({
    description:
      "Whether EC2 deletes the volume when the instance terminates. Omit for true (then not " +
      "managed after launch). Set: changed out of band, it is put back in place " +
      "(ModifyInstanceAttribute BlockDeviceMappings). false: the volume outlives the instance, " +
      "carrying the ownership tags, and the operator never deletes it.",
  }),
};
const kmsKeyRule = {
  rule: "!has(self.kmsKeyId) || !has(self.encrypted) || self.encrypted",
  message: "kmsKeyId encrypts the volume: it cannot go with encrypted: false",
  fieldPath: ".kmsKeyId",
};

/** Provisioned performance of a volume, and the types that take it (AWS EBS limits). */
const volumePerformance = {
  iops: s.integer({
    description:
      "Provisioned IOPS: io1 100-64000, io2 100-256000, gp3 3000-80000 (gp3 default 3000). Only for " +
      "io1, io2 and gp3 volumes.",
    minimum: 100,
    maximum: 256000,
  }),
  throughput: s.integer({
    description: "Throughput in MiB/s, 125-2000 (default 125). Only for gp3 volumes.",
    minimum: 125,
    maximum: 2000,
  }),
};
const volumePerformanceRules = [
  {
    rule: "!has(self.iops) || (has(self.type) && self.type in ['io1', 'io2', 'gp3'])",
    message: "iops applies to io1, io2 and gp3 volumes only",
    fieldPath: ".iops",
  },
  {
    rule: "!has(self.type) || !(self.type in ['io1', 'io2']) || has(self.iops)",
    message: "io1 and io2 volumes need iops",
    fieldPath: ".iops",
  },
  {
    rule: "!has(self.iops) || !has(self.type) || self.type != 'gp3' || self.iops >= 3000",
    message: "gp3 volumes take iops from 3000",
    fieldPath: ".iops",
  },
  {
    rule: "!has(self.throughput) || (has(self.type) && self.type == 'gp3')",
    message: "throughput applies to gp3 volumes only",
    fieldPath: ".throughput",
  },
];

const rootVolumeSchema = s.object(
  {
    size: s.integer({
      description: "Size in GiB. Omit to use the size of the AMI's root snapshot.",
      minimum: 1,
      maximum: 65536,
    }),
    type: s.enumOf(ROOT_VOLUME_TYPES, {
      description:
        "EBS volume type: gp2, gp3, io1, io2 or standard (st1 and sc1 cannot boot). Omit to use " +
        "the AMI's setting.",
    }),
    deviceName: s.string({
      description:
        "Root device name, for example /dev/xvda or /dev/sda1. Omit to use the AMI's root device " +
        "name; a name that differs from the AMI's adds an extra volume instead of resizing the root.",
      maxLength: 32,
      pattern: DEVICE_NAME_PATTERN,
    }),
    encrypted: s.boolean({
      description:
        "Encrypt the volume, with kmsKeyId or the account's default EBS key. Omit to use the account default.",
    }),
    ...volumePerformance,
    ...volumeManagedSettings,
  },
  {
    description: "The root (boot) volume.",
    validations: [...volumeSizeRules, ...volumePerformanceRules, kmsKeyRule],
  },
);

const additionalVolumeSchema = s.object(
  {
    size: s.integer({
      description: "Size in GiB; required unless snapshotId is set (then at least the snapshot's size).",
      minimum: 1,
      maximum: 65536,
    }),
    type: s.enumOf(VOLUME_TYPES, {
      description:
        "EBS volume type: gp2, gp3, io1, io2, st1, sc1 or standard. Omit for the EC2 default (gp2).",
    }),
    deviceName: s.string({
      description: "Device name the volume is attached as, for example /dev/sdf. Unique per instance.",
      required: true,
      maxLength: 32,
      pattern: DEVICE_NAME_PATTERN,
    }),
    encrypted: s.boolean({
      description:
        "Encrypt the volume, with kmsKeyId or the account's default EBS key. Omit to use the account " +
        "default (a volume from an encrypted snapshot is always encrypted).",
    }),
    ...volumePerformance,
    ...volumeManagedSettings,
    snapshotId: s.string({
      description:
        "The EBS snapshot to create the volume from (snap-...), in the instance's region. Omit for an " +
        "empty volume. Once launched, a volume on this device from another snapshot is reported " +
        "(DriftNotRepaired).",
      maxLength: 22,
      pattern: "^snap-([0-9a-f]{8}|[0-9a-f]{17})$",
    }),
  },
  {
    description:
      "A data volume created with the instance, deleted with it unless deleteOnTermination is false.",
    validations: [
      ...volumeSizeRules,
      ...volumePerformanceRules,
      kmsKeyRule,
      {
        rule: "has(self.size) || has(self.snapshotId)",
        message: "a volume needs size, or snapshotId to take the snapshot's size",
        reason: "FieldValueRequired",
        fieldPath: ".size",
      },
    ],
  },
);

/** The instance metadata service options (IMDS). */
const metadataOptionsSchema = s.object(
  {
    httpTokens: s.enumOf(["required", "optional"], {
      description: "required: IMDSv2 only (session tokens); optional: IMDSv1 also answers.",
    }),
    httpPutResponseHopLimit: s.integer({
      description: "How many network hops the token response may travel, 1-64 (2 for containers).",
      minimum: 1,
      maximum: 64,
    }),
    httpEndpoint: s.enumOf(["enabled", "disabled"], {
      description: "Whether the metadata service answers at all.",
    }),
  },
  {
    description:
      "Instance metadata service options, set at launch and repaired on drift " +
      "(ModifyInstanceMetadataOptions). An omitted option is not managed. Mutable.",
  },
);

const storageSchema = s.object(
  {
    rootVolume: rootVolumeSchema,
    additionalVolumes: s.array(additionalVolumeSchema, {
      description: "Data volumes created at launch, one per device name.",
      listType: "map",
      listMapKeys: ["deviceName"],
      maxItems: 24,
    }),
  },
  {
    description:
      "EBS volumes of the instance. Immutable: block devices are fixed at launch, and the operator " +
      "never resizes, retypes or re-encrypts a volume in place; create a new object to change them. " +
      "When the spec sets volumeTags or a volume's kmsKeyId or snapshotId, every poll also reads " +
      "the volumes (DescribeVolumes) and reports each volume setting the spec sets that differs " +
      "(size, type, encrypted, kmsKeyId, snapshotId, iops, throughput) with Synced=False, reason " +
      "DriftNotRepaired, naming the setting and the device. A volume the spec lists that is no " +
      "longer attached is reported the same way; deleteOnTermination is put back.",
    validations: [
      {
        rule:
          "!has(self.rootVolume) || !has(self.rootVolume.deviceName) || !has(self.additionalVolumes) || " +
          "self.additionalVolumes.all(v, v.deviceName != self.rootVolume.deviceName)",
        message: "an additional volume cannot use the root volume's deviceName",
      },
    ],
  },
);

/** The keys of the ConfigMap `spec.writeOutputsTo` names, with what each holds. */
export const EC2_INSTANCE_OUTPUT_KEYS = [
  ["INSTANCE_ID", "the instance ID"],
  ["PRIVATE_IP", "the primary private IPv4 address"],
  ["PUBLIC_IP", "the public IPv4 address, absent without one"],
  ["PRIVATE_DNS", "the private DNS name"],
  ["PUBLIC_DNS", "the public DNS name, absent without one"],
] as const;

/** Schema of `Ec2Instance.spec`. */
export const ec2InstanceSpecSchema = s.object(
  {
    instanceType: s.string({
      description:
        "EC2 instance type, for example t3.micro. Mutable: a change is applied " +
        "(ModifyInstanceAttribute) while the instance is stopped. On a running instance only with " +
        "restartForUpdate: true (the operator stops it, changes the type and starts it again); " +
        "otherwise Synced turns False with reason RestartRequired and nothing is touched. " +
        "Required unless managementPolicy is ObserveOnly.",
      maxLength: 32,
      pattern: "^[a-z0-9][a-z0-9-]*\\.[a-z0-9]+$",
    }),
    desiredState: s.enumOf(["running", "stopped"], {
      description:
        "Whether the instance should run: running (default) or stopped. The operator starts or " +
        "stops it (StartInstances, StopInstances) and starts it again when it was stopped out of " +
        "band. A stopped instance is Ready when desiredState is stopped. Mutable.",
      default: "running",
    }),
    restartForUpdate: s.boolean({
      description:
        "Allow the operator to stop and start a running instance to apply a change that needs it " +
        "stopped (instanceType, userData). Omit or false: such a change waits with Synced=False, reason " +
        "RestartRequired, until the instance is stopped or this is set. Mutable.",
    }),
    amiId: s.string({
      description:
        "ID of the AMI to launch, for example ami-0abcdef1234567890. Immutable. Required unless " +
        "managementPolicy is ObserveOnly.",
      maxLength: 21,
      pattern: "^ami-([0-9a-f]{8}|[0-9a-f]{17})$",
      validations: [s.immutable("amiId is immutable: an instance cannot change its AMI")],
    }),
    region: regionField("instance"),
    instanceId: s.string({
      description:
        "ID of an existing instance (i-...) to observe; allowed only with managementPolicy " +
        "ObserveOnly, and then required. Immutable once set: it may be removed, never changed. " +
        "Kept when switching to Full, it names the instance to take over (under the adoption rules).",
      maxLength: 19,
      pattern: "^i-([0-9a-f]{8}|[0-9a-f]{17})$",
      validations: [s.immutable("instanceId is immutable: observe another instance with a new object")],
    }),
    availabilityZone: s.string({
      description:
        "Availability zone, for example us-east-1a; must lie in region. Omit to let EC2 choose " +
        "(or to follow the subnet). Immutable.",
      maxLength: 32,
      pattern: "^[a-z]{2}(-[a-z0-9]+)+$",
    }),
    keyPair: s.string({
      description: "Name of an existing EC2 key pair for SSH access. Immutable.",
      minLength: 1,
      maxLength: 255,
    }),
    securityGroups: s.array(
      s.string({
        description: "A security group ID (sg-...).",
        maxLength: 20,
        pattern: "^sg-([0-9a-f]{8}|[0-9a-f]{17})$",
      }),
      {
        description:
          "IDs of the security groups to attach. Omit for the VPC's default group (then not " +
          "managed). Mutable: a different set is applied in place (ModifyInstanceAttribute Groups) " +
          "on a running or stopped instance.",
        listType: "set",
        maxItems: 16,
      },
    ),
    subnet: s.string({
      description: "ID of the subnet to launch into (subnet-...). Omit for the default VPC. Immutable.",
      maxLength: 24,
      pattern: "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$",
    }),
    userData: s.string({
      description:
        "User data as plain text (the operator base64-encodes it), at most 16384 characters. " +
        "Mutable: EC2 changes it only on a stopped instance (ModifyInstanceAttribute), so a change " +
        "on a running one waits with Synced=False, reason RestartRequired, unless restartForUpdate " +
        "lets the operator stop and start it. Read with DescribeInstanceAttribute only when set; " +
        "unset: not managed. Cloud-init runs most user data at first boot only.",
      maxLength: 16384,
    }),
    tags: tagsField("instance"),
    storage: storageSchema,
    volumeTags: volumeTagsField(),
    metadataOptions: metadataOptionsSchema,
    iamInstanceProfile: s.string({
      description:
        "IAM instance profile the instance runs with: a name or an instance-profile ARN. Set at " +
        "launch and associated again (or replaced) when it differs. Unset: not managed. Mutable.",
      minLength: 1,
      maxLength: 2048,
      pattern:
        "^(arn:aws[a-z-]*:iam::[0-9]{12}:instance-profile/[A-Za-z0-9+=,.@/_-]+|[A-Za-z0-9+=,.@_-]{1,128})$",
    }),
    associatePublicIP: s.boolean({
      description: "Give the instance a public IPv4 address. Omit to follow the subnet's setting. Immutable.",
    }),
    // In-place instance attributes: set at launch, compared on every poll, repaired in place.
    disableApiTermination: s.boolean({
      description:
        "Termination protection: while true, EC2 refuses TerminateInstances, so deleting the " +
        "object with deletionPolicy Delete is refused too until it is set false. Read with " +
        "DescribeInstanceAttribute only when set. Unset: not managed. Mutable.",
    }),
    disableApiStop: s.boolean({
      description:
        "Stop protection: while true, EC2 refuses StopInstances, so desiredState stopped and a " +
        "restart for a new instanceType wait until it is set false. Read with " +
        "DescribeInstanceAttribute only when set. Unset: not managed. Mutable.",
    }),
    instanceInitiatedShutdownBehavior: s.enumOf(["stop", "terminate"], {
      description:
        "What a shutdown from inside the instance does: stop (the EC2 default) or terminate. Read " +
        "with DescribeInstanceAttribute only when set. Unset: not managed. Mutable.",
    }),
    monitoring: s.boolean({
      description:
        "Detailed (1-minute) CloudWatch monitoring: true enables it (MonitorInstances), false " +
        "disables it (UnmonitorInstances). Unset: not managed. Mutable.",
    }),
    creditSpecification: s.enumOf(["standard", "unlimited"], {
      description:
        `CPU credit option of a burstable instance (${BURSTABLE_FAMILIES.join(", ")}): standard or unlimited ` +
        "(ModifyInstanceCreditSpecification). Read with DescribeInstanceCreditSpecifications only " +
        "when set. Unset: not managed. Mutable.",
    }),
    // Launch options fixed at creation: EC2 cannot change them on an existing instance.
    marketOptions: s.object(
      {
        marketType: s.enumOf(["spot"], {
          description: "spot: launch a one-time Spot Instance, terminated when EC2 interrupts it.",
          required: true,
        }),
        maxPrice: s.string({
          description:
            'The most to pay per instance hour, in US dollars (for example "0.05"). Omit for the ' +
            "On-Demand price.",
          maxLength: 16,
          pattern: "^[0-9]+(\\.[0-9]+)?$",
        }),
      },
      {
        description:
          "Run as a one-time Spot Instance (RunInstances InstanceMarketOptions). EC2 cannot stop a " +
          "one-time Spot Instance, so desiredState stopped and restartForUpdate are refused with " +
          "it; an instance EC2 interrupts is terminated, and onDeletedOutOfBand decides what " +
          "follows. Immutable.",
      },
    ),
    placement: s.object(
      {
        tenancy: s.enumOf(["default", "dedicated", "host"], {
          description:
            "default (shared hardware), dedicated (single-tenant hardware) or host (a Dedicated Host).",
        }),
        groupName: s.string({
          description: "Name of an existing placement group to launch into.",
          minLength: 1,
          maxLength: 255,
        }),
      },
      { description: "Tenancy and placement group of the instance, fixed at launch. Immutable." },
    ),
    privateIpAddress: s.string({
      description:
        "The primary private IPv4 address, from the range of spec.subnet (required with it). Omit " +
        "to let EC2 choose. Immutable.",
      maxLength: 15,
      pattern:
        "^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$",
    }),
    hibernation: s.boolean({
      description:
        "Launch the instance able to hibernate (HibernationOptions.Configured); needs an encrypted " +
        "root volume (storage.rootVolume.encrypted: true). Immutable.",
    }),
    managementPolicy: managementPolicyField("instance", "instanceId (in region)"),
    driftPolicy: driftPolicyField("instance"),
    changePolicy: changePolicyField("instance"),
    deletionPolicy: deletionPolicyField("instance"),
    adoptExisting: adoptExistingField(
      "An instance counts as existing when it carries this object's namespace and name ownership " +
        "tags but another UID, for example one left behind by an object deleted with deletionPolicy " +
        "Retain.",
    ),
    onDeletedOutOfBand: onDeletedOutOfBandField("instance"),
    writeOutputsTo: writeOutputsToField("instance", EC2_INSTANCE_OUTPUT_KEYS),
    accountRef: accountRefField(),
  },
  {
    description: "Desired state of the EC2 instance.",
    required: true,
    validations: [
      requiredToManage("instanceType"),
      requiredToManage("amiId"),
      {
        rule: "self.managementPolicy != 'ObserveOnly' || has(self.instanceId)",
        message: "instanceId is required with managementPolicy ObserveOnly",
        reason: "FieldValueRequired",
        fieldPath: ".instanceId",
      },
      {
        rule:
          "self.managementPolicy == 'ObserveOnly' || !has(self.instanceId) || " +
          "(oldSelf.hasValue() && has(oldSelf.value().instanceId))",
        message:
          "instanceId is allowed only with managementPolicy ObserveOnly (an object switched from " +
          "ObserveOnly to Full may keep it)",
        reason: "FieldValueForbidden",
        fieldPath: ".instanceId",
        optionalOldSelf: true,
      },
      accountRefKept,
      {
        rule: "!has(self.availabilityZone) || self.availabilityZone.matches('^' + self.region + '([a-z]|-[a-z0-9-]+)$')",
        message: "availabilityZone must be a zone of region (for example us-east-1a for us-east-1)",
        fieldPath: ".availabilityZone",
      },
      s.immutablePresence("availabilityZone", "availabilityZone is immutable: an instance cannot move"),
      s.immutablePresence("keyPair", "keyPair is immutable: it is fixed at launch"),
      {
        rule:
          "!has(self.creditSpecification) || (has(self.instanceType) && " +
          `self.instanceType.matches('^(${BURSTABLE_FAMILIES.join("|")})[.]'))`,
        message: `creditSpecification applies to burstable instance types only (${BURSTABLE_FAMILIES.join(", ")})`,
        fieldPath: ".creditSpecification",
      },
      s.immutablePresence("subnet", "subnet is immutable: an instance cannot move between subnets"),
      s.immutablePresence(
        "storage",
        "storage is immutable: block devices are fixed at launch, and volumes are not resized, " +
          "retyped or re-encrypted in place",
      ),
      s.immutablePresence("associatePublicIP", "associatePublicIP is immutable: it is fixed at launch"),
      s.immutablePresence("marketOptions", "marketOptions is immutable: EC2 fixes the market at launch"),
      s.immutablePresence(
        "placement",
        "placement is immutable: tenancy and placement group are fixed at launch",
      ),
      s.immutablePresence(
        "privateIpAddress",
        "privateIpAddress is immutable: the primary private address is fixed at launch",
      ),
      s.immutablePresence("hibernation", "hibernation is immutable: EC2 enables it at launch only"),
      {
        rule: "!has(self.marketOptions) || self.desiredState != 'stopped'",
        message: "a one-time Spot Instance cannot be stopped: marketOptions needs desiredState running",
        fieldPath: ".desiredState",
      },
      {
        rule: "!has(self.marketOptions) || !has(self.restartForUpdate) || !self.restartForUpdate",
        message: "a one-time Spot Instance cannot be stopped: marketOptions does not allow restartForUpdate",
        fieldPath: ".restartForUpdate",
      },
      {
        rule: "!has(self.privateIpAddress) || has(self.subnet)",
        message: "privateIpAddress needs subnet: the address must lie in the subnet's range",
        fieldPath: ".privateIpAddress",
      },
      {
        rule:
          "!has(self.hibernation) || !self.hibernation || (has(self.storage) && " +
          "has(self.storage.rootVolume) && has(self.storage.rootVolume.encrypted) && " +
          "self.storage.rootVolume.encrypted)",
        message: "hibernation needs an encrypted root volume: set storage.rootVolume.encrypted: true",
        fieldPath: ".hibernation",
      },
    ],
  },
);

/** Schema of `Ec2Instance.status`. */
export const ec2InstanceStatusSchema = s.object(
  {
    ...commonStatusFields(),
    instanceId: s.string({ description: "ID of the EC2 instance (i-...).", maxLength: 32 }),
    state: s.string({
      description:
        "EC2 instance state as last observed: pending, running, stopping, stopped, shutting-down " +
        "or terminated.",
      maxLength: 32,
    }),
    publicIP: s.string({ description: "Public IPv4 address, if any.", maxLength: 64 }),
    privateIP: s.string({ description: "Primary private IPv4 address.", maxLength: 64 }),
    publicDNS: s.string({ description: "Public DNS name, if any.", maxLength: 256 }),
    privateDNS: s.string({ description: "Private DNS name.", maxLength: 256 }),
    launchTime: s.dateTime({ description: "When EC2 launched the instance." }),
  },
  { description: "Observed state of the EC2 instance, written by the operator only." },
);

/** Desired state of an EC2 instance, as served (defaults applied). */
export type Ec2InstanceSpec = s.Static<typeof ec2InstanceSpecSchema>;
/** Desired state as a client may write it (defaulted fields optional). */
export type Ec2InstanceSpecInput = s.Input<typeof ec2InstanceSpecSchema>;
/** Observed state of an EC2 instance. */
export type Ec2InstanceStatus = s.Static<typeof ec2InstanceStatusSchema>;
/** EBS configuration of an instance. */
export type Ec2InstanceStorage = NonNullable<Ec2InstanceSpec["storage"]>;
/** A data volume of an instance. */
export type Ec2InstanceVolume = NonNullable<Ec2InstanceStorage["additionalVolumes"]>[number];

/** An Ec2Instance object as served by the API server. */
export interface Ec2Instance extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: "Ec2Instance";
  spec: Ec2InstanceSpec;
  status?: Ec2InstanceStatus;
}

/** The generated CustomResourceDefinition of Ec2Instance. */
export function ec2InstanceCrd(): CustomResourceDefinition {
  return buildCrd({
    resource: Ec2InstanceResource,
    singular: "ec2instance",
    shortNames: ["ec2"],
    categories: CATEGORIES,
    labels: standardLabels,
    description:
      "Ec2Instance is an EC2 instance managed by kubeprovisioner. The operator launches it with an " +
      "idempotency token and ownership tags, reports its state and addresses, keeps it running or " +
      "stopped as spec.desiredState says, repairs drift, and terminates it on deletion unless " +
      "spec.deletionPolicy is Retain.",
    spec: ec2InstanceSpecSchema,
    status: ec2InstanceStatusSchema,
    selectableFields: [".spec.region", ".spec.instanceType"],
    printerColumns: [
      {
        name: "InstanceType",
        type: "string",
        jsonPath: ".spec.instanceType",
        description: "EC2 instance type",
      },
      { name: "State", type: "string", jsonPath: ".status.state", description: "EC2 instance state" },
      { name: "PublicIP", type: "string", jsonPath: ".status.publicIP", description: "Public IPv4 address" },
      { name: "InstanceID", type: "string", jsonPath: ".status.instanceId", description: "EC2 instance ID" },
      ...readyColumns,
      regionColumn,
      {
        name: "PrivateIP",
        type: "string",
        jsonPath: ".status.privateIP",
        description: "Private IPv4",
        priority: 1,
      },
      {
        name: "Desired",
        type: "string",
        jsonPath: ".spec.desiredState",
        description: "Desired run state (spec.desiredState)",
        priority: 1,
      },
      managementPolicyColumn,
    ],
  });
}
