/**
 * An in-memory stand-in for the EC2 API, for unit tests of the driver's decisions in situations
 * the emulator cannot produce (an instance not yet listed after its launch, several instances
 * with one owner, an instance that stays `stopping` or `pending`). It implements only what the
 * driver calls, with EC2's filter semantics; StopInstances and StartInstances leave the instance
 * in `stopping` and `pending` as EC2 does, until a test moves it on with {@link settle}.
 */
import {
  AssociateIamInstanceProfileCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeIamInstanceProfileAssociationsCommand,
  DescribeImagesCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstanceCreditSpecificationsCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  ModifyInstanceAttributeCommand,
  ModifyInstanceCreditSpecificationCommand,
  ModifyInstanceMetadataOptionsCommand,
  MonitorInstancesCommand,
  ReplaceIamInstanceProfileAssociationCommand,
  RunInstancesCommand,
  StartInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  UnmonitorInstancesCommand,
  type EC2Client,
  type Filter,
  type Instance,
  type Tag,
  type Volume,
} from "@aws-sdk/client-ec2";
import type { AwsClientSource } from "../../../aws/clients.ts";
import { AwsError } from "../../../aws/errors.ts";

/** Instance attributes that only DescribeInstanceAttribute and DescribeInstanceCreditSpecifications report. */
export interface FakeAttributes {
  disableApiTermination: boolean;
  disableApiStop: boolean;
  shutdownBehavior: string;
  cpuCredits: string;
  /** The user data, base64 as EC2 reports it (undefined: none). */
  userData?: string | undefined;
}

/** One call the fake received. */
export interface FakeCall {
  op: string;
  region: string;
  input: unknown;
}

