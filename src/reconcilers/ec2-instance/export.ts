/**
 * The export of EC2 instances (../common/export.ts): every live instance of a region, read
 * through the reads the plan makes (plan.ts) and written as the spec that manages it as it is.
 *
 * The listing is DescribeInstances in pages of 1000, of the instances neither shutting down nor
 * terminated; the instance each page describes is kept for its read, so reading it costs no
 * second DescribeInstances. A read then makes the calls the plan makes when a spec sets every
 * setting: DescribeInstanceAttribute for the user data and each described attribute,
 * DescribeInstanceCreditSpecifications for a burstable type, DescribeIamInstanceProfileAssociations
 * for an instance with a profile, and DescribeVolumes for its attached volumes. Each value is
 * written in the form the plan compares (the inverses beside the driver's mappings: launch.ts,
 * instance-settings.ts, volumes.ts), so an object with the exported spec, switched to Full, plans
 * no change but its ownership tags.
 *
 * The spec names the instance with `instanceId`, which an ObserveOnly object needs and a Full
 * object keeps to take the instance over. `volumeTags` is never written: it would tag the volumes
 * with the ownership tags on adoption, a write beyond the instance's own ownership tags.
 */
import {
  DescribeIamInstanceProfileAssociationsCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstanceCreditSpecificationsCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  type Filter,
  type Instance,
  type Volume,
} from "@aws-sdk/client-ec2";
import type { JSONSchemaProps, JsonValue } from "../../api/schema/openapi.ts";
import { ec2InstanceSpecSchema, type Ec2InstanceSpec, type Ec2InstanceVolume } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { isReservedTagKey } from "../../aws/ownership.ts";
import { pages } from "../../aws/pages.ts";
import { partitionOf } from "../../aws/partition.ts";
import type { AwsClientOf } from "../../aws/service.ts";
import {
  specTagsOf,
  type ExportContext,
  type ExportedResource,
  type KindExporter,
  type ListedResource,
} from "../common/export.ts";
import { AWS_TAG_PREFIX } from "../common/tags.ts";
import { DESCRIBED_ATTRIBUTES, isBurstable, monitoringOn, securityGroupsOf } from "./instance-attributes.ts";
import { metadataOptionsOf } from "./instance-settings.ts";
import { decodeUserData } from "./launch.ts";
import { instanceTags, requireId, stateOf } from "./model.ts";
import { attachedVolumes, volumeSpecOf, type VolumeSpec } from "./volumes.ts";

/** The states of the instances exported: every live one but those shutting down. */
const EXPORTED_STATES = ["pending", "running", "stopping", "stopped"];

/** The EC2 tag that names an instance in the console. */
const NAME_TAG = "Name";

/** The most additional volumes the spec holds (its `maxItems`). */
const MAX_ADDITIONAL_VOLUMES = 24;

/** An instance's spec, built up field by field. */
type Spec = Partial<Ec2InstanceSpec>;

/** The exporter of the Ec2Instance kind, with one account's clients. */
export class Ec2InstanceExporter implements KindExporter {
  readonly #aws: AwsClientSource;
  /** The instances the listing described, until read (`region/id`). */
  readonly #listed = new Map<string, Instance>();

  constructor(aws: AwsClientSource) {
    this.#aws = aws;
  }

