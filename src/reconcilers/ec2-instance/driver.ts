/**
 * The Ec2Instance driver: finds, launches, re-tags and terminates EC2 instances for the shared
 * reconcile flow. Instances are found by the ID recorded in status (through the per-region
 * {@link DescribeBatcher}), else by ownership tag; they are launched with the recorded
 * idempotency token and tagged at launch; tags are the only thing ever changed afterwards.
 */
import { ownerOf, uidOf } from "../common/owner.ts";
import {
  AssociateIamInstanceProfileCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeIamInstanceProfileAssociationsCommand,
  ModifyInstanceMetadataOptionsCommand,
  ReplaceIamInstanceProfileAssociationCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Instance,
} from "@aws-sdk/client-ec2";
import { getCondition, type Ec2Instance } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import { desiredTags, ownershipTags, toEc2Tags } from "../../aws/ownership.ts";
import { isOwnedBy, verdictOf } from "../common/ownership.ts";
import type { Clock } from "../../runtime/clock.ts";
import {
  TAGS_SETTING,
  type DeleteOutcome,
  type DriftRepair,
  type DriverContext,
  type ManagedObject,
  type Observation,
  type Readiness,
  type ResourceDriver,
} from "../common/driver.ts";
import { FlowReason } from "../common/managed-reconciler.ts";
import { AmiRootDevices } from "./ami-root-device.ts";
import { DescribeBatcher } from "./describe-batcher.ts";
import { describeInstances, namedFilters, ownedFilters } from "./instance-lookup.ts";
import {
  clearedInstanceStatus,
  describeTagChanges,
  instanceReadiness,
  instanceStatus,
  instanceTagChanges,
  instanceTags,
  isGone,
  pickInstance,
  stateOf,
} from "./instance-view.ts";
import { metadataOptionsDrift, profileAction, profileMatches } from "./instance-settings.ts";
import { needsAmiRootDevice, profileSpecifier, runInstancesInput } from "./launch.ts";

/** An Ec2Instance as the shared flow handles it. */
export type Ec2InstanceObject = Ec2Instance & ManagedObject;

/** The kind name written into the ownership tags. */
const KIND = "Ec2Instance";

/** Options of {@link Ec2InstanceDriver}. */
export interface Ec2InstanceDriverOptions {
  aws: AwsClientSource;
  clock: Clock;
  /** Window in which instance lookups join one DescribeInstances call, in ms. @default 10 */
  batchWindowMs?: number;
  /**
   * The controller's steady-state poll period, in ms; the snapshot defaults derive from it.
   * @default 300_000
   */
  pollIntervalMs?: number;
  /**
   * The oldest DescribeInstances answer the steady-state observation of a settled instance
   * accepts from the batcher's snapshot, in ms (0: always a fresh read). Keep it below the poll
   * period, so every poll round reads EC2 at least once and drift is seen within a round.
   * @default min(15_000, pollIntervalMs / 2)
   */
  snapshotMaxAgeMs?: number;
  /**
   * How long the batcher keeps prefetching an instance ID after it was last asked for, in ms.
   * @default 2 × pollIntervalMs
   */
  trackMs?: number;
  /**
   * EC2 is eventually consistent: for a while after RunInstances, DescribeInstances may not list
   * the new instance. Within this long after a launch, an instance that is not listed (as
   * opposed to listed as `terminated`) counts as not yet visible, never as deleted. In ms.
   * @default 120_000
   */
  visibilityGraceMs?: number;
}

/**
 * A recorded instance that DescribeInstances does not list yet, shortly after its launch. Thrown
 * from observe so the reconcile is retried with backoff instead of concluding the instance was
 * deleted (which would launch a second one).
 */
export class InstanceNotVisibleError extends Error {
  override readonly name = "InstanceNotVisibleError";
  constructor(instanceId: string) {
    super(`instance ${instanceId} was launched moments ago and is not listed by DescribeInstances yet`);
  }
}

