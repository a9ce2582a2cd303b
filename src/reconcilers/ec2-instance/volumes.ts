/**
 * The drift rules of an instance's EBS volumes, pure: which volumes the spec describes and on
 * which device, what DescribeInstances already says of them (attached, deleteOnTermination),
 * when the volumes themselves must be read (DescribeVolumes), and how each volume setting the spec
 * sets compares with the volume EC2 reports.
 *
 * Volumes are fixed at launch: the operator never resizes, retypes or re-encrypts one, so a
 * volume that differs from the spec in those (or is detached) is a refused change (reason
 * DriftNotRepaired): reported, never repaired. `deleteOnTermination` and `volumeTags` change in
 * place and are put back (plan.ts).
 */
import type { Instance, Volume } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import type { JsonValue } from "../../api/schema/openapi.ts";
import { listItemPath, refusedChange, type Change } from "../common/changes.ts";
import { Reason } from "../common/reasons.ts";

/** The `setting` of a repaired `volumeTags` drift. */
export const VOLUME_TAGS_SETTING = "volumeTags";
/** The `setting` of a repaired drift of a volume's `deleteOnTermination`. */
export const DELETE_ON_TERMINATION_SETTING = "volumeDeleteOnTermination";

/** The volume settings compared with DescribeVolumes, each with how EC2 reports it. */
const COMPARED = [
  { field: "size", setting: "volumeSize", have: (v: Volume) => v.Size, unit: " GiB" },
  { field: "type", setting: "volumeType", have: (v: Volume) => v.VolumeType, unit: "" },
  { field: "encrypted", setting: "volumeEncrypted", have: (v: Volume) => v.Encrypted, unit: "" },
  { field: "snapshotId", setting: "volumeSnapshotId", have: (v: Volume) => v.SnapshotId, unit: "" },
  { field: "iops", setting: "volumeIops", have: (v: Volume) => v.Iops, unit: "" },
  { field: "throughput", setting: "volumeThroughput", have: (v: Volume) => v.Throughput, unit: " MiB/s" },
] as const;

/** The `setting` of a reported drift: a volume the spec lists is not attached. */
const ATTACHED_SETTING = "volumeAttachment";
const KMS_KEY_SETTING = "volumeKmsKeyId";

/** Every `setting` a volume drift report may carry (the reports metric's label values). */
export const VOLUME_REPORTED_SETTINGS: readonly string[] = Object.freeze([
  ATTACHED_SETTING,
  ...COMPARED.map((c) => c.setting),
  KMS_KEY_SETTING,
]);

/** The settings of one volume the spec describes. */
export interface VolumeSpec {
  size?: number | undefined;
  type?: string | undefined;
  encrypted?: boolean | undefined;
  kmsKeyId?: string | undefined;
  snapshotId?: string | undefined;
  iops?: number | undefined;
  throughput?: number | undefined;
  deleteOnTermination?: boolean | undefined;
}

/** The volume types that take provisioned IOPS, and those that take a throughput (EBS; the CRD's rules). */
const IOPS_TYPES: readonly string[] = ["io1", "io2", "gp3"];
const THROUGHPUT_TYPES: readonly string[] = ["gp3"];

/**
 * The settings of `volume` (as DescribeVolumes reports it) as the spec writes them, so that
 * {@link volumeSettingsDrift} finds none: every setting it reports that the spec can hold (IOPS
 * only for the types that take them, the snapshot only for a data volume: the root volume's is
 * the AMI's), the key of an encrypted volume, and `deleteOnTermination` as DescribeInstances
 * reports it for its device.
 */
export function volumeSpecOf(
  volume: Volume,
  deleteOnTermination: boolean | undefined,
  role: "root" | "data",
): VolumeSpec {
  const type = volume.VolumeType;
  const snapshot = role === "data" && volume.SnapshotId !== "" ? volume.SnapshotId : undefined;
  const key = volume.Encrypted === true && volume.KmsKeyId !== "" ? volume.KmsKeyId : undefined;
  return {
    ...(volume.Size !== undefined ? { size: volume.Size } : {}),
    ...(type !== undefined ? { type } : {}),
    ...(volume.Encrypted !== undefined ? { encrypted: volume.Encrypted } : {}),
    ...(key !== undefined ? { kmsKeyId: key } : {}),
    ...(snapshot !== undefined ? { snapshotId: snapshot } : {}),
    ...(volume.Iops !== undefined && type !== undefined && IOPS_TYPES.includes(type)
      ? { iops: volume.Iops }
      : {}),
    ...(volume.Throughput !== undefined && type !== undefined && THROUGHPUT_TYPES.includes(type)
      ? { throughput: volume.Throughput }
      : {}),
    ...(deleteOnTermination !== undefined ? { deleteOnTermination } : {}),
  };
}