  async *list(region: string, signal: AbortSignal): AsyncIterable<ListedResource> {
    const ec2 = await this.#client(region);
    const filters: Filter[] = [{ Name: "instance-state-name", Values: EXPORTED_STATES }];
    const listing = pages(
      (token) =>
        ec2.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: 1000, NextToken: token }), {
          abortSignal: signal,
        }),
      (page) => page.NextToken,
    );
    for await (const page of listing) {
      for (const reservation of page.Reservations ?? []) {
        for (const instance of reservation.Instances ?? []) {
          if (!EXPORTED_STATES.includes(stateOf(instance))) continue;
          const id = requireId(instance);
          this.#listed.set(`${region}/${id}`, instance);
          yield {
            id,
            region,
            arn: `arn:${partitionOf(region)}:ec2:${region}:${reservation.OwnerId ?? ""}:instance/${id}`,
            awsName: nameOf(instance),
          };
        }
      }
    }
  }

  async read(listed: ListedResource, ctx: ExportContext): Promise<ExportedResource | undefined> {
    const key = `${listed.region}/${listed.id}`;
    const instance = this.#listed.get(key) ?? (await this.#describe(listed, ctx.signal));
    this.#listed.delete(key);
    if (instance === undefined || !EXPORTED_STATES.includes(stateOf(instance))) return undefined;
    return await new InstanceRead(
      await this.#client(listed.region),
      listed.region,
      instance,
      ctx.signal,
    ).run();
  }

  /** The instance `listed` names, read fresh; undefined when it is no longer listed. */
  async #describe(listed: ListedResource, signal: AbortSignal): Promise<Instance | undefined> {
    const out = await (
      await this.#client(listed.region)
    ).send(new DescribeInstancesCommand({ Filters: [{ Name: "instance-id", Values: [listed.id] }] }), {
      abortSignal: signal,
    });
    return out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === listed.id);
  }

  async #client(region: string): Promise<AwsClientOf<"ec2">> {
    return await this.#aws.client("ec2", region);
  }
}

/** The AWS name of an instance: its Name tag, else its ID. */
function nameOf(instance: Instance): string {
  const name = instanceTags(instance)[NAME_TAG];
  return name !== undefined && name !== "" ? name : requireId(instance);
}

/** The reads of one instance and the spec they give. */
class InstanceRead {
  readonly #ec2: AwsClientOf<"ec2">;
  readonly #region: string;
  readonly #instance: Instance;
  readonly #id: string;
  readonly #opts: { abortSignal: AbortSignal };
  readonly #omitted: string[] = [];

  constructor(ec2: AwsClientOf<"ec2">, region: string, instance: Instance, signal: AbortSignal) {
    this.#ec2 = ec2;
    this.#region = region;
    this.#instance = instance;
    this.#id = requireId(instance);
    this.#opts = { abortSignal: signal };
  }

