/**
 * The Ec2Instance driver: finds, launches, re-tags and terminates EC2 instances for the shared
 * reconcile flow. Instances are found by the ID recorded in status (through the per-region
 * {@link DescribeBatcher}), else by ownership tag; they are launched with the recorded
 * idempotency token and tagged at launch. Afterwards the driver repairs the tags, the metadata
 * options and the instance profile, and moves the instance to the run state and type the spec
 * asks for (run-state.ts): one call per step, never waiting for EC2 to finish a transition.
 */
import { ownerOf, uidOf } from "../common/owner.ts";
import { DEFAULT_TAG_POLICY, desiredTagsOf, repairTags, type TagPolicy } from "../common/tags.ts";
import {
  AssociateIamInstanceProfileCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeIamInstanceProfileAssociationsCommand,
  ModifyInstanceAttributeCommand,
  ModifyInstanceMetadataOptionsCommand,
  StartInstancesCommand,
  StopInstancesCommand,
  ReplaceIamInstanceProfileAssociationCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type EC2Client,
  type Filter,
  type Instance,
} from "@aws-sdk/client-ec2";
import type { Ec2Instance } from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { AwsClientOf } from "../../aws/service.ts";
import { AwsError } from "../../aws/errors.ts";
import { toEc2Tags } from "../../aws/ownership.ts";
import { observesOnly } from "../common/management-policy.ts";
import { isOwnedBy, verdictOf } from "../common/ownership.ts";
import type { Clock } from "../../runtime/clock.ts";
import {
  InvalidSpecError,
  recordedIdOf,
  TAGS_SETTING,
  type DeleteOutcome,
  type DriftRepair,
  type Description,
  type DriverContext,
  type ManagedObject,
  type ObservedDetails,
  type Observation,
  type ResourceDriver,
} from "../common/driver.ts";
import { AmiRootDevices } from "./ami-root-device.ts";
import { DescribeBatcher } from "./describe-batcher.ts";
import { FilterBatcher } from "./filter-batcher.ts";
import {
  instanceStatus,
  instanceTags,
  isGone,
  namedFilters,
  ownedFilters,
  pickInstance,
  stateOf,
} from "./model.ts";
import { metadataOptionsDrift, profileAction, profileMatches } from "./instance-settings.ts";
import { needsAmiRootDevice, profileSpecifier, runInstancesInput } from "./launch.ts";
import {
  DESIRED_STATE_SETTING,
  INSTANCE_TYPE_SETTING,
  planRunState,
  runStateReadiness,
  type RunStateStep,
} from "./run-state.ts";

/** An Ec2Instance as the shared flow handles it. */
export type Ec2InstanceObject = Ec2Instance & ManagedObject;

/** The kind name written into the ownership tags. */
const KIND = "Ec2Instance";

/** Synced reason of a type change on a running instance that the spec does not let restart. */
export const RESTART_REQUIRED = "RestartRequired";

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
  /** What the operator may do to an instance's tags. @default DEFAULT_TAG_POLICY */
  tagPolicy?: TagPolicy | undefined;
}