/** A volume of the spec on its device, named as messages name it. */
export interface SpecVolume {
  readonly deviceName: string;
  /** `storage.rootVolume (/dev/xvda)` or `storage.additionalVolumes[/dev/sdf]`: how messages name it. */
  readonly path: string;
  /** `spec.storage.rootVolume` or `spec.storage.additionalVolumes[deviceName=/dev/sdf]`: its spec path. */
  readonly specPath: string;
  readonly settings: VolumeSpec;
}

/**
 * The volumes the spec describes, on the device each is attached as: the root volume (when it
 * sets anything, on its deviceName or else the instance's root device) and every additional one.
 */
export function specVolumes(spec: Ec2InstanceSpec, instance: Instance): SpecVolume[] {
  const out: SpecVolume[] = [];
  const root = spec.storage?.rootVolume;
  const rootDevice = root?.deviceName ?? instance.RootDeviceName;
  if (root !== undefined && Object.keys(root).length > 0 && rootDevice !== undefined) {
    out.push({
      deviceName: rootDevice,
      path: `storage.rootVolume (${rootDevice})`,
      specPath: "spec.storage.rootVolume",
      settings: root,
    });
  }
  for (const v of spec.storage?.additionalVolumes ?? []) {
    out.push({
      deviceName: v.deviceName,
      path: `storage.additionalVolumes[${v.deviceName}]`,
      specPath: listItemPath("spec.storage.additionalVolumes", "deviceName", v.deviceName),
      settings: v,
    });
  }
  return out;
}

/**
 * Whether a poll reads the volumes (DescribeVolumes): only when the spec sets `volumeTags` or a
 * volume's `kmsKeyId` or `snapshotId`, the settings that only DescribeVolumes reports. A spec of
 * sizes and types alone is launch-only and costs no read.
 */
export function needsVolumeRead(spec: Ec2InstanceSpec): boolean {
  if (spec.volumeTags !== undefined) return true;
  const storage = spec.storage;
  const volumes: VolumeSpec[] = [
    ...(storage?.rootVolume ? [storage.rootVolume] : []),
    ...(storage?.additionalVolumes ?? []),
  ];
  return volumes.some((v) => v.kmsKeyId !== undefined || v.snapshotId !== undefined);
}

/** The EBS volume ID attached at each device of the instance, as DescribeInstances lists them. */
export function attachedVolumes(instance: Instance): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of instance.BlockDeviceMappings ?? []) {
    if (m.DeviceName !== undefined && m.Ebs?.VolumeId !== undefined) out.set(m.DeviceName, m.Ebs.VolumeId);
  }
  return out;
}

/**
 * The volumes `volumeTags` applies to, by device: the root volume and every volume the spec
 * describes, where attached. A volume attached out of band on another device is not touched.
 */
export function taggedVolumes(spec: Ec2InstanceSpec, instance: Instance): Map<string, string> {
  const attached = attachedVolumes(instance);
  const devices = new Set(specVolumes(spec, instance).map((v) => v.deviceName));
  if (instance.RootDeviceName !== undefined) devices.add(instance.RootDeviceName);
  const out = new Map<string, string>();
  for (const d of [...devices].sort()) {
    const id = attached.get(d);
    if (id !== undefined) out.set(d, id);
  }
  return out;
}

/** A device whose deleteOnTermination differs from the value the spec sets. */
export interface DeleteOnTerminationDrift {
  readonly deviceName: string;
  /** The spec path of the setting: `spec.storage.rootVolume.deleteOnTermination`. */
  readonly path: string;
  readonly have: boolean | undefined;
  readonly want: boolean;
}

/** The devices whose deleteOnTermination differs from a value the spec sets, with that value. */
export function deleteOnTerminationDrift(
  spec: Ec2InstanceSpec,
  instance: Instance,
): DeleteOnTerminationDrift[] {
  const have = new Map(
    (instance.BlockDeviceMappings ?? []).map((m) => [m.DeviceName ?? "", m.Ebs?.DeleteOnTermination]),
  );
  const out: DeleteOnTerminationDrift[] = [];
  for (const v of specVolumes(spec, instance)) {
    const want = v.settings.deleteOnTermination;
    if (want === undefined || !have.has(v.deviceName)) continue;
    const current = have.get(v.deviceName);
    if (current !== want) {
      out.push({ deviceName: v.deviceName, path: `${v.specPath}.deleteOnTermination`, have: current, want });
    }
  }
  return out;
}

