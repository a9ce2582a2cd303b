/**
 * Puts an EC2 instance back in line with its spec: the tags (the desired set, ownership tags
 * included; for an instance being adopted this writes its ownership tags), the metadata options
 * and the instance profile (instance-settings.ts), the in-place attributes (instance-attributes.ts),
 * the volumes (volumes.ts: volumeTags and deleteOnTermination put back, the rest reported),
 * then the run state, type and user data (run-state.ts),
 * last, since the settings are written against the state observed. One call per step, never
 * waiting for EC2 to finish a transition. Every mutating call goes through the locator's
 * {@link InstanceLocator.mutate}, which drops the instance from the lookup snapshot.
 */
import {
  AssociateIamInstanceProfileCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeIamInstanceProfileAssociationsCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstanceCreditSpecificationsCommand,
  DescribeVolumesCommand,
  ModifyInstanceAttributeCommand,
  ModifyInstanceCreditSpecificationCommand,
  ModifyInstanceMetadataOptionsCommand,
  MonitorInstancesCommand,
  ReplaceIamInstanceProfileAssociationCommand,
  StartInstancesCommand,
  StopInstancesCommand,
  UnmonitorInstancesCommand,
  type IamInstanceProfileSpecification,
  type Instance,
  type Volume,
} from "@aws-sdk/client-ec2";
import { AwsError } from "../../aws/errors.ts";
import { fromEc2Tags, toEc2Tags } from "../../aws/ownership.ts";
import type { AwsClientOf } from "../../aws/service.ts";
import { InvalidSpecError, type DriftRepair, type DriverContext } from "../common/driver.ts";
import {
  applyTagPlan,
  desiredTagsOf,
  describeTagPlan,
  isEmptyPlan,
  planTags,
  repairTags,
  type TagPolicy,
} from "../common/tags.ts";
import {
  creditRefusal,
  describedAttributesOf,
  isBurstable,
  monitoringDrift,
  securityGroupsDrift,
} from "./instance-attributes.ts";
import { metadataOptionsDrift, profileAction, profileMatches } from "./instance-settings.ts";
import { encodeUserData, profileSpecifier, sameUserData } from "./launch.ts";
import { KIND, type InstanceLocator } from "./locator.ts";
import { instanceTags, requireId, stateOf, type Ec2InstanceObject } from "./model.ts";
import { planRunState, type RunStateFacts, type RunStateStep } from "./run-state.ts";
import {
  DELETE_ON_TERMINATION_SETTING,
  deleteOnTerminationDrift,
  detachedDrift,
  needsVolumeRead,
  taggedVolumes,
  VOLUME_TAGS_SETTING,
  volumeSettingsDrift,
} from "./volumes.ts";
import { Reason } from "../common/reasons.ts";

/** Repairs the drift of instances; see the module comment. */
export class InstanceRepairs {
  readonly #locator: InstanceLocator;
  readonly #tagPolicy: TagPolicy;
  /** What {@link repair} read beside each instance it was given, for its readiness. */
  readonly #facts = new WeakMap<Instance, RunStateFacts>();

  constructor(locator: InstanceLocator, tagPolicy: TagPolicy) {
    this.#locator = locator;
    this.#tagPolicy = tagPolicy;
  }