/** The driver of the Ec2Instance kind; one per controller, shared by its workers. */
export class Ec2InstanceDriver implements ResourceDriver<Ec2InstanceObject, Instance> {
  readonly noun = "instance";
  readonly idField = "instanceId";
  /** The settings of an instance that are put back; the rest is immutable. */
  readonly driftSettings: readonly string[] = Object.freeze([
    TAGS_SETTING,
    "metadataOptions",
    "iamInstanceProfile",
    DESIRED_STATE_SETTING,
    INSTANCE_TYPE_SETTING,
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
  readonly #lookups = new Map<string, FilterBatcher>();
  readonly #roots: AmiRootDevices;
  readonly #tagPolicy: TagPolicy;

  constructor(opts: Ec2InstanceDriverOptions) {
    this.#aws = opts.aws;
    this.#clock = opts.clock;
    this.#windowMs = opts.batchWindowMs ?? 10;
    this.#tagPolicy = opts.tagPolicy ?? DEFAULT_TAG_POLICY;
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
        .client("ec2", region)
        .send(new DescribeImagesCommand(input), signal !== undefined ? { abortSignal: signal } : {}),
    );
  }

  /**
   * Finds the object's instance. The steady-state poll of a settled instance (see
   * {@link FlowFacts.settled}) may be answered from the batcher's snapshot, at most
   * `snapshotMaxAgeMs` old; only a live instance of ours is taken from it. Anything else (not
   * listed, terminated, foreign) and every other observation (creation, transitions, a new
   * generation, deletion) is read fresh, so a snapshot never makes the flow conclude the instance
   * was deleted out of band. A recorded instance not yet listed shortly after its launch is
   * `appearing`, never absent (that would launch a second one). A deletion is never offered a
   * foreign instance found only by name: it would leave it alone anyway.
   */
  async observe(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Observation<Instance>> {
    const named = await this.#observeNamed(obj, ctx);
    if (named !== undefined) return named;
    const recorded = recordedIdOf(obj, this.idField);
    let recordedInstance: Instance | undefined;
    if (recorded !== undefined) {
      const batcher = this.#batcher(obj.spec.region);
      if (this.#snapshotMaxAgeMs > 0 && ctx.flow.settled && ctx.flow.changeHinted !== true) {
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
      return {
        exists: false,
        appearing: `instance ${recorded} was launched moments ago and is not listed by DescribeInstances yet`,
      };
    }
    if (recorded === undefined && !ctx.flow.deleting) {
      const named = await this.#findNamed(obj, ctx);
      if (named !== undefined)
        return { exists: true, resource: named, ...verdictOf(instanceTags(named), obj) };
    }
    return { exists: false };
  }

  /**
   * The instance spec.instanceId names, when it does: for an observe-only object the only
   * lookup (absent when it is not listed or terminated); for a managed object (switched from
   * ObserveOnly, keeping the ID) the instance to take over, judged by its tags and adoptable
   * since the spec, not status, names it; once it is gone, the ordinary lookups. Read like a
   * recorded instance: a settled object may be answered from the batcher's snapshot.
   */
  async #observeNamed(
    obj: Ec2InstanceObject,
    ctx: DriverContext,
  ): Promise<Observation<Instance> | undefined> {
    const id = obj.spec.instanceId;
    if (id === undefined) return undefined;
    const batcher = this.#batcher(obj.spec.region);
    const maxAgeMs =
      this.#snapshotMaxAgeMs > 0 && ctx.flow.settled && ctx.flow.changeHinted !== true
        ? this.#snapshotMaxAgeMs
        : 0;
    let seen = maxAgeMs > 0 ? await batcher.get(id, { maxAgeMs, signal: ctx.signal }) : undefined;
    if (seen === undefined || isGone(seen)) seen = await batcher.get(id, { signal: ctx.signal });
    if (seen !== undefined && !isGone(seen))
      return { exists: true, resource: seen, ...verdictOf(instanceTags(seen), obj) };
    return observesOnly(obj) ? { exists: false } : undefined;
  }

  async create(obj: Ec2InstanceObject, token: string, ctx: DriverContext): Promise<Instance> {
    const { spec } = obj;
    if (spec.amiId === undefined || spec.instanceType === undefined) {
      // Admission requires both unless the object only observes; this one is about to launch.
      throw new InvalidSpecError(
        "MissingLaunchFields",
        "amiId and instanceType are required to launch an instance",
      );
    }
    const amiRootDeviceName = needsAmiRootDevice(spec)
      ? await this.#roots.get(spec.region, spec.amiId, ctx.signal)
      : undefined;
    const input = runInstancesInput(spec, {
      token,
      tags: desiredTagsOf(obj, KIND, this.#tagPolicy),
      amiRootDeviceName,
    });
    const out = await this.#aws
      .client("ec2", spec.region)
      .send(new RunInstancesCommand(input), { abortSignal: ctx.signal });
    const instance = out.Instances?.[0];
    if (instance?.InstanceId === undefined) throw new Error("RunInstances answered without an instance");
    ctx.logger.info({ instanceId: instance.InstanceId, token }, "launched EC2 instance");
    return instance;
  }

  /**
   * Brings the instance's tags to the desired set (CreateTags, then DeleteTags; for an instance
   * being adopted this writes its ownership tags), then its metadata options and instance
   * profile, then its run state and type (last, since the settings are written against the state
   * observed). A type change that needs a restart the spec does not allow touches nothing and
   * fails with reason RestartRequired (terminal until the spec changes; Ready stays as it is).
   */
  async update(
    obj: Ec2InstanceObject,
    observed: Observation<Instance> & { exists: true },
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    const id = requireId(observed.resource);
    const runState = planRunState(obj.spec, observed.resource);
    if (runState.restartRequired !== undefined) {
      throw new InvalidSpecError(RESTART_REQUIRED, runState.restartRequired);
    }
    const ec2 = this.#aws.client("ec2", obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    let wrote = false;
    try {
      const { changes } = await repairTags(
        desiredTagsOf(obj, KIND, this.#tagPolicy),
        instanceTags(observed.resource),
        {
          set: async (tags) => {
            wrote = true;
            await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: toEc2Tags(tags) }), opts);
          },
          remove: async (keys) => {
            wrote = true;
            await ec2.send(
              new DeleteTagsCommand({ Resources: [id], Tags: keys.map((Key) => ({ Key })) }),
              opts,
            );
          },
        },
        this.#tagPolicy,
      );
      if (changes.length > 0) ctx.logger.info({ instanceId: id, changes }, "repaired EC2 instance tags");
      const settings = await this.#updateSettings(obj, observed.resource, ctx);
      if (runState.steps.length > 0) {
        wrote = true;
        await this.#runSteps(obj, id, runState.steps, ctx);
        ctx.logger.info({ instanceId: id, steps: runState.steps }, "changing the EC2 instance's run state");
      }
      return [...changes, ...settings, ...runState.repairs];
    } finally {
      // The snapshot holds the tags from before the repair (even a failed one may have begun it).
      if (wrote) this.#batcher(obj.spec.region).invalidate(id);
    }
  }

  /**
   * Repairs the metadata options and the instance profile the spec sets (instance-settings.ts),
   * on an instance that is running or stopped (EC2 refuses both in transition).
   */
  async #updateSettings(
    obj: Ec2InstanceObject,
    instance: Instance,
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    const state = stateOf(instance);
    if (state !== "running" && state !== "stopped") return [];
    const id = requireId(instance);
    const ec2 = this.#aws.client("ec2", obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    const changes: DriftRepair[] = [];
    try {
      const metadata = metadataOptionsDrift(obj.spec, instance);
      if (metadata !== undefined) {
        await ec2.send(new ModifyInstanceMetadataOptionsCommand({ InstanceId: id, ...metadata }), opts);
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
            return changes;
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
    return changes;
  }

  /** Makes the run-state calls of a plan, in order; the instance's snapshot is dropped by the caller. */
  async #runSteps(
    obj: Ec2InstanceObject,
    id: string,
    steps: readonly RunStateStep[],
    ctx: DriverContext,
  ): Promise<void> {
    const ec2 = this.#aws.client("ec2", obj.spec.region);
    const opts = { abortSignal: ctx.signal };
    for (const step of steps) {
      switch (step.call) {
        case "ModifyInstanceAttribute":
          await ec2.send(
            new ModifyInstanceAttributeCommand({
              InstanceId: id,
              InstanceType: { Value: step.instanceType },
            }),
            opts,
          );
          break;
        case "StopInstances":
          await ec2.send(new StopInstancesCommand({ InstanceIds: [id] }), opts);
          break;
        case "StartInstances":
          await ec2.send(new StartInstancesCommand({ InstanceIds: [id] }), opts);
          break;
      }
    }
  }

  /** Everything an observe-only instance reports is in {@link describe}, but its tags. */
  observed(instance: Instance): ObservedDetails<NonNullable<Ec2InstanceObject["status"]>> {
    return { tags: instanceTags(instance) };
  }

  describe(
    instance: Instance,
    obj: Ec2InstanceObject,
  ): Description<NonNullable<Ec2InstanceObject["status"]>> {
    return { status: instanceStatus(instance), readiness: runStateReadiness(obj.spec, instance) };
  }

  /**
   * Terminates every live instance carrying this object's UID tag: the observed one and any
   * other, which covers a launch whose answer was lost. Never a foreign instance, recorded or
   * not. Done once none is left; meanwhile reports `shutting-down`.
   */
  async delete(
    obj: Ec2InstanceObject,
    observed: Observation<Instance>,
    ctx: DriverContext,
  ): Promise<DeleteOutcome> {
    const uid = uidOf(obj);
    const region = obj.spec.region;
    const recorded = recordedIdOf(obj, this.idField);
    const live = new Map<string, Instance>();
    if (observed.exists) {
      const id = requireId(observed.resource);
      if (observed.ownership === "owned") live.set(id, observed.resource);
      else
        ctx.logger.warn(
          { instanceId: id },
          "instance does not carry this object's ownership tags; not terminating it",
        );
    }
    for (const instance of await describeInstances(
      this.#aws.client("ec2", region),
      ownedFilters(uid),
      ctx.signal,
    )) {
      if (instance.InstanceId !== undefined) live.set(instance.InstanceId, instance);
    }
    if (live.size === 0) {
      if (!observed.exists && observed.appearing !== undefined) {
        return {
          done: false,
          message: `waiting for instance ${recorded ?? ""} to be listed by EC2 before terminating it`,
        };
      }
      if (recorded === undefined && this.#launchInFlight(ctx)) {
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
          .client("ec2", region)
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
      const ec2 = (): AwsClientOf<"ec2"> => this.#aws.client("ec2", region);
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

  /** The region's lookups by tag, batched across objects (filter-batcher.ts). */
  #lookup(region: string): FilterBatcher {
    let lookup = this.#lookups.get(region);
    if (lookup === undefined) {
      lookup = new FilterBatcher({
        describe: (filters) => describeInstances(this.#aws.client("ec2", region), filters),
        clock: this.#clock,
        windowMs: this.#windowMs,
      });
      this.#lookups.set(region, lookup);
    }
    return lookup;
  }

  /** The live instance carrying this object's UID tag, if any (the pick among several is stable). */
  async #findOwned(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Instance | undefined> {
    const found = await this.#lookup(obj.spec.region).find(ownedFilters(uidOf(obj)), ctx.signal);
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
    const found = await this.#lookup(obj.spec.region).find(namedFilters(ownerOf(obj, KIND)), ctx.signal);
    return pickInstance(found, undefined);
  }

  /** Whether the recorded launch time lies within the visibility grace period. */
  #launchedRecently(obj: Ec2InstanceObject): boolean {
    const t = Date.parse(obj.status?.launchTime ?? "");
    return Number.isFinite(t) && this.#clock.now() - t < this.#graceMs;
  }

  /**
   * Whether a launch whose instance ID was never recorded began within the grace period (the
   * operator stopped between RunInstances and the status write).
   */
  #launchInFlight(ctx: DriverContext): boolean {
    const t = ctx.flow.createStartedAt;
    return t !== undefined && this.#clock.now() - t < this.#graceMs;
  }
}

function requireId(instance: Instance): string {
  if (instance.InstanceId === undefined) throw new Error("EC2 answered with an instance without an ID");
  return instance.InstanceId;
}

/** Every instance matching `filters`, all pages (a repeated page token ends the listing). */
export async function describeInstances(
  ec2: Pick<EC2Client, "send">,
  filters: Filter[],
  signal?: AbortSignal,
): Promise<Instance[]> {
  const out: Instance[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const page = await ec2.send(
      new DescribeInstancesCommand({
        Filters: filters,
        MaxResults: 1000,
        ...(token !== undefined ? { NextToken: token } : {}),
      }),
      signal !== undefined ? { abortSignal: signal } : {},
    );
    for (const r of page.Reservations ?? []) out.push(...(r.Instances ?? []));
    const next = page.NextToken;
    token = next !== undefined && next !== "" && !seen.has(next) ? next : undefined;
    if (token !== undefined) seen.add(token);
  } while (token !== undefined);
  return out;
}