  async run(): Promise<ExportedResource> {
    const i = this.#instance;
    const tags = instanceTags(i);
    const spec: Spec = {
      region: this.#region,
      instanceId: this.#id,
      ...this.#fit(["instanceType"], i.InstanceType),
      ...this.#fit(["amiId"], i.ImageId),
      desiredState: desiredStateOf(i),
      ...this.#fit(["availabilityZone"], i.Placement?.AvailabilityZone),
      ...this.#fit(["subnet"], i.SubnetId),
      ...this.#fit(["keyPair"], i.KeyName),
      ...this.#network(),
      ...this.#placement(),
      metadataOptions: metadataOptionsOf(i),
      monitoring: monitoringOn(i),
      ...(await this.#attributes()),
      ...(await this.#userData()),
      ...(await this.#credits()),
      ...(await this.#profile()),
      ...(await this.#storage()),
      ...this.#market(),
      tags: specTagsOf(tags),
    };
    if (i.HibernationOptions?.Configured === true) {
      if (spec.storage?.rootVolume?.encrypted === true) spec.hibernation = true;
      else this.#omitted.push("hibernation (the root volume was not read as encrypted)");
    }
    this.#noteUnexpressed();
    return {
      awsName: nameOf(i),
      tags,
      spec: JSON.parse(JSON.stringify(spec)) as Record<string, JsonValue>,
      unresolved: [],
      omitted: this.#omitted.sort(),
    };
  }

  /** `{[field]: value}` when the CRD takes `value` at `path` (else noted as left out), else `{}`. */
  #fit<V extends string | number>(path: readonly string[], value: V | undefined): Partial<Record<string, V>> {
    if (value === undefined || value === "") return {};
    if (accepts(path, value)) return { [path[path.length - 1] ?? ""]: value };
    this.#omitted.push(`${path.join(".")} ${String(value)} (a value the API does not accept)`);
    return {};
  }

  /** The security groups, the primary private address and whether it got a public address. */
  #network(): Spec {
    const i = this.#instance;
    const groups = securityGroupsOf(i).filter((g) => {
      const ok = accepts(["securityGroups", "[]"], g);
      if (!ok) this.#omitted.push(`security group ${g} (a value the API does not accept)`);
      return ok;
    });
    const primary = this.#primaryInterface();
    if ((i.NetworkInterfaces?.length ?? 0) > 1)
      this.#omitted.push("network interfaces beyond the primary one");
    return {
      ...(groups.length > 0 ? { securityGroups: groups } : {}),
      ...(i.SubnetId !== undefined && i.SubnetId !== ""
        ? this.#fit(["privateIpAddress"], i.PrivateIpAddress)
        : {}),
      ...(i.SubnetId !== undefined && i.SubnetId !== "" ? publicAddressOf(i, primary) : {}),
    };
  }

  /** The network interface at device index 0. */
  #primaryInterface(): NonNullable<Instance["NetworkInterfaces"]>[number] | undefined {
    return this.#instance.NetworkInterfaces?.find((n) => n.Attachment?.DeviceIndex === 0);
  }

  /** The tenancy (when not the default) and the placement group. */
  #placement(): Spec {
    const p = this.#instance.Placement;
    const tenancy = p?.Tenancy !== undefined && p.Tenancy !== "default" ? p.Tenancy : undefined;
    const group = p?.GroupName !== undefined && p.GroupName !== "" ? p.GroupName : undefined;
    if (p?.HostId !== undefined && p.HostId !== "") this.#omitted.push(`the Dedicated Host ${p.HostId}`);
    if (p?.PartitionNumber !== undefined) this.#omitted.push("the placement group partition");
    const placement = {
      ...(tenancy !== undefined && accepts(["placement", "tenancy"], tenancy) ? { tenancy } : {}),
      ...(group !== undefined && accepts(["placement", "groupName"], group) ? { groupName: group } : {}),
    };
    return Object.keys(placement).length > 0 ? { placement } : {};
  }

  /** A Spot Instance's market; its request's options are not read. */
  #market(): Spec {
    if (this.#instance.InstanceLifecycle !== "spot") return {};
    if (desiredStateOf(this.#instance) !== "running") {
      this.#omitted.push("the Spot market of a stopped Spot Instance");
      return {};
    }
    this.#omitted.push("the Spot request's maximum price, type and interruption behaviour");
    return { marketOptions: { marketType: "spot" } };
  }

  /** The protections and the shutdown behaviour, one DescribeInstanceAttribute each. */
  async #attributes(): Promise<Spec> {
    const out: Record<string, string | boolean> = {};
    for (const a of DESCRIBED_ATTRIBUTES) {
      const answer = await this.#ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: this.#id, Attribute: a.attribute }),
        this.#opts,
      );
      const have = a.have(answer);
      if (have !== undefined && (typeof have === "boolean" || accepts([a.setting], have)))
        out[a.setting] = have;
    }
    return out as Spec;
  }

  /** The user data as plain text (DescribeInstanceAttribute `userData`). */
  async #userData(): Promise<Spec> {
    const out = await this.#ec2.send(
      new DescribeInstanceAttributeCommand({ InstanceId: this.#id, Attribute: "userData" }),
      this.#opts,
    );
    const reported = out.UserData?.Value;
    if (reported === undefined || reported === "") return {};
    const text = decodeUserData(reported);
    if (text === undefined) {
      this.#omitted.push("the user data, which is not UTF-8 text (compressed or binary)");
      return {};
    }
    if (!accepts(["userData"], text)) {
      this.#omitted.push("the user data, longer than the API takes");
      return {};
    }
    return { userData: text };
  }

