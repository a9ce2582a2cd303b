/**
 * What differs between an EC2 instance and its spec, as a change set (../common/changes.ts), and
 * how each group of it is applied. In the order of application: the tags (the desired set,
 * ownership tags included; for an instance being adopted this writes its ownership tags), the
 * metadata options and the instance profile (instance-settings.ts), the in-place attributes
 * (instance-attributes.ts), the volumes (volumes.ts: volumeTags and deleteOnTermination put back,
 * the rest refused and reported), then the run state, type and user data (run-state.ts) last,
 * since the settings are written against the state observed.
 *
 * Planning reads what DescribeInstances does not report (the user data, the attributes the spec
 * sets, the credit option, the profile association, the volumes), each only when the spec needs
 * it, and writes nothing. Applying a group makes the calls its changes list, one step each,
 * never waiting for EC2 to finish a transition; every mutating call goes through the locator's
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
  type Instance,
  type Volume,
} from "@aws-sdk/client-ec2";
import { AwsError } from "../../aws/errors.ts";
import { fromEc2Tags, toEc2Tags, type TagMap } from "../../aws/ownership.ts";
import type { AwsClientOf } from "../../aws/service.ts";
import { changeSetOf, mapPath, type Change, type ChangeSet } from "../common/changes.ts";
import type { DriverContext } from "../common/driver.ts";
import {
  applyTagChanges,
  desiredTagsOf,
  tagChanges,
  type TagActions,
  type TagPolicy,
  type TagWriter,
} from "../common/tags.ts";
import {
  creditChange,
  creditRefusal,
  describedAttributeChange,
  describedAttributesOf,
  isBurstable,
  monitoringChange,
  securityGroupsChange,
} from "./instance-attributes.ts";
import { inPlaceChange, metadataOptionsChanges, profileAction, profileMatches } from "./instance-settings.ts";
import { encodeUserData, metadataOptionsRequest, profileSpecifier, sameUserData } from "./launch.ts";
import { KIND, type InstanceLocator } from "./locator.ts";
import { instanceTags, requireId, stateOf, type Ec2InstanceObject } from "./model.ts";
import { planRunState, runStateSteps, type RunStateFacts, type RunStateStep } from "./run-state.ts";
import {
  deleteOnTerminationChange,
  deleteOnTerminationDrift,
  detachedDrift,
  needsVolumeRead,
  taggedVolumes,
  VOLUME_TAGS_SETTING,
  volumeSettingsDrift,
} from "./volumes.ts";

/** The IAM actions of EC2's tag writes. */
const TAG_ACTIONS: TagActions = { set: "ec2:CreateTags", remove: "ec2:DeleteTags" };

/** The changes of one apply group and the step that applies them. */
type Group = readonly [readonly Change[], (changes: readonly Change[], ctx: DriverContext) => Promise<void>];

/** One mutating call about the instance, made with the applying reconcile's abort signal. */
type Send = <O>(
  ctx: DriverContext,
  call: (ec2: AwsClientOf<"ec2">, opts: { abortSignal: AbortSignal }) => Promise<O>,
) => Promise<O>;

/** Plans the changes of instances and applies them; see the module comment. */
export class InstancePlanner {
  readonly #locator: InstanceLocator;
  readonly #tagPolicy: TagPolicy;
  /** What {@link plan} read beside each instance it was given, for its readiness. */
  readonly #facts = new WeakMap<Instance, RunStateFacts>();

  constructor(locator: InstanceLocator, tagPolicy: TagPolicy) {
    this.#locator = locator;
    this.#tagPolicy = tagPolicy;
  }