/** The driver of the Ec2Instance kind; one per controller, shared by its workers. */
export class Ec2InstanceDriver implements ResourceDriver<Ec2InstanceObject, Instance> {
  readonly noun = "instance";
  /** Tags are the only setting of an instance that is put back (the rest is immutable). */
  readonly driftSettings: readonly string[] = Object.freeze([
    TAGS_SETTING,
    "metadataOptions",
    "iamInstanceProfile",
  ]);
  /** Steady polls of all instances land together, so the batcher can merge their lookups. */
  readonly alignPolls = true;
  readonly #aws: AwsClientSource;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #graceMs: number;
  readonly #snapshotMaxAgeMs: number;
  readonly #trackMs: number;
  readonly #batchers = new Map<string, DescribeBatcher>();
  readonly #roots: AmiRootDevices;

  constructor(opts: Ec2InstanceDriverOptions) {
    this.#aws = opts.aws;
    this.#clock = opts.clock;
    this.#windowMs = opts.batchWindowMs ?? 10;
    this.#graceMs = opts.visibilityGraceMs ?? 120_000;
    if (!(this.#graceMs >= 0)) throw new RangeError(`visibilityGraceMs must be >= 0, got ${this.#graceMs}`);
    const poll = opts.pollIntervalMs ?? 300_000;
    if (!(poll > 0)) throw new RangeError(`pollIntervalMs must be > 0, got ${poll}`);
    this.#snapshotMaxAgeMs = opts.snapshotMaxAgeMs ?? Math.min(15_000, poll / 2);
    this.#trackMs = opts.trackMs ?? 2 * poll;
    if (!(this.#snapshotMaxAgeMs >= 0))
      throw new RangeError(`snapshotMaxAgeMs must be >= 0, got ${this.#snapshotMaxAgeMs}`);
    if (!(this.#trackMs >= 0)) throw new RangeError(`trackMs must be >= 0, got ${this.#trackMs}`);
    this.#roots = new AmiRootDevices((region, input, signal) =>
      this.#aws
        .ec2(region)
        .send(new DescribeImagesCommand(input), signal !== undefined ? { abortSignal: signal } : {}),
    );
  }

  recordedId(obj: Ec2InstanceObject): string | undefined {
    const id = obj.status?.instanceId;
    return id === undefined || id === "" ? undefined : id;
  }

  /**
   * Finds the object's instance. The steady-state poll of a settled instance (see
   * {@link #settled}) may be answered from the batcher's snapshot, at most `snapshotMaxAgeMs`
   * old; only a live instance of ours is taken from it. Anything else (not listed, terminated,
   * foreign) and every other observation (creation, transitions, a new generation) is read fresh,
   * so a snapshot never makes the flow conclude the instance was deleted out of band.
   */
  async observe(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Observation<Instance>> {
    const recorded = this.recordedId(obj);
    let recordedInstance: Instance | undefined;
    if (recorded !== undefined) {
      const batcher = this.#batcher(obj.spec.region);
      if (this.#snapshotMaxAgeMs > 0 && this.#settled(obj)) {
        const seen = await batcher.get(recorded, { maxAgeMs: this.#snapshotMaxAgeMs, signal: ctx.signal });
        if (seen !== undefined && !isGone(seen) && isOwnedBy(instanceTags(seen), obj)) {
          return { exists: true, resource: seen, ownership: "owned" };
        }
      }
      recordedInstance = await batcher.get(recorded, { signal: ctx.signal });
      if (recordedInstance !== undefined && !isGone(recordedInstance)) {
        // Status proves nothing (whoever may write it could name any instance): the recorded
        // instance is ours only with this object's UID tag, and is never adopted through its ID.
        return {
          exists: true,
          resource: recordedInstance,
          ...verdictOf(instanceTags(recordedInstance), obj, { adoptable: false }),
        };
      }
    }
    const owned = await this.#findOwned(obj, ctx);
    if (owned !== undefined) return { exists: true, resource: owned, ownership: "owned" };
    if (recorded !== undefined && recordedInstance === undefined && this.#launchedRecently(obj)) {
      throw new InstanceNotVisibleError(recorded);
    }
    if (recorded === undefined) {
      const named = await this.#findNamed(obj, ctx);
      if (named !== undefined)
        return { exists: true, resource: named, ...verdictOf(instanceTags(named), obj) };
    }
    return { exists: false };
  }

  async create(obj: Ec2InstanceObject, token: string, ctx: DriverContext): Promise<Instance> {
    const { spec } = obj;
    const amiRootDeviceName = needsAmiRootDevice(spec)
      ? await this.#roots.get(spec.region, spec.amiId, ctx.signal)
      : undefined;
    const input = runInstancesInput(spec, {
      token,
      tags: desiredTags(spec.tags, ownerOf(obj, KIND)),
      amiRootDeviceName,
    });
    const out = await this.#aws
      .ec2(spec.region)
      .send(new RunInstancesCommand(input), { abortSignal: ctx.signal });
    const instance = out.Instances?.[0];
    if (instance?.InstanceId === undefined) throw new Error("RunInstances answered without an instance");
    ctx.logger.info({ instanceId: instance.InstanceId, token }, "launched EC2 instance");
    return instance;
  }

  async adopt(obj: Ec2InstanceObject, instance: Instance, ctx: DriverContext): Promise<Instance> {
    const id = requireId(instance);
    const tags = ownershipTags(ownerOf(obj, KIND));
    try {
      await this.#aws
        .ec2(obj.spec.region)
        .send(new CreateTagsCommand({ Resources: [id], Tags: toEc2Tags(tags) }), { abortSignal: ctx.signal });
    } finally {
      // Even a failed call may have changed the tags: the snapshot's answer is no longer trusted.
      this.#batcher(obj.spec.region).invalidate(id);
    }
    ctx.logger.info({ instanceId: id }, "adopted EC2 instance");
    return { ...instance, Tags: toEc2Tags({ ...instanceTags(instance), ...tags }) };
  }

  async sync(
    obj: Ec2InstanceObject,
    instance: Instance,
    ctx: DriverContext,
  ): Promise<{ resource: Instance; changes: DriftRepair[] }> {
    const tagged = await this.#syncTags(obj, instance, ctx);
    const settings = await this.#syncSettings(obj, tagged.resource, ctx);
    return { resource: settings.resource, changes: [...tagged.changes, ...settings.changes] };
  }

  /**
   * Repairs the metadata options and the instance profile the spec sets (instance-settings.ts),
   * on an instance that is running or stopped (EC2 refuses both in transition).
   */
  async #syncSettings(
    obj: Ec2InstanceObject,
    instance: Instance,
    ctx: DriverContext,
  ): Promise<{ resource: Instance; changes: DriftRepair[] }> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return { resource: instance, changes: [] };
    const id = requireId(instance);
    const ec2 = this.#aws.ec2(obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    const changes: DriftRepair[] = [];
    let next = instance;
    try {
      const metadata = metadataOptionsDrift(obj.spec, instance);
      if (metadata !== undefined) {
        await ec2.send(new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, ...metadata }), opts);
        next = { ...next, MetadataOptions: { ...next.MetadataOptions, ...metadata } };
        changes.push({ setting: "metadataOptions", description: "metadataOptions" });
      }
      const profile = obj.spec.iamInstanceProfile;
      const action = profileAction(obj.spec, instance);
      if (profile !== undefined && action !== undefined) {
        const IamInstanceProfile = profileSpecifier(profile);
        if (action === "associate") {
          await ec2.send(
            new AssociateIamInstanceProfileCommand({ InstanceId: id, IamInstanceProfile }),
            opts,
          );
        } else {
          const found = await ec2.send(
            new DescribeIamInstanceProfileAssociationsCommand({
              Filters: [{ Name: "instance-id", Values: [id] }],
            }),
            opts,
          );
          const association = found.IamInstanceProfileAssociations?.find(
            (a) => a.State === "associated" || a.State === "associating",
          );
          if (association?.AssociationId === undefined) {
            await ec2.send(
              new AssociateIamInstanceProfileCommand({ InstanceId: id, IamInstanceProfile }),
              opts,
            );
          } else if (profileMatches(profile, association.IamInstanceProfile?.Arn)) {
            // The association is right already; the instance description lags behind it.
            return { resource: next, changes };
          } else {
            await ec2.send(
              new ReplaceIamInstanceProfileAssociationCommand({
                AssociationId: association.AssociationId,
                IamInstanceProfile,
              }),
              opts,
            );
          }
        }
        changes.push({ setting: "iamInstanceProfile", description: `iamInstanceProfile: ${profile}` });
      }
    } finally {
      if (changes.length > 0) this.#batcher(obj.spec.region).invalidate(id);
    }
    return { resource: next, changes };
  }

  async #syncTags(
    obj: Ec2InstanceObject,
    instance: Instance,
    ctx: DriverContext,
  ): Promise<{ resource: Instance; changes: DriftRepair[] }> {
    const id = requireId(instance);
    const desired = desiredTags(obj.spec.tags, ownerOf(obj, KIND));
    const actual = instanceTags(instance);
    const changes = instanceTagChanges(desired, actual);
    if (Object.keys(changes.set).length === 0 && changes.remove.length === 0) {
      return { resource: instance, changes: [] };
    }
    const ec2 = this.#aws.ec2(obj.spec.region);
    try {
      if (Object.keys(changes.set).length > 0) {
        await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: toEc2Tags(changes.set) }), {
          abortSignal: ctx.signal,
        });
      }
      if (changes.remove.length > 0) {
        await ec2.send(
          new DeleteTagsCommand({ Resources: [id], Tags: changes.remove.map((Key) => ({ Key })) }),
          {
            abortSignal: ctx.signal,
          },
        );
      }
    } finally {
      // The snapshot holds the tags from before the repair (even a failed one may have begun it).
      this.#batcher(obj.spec.region).invalidate(id);
    }
    const now = { ...actual, ...changes.set };
    for (const k of changes.remove) delete now[k];
    return {
      resource: { ...instance, Tags: toEc2Tags(now) },
      changes: describeTagChanges(changes).map((description) => ({ setting: TAGS_SETTING, description })),
    };
  }

