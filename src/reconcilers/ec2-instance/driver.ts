/**
 * The Ec2Instance driver: finds, launches, plans the changes of and terminates EC2 instances for
 * the shared reconcile flow. Finding is the locator's job (locator.ts: by the ID recorded in
 * status through the per-region batchers, else by ownership tag), planning and applying changes
 * the planner's (plan.ts: tags, metadata options, instance profile, in-place attributes, volumes,
 * run state and type); this file launches with the recorded idempotency token, tagged at launch,
 * terminates, and describes.
 */
import {
  DescribeImagesCommand,
  ModifyInstanceAttributeCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Instance,
} from "@aws-sdk/client-ec2";
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import type { Clock } from "../../runtime/clock.ts";
import {
  blocked,
  InvalidSpecError,
  recordedIdOf,
  type DeleteOutcome,
  type Description,
  type DriverContext,
  type ObservedDetails,
  type Observation,
  type ResourceDriver,
} from "../common/driver.ts";
import type { ChangeSet } from "../common/changes.ts";
import { DEFAULT_POLL_INTERVAL_MS } from "../common/defaults.ts";
import { uidOf } from "../common/owner.ts";
import { Reason } from "../common/reasons.ts";
import { DEFAULT_TAG_POLICY, desiredTagsOf, type TagPolicy } from "../common/tags.ts";
import { AmiRootDevices } from "./ami-root-device.ts";
import { needsAmiRootDevice, runInstancesInput } from "./launch.ts";
import { InstanceLocator, KIND } from "./locator.ts";
import {
  instanceStatus,
  instanceTags,
  requireId,
  stateOf,
  type Ec2InstanceObject,
  type Ec2InstanceView,
} from "./model.ts";
import { InstancePlanner } from "./plan.ts";
import { EC2_INSTANCE_TRAITS } from "./traits.ts";
import { runStateReadiness } from "./run-state.ts";

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
   * period, so every poll round reads EC2 at least once and drift is seen within a round. An
   * object polled more often (its compute.cloud.com/poll-interval annotation) accepts at most half
   * its own period.
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
export class Ec2InstanceDriver implements ResourceDriver<Ec2InstanceObject, Ec2InstanceView> {
  readonly #aws: AwsClientSource;
  readonly #locator: InstanceLocator;
  readonly #planner: InstancePlanner;
  readonly #roots: AmiRootDevices;
  readonly #tagPolicy: TagPolicy;