  /**
   * The changes that bring `instance` in line with `obj`'s spec. A type or user data change that
   * needs a restart the spec does not allow is refused with reason RestartRequired and holds
   * every other change back (nothing is applied until the spec changes; Ready stays as it is).
   */
  async plan(obj: Ec2InstanceObject, instance: Instance, ctx: DriverContext): Promise<ChangeSet> {
    const id = requireId(instance);
    const facts = await this.#runStateFacts(obj, instance, ctx);
    this.#facts.set(instance, facts);
    const send = this.#sender(obj.spec.region, id);
    return changeSetOf([
      this.#tags(obj, instance, send),
      ...(await this.#settings(obj, instance, send, ctx)),
      ...(await this.#attributes(obj, instance, send, ctx)),
      ...(await this.#volumes(obj, instance, send, ctx)),
      this.#runState(obj, instance, facts, send),
    ]);
  }

  /** What the last {@link plan} of this very `instance` read beside it (undefined: never planned). */
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
    const have = out.UserData?.Value;
    return {
      userDataDiffers: !sameUserData(want, have),
      userDataReported: have !== undefined && have !== "",
    };
  }

  /** The instance's tags: CreateTags then DeleteTags, of exactly the keys given. */
  #tags(obj: Ec2InstanceObject, instance: Instance, send: Send): Group {
    const actual = instanceTags(instance);
    const changes = tagChanges(desiredTagsOf(obj, KIND, this.#tagPolicy), actual, this.#tagPolicy, {
      actions: TAG_ACTIONS,
    });
    const id = requireId(instance);
    return [
      changes,
      async (subset, ctx) => {
        await applyTagChanges(subset, actual, tagWriter(id, send, ctx));
        logApplied(ctx, id, subset);
      },
    ];
  }

  /**
   * The metadata options and the instance profile the spec sets (instance-settings.ts), on an
   * instance that is running or stopped (EC2 refuses both in transition). A profile to replace
   * is compared with the instance's association (DescribeIamInstanceProfileAssociations), which
   * the instance description may lag behind.
   */
  async #settings(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<Group[]> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return [];
    const { spec } = obj;
    const id = requireId(instance);
    const groups: Group[] = [];
    const metadata = metadataOptionsChanges(spec, instance);
    const options = spec.metadataOptions;
    if (metadata.length > 0 && options !== undefined) {
      groups.push([
        metadata,
        async (changes, c) => {
          // One call writes every option the spec sets.
          const MetadataOptions = metadataOptionsRequest(options);
          await send(c, (ec2, o) =>
            ec2.send(new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, ...MetadataOptions }), o),
          );
          logApplied(c, id, changes);
        },
      ]);
    }
    const profile = spec.iamInstanceProfile;
    const action = profileAction(spec, instance);
    if (profile === undefined || action === undefined) return groups;
    const IamInstanceProfile = profileSpecifier(profile);
    const arn = instance.IamInstanceProfile?.Arn;
    let observed = arn === "" ? undefined : arn;
    let associationId: string | undefined;
    if (action === "replace") {
      const found = await (
        await this.#locator.client(spec.region)
      ).send(
        new DescribeIamInstanceProfileAssociationsCommand({
          Filters: [{ Name: "instance-id", Values: [id] }],
        }),
        { abortSignal: ctx.signal },
      );
      const association = found.IamInstanceProfileAssociations?.find(
        (a) => a.State === "associated" || a.State === "associating",
      );
      // The association is right already; the instance description lags behind it.
      if (profileMatches(profile, association?.IamInstanceProfile?.Arn)) return groups;
      associationId = association?.AssociationId;
      observed = associationId === undefined ? undefined : association?.IamInstanceProfile?.Arn;
    }
    const replace = associationId;
    const change = inPlaceChange(
      "iamInstanceProfile",
      observed,
      profile,
      replace === undefined ? "ec2:AssociateIamInstanceProfile" : "ec2:ReplaceIamInstanceProfileAssociation",
      `iamInstanceProfile: ${profile}`,
    );
    groups.push([
      [change],
      async (changes, c) => {
        await send(c, (ec2, o) =>
          replace === undefined
            ? ec2.send(new AssociateIamInstanceProfileCommand({ InstanceId: id, IamInstanceProfile }), o)
            : ec2.send(
                new ReplaceIamInstanceProfileAssociationCommand({
                  AssociationId: replace,
                  IamInstanceProfile,
                }),
                o,
              ),
        );
        logApplied(c, id, changes);
      },
    ]);
    return groups;
  }

  /**
   * The in-place attributes the spec sets (instance-attributes.ts) on an instance that is running
   * or stopped, each its own group (its own call). The security groups and monitoring are
   * compared with the instance EC2 described; the protections, the shutdown behaviour and the
   * credit option are read first, each only when the spec sets it (the credit option only while
   * the instance's type is burstable).
   */
  async #attributes(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<Group[]> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return [];
    const id = requireId(instance);
    const { spec } = obj;
    const ec2 = await this.#locator.client(spec.region);
    const read = { abortSignal: ctx.signal };
    const groups: Group[] = [];
    /** A group of one change, applied with `apply` (given the change). */
    const one = (
      change: Change | undefined,
      apply: (change: Change, c: DriverContext) => Promise<void>,
    ): void => {
      if (change === undefined) return;
      groups.push([
        [change],
        async (changes, c) => {
          for (const ch of changes) await apply(ch, c);
          logApplied(c, id, changes);
        },
      ]);
    };
    one(securityGroupsChange(spec, instance), async (ch, c) => {
      const Groups = ch.desired as string[];
      await send(c, (e, o) => e.send(new ModifyInstanceAttributeCommand({ InstanceId: id, Groups }), o));
    });
    for (const a of describedAttributesOf(spec)) {
      const want = a.want(spec);
      if (want === undefined) continue;
      const out = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: a.attribute }),
        read,
      );
      one(describedAttributeChange(a, a.have(out), want), async (ch, c) => {
        const value = ch.desired as string | boolean;
        await send(c, (e, o) => e.send(new ModifyInstanceAttributeCommand(a.modify(id, value)), o));
      });
    }
    one(monitoringChange(spec, instance), async (ch, c) => {
      await send(c, (e, o) =>
        ch.desired === true
          ? e.send(new MonitorInstancesCommand({ InstanceIds: [id] }), o)
          : e.send(new UnmonitorInstancesCommand({ InstanceIds: [id] }), o),
      );
    });
    const credits = spec.creditSpecification;
    if (credits !== undefined && isBurstable(instance.InstanceType)) {
      const out = await ec2.send(
        new DescribeInstanceCreditSpecificationsCommand({ InstanceIds: [id] }),
        read,
      );
      const have = out.InstanceCreditSpecifications?.find((c) => c.InstanceId === id)?.CpuCredits;
      one(creditChange(have, credits), async (ch, c) => {
        const CpuCredits = String(ch.desired);
        const answer = await send(c, (e, o) =>
          e.send(
            new ModifyInstanceCreditSpecificationCommand({
              InstanceCreditSpecifications: [{ InstanceId: id, CpuCredits }],
            }),
            o,
          ),
        );
        const refused = creditRefusal(answer, id);
        if (refused !== undefined) throw refused;
      });
    }
    return groups;
  }

  /**
   * The volumes of an instance (volumes.ts): on one that is running or stopped, the
   * deleteOnTermination values the spec sets (one ModifyInstanceAttribute for every device that
   * differs) and, with spec.volumeTags, the volumes' tags (a group per volume); on one that is
   * also stopping, refused changes for a volume the spec lists that is detached, and for each
   * setting the spec sets that differs on the volume EC2 reports (read with one DescribeVolumes
   * only when needsVolumeRead says so).
   */
  async #volumes(
    obj: Ec2InstanceObject,
    instance: Instance,
    send: Send,
    ctx: DriverContext,
  ): Promise<Group[]> {
    const state = stateOf(instance);
    // Reported while stopping too, so a report does not lapse for a stop; a pending instance may
    // not list its volumes yet.
    if (state !== "running" && state !== "stopped" && state !== "stopping") return [];
    const repairs = state !== "stopping";
    const { spec } = obj;
    const id = requireId(instance);
    const groups: Group[] = [];
    const keep = repairs ? deleteOnTerminationDrift(spec, instance) : [];
    if (keep.length > 0) {
      const devices = new Map(keep.map((k) => [deleteOnTerminationChange(k), k.deviceName]));
      groups.push([
        [...devices.keys()],
        async (changes, c) => {
          const BlockDeviceMappings = changes.map((ch) => ({
            DeviceName: devices.get(ch),
            Ebs: { DeleteOnTermination: ch.desired === true },
          }));
          await send(c, (ec2, o) =>
            ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: id, BlockDeviceMappings }), o),
          );
          logApplied(c, id, changes);
        },
      ]);
    }
    groups.push(refused(detachedDrift(spec, instance)));
    const tagged = taggedVolumes(spec, instance);
    if (!needsVolumeRead(spec) || tagged.size === 0) return groups;
    const volumes = await this.#describeVolumes(spec.region, [...new Set(tagged.values())].sort(), ctx);
    if (volumes === undefined) return groups;
    if (spec.volumeTags !== undefined && repairs) {
      const desired = desiredTagsOf(obj, KIND, this.#tagPolicy, {
        tags: spec.volumeTags,
        field: "spec.volumeTags",
      });
      for (const [device, volumeId] of tagged) {
        const volume = volumes.find((v) => v.VolumeId === volumeId);
        if (volume === undefined) continue;
        const actual = fromEc2Tags(volume.Tags);
        const changes = volumeTagChanges(desired, actual, this.#tagPolicy, spec.volumeTags, device);
        groups.push([
          changes,
          async (subset, c) => {
            await applyTagChanges(subset, actual, tagWriter(volumeId, send, c));
            logApplied(c, id, subset);
          },
        ]);
      }
    }
    groups.push(refused(volumeSettingsDrift(spec, instance, volumes)));
    return groups;
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

  /** The run state, type and user data (run-state.ts), one sequence of calls, last. */
  #runState(obj: Ec2InstanceObject, instance: Instance, facts: RunStateFacts, send: Send): Group {
    const id = requireId(instance);
    return [
      planRunState(obj.spec, instance, facts).changes,
      async (changes, ctx) => {
        const steps = runStateSteps(obj.spec, changes);
        for (const step of steps) await send(ctx, (ec2, o) => runStep(ec2, id, step, o));
        ctx.logger.info(
          { instanceId: id, steps: steps.map((s) => s.call), changes: changes.map((c) => c.description) },
          "changing the EC2 instance's run state",
        );
      },
    ];
  }

  /** Sends calls about instance `id` through the locator. */
  #sender(region: string, id: string): Send {
    return (ctx, call) => this.#locator.mutate(region, [id], (ec2) => call(ec2, { abortSignal: ctx.signal }));
  }
}