  status(_obj: Ec2InstanceObject, instance: Instance): Partial<NonNullable<Ec2InstanceObject["status"]>> {
    return instanceStatus(instance);
  }

  clearedStatus(): Partial<NonNullable<Ec2InstanceObject["status"]>> {
    return clearedInstanceStatus();
  }

  readiness(instance: Instance): Readiness {
    return instanceReadiness(instance);
  }

  /**
   * Terminates every live instance carrying this object's UID tag: the recorded one and any
   * other, which covers a launch whose answer was lost. Never a foreign instance, recorded or not. Done once none is left; meanwhile reports `shutting-down`.
   */
  async delete(obj: Ec2InstanceObject, ctx: DriverContext): Promise<DeleteOutcome> {
    const uid = uidOf(obj);
    const region = obj.spec.region;
    const recorded = this.recordedId(obj);
    const live = new Map<string, Instance>();
    let recordedListed = false;
    if (recorded !== undefined) {
      const instance = await this.#batcher(region).get(recorded, { signal: ctx.signal });
      recordedListed = instance !== undefined;
      if (instance !== undefined && !isGone(instance)) {
        if (isOwnedBy(instanceTags(instance), obj)) live.set(recorded, instance);
        else
          ctx.logger.warn(
            { instanceId: recorded },
            "recorded instance does not carry this object's ownership tags; not terminating it",
          );
      }
    }
    for (const instance of await describeInstances(this.#aws.ec2(region), ownedFilters(uid), ctx.signal)) {
      if (instance.InstanceId !== undefined) live.set(instance.InstanceId, instance);
    }
    if (live.size === 0) {
      if (recorded !== undefined && !recordedListed && this.#launchedRecently(obj)) {
        return {
          done: false,
          message: `waiting for instance ${recorded} to be listed by EC2 before terminating it`,
        };
      }
      if (recorded === undefined && this.#launchInFlight(obj)) {
        return { done: false, message: "waiting for the instance being launched to be listed by EC2" };
      }
      return { done: true };
    }
    const ids = [...live.keys()].sort();
    const toTerminate = [...live.values()]
      .filter((i) => stateOf(i) !== "shutting-down")
      .map((i) => requireId(i))
      .sort();
    if (toTerminate.length > 0) {
      try {
        await this.#aws
          .ec2(region)
          .send(new TerminateInstancesCommand({ InstanceIds: toTerminate }), { abortSignal: ctx.signal });
        ctx.logger.info({ instanceIds: toTerminate }, "terminating EC2 instances");
      } catch (err) {
        // Gone between the lookup and the call: the next poll sees it terminated or unlisted.
        if (!(err instanceof AwsError && err.kind === "not-found")) throw err;
      } finally {
        for (const id of toTerminate) this.#batcher(region).invalidate(id);
      }
    }
    return {
      done: false,
      state: "shutting-down",
      message: `terminating instance${ids.length > 1 ? "s" : ""} ${ids.join(", ")}`,
    };
  }

  #batcher(region: string): DescribeBatcher {
    let batcher = this.#batchers.get(region);
    if (batcher === undefined) {
      const ec2 = (): ReturnType<AwsClientSource["ec2"]> => this.#aws.ec2(region);
      batcher = new DescribeBatcher({
        describe: (input) => ec2().send(new DescribeInstancesCommand(input)),
        clock: this.#clock,
        windowMs: this.#windowMs,
        trackMs: this.#trackMs,
      });
      this.#batchers.set(region, batcher);
    }
    return batcher;
  }