  /**
   * Repairs `instance` for `obj` and returns each change made. A type change that needs a
   * restart the spec does not allow touches nothing and fails with reason RestartRequired
   * (terminal until the spec changes; Ready stays as it is).
   */
  async repair(obj: Ec2InstanceObject, instance: Instance, ctx: DriverContext): Promise<DriftRepair[]> {
    const id = requireId(instance);
    const facts = await this.#runStateFacts(obj, instance, ctx);
    this.#facts.set(instance, facts);
    const runState = planRunState(obj.spec, instance, facts);
    if (runState.restartRequired !== undefined) {
      throw new InvalidSpecError(Reason.RestartRequired, runState.restartRequired);
    }
    const send = this.#sender(obj.spec.region, id, ctx);
    const { changes } = await repairTags(
      desiredTagsOf(obj, KIND, this.#tagPolicy),
      instanceTags(instance),
      {
        set: async (tags) => {
          await send((ec2, o) =>
            ec2.send(new CreateTagsCommand({ Resources: [id], Tags: toEc2Tags(tags) }), o),
          );
        },
        remove: async (keys) => {
          await send((ec2, o) =>
            ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: keys.map((Key) => ({ Key })) }), o),
          );
        },
      },
      this.#tagPolicy,
    );
    if (changes.length > 0) ctx.logger.info({ instanceId: id, changes }, "repaired EC2 instance tags");
    const settings = await this.#repairSettings(obj, instance, send, ctx);
    const attributes = await this.#repairAttributes(obj, instance, send, ctx);
    const volumes = await this.#repairVolumes(obj, instance, send, ctx);
    if (runState.steps.length > 0) {
      for (const step of runState.steps) await send((ec2, o) => runStep(ec2, id, step, o));
      ctx.logger.info({ instanceId: id, steps: runState.steps }, "changing the EC2 instance's run state");
    }
    return [...changes, ...settings, ...attributes, ...volumes, ...runState.repairs];
  }

  /** What the last {@link repair} of this very `instance` read beside it (none: nothing differs). */
  factsOf(instance: Instance): RunStateFacts | undefined {
    return this.#facts.get(instance);
  }

  /**
   * Reads the user data (DescribeInstanceAttribute) only when the spec sets it and the instance
   * is running or stopped, the states in which a change can be planned.
   */
  async #runStateFacts(
    obj: Ec2InstanceObject,
    instance: Instance,
    ctx: DriverContext,
  ): Promise<RunStateFacts> {
    const want = obj.spec.userData;
    const state = stateOf(instance);
    if (want === undefined || (state !== "running" && state !== "stopped")) return { userDataDiffers: false };
    const out = await (
      await this.#locator.client(obj.spec.region)
    ).send(new DescribeInstanceAttributeCommand({ InstanceId: requireId(instance), Attribute: "userData" }), {
      abortSignal: ctx.signal,
    });
    return { userDataDiffers: !sameUserData(want, out.UserData?.Value) };
  }

  /**
   * Repairs the metadata options and the instance profile the spec sets (instance-settings.ts),
   * on an instance that is running or stopped (EC2 refuses both in transition).
   */
  async #repairSettings(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return [];
    const id = requireId(instance);
    const changes: DriftRepair[] = [];
    const metadata = metadataOptionsDrift(obj.spec, instance);
    if (metadata !== undefined) {
      await send((ec2, o) =>
        ec2.send(new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, ...metadata }), o),
      );
      changes.push({ setting: "metadataOptions", description: "metadataOptions" });
    }
    const profile = obj.spec.iamInstanceProfile;
    const action = profileAction(obj.spec, instance);
    if (profile === undefined || action === undefined) return changes;
    const IamInstanceProfile = profileSpecifier(profile);
    if (action === "associate") {
      await send((ec2, o) => associate(ec2, id, IamInstanceProfile, o));
    } else {
      const found = await (
        await this.#locator.client(obj.spec.region)
      ).send(
        new DescribeIamInstanceProfileAssociationsCommand({
          Filters: [{ Name: "instance-id", Values: [id] }],
        }),
        { abortSignal: ctx.signal },
      );
      const association = found.IamInstanceProfileAssociations?.find(
        (a) => a.State === "associated" || a.State === "associating",
      );
      if (association?.AssociationId === undefined) {
        await send((ec2, o) => associate(ec2, id, IamInstanceProfile, o));
      } else if (profileMatches(profile, association.IamInstanceProfile?.Arn)) {
        // The association is right already; the instance description lags behind it.
        return changes;
      } else {
        const AssociationId = association.AssociationId;
        await send((ec2, o) =>
          ec2.send(new ReplaceIamInstanceProfileAssociationCommand({ AssociationId, IamInstanceProfile }), o),
        );
      }
    }
    changes.push({ setting: "iamInstanceProfile", description: `iamInstanceProfile: ${profile}` });
    return changes;
  }

  /**
   * Repairs the in-place attributes the spec sets (instance-attributes.ts) on an instance that is
   * running or stopped. The security groups and monitoring are compared with the instance EC2
   * described; the protections, the shutdown behaviour and the credit option are read first,
   * each only when the spec sets it (the credit option only while the instance's type is
   * burstable).
   */
  async #repairAttributes(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return [];
    const id = requireId(instance);
    const { spec } = obj;
    const ec2 = await this.#locator.client(spec.region);
    const read = { abortSignal: ctx.signal };
    const changes: DriftRepair[] = [];
    const groups = securityGroupsDrift(spec, instance);
    if (groups !== undefined) {
      await send((c, o) => c.send(new ModifyInstanceAttributeCommand({ InstanceId: id, Groups: groups }), o));
      changes.push({ setting: "securityGroups", description: `securityGroups: ${groups.join(", ")}` });
    }
    for (const a of describedAttributesOf(spec)) {
      const want = a.want(spec);
      if (want === undefined) continue;
      const out = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: a.attribute }),
        read,
      );
      if (a.have(out) === want) continue;
      await send((c, o) => c.send(new ModifyInstanceAttributeCommand(a.modify(id, want)), o));
      changes.push({ setting: a.setting, description: `${a.setting}: ${String(want)}` });
    }
    const monitoring = monitoringDrift(spec, instance);
    if (monitoring !== undefined) {
      await send((c, o) =>
        monitoring
          ? c.send(new MonitorInstancesCommand({ InstanceIds: [id] }), o)
          : c.send(new UnmonitorInstancesCommand({ InstanceIds: [id] }), o),
      );
      changes.push({
        setting: "monitoring",
        description: `monitoring: ${monitoring ? "detailed" : "basic"}`,
      });
    }
    const credits = spec.creditSpecification;
    if (credits !== undefined && isBurstable(instance.InstanceType)) {
      const out = await ec2.send(
        new DescribeInstanceCreditSpecificationsCommand({ InstanceIds: [id] }),
        read,
      );
      const have = out.InstanceCreditSpecifications?.find((c) => c.InstanceId === id)?.CpuCredits;
      if (have !== credits) {
        const answer = await send((c, o) =>
          c.send(
            new ModifyInstanceCreditSpecificationCommand({
              InstanceCreditSpecifications: [{ InstanceId: id, CpuCredits: credits }],
            }),
            o,
          ),
        );
        const refused = creditRefusal(answer, id);
        if (refused !== undefined) throw refused;
        changes.push({ setting: "creditSpecification", description: `creditSpecification: ${credits}` });
      }
    }
    if (changes.length > 0) ctx.logger.info({ instanceId: id, changes }, "repaired EC2 instance attributes");
    return changes;
  }

  /**
   * The volumes of an instance (volumes.ts): on one that is running or stopped, puts back the
   * deleteOnTermination values the spec sets (one ModifyInstanceAttribute for every device that
   * differs) and, with spec.volumeTags, the volumes' tags; on one that is also stopping, reports
   * a volume the spec lists that is detached, and each setting the spec sets that differs on the
   * volume EC2 reports (read with one DescribeVolumes only when needsVolumeRead says so).
   */
  async #repairVolumes(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    const state = stateOf(instance);
    // Reported while stopping too, so a report does not lapse for a stop; a pending instance may
    // not list its volumes yet.
    if (state !== "running" && state !== "stopped" && state !== "stopping") return [];
    const repairs = state !== "stopping";
    const { spec } = obj;
    const id = requireId(instance);
    const changes: DriftRepair[] = [];
    const keep = repairs ? deleteOnTerminationDrift(spec, instance) : [];
    if (keep.length > 0) {
      const BlockDeviceMappings = keep.map((k) => ({
        DeviceName: k.deviceName,
        Ebs: { DeleteOnTermination: k.want },
      }));
      await send((ec2, o) =>
        ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: id, BlockDeviceMappings }), o),
      );
      changes.push({
        setting: DELETE_ON_TERMINATION_SETTING,
        description: `storage.deleteOnTermination: ${keep.map((k) => `${k.deviceName} ${String(k.want)}`).join(", ")}`,
      });
    }
    changes.push(...detachedDrift(spec, instance));
    const tagged = taggedVolumes(spec, instance);
    if (!needsVolumeRead(spec) || tagged.size === 0) return changes;
    const volumes = await this.#describeVolumes(spec.region, [...new Set(tagged.values())].sort(), ctx);
    if (volumes === undefined) return changes;
    if (spec.volumeTags !== undefined && repairs) {
      const desired = desiredTagsOf(obj, KIND, this.#tagPolicy, {
        tags: spec.volumeTags,
        field: "spec.volumeTags",
      });
      const repaired: string[] = [];
      for (const [device, volumeId] of tagged) {
        const volume = volumes.find((v) => v.VolumeId === volumeId);
        if (volume === undefined) continue;
        const actual = fromEc2Tags(volume.Tags);
        const plan = planTags(desired, actual, this.#tagPolicy);
        if (isEmptyPlan(plan)) continue;
        await applyTagPlan(plan, actual, {
          set: async (tags) => {
            await send((ec2, o) =>
              ec2.send(new CreateTagsCommand({ Resources: [volumeId], Tags: toEc2Tags(tags) }), o),
            );
          },
          remove: async (keys) => {
            await send((ec2, o) =>
              ec2.send(
                new DeleteTagsCommand({ Resources: [volumeId], Tags: keys.map((Key) => ({ Key })) }),
                o,
              ),
            );
          },
        });
        repaired.push(`${device} ${describeTagPlan(plan).replace(/^tags: /, "")}`);
      }
      if (repaired.length > 0)
        changes.push({ setting: VOLUME_TAGS_SETTING, description: `volumeTags: ${repaired.join("; ")}` });
    }
    changes.push(...volumeSettingsDrift(spec, instance, volumes));
    const repaired = changes.filter((c) => c.reportOnly !== true);
    if (repaired.length > 0) ctx.logger.info({ instanceId: id, changes: repaired }, "repaired EC2 volumes");
    return changes;
  }

  /**
   * The volumes with `ids` (DescribeVolumes), or undefined when one of them is gone since
   * DescribeInstances listed it (detached and deleted meanwhile): the next poll sees the
   * instance without it.
   */
  async #describeVolumes(region: string, ids: string[], ctx: DriverContext): Promise<Volume[] | undefined> {
    try {
      const client = await this.#locator.client(region);
      const out = await client.send(new DescribeVolumesCommand({ VolumeIds: ids }), {
        abortSignal: ctx.signal,
      });
      return out.Volumes ?? [];
    } catch (err) {
      if (err instanceof AwsError && err.kind === "not-found") return undefined;
      throw err;
    }
  }

  /** Sends calls about instance `id` through the locator, with the reconcile's abort signal. */
  #sender(region: string, id: string, ctx: DriverContext): Send {
    const opts = { abortSignal: ctx.signal };
    return (call) => this.#locator.mutate(region, [id], (ec2) => call(ec2, opts));
  }
}