  constructor(opts: Ec2InstanceDriverOptions) {
    this.#aws = opts.aws;
    this.#tagPolicy = opts.tagPolicy ?? DEFAULT_TAG_POLICY;
    const graceMs = opts.visibilityGraceMs ?? 120_000;
    if (!(graceMs >= 0)) throw new RangeError(`visibilityGraceMs must be >= 0, got ${graceMs}`);
    const poll = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    if (!(poll > 0)) throw new RangeError(`pollIntervalMs must be > 0, got ${poll}`);
    const snapshotMaxAgeMs = opts.snapshotMaxAgeMs ?? Math.min(15_000, poll / 2);
    const trackMs = opts.trackMs ?? 2 * poll;
    if (!(snapshotMaxAgeMs >= 0))
      throw new RangeError(`snapshotMaxAgeMs must be >= 0, got ${snapshotMaxAgeMs}`);
    if (!(trackMs >= 0)) throw new RangeError(`trackMs must be >= 0, got ${trackMs}`);
    this.#locator = new InstanceLocator({
      aws: opts.aws,
      clock: opts.clock,
      windowMs: opts.batchWindowMs ?? 10,
      snapshotMaxAgeMs,
      trackMs,
      graceMs,
    });
    this.#planner = new InstancePlanner(this.#locator, this.#tagPolicy);
    this.#roots = new AmiRootDevices(async (region, input, signal) =>
      (await this.#aws.client("ec2", region)).send(new DescribeImagesCommand(input), { abortSignal: signal }),
    );
  }

  /** Finds the object's instance (locator.ts). */
  async observe(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Observation<Instance>> {
    return await this.#locator.observe(obj, EC2_INSTANCE_TRAITS.idField, ctx);
  }

  async create(obj: Ec2InstanceObject, token: string, ctx: DriverContext): Promise<Instance> {
    const { spec } = obj;
    if (spec.amiId === undefined || spec.instanceType === undefined) {
      // Admission requires both unless the object only observes; this one is about to launch.
      throw new InvalidSpecError(
        Reason.MissingLaunchFields,
        "amiId and instanceType are required to launch an instance",
      );
    }
    const amiRootDeviceName = needsAmiRootDevice(spec)
      ? await this.#roots.get(spec.region, spec.amiId, ctx.signal)
      : undefined;
    const input = runInstancesInput(spec, {
      token,
      tags: desiredTagsOf(obj, KIND, this.#tagPolicy),
      volumeTags:
        spec.volumeTags === undefined
          ? undefined
          : desiredTagsOf(obj, KIND, this.#tagPolicy, { tags: spec.volumeTags, field: "spec.volumeTags" }),
      amiRootDeviceName,
    });
    const out = await (
      await this.#aws.client("ec2", spec.region)
    ).send(new RunInstancesCommand(input), {
      abortSignal: ctx.signal,
    });
    const instance = out.Instances?.[0];
    if (instance?.InstanceId === undefined) throw new Error("RunInstances answered without an instance");
    ctx.logger.info({ instanceId: instance.InstanceId, token }, "launched EC2 instance");
    return instance;
  }

  /** What differs between the instance and the spec, and how to apply it (plan.ts). */
  async plan(
    obj: Ec2InstanceObject,
    observed: Observation<Instance> & { exists: true },
    ctx: DriverContext,
  ): Promise<ChangeSet> {
    return await this.#planner.plan(obj, observed.resource, ctx);
  }

  /** RunInstances, which tags the instance and its volumes at launch (ec2:CreateTags); nothing follows it. */
  createActions(_obj: Ec2InstanceObject): readonly string[] {
    return LAUNCH_ACTIONS;
  }

  /** Everything an observe-only instance reports is in {@link describe}, but its tags. */
  observed(instance: Instance): ObservedDetails<NonNullable<Ec2InstanceObject["status"]>> {
    return { tags: instanceTags(instance) };
  }

  describe(
    instance: Instance,
    obj: Ec2InstanceObject,
  ): Description<NonNullable<Ec2InstanceObject["status"]>> {
    return {
      status: instanceStatus(instance),
      readiness: runStateReadiness(obj.spec, instance, this.#planner.factsOf(instance)),
    };
  }

  /**
   * Terminates every live instance carrying this object's UID tag: the observed one and any
   * other, which covers a launch whose answer was lost. Never a foreign instance, recorded or
   * not. Done once none is left; meanwhile reports `shutting-down`. An observed instance that is
   * not this object's is reported as left in place.
   */
  async delete(
    obj: Ec2InstanceObject,
    observed: Observation<Instance>,
    ctx: DriverContext,
  ): Promise<DeleteOutcome> {
    const uid = uidOf(obj);
    const region = obj.spec.region;
    const recorded = recordedIdOf(obj, EC2_INSTANCE_TRAITS.idField);
    const live = new Map<string, Instance>();
    let foreign: string | undefined;
    if (observed.exists) {
      const id = requireId(observed.resource);
      if (observed.ownership === "owned") live.set(id, observed.resource);
      else {
        foreign = id;
        ctx.logger.warn(
          { instanceId: id },
          "instance does not carry this object's ownership tags; not terminating it",
        );
      }
    }
    for (const instance of await this.#locator.listOwned(region, uid, ctx.signal)) {
      if (instance.InstanceId !== undefined) live.set(instance.InstanceId, instance);
    }
    if (live.size === 0) {
      if (!observed.exists && observed.appearing !== undefined) {
        return {
          done: false,
          message: `waiting for instance ${recorded ?? ""} to be listed by EC2 before terminating it`,
        };
      }
      if (recorded === undefined && this.#locator.launchInFlight(ctx)) {
        return { done: false, message: "waiting for the instance being launched to be listed by EC2" };
      }
      return foreign === undefined
        ? { done: true }
        : {
            done: true,
            leftInPlace: `instance ${foreign} is not owned by this object and was left in place`,
          };
    }
    const ids = [...live.keys()].sort();
    const toTerminate = [...live.values()]
      .filter((i) => stateOf(i) !== "shutting-down")
      .map((i) => requireId(i))
      .sort();
    if (toTerminate.length > 0) {
      try {
        await this.#locator.mutate(region, toTerminate, (ec2) =>
          ec2.send(new TerminateInstancesCommand({ InstanceIds: toTerminate }), { abortSignal: ctx.signal }),
        );
        ctx.logger.info({ instanceIds: toTerminate }, "terminating EC2 instances");
      } catch (err) {
        if (err instanceof AwsError && err.code === TERMINATION_REFUSED) {
          return await this.#terminationProtected(obj, toTerminate, ctx);
        }
        // Gone between the lookup and the call: the next poll sees it terminated or unlisted.
        if (!(err instanceof AwsError && err.kind === "not-found")) throw err;
      }
    }
    return {
      done: false,
      state: "shutting-down",
      message: `terminating instance${ids.length > 1 ? "s" : ""} ${ids.join(", ")}`,
    };
  }

  /**
   * EC2 refused to terminate because termination protection is on. With
   * `disableApiTermination: false` in the spec the operator lifts it (the next pass terminates);
   * otherwise the deletion is blocked until the spec or a human lifts it.
   */
  async #terminationProtected(
    obj: Ec2InstanceObject,
    ids: readonly string[],
    ctx: DriverContext,
  ): Promise<DeleteOutcome> {
    if (obj.spec.disableApiTermination !== false) {
      return blocked(
        Reason.TerminationProtected,
        `EC2 refuses to terminate ${ids.join(", ")}: termination protection is on; set ` +
          "spec.disableApiTermination to false (the operator then lifts it) or deletionPolicy to Retain",
      );
    }
    for (const id of ids) {
      await this.#locator.mutate(obj.spec.region, [id], (ec2) =>
        ec2.send(
          new ModifyInstanceAttributeCommand({ InstanceId: id, DisableApiTermination: { Value: false } }),
          { abortSignal: ctx.signal },
        ),
      );
    }
    ctx.logger.info({ instanceIds: ids }, "lifted termination protection to terminate EC2 instances");
    return { done: false, message: `lifting termination protection of ${ids.join(", ")} to terminate it` };
  }
}

/** The IAM actions of a launch, in call order (the DescribeImages read aside). */
const LAUNCH_ACTIONS: readonly string[] = Object.freeze(["ec2:RunInstances", "ec2:CreateTags"]);

/** EC2's code for a TerminateInstances that termination protection refuses. */
const TERMINATION_REFUSED = "OperationNotPermitted";