/** The change that puts back the deleteOnTermination of one device (apply group {@link DELETE_ON_TERMINATION_SETTING}). */
export function deleteOnTerminationChange(d: DeleteOnTerminationDrift): Change {
  return {
    path: d.path,
    setting: DELETE_ON_TERMINATION_SETTING,
    observed: d.have,
    desired: d.want,
    actions: ["ec2:ModifyInstanceAttribute"],
    disruption: "none",
    description: `storage.deleteOnTermination: ${d.deviceName} ${String(d.want)}`,
    group: DELETE_ON_TERMINATION_SETTING,
  };
}

/** Why a volume's drift is refused: volumes are set at launch. */
const AT_LAUNCH =
  "the operator sets a volume's size, type, encryption, snapshot and performance and attaches it at launch " +
  "only; it never changes them on an existing volume";

/** A refused change of volume `setting`: reported with reason DriftNotRepaired, never repaired. */
function notRepaired(
  setting: string,
  path: string,
  observed: JsonValue | undefined,
  desired: JsonValue | undefined,
  description: string,
): Change {
  return refusedChange({
    path,
    setting,
    observed,
    desired,
    description,
    refusal: { reason: Reason.DriftNotRepaired, message: `${description}: ${AT_LAUNCH}` },
  });
}

/**
 * Refused changes for each volume the spec lists that is no longer attached to the instance:
 * the spec's volume is desired, none is observed.
 */
export function detachedDrift(spec: Ec2InstanceSpec, instance: Instance): Change[] {
  const attached = attachedVolumes(instance);
  return specVolumes(spec, instance)
    .filter((v) => !attached.has(v.deviceName))
    .map((v) =>
      notRepaired(
        ATTACHED_SETTING,
        v.specPath,
        undefined,
        { ...v.settings, deviceName: v.deviceName } as JsonValue,
        `${v.path}: not attached to the instance`,
      ),
    );
}

/**
 * Refused changes for each setting the spec sets that differs on the volume EC2 reports at its
 * device (`volumes`: the DescribeVolumes answer). A KMS key given as an alias is not compared:
 * EC2 reports the key's ARN, and resolving the alias would need KMS.
 */
export function volumeSettingsDrift(
  spec: Ec2InstanceSpec,
  instance: Instance,
  volumes: readonly Volume[],
): Change[] {
  const attached = attachedVolumes(instance);
  const byId = new Map(volumes.map((v) => [v.VolumeId ?? "", v]));
  const out: Change[] = [];
  for (const v of specVolumes(spec, instance)) {
    const id = attached.get(v.deviceName);
    const volume = id === undefined ? undefined : byId.get(id);
    if (volume === undefined) continue;
    for (const c of COMPARED) {
      const want = v.settings[c.field];
      if (want === undefined) continue;
      const have = c.have(volume);
      if (have === want) continue;
      out.push(
        notRepaired(
          c.setting,
          `${v.specPath}.${c.field}`,
          have,
          want,
          `${v.path}.${c.field}: ${String(want)}${c.unit} in the spec, ${have === undefined ? "none" : `${String(have)}${c.unit}`} on ${id ?? ""}`,
        ),
      );
    }
    const key = v.settings.kmsKeyId;
    if (key !== undefined && !key.includes("alias/") && !sameKmsKey(key, volume.KmsKeyId)) {
      out.push(
        notRepaired(
          KMS_KEY_SETTING,
          `${v.specPath}.kmsKeyId`,
          volume.KmsKeyId,
          key,
          `${v.path}.kmsKeyId: ${key} in the spec, ${volume.KmsKeyId ?? "none"} on ${id ?? ""}`,
        ),
      );
    }
  }
  return out;
}

/**
 * Whether the key EC2 reports for a volume (`have`, a key ARN on AWS) is the spec's key `want`,
 * given as a key ID or a key ARN.
 */
export function sameKmsKey(want: string, have: string | undefined): boolean {
  if (have === undefined) return false;
  if (have === want) return true;
  return !want.startsWith("arn:") && have.startsWith("arn:") && have.endsWith(`:key/${want}`);
}