/** One mutating call about the instance being repaired. */
type Send = <O>(
  call: (ec2: AwsClientOf<"ec2">, opts: { abortSignal: AbortSignal }) => Promise<O>,
) => Promise<O>;

function associate(
  ec2: AwsClientOf<"ec2">,
  id: string,
  IamInstanceProfile: IamInstanceProfileSpecification,
  opts: { abortSignal: AbortSignal },
) {
  return ec2.send(new AssociateIamInstanceProfileCommand({ InstanceId: id, IamInstanceProfile }), opts);
}

/** The call of one run-state step. */
async function runStep(
  ec2: AwsClientOf<"ec2">,
  id: string,
  step: RunStateStep,
  opts: { abortSignal: AbortSignal },
): Promise<void> {
  switch (step.call) {
    case "ModifyInstanceAttribute":
      await ec2.send(
        new ModifyInstanceAttributeCommand(
          step.instanceType !== undefined
            ? { InstanceId: id, InstanceType: { Value: step.instanceType } }
            : // The Attribute/Value form, with the value base64-encoded as EC2 documents it.
              { InstanceId: id, Attribute: "userData", Value: encodeUserData(step.userData) },
        ),
        opts,
      );
      return;
    case "StopInstances":
      await ec2.send(new StopInstancesCommand({ InstanceIds: [id] }), opts);
      return;
    case "StartInstances":
      await ec2.send(new StartInstancesCommand({ InstanceIds: [id] }), opts);
      return;
  }
}