  /** The live instance carrying this object's UID tag, if any (the pick among several is stable). */
  async #findOwned(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Instance | undefined> {
    const found = await describeInstances(
      this.#aws.ec2(obj.spec.region),
      ownedFilters(uidOf(obj)),
      ctx.signal,
    );
    const chosen = pickInstance(found, obj.status?.createToken);
    if (found.length > 1) {
      ctx.logger.warn(
        { instanceIds: found.map((i) => i.InstanceId), chosen: chosen?.InstanceId },
        "several instances carry this object's ownership tags; managing one, leaving the others alone",
      );
    }
    return chosen;
  }

  /** A live instance tagged with this object's namespace, name and kind: the adoption candidate. */
  async #findNamed(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Instance | undefined> {
    const found = await describeInstances(
      this.#aws.ec2(obj.spec.region),
      namedFilters(ownerOf(obj, KIND)),
      ctx.signal,
    );
    return pickInstance(found, undefined);
  }

  /**
   * Whether the object is in steady state as far as its own record says: an instance ID is
   * recorded, it is not being deleted, and Ready is True for the current generation.
   */
  #settled(obj: Ec2InstanceObject): boolean {
    if (this.recordedId(obj) === undefined || obj.metadata.deletionTimestamp !== undefined) return false;
    const ready = getCondition(obj.status?.conditions, "Ready");
    return ready?.status === "True" && ready.observedGeneration === obj.metadata.generation;
  }

  /** Whether the recorded launch time lies within the visibility grace period. */
  #launchedRecently(obj: Ec2InstanceObject): boolean {
    const t = Date.parse(obj.status?.launchTime ?? "");
    return Number.isFinite(t) && this.#clock.now() - t < this.#graceMs;
  }

  /**
   * Whether a launch was started recently whose instance ID was never recorded (the operator
   * stopped between RunInstances and the status write): a token is recorded, no ID, and the
   * Ready condition turned to Creating within the grace period.
   */
  #launchInFlight(obj: Ec2InstanceObject): boolean {
    const status = obj.status;
    if (status?.createToken === undefined || status.instanceId !== undefined) return false;
    const ready = getCondition(status.conditions, "Ready");
    if (ready?.reason !== FlowReason.Creating) return false;
    const t = Date.parse(ready.lastTransitionTime ?? "");
    return Number.isFinite(t) && this.#clock.now() - t < this.#graceMs;
  }
}

function requireId(instance: Instance): string {
  if (instance.InstanceId === undefined) throw new Error("EC2 answered with an instance without an ID");
  return instance.InstanceId;
}