/** The fake's state and call log; `client` is handed to the driver. */
export class FakeEc2 {
  readonly instances = new Map<string, Instance>();
  /** IDs launched but not yet listed by DescribeInstances (eventual consistency). */
  readonly hidden = new Set<string>();
  readonly calls: FakeCall[] = [];
  readonly images = new Map<string, string>([["ami-1e749f67", "/dev/sda1"]]);
  /**
   * The attributes DescribeInstances does not report, per instance ID: the protections, the
   * shutdown behaviour and the CPU credit option (EC2's defaults until set).
   */
  readonly attributes = new Map<string, FakeAttributes>();
  /** Codes ModifyInstanceCreditSpecification answers for these instances, beyond EC2's own rules. */
  readonly creditRefusals = new Map<string, string>();
  /** EBS volumes by ID, as DescribeVolumes reports them (tags included). */
  readonly volumes = new Map<string, Volume>();
  /** The account DescribeInstances names as each reservation's owner. */
  ownerId = "123456789012";
  #next = 1;
  #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** An AwsClientSource whose EC2 clients are this fake, in every region. */
  source(): AwsClientSource {
    const client = (service: string, region: string): EC2Client => {
      if (service !== "ec2") throw new Error(`${service} is not faked`);
      return { send: (cmd: unknown) => this.#send(region, cmd) } as unknown as EC2Client;
    };
    return { client: client as AwsClientSource["client"] };
  }

  /** Puts an instance into the fake directly (not counted as a call). */
  add(over: Partial<Instance> & { tags?: Record<string, string> }): Instance {
    const id = over.InstanceId ?? `i-${(this.#next++).toString(16).padStart(17, "0")}`;
    const { tags, ...rest } = over;
    const instance: Instance = {
      InstanceId: id,
      State: { Name: "running" },
      LaunchTime: new Date(this.#now()),
      ...rest,
      Tags: Object.entries(tags ?? {}).map(([Key, Value]) => ({ Key, Value })),
    };
    this.instances.set(id, instance);
    return instance;
  }

  /** Ends the transition of instance `id` (`stopping` becomes `stopped`, `pending` `running`). */
  settle(id: string): void {
    const instance = this.instances.get(id);
    const name = instance?.State?.Name;
    if (instance === undefined) return;
    if (name === "stopping") instance.State = { Name: "stopped" };
    else if (name === "pending") instance.State = { Name: "running" };
  }

  /** Puts an EBS volume into the fake directly (not counted as a call); attach it with the instance's BlockDeviceMappings. */
  addVolume(over: Volume & { tags?: Record<string, string> }): Volume {
    const id = over.VolumeId ?? `vol-${(this.#next++).toString(16).padStart(17, "0")}`;
    const { tags, ...rest } = over;
    const volume: Volume = {
      VolumeId: id,
      ...rest,
      Tags: Object.entries(tags ?? {}).map(([Key, Value]) => ({ Key, Value })),
    };
    this.volumes.set(id, volume);
    return volume;
  }

  /** Calls named `op`. */
  count(op: string): number {
    return this.calls.filter((c) => c.op === op).length;
  }

  tagsOf(id: string): Record<string, string> {
    return Object.fromEntries((this.instances.get(id)?.Tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
  }

  async #send(region: string, cmd: unknown): Promise<unknown> {
    await Promise.resolve();
    if (cmd instanceof DescribeInstancesCommand) {
      this.calls.push({ op: "DescribeInstances", region, input: cmd.input });
      const listed = [...this.instances.values()].filter(
        (i) => !this.hidden.has(i.InstanceId ?? "") && matches(i, cmd.input.Filters ?? []),
      );
      // Pages of MaxResults instances, the token the offset of the next one.
      const from = Number(cmd.input.NextToken ?? "0");
      const size = cmd.input.MaxResults ?? listed.length;
      const page = listed.slice(from, from + size);
      const next = from + size < listed.length ? String(from + size) : undefined;
      return {
        Reservations: page.map((i) => ({ OwnerId: this.ownerId, Instances: [structuredClone(i)] })),
        ...(next !== undefined ? { NextToken: next } : {}),
      };
    }
    if (cmd instanceof RunInstancesCommand) {
      this.calls.push({ op: "RunInstances", region, input: cmd.input });
      const tags = cmd.input.TagSpecifications?.find((t) => t.ResourceType === "instance")?.Tags ?? [];
      const instance = this.add({
        State: { Name: "pending" },
        ...(cmd.input.InstanceType !== undefined ? { InstanceType: cmd.input.InstanceType } : {}),
        ClientToken: cmd.input.ClientToken,
        tags: Object.fromEntries(tags.map((t) => [t.Key ?? "", t.Value ?? ""])),
      });
      return { Instances: [structuredClone(instance)] };
    }
    if (cmd instanceof CreateTagsCommand || cmd instanceof DeleteTagsCommand) {
      const create = cmd instanceof CreateTagsCommand;
      this.calls.push({ op: create ? "CreateTags" : "DeleteTags", region, input: cmd.input });
      for (const id of cmd.input.Resources ?? []) {
        const resource = this.volumes.get(id) ?? this.#require(id, create ? "CreateTags" : "DeleteTags");
        const tags = new Map((resource.Tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
        for (const t of cmd.input.Tags ?? []) {
          if (create) tags.set(t.Key ?? "", t.Value ?? "");
          else tags.delete(t.Key ?? "");
        }
        resource.Tags = [...tags].map(([Key, Value]): Tag => ({ Key, Value }));
      }
      return {};
    }
    if (cmd instanceof TerminateInstancesCommand) {
      this.calls.push({ op: "TerminateInstances", region, input: cmd.input });
      const ids = cmd.input.InstanceIds ?? [];
      for (const id of ids) this.#require(id, "TerminateInstances");
      const protectedId = ids.find((id) => this.attributes.get(id)?.disableApiTermination === true);
      if (protectedId !== undefined) {
        throw new AwsError({
          kind: "terminal",
          code: "OperationNotPermitted",
          service: "ec2",
          operation: "TerminateInstances",
          message: `EC2 TerminateInstances failed with OperationNotPermitted: The instance '${protectedId}' may not be terminated`,
        });
      }
      for (const id of ids) {
        const instance = this.instances.get(id);
        if (instance !== undefined && instance.State?.Name !== "terminated")
          instance.State = { Name: "shutting-down" };
      }
      return {};
    }
    if (cmd instanceof StopInstancesCommand || cmd instanceof StartInstancesCommand) {
      const stop = cmd instanceof StopInstancesCommand;
      const op = stop ? "StopInstances" : "StartInstances";
      this.calls.push({ op, region, input: cmd.input });
      for (const id of cmd.input.InstanceIds ?? []) {
        const instance = this.#require(id, op);
        const name = instance.State?.Name;
        // EC2 accepts a stop of a stopped instance and a start of a running one as no-ops.
        if (stop && (name === "running" || name === "pending")) instance.State = { Name: "stopping" };
        else if (!stop && name === "stopped") instance.State = { Name: "pending" };
        else if (
          !(stop ? name === "stopped" || name === "stopping" : name === "running" || name === "pending")
        )
          throw incorrectState(op, id, name);
      }
      return {};
    }
    if (cmd instanceof DescribeInstanceAttributeCommand) {
      this.calls.push({ op: "DescribeInstanceAttribute", region, input: cmd.input });
      const id = cmd.input.InstanceId ?? "";
      this.#require(id, "DescribeInstanceAttribute");
      const a = this.attributesOf(id);
      switch (cmd.input.Attribute) {
        case "disableApiTermination":
          return { InstanceId: id, DisableApiTermination: { Value: a.disableApiTermination } };
        case "disableApiStop":
          return { InstanceId: id, DisableApiStop: { Value: a.disableApiStop } };
        case "instanceInitiatedShutdownBehavior":
          return { InstanceId: id, InstanceInitiatedShutdownBehavior: { Value: a.shutdownBehavior } };
        case "userData":
          return { InstanceId: id, ...(a.userData !== undefined ? { UserData: { Value: a.userData } } : {}) };
        default:
          throw new Error(`FakeEc2 does not implement attribute ${String(cmd.input.Attribute)}`);
      }
    }
    if (cmd instanceof MonitorInstancesCommand || cmd instanceof UnmonitorInstancesCommand) {
      const on = cmd instanceof MonitorInstancesCommand;
      this.calls.push({ op: on ? "MonitorInstances" : "UnmonitorInstances", region, input: cmd.input });
      for (const id of cmd.input.InstanceIds ?? []) {
        // EC2 reports the change under way first: pending, then enabled; disabling, then disabled.
        this.#require(id, on ? "MonitorInstances" : "UnmonitorInstances").Monitoring = {
          State: on ? "pending" : "disabling",
        };
      }
      return {};
    }
    if (cmd instanceof DescribeInstanceCreditSpecificationsCommand) {
      this.calls.push({ op: "DescribeInstanceCreditSpecifications", region, input: cmd.input });
      return {
        InstanceCreditSpecifications: (cmd.input.InstanceIds ?? []).map((id) => {
          this.#require(id, "DescribeInstanceCreditSpecifications");
          return { InstanceId: id, CpuCredits: this.attributesOf(id).cpuCredits };
        }),
      };
    }
    if (cmd instanceof ModifyInstanceCreditSpecificationCommand) {
      this.calls.push({ op: "ModifyInstanceCreditSpecification", region, input: cmd.input });
      // EC2 answers per instance: those it changed, and the others with the reason.
      const changed: { InstanceId: string }[] = [];
      const refused: { InstanceId: string; Error: { Code: string; Message: string } }[] = [];
      for (const s of cmd.input.InstanceCreditSpecifications ?? []) {
        const id = s.InstanceId ?? "";
        const code = this.#creditRefusal(id);
        if (code !== undefined) {
          refused.push({ InstanceId: id, Error: { Code: code, Message: `${code} (${id})` } });
          continue;
        }
        if (s.CpuCredits !== undefined) this.attributesOf(id).cpuCredits = s.CpuCredits;
        changed.push({ InstanceId: id });
      }
      return {
        SuccessfulInstanceCreditSpecifications: changed,
        UnsuccessfulInstanceCreditSpecifications: refused,
      };
    }
    if (cmd instanceof ModifyInstanceAttributeCommand) {
      this.calls.push({ op: "ModifyInstanceAttribute", region, input: cmd.input });
      const id = cmd.input.InstanceId ?? "";
      const instance = this.#require(id, "ModifyInstanceAttribute");
      const a = this.attributesOf(id);
      if (cmd.input.Groups !== undefined) {
        instance.SecurityGroups = cmd.input.Groups.map((GroupId) => ({ GroupId }));
      }
      if (cmd.input.DisableApiTermination?.Value !== undefined) {
        a.disableApiTermination = cmd.input.DisableApiTermination.Value;
      }
      if (cmd.input.DisableApiStop?.Value !== undefined) a.disableApiStop = cmd.input.DisableApiStop.Value;
      if (cmd.input.Attribute === "instanceInitiatedShutdownBehavior" && cmd.input.Value !== undefined) {
        a.shutdownBehavior = cmd.input.Value;
      }
      if (cmd.input.Attribute === "userData") {
        if (instance.State?.Name !== "stopped")
          throw incorrectState("ModifyInstanceAttribute", id, instance.State?.Name);
        a.userData = cmd.input.Value;
      }
      for (const m of cmd.input.BlockDeviceMappings ?? []) {
        const mapping = instance.BlockDeviceMappings?.find((b) => b.DeviceName === m.DeviceName);
        if (mapping?.Ebs !== undefined && m.Ebs?.DeleteOnTermination !== undefined)
          mapping.Ebs.DeleteOnTermination = m.Ebs.DeleteOnTermination;
      }
      const type = cmd.input.InstanceType?.Value;
      if (type !== undefined) {
        if (instance.State?.Name !== "stopped")
          throw incorrectState("ModifyInstanceAttribute", id, instance.State?.Name);
        instance.InstanceType = type as Instance["InstanceType"];
      }
      return {};
    }
    if (cmd instanceof ModifyInstanceMetadataOptionsCommand) {
      this.calls.push({ op: "ModifyInstanceMetadataOptions", region, input: cmd.input });
      const instance = this.#require(cmd.input.InstanceId ?? "", "ModifyInstanceMetadataOptions");
      const { HttpTokens, HttpPutResponseHopLimit, HttpEndpoint } = cmd.input;
      instance.MetadataOptions = {
        ...instance.MetadataOptions,
        ...(HttpTokens !== undefined ? { HttpTokens } : {}),
        ...(HttpPutResponseHopLimit !== undefined ? { HttpPutResponseHopLimit } : {}),
        ...(HttpEndpoint !== undefined ? { HttpEndpoint } : {}),
      };
      return {};
    }
    if (cmd instanceof DescribeIamInstanceProfileAssociationsCommand) {
      this.calls.push({ op: "DescribeIamInstanceProfileAssociations", region, input: cmd.input });
      const ids = cmd.input.Filters?.find((f) => f.Name === "instance-id")?.Values ?? [];
      return {
        IamInstanceProfileAssociations: ids.flatMap((id) => {
          const arn = this.instances.get(id)?.IamInstanceProfile?.Arn;
          return arn === undefined
            ? []
            : [
                {
                  AssociationId: `iip-assoc-${id}`,
                  InstanceId: id,
                  State: "associated",
                  IamInstanceProfile: { Arn: arn },
                },
              ];
        }),
      };
    }
    if (
      cmd instanceof AssociateIamInstanceProfileCommand ||
      cmd instanceof ReplaceIamInstanceProfileAssociationCommand
    ) {
      const associate = cmd instanceof AssociateIamInstanceProfileCommand;
      const op = associate ? "AssociateIamInstanceProfile" : "ReplaceIamInstanceProfileAssociation";
      this.calls.push({ op, region, input: cmd.input });
      const id = associate
        ? (cmd.input.InstanceId ?? "")
        : (cmd.input.AssociationId ?? "").replace(/^iip-assoc-/, "");
      const profile = cmd.input.IamInstanceProfile;
      const arn = profile?.Arn ?? `arn:aws:iam::123456789012:instance-profile/${profile?.Name ?? ""}`;
      this.#require(id, op).IamInstanceProfile = { Arn: arn };
      return {};
    }
    if (cmd instanceof DescribeVolumesCommand) {
      this.calls.push({ op: "DescribeVolumes", region, input: cmd.input });
      const ids = cmd.input.VolumeIds ?? [];
      const missing = ids.find((id) => !this.volumes.has(id));
      if (missing !== undefined) {
        throw new AwsError({
          kind: "not-found",
          code: "InvalidVolume.NotFound",
          service: "ec2",
          operation: "DescribeVolumes",
          message: `EC2 DescribeVolumes failed with InvalidVolume.NotFound: The volume '${missing}' does not exist.`,
        });
      }
      return { Volumes: ids.map((id) => structuredClone(this.volumes.get(id))) };
    }
    if (cmd instanceof DescribeImagesCommand) {
      this.calls.push({ op: "DescribeImages", region, input: cmd.input });
      const id = cmd.input.ImageIds?.[0] ?? "";
      const root = this.images.get(id);
      if (root === undefined) {
        throw new AwsError({
          kind: "terminal",
          code: "InvalidAMIID.NotFound",
          service: "ec2",
          operation: "DescribeImages",
          message: `EC2 DescribeImages failed with InvalidAMIID.NotFound: The image id '[${id}]' does not exist`,
        });
      }
      return { Images: [{ ImageId: id, RootDeviceName: root }] };
    }
    throw new Error(`FakeEc2 does not implement ${String(cmd)}`);
  }

  /** The attributes of instance `id` DescribeInstances does not report, created with EC2's defaults. */
  attributesOf(id: string): FakeAttributes {
    let a = this.attributes.get(id);
    if (a === undefined) {
      a = {
        disableApiTermination: false,
        disableApiStop: false,
        shutdownBehavior: "stop",
        cpuCredits: "standard",
      };
      this.attributes.set(id, a);
    }
    return a;
  }

  /** The code EC2 answers for instance `id` in ModifyInstanceCreditSpecification, if it refuses it. */
  #creditRefusal(id: string): string | undefined {
    const instance = this.instances.get(id);
    if (instance === undefined || this.hidden.has(id)) return "InvalidInstanceID.NotFound";
    const forced = this.creditRefusals.get(id);
    if (forced !== undefined) return forced;
    const state = instance.State?.Name;
    if (state === "shutting-down" || state === "terminated") return "IncorrectInstanceState";
    // Only the burstable families have a credit option.
    if (!/^(t2|t3|t3a|t4g)\./.test(instance.InstanceType ?? ""))
      return "InstanceCreditSpecification.NotSupported";
    return undefined;
  }

  #require(id: string, operation: string): Instance {
    const instance = this.instances.get(id);
    if (instance === undefined || this.hidden.has(id)) {
      throw new AwsError({
        kind: "not-found",
        code: "InvalidInstanceID.NotFound",
        service: "ec2",
        operation,
        message: `EC2 ${operation} failed with InvalidInstanceID.NotFound: The instance ID '${id}' does not exist`,
      });
    }
    return instance;
  }
}

/** EC2's answer to a call the instance's state does not allow (retryable: the state moves on). */
function incorrectState(operation: string, id: string, state: string | undefined): AwsError {
  return new AwsError({
    kind: "retryable",
    code: "IncorrectInstanceState",
    service: "ec2",
    operation,
    message: `EC2 ${operation} failed with IncorrectInstanceState: The instance '${id}' is not in a state from which it can be ${operation === "ModifyInstanceAttribute" ? "modified" : operation === "StopInstances" ? "stopped" : "started"} (${state ?? "unknown"})`,
  });
}

function matches(instance: Instance, filters: readonly Filter[]): boolean {
  return filters.every((f) => {
    const values = f.Values ?? [];
    if (f.Name === "instance-id") return values.includes(instance.InstanceId ?? "");
    if (f.Name === "instance-state-name") return values.includes(instance.State?.Name ?? "");
    if (f.Name?.startsWith("tag:") === true) {
      const key = f.Name.slice(4);
      return (instance.Tags ?? []).some((t) => t.Key === key && values.includes(t.Value ?? ""));
    }
    throw new Error(`FakeEc2 does not implement filter ${f.Name}`);
  });
}