  /** The CPU credit option of a burstable instance (DescribeInstanceCreditSpecifications). */
  async #credits(): Promise<Spec> {
    if (!isBurstable(this.#instance.InstanceType)) return {};
    const out = await this.#ec2.send(
      new DescribeInstanceCreditSpecificationsCommand({ InstanceIds: [this.#id] }),
      this.#opts,
    );
    const have = out.InstanceCreditSpecifications?.find((c) => c.InstanceId === this.#id)?.CpuCredits;
    return have === "standard" || have === "unlimited" ? { creditSpecification: have } : {};
  }

  /**
   * The instance profile: the ARN of its association (DescribeIamInstanceProfileAssociations),
   * which the instance description may lag behind, read when the description names a profile.
   */
  async #profile(): Promise<Spec> {
    const described = this.#instance.IamInstanceProfile?.Arn;
    if (described === undefined || described === "") return {};
    const out = await this.#ec2.send(
      new DescribeIamInstanceProfileAssociationsCommand({
        Filters: [{ Name: "instance-id", Values: [this.#id] }],
      }),
      this.#opts,
    );
    const association = out.IamInstanceProfileAssociations?.find(
      (a) => a.State === "associated" || a.State === "associating",
    );
    return this.#fit(["iamInstanceProfile"], association?.IamInstanceProfile?.Arn ?? described);
  }

  /** The root and additional volumes as DescribeVolumes reports them, on their devices. */
  async #storage(): Promise<Spec> {
    const i = this.#instance;
    const attached = attachedVolumes(i);
    if (attached.size === 0) return {};
    const out = await this.#ec2.send(
      new DescribeVolumesCommand({ VolumeIds: [...new Set(attached.values())].sort() }),
      this.#opts,
    );
    const byId = new Map((out.Volumes ?? []).map((v): [string, Volume] => [v.VolumeId ?? "", v]));
    const keep = new Map(
      (i.BlockDeviceMappings ?? []).map((m) => [m.DeviceName ?? "", m.Ebs?.DeleteOnTermination]),
    );
    const storage: NonNullable<Spec["storage"]> = {};
    const additional: NonNullable<NonNullable<Spec["storage"]>["additionalVolumes"]> = [];
    for (const [device, volumeId] of [...attached].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const volume = byId.get(volumeId);
      if (volume === undefined) continue;
      if (hasUserTags(volume))
        this.#omitted.push(`the tags of volume ${volumeId} (spec.volumeTags is not written)`);
      const root = device === i.RootDeviceName;
      const settings = volumeSpecOf(volume, keep.get(device), root ? "root" : "data");
      const where = root ? ["storage", "rootVolume"] : ["storage", "additionalVolumes", "[]"];
      const refused = unaccepted(where, { ...settings, deviceName: device });
      if (refused !== undefined) {
        this.#omitted.push(`volume ${volumeId} on ${device} (${refused} is not a value the API accepts)`);
        continue;
      }
      // The type is one the CRD's enum takes: `unaccepted` checked it.
      const written = { ...settings, deviceName: device } as Ec2InstanceVolume;
      if (root) storage.rootVolume = written as NonNullable<typeof storage.rootVolume>;
      else if (additional.length < MAX_ADDITIONAL_VOLUMES) additional.push(written);
      else
        this.#omitted.push(
          `volume ${volumeId} on ${device} (more than ${MAX_ADDITIONAL_VOLUMES} data volumes)`,
        );
    }
    if (additional.length > 0) storage.additionalVolumes = additional;
    return Object.keys(storage).length > 0 ? { storage } : {};
  }

  /** Notes what the instance has that no spec field expresses. */
  #noteUnexpressed(): void {
    const i = this.#instance;
    const m = i.MetadataOptions;
    if (m?.HttpProtocolIpv6 === "enabled") this.#omitted.push("the metadata service's IPv6 endpoint");
    if (m?.InstanceMetadataTags === "enabled") this.#omitted.push("instance tags in the metadata service");
    // What a launch from the spec would not give the instance again (spec.onDeletedOutOfBand).
    if (i.SourceDestCheck === false) this.#omitted.push("source/destination checking turned off");
    const primary = this.#primaryInterface();
    if ((primary?.Ipv6Addresses?.length ?? 0) > 0) this.#omitted.push("IPv6 addresses");
    if ((primary?.PrivateIpAddresses?.length ?? 0) > 1) this.#omitted.push("secondary private addresses");
    if ((primary?.Ipv4Prefixes?.length ?? 0) + (primary?.Ipv6Prefixes?.length ?? 0) > 0)
      this.#omitted.push("address prefixes on the primary network interface");
    const reservation = i.CapacityReservationSpecification;
    if (i.CapacityReservationId !== undefined || reservation?.CapacityReservationTarget !== undefined)
      this.#omitted.push("the capacity reservation it targets");
    else if (
      reservation?.CapacityReservationPreference !== undefined &&
      reservation.CapacityReservationPreference !== "open"
    )
      this.#omitted.push(`capacity reservation preference ${reservation.CapacityReservationPreference}`);
    if (i.MaintenanceOptions?.AutoRecovery === "disabled")
      this.#omitted.push("automatic recovery turned off");
    if (i.EnclaveOptions?.Enabled === true) this.#omitted.push("Nitro Enclaves");
    if ((i.Licenses?.length ?? 0) > 0) this.#omitted.push("license configurations");
    if (i.InstanceLifecycle !== undefined && i.InstanceLifecycle !== "spot")
      this.#omitted.push(`the ${i.InstanceLifecycle} lifecycle (a launch from the spec is on demand)`);
  }
}

/** The run state to keep: running for a running or pending instance, stopped for one stopped or stopping. */
function desiredStateOf(instance: Instance): "running" | "stopped" {
  const state = stateOf(instance);
  return state === "stopped" || state === "stopping" ? "stopped" : "running";
}

/**
 * Whether the instance was given a public address at launch, when that can be told: a public
 * address from Amazon's pool on the primary interface says yes; a running instance without one
 * says no; an Elastic IP or a stopped instance tells nothing.
 */
function publicAddressOf(
  instance: Instance,
  primary: NonNullable<Instance["NetworkInterfaces"]>[number] | undefined,
): Spec {
  if (primary === undefined) return {};
  const owner = primary.Association?.IpOwnerId;
  if (primary.Association?.PublicIp !== undefined && owner === "amazon") return { associatePublicIP: true };
  if (primary.Association === undefined && stateOf(instance) === "running")
    return { associatePublicIP: false };
  return {};
}

/** Whether `volume` carries tags of its own (beyond the operator's and AWS's). */
function hasUserTags(volume: Volume): boolean {
  return (volume.Tags ?? []).some(
    (t) => t.Key !== undefined && !isReservedTagKey(t.Key) && !t.Key.toLowerCase().startsWith(AWS_TAG_PREFIX),
  );
}

/** The schema node of the spec field at `path` (`[]`: the items of a list). */
function nodeAt(path: readonly string[]): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = ec2InstanceSpecSchema.node;
  for (const p of path) node = p === "[]" ? node?.items : node?.properties?.[p];
  return node;
}

/** Whether the CRD takes `value` at `path`: its enum, pattern, length and range. */
function accepts(path: readonly string[], value: string | number): boolean {
  const node = nodeAt(path);
  if (node === undefined) return false;
  if (node.enum !== undefined && !node.enum.includes(value)) return false;
  if (typeof value === "string") {
    if (node.maxLength !== undefined && value.length > node.maxLength) return false;
    if (node.pattern !== undefined && !new RegExp(node.pattern, "u").test(value)) return false;
  } else {
    if (node.minimum !== undefined && value < node.minimum) return false;
    if (node.maximum !== undefined && value > node.maximum) return false;
  }
  return true;
}

/** The first field of the volume `settings` the CRD does not take at `path`, or undefined. */
function unaccepted(
  path: readonly string[],
  settings: VolumeSpec & { deviceName: string },
): string | undefined {
  for (const [field, value] of Object.entries(settings)) {
    if (typeof value === "boolean" || value === undefined) continue;
    if (!accepts([...path, field], value)) return `${field} ${String(value)}`;
  }
  return undefined;
}

/** The exporter of the kind's module (./index.ts). */
export function ec2InstanceExporter(aws: AwsClientSource): KindExporter {
  return new Ec2InstanceExporter(aws);
}