/** A group of refused changes: listed, never applied (../common/changes.ts skips them). */
function refused(changes: readonly Change[]): Group {
  return [changes, () => Promise.reject(new Error("a refused change is never applied"))];
}

/**
 * The tag changes of the volume at `device`, of its own apply group: those of the instance's
 * tags (../common/tags.ts) under `spec.volumeTags` (the operator's own keys under `volumeTags`),
 * each described with the device. Whose the instance is is judged from its own tags alone, so
 * none of these counts as an ownership change.
 */
function volumeTagChanges(
  desired: Readonly<TagMap>,
  actual: Readonly<TagMap>,
  policy: TagPolicy,
  own: Readonly<TagMap>,
  device: string,
): Change[] {
  return tagChanges(desired, actual, policy, {
    actions: TAG_ACTIONS,
    own: { tags: own, field: "spec.volumeTags" },
    group: `${VOLUME_TAGS_SETTING}[${device}]`,
    setting: VOLUME_TAGS_SETTING,
  }).map(({ ownership: _ownership, ...c }) => ({
    ...c,
    path: c.path.startsWith("spec.") ? c.path : mapPath(VOLUME_TAGS_SETTING, c.key ?? ""),
    description: c.description.replace(/^volumeTags: /, `volumeTags: ${device} `),
  }));
}

/** Writes tags of EC2 resource `resourceId` (the instance or one of its volumes). */
function tagWriter(resourceId: string, send: Send, ctx: DriverContext): TagWriter {
  return {
    set: async (tags) => {
      await send(ctx, (ec2, o) =>
        ec2.send(new CreateTagsCommand({ Resources: [resourceId], Tags: toEc2Tags(tags) }), o),
      );
    },
    remove: async (keys) => {
      await send(ctx, (ec2, o) =>
        ec2.send(new DeleteTagsCommand({ Resources: [resourceId], Tags: keys.map((Key) => ({ Key })) }), o),
      );
    },
  };
}

/** Logs the changes applied to instance `id` (descriptions only: no value of a secret). */
function logApplied(ctx: DriverContext, id: string, changes: readonly Change[]): void {
  ctx.logger.info(
    { instanceId: id, changes: changes.map((c) => c.description) },
    "applied changes to the EC2 instance",
  );
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
