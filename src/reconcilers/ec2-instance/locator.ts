/**
 * Finds the EC2 instance of an Ec2Instance object, and owns the per-region lookups that make
 * that cheap: the {@link DescribeBatcher} (lookups by ID, joined into one DescribeInstances call
 * and remembered for a short while) and the {@link FilterBatcher} (lookups by tag). Whatever
 * changes an instance goes through {@link InstanceLocator.mutate}, which drops the instance from
 * the snapshot, so no later lookup answers with what it was before the change.
 */
import { DescribeInstancesCommand, type Filter, type Instance } from "@aws-sdk/client-ec2";
import type { AwsClientSource } from "../../aws/clients.ts";
import { pages } from "../../aws/pages.ts";
import type { AwsClientOf } from "../../aws/service.ts";
import type { Clock } from "../../runtime/clock.ts";
import { recordedIdOf, type DriverContext, type Observation } from "../common/driver.ts";
import { observesOnly } from "../common/management-policy.ts";
import { ownerOf, uidOf } from "../common/owner.ts";
import { isOwnedBy, verdictOf } from "../common/ownership.ts";
import { DescribeBatcher } from "./describe-batcher.ts";
import { FilterBatcher } from "./filter-batcher.ts";
import {
  instanceTags,
  isGone,
  namedFilters,
  ownedFilters,
  pickInstance,
  type Ec2InstanceObject,
} from "./model.ts";

/** The kind name written into the ownership tags. */
export const KIND = "Ec2Instance";

/** Options of {@link InstanceLocator}; see the driver's options for their meaning. */
export interface InstanceLocatorOptions {
  aws: AwsClientSource;
  clock: Clock;
  windowMs: number;
  snapshotMaxAgeMs: number;
  trackMs: number;
  graceMs: number;
}

/** Finds instances for one driver, region by region; see the module comment. */
export class InstanceLocator {
  readonly #o: InstanceLocatorOptions;
  readonly #batchers = new Map<string, DescribeBatcher>();
  readonly #lookups = new Map<string, FilterBatcher>();

  constructor(opts: InstanceLocatorOptions) {
    this.#o = opts;
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
  async observe(obj: Ec2InstanceObject, idField: string, ctx: DriverContext): Promise<Observation<Instance>> {
    const named = await this.#observeNamed(obj, ctx);
    if (named !== undefined) return named;
    const recorded = recordedIdOf(obj, idField);
    let recordedInstance: Instance | undefined;
    if (recorded !== undefined) {
      const batcher = this.#batcher(obj.spec.region);
      const maxAgeMs = this.#snapshotAgeFor(ctx);
      if (maxAgeMs > 0) {
        const seen = await batcher.get(recorded, { maxAgeMs, signal: ctx.signal });
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

  /** Every instance carrying the UID tag `uid` in `region`, read fresh (all pages). */
  async listOwned(region: string, uid: string, signal: AbortSignal): Promise<Instance[]> {
    return await describeInstances(await this.client(region), ownedFilters(uid), signal);
  }

  /**
   * Whether a launch whose instance ID was never recorded began within the visibility grace
   * period (the operator stopped between RunInstances and the status write).
   */
  launchInFlight(ctx: DriverContext): boolean {
    const t = ctx.flow.createStartedAt;
    return t !== undefined && this.#o.clock.now() - t < this.#o.graceMs;
  }

  /**
   * Makes a call that changes the instances `ids` in `region`, and drops them from the snapshot
   * once it was sent (even a failed call may have begun the change).
   */
  async mutate<O>(
    region: string,
    ids: readonly string[],
    call: (ec2: AwsClientOf<"ec2">) => Promise<O>,
  ): Promise<O> {
    try {
      return await call(await this.client(region));
    } finally {
      const batcher = this.#batcher(region);
      for (const id of ids) batcher.invalidate(id);
    }
  }

  /**
   * How old a snapshot may answer this observation: only a settled object's steady poll may be
   * answered from one, never the reconcile a change event or a reconcile request asked for (it
   * must see the change), and never older than half the object's own poll period. 0: read fresh.
   */
  #snapshotAgeFor(ctx: DriverContext): number {
    if (this.#o.snapshotMaxAgeMs <= 0 || !ctx.flow.settled || ctx.flow.changeHinted === true) return 0;
    const period = ctx.flow.pollIntervalMs;
    return period === undefined ? this.#o.snapshotMaxAgeMs : Math.min(this.#o.snapshotMaxAgeMs, period / 2);
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
    const maxAgeMs = this.#snapshotAgeFor(ctx);
    let seen = maxAgeMs > 0 ? await batcher.get(id, { maxAgeMs, signal: ctx.signal }) : undefined;
    if (seen === undefined || isGone(seen)) seen = await batcher.get(id, { signal: ctx.signal });
    if (seen !== undefined && !isGone(seen))
      return { exists: true, resource: seen, ...verdictOf(instanceTags(seen), obj) };
    return observesOnly(obj) ? { exists: false } : undefined;
  }

  /** The live instance carrying this object's UID tag, if any (the pick among several is stable). */
  async #findOwned(obj: Ec2InstanceObject, ctx: DriverContext): Promise<Instance | undefined> {
    const found = await this.#lookup(obj.spec.region).find(ownedFilters(uidOf(obj)), ctx.signal);
    const chosen = pickInstance(found, ctx.flow.create?.token);
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
    return Number.isFinite(t) && this.#o.clock.now() - t < this.#o.graceMs;
  }

  /** The EC2 client of `region`, for a call that reads. */
  async client(region: string): Promise<AwsClientOf<"ec2">> {
    return await this.#o.aws.client("ec2", region);
  }

  /** The region's lookups by ID, batched across objects and remembered (describe-batcher.ts). */
  #batcher(region: string): DescribeBatcher {
    let batcher = this.#batchers.get(region);
    if (batcher === undefined) {
      batcher = new DescribeBatcher({
        describe: async (input) => (await this.client(region)).send(new DescribeInstancesCommand(input)),
        clock: this.#o.clock,
        windowMs: this.#o.windowMs,
        trackMs: this.#o.trackMs,
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
        describe: async (filters) => describeInstances(await this.client(region), filters),
        clock: this.#o.clock,
        windowMs: this.#o.windowMs,
      });
      this.#lookups.set(region, lookup);
    }
    return lookup;
  }
}

/** Every instance matching `filters`, all pages (a repeated page token ends the listing). */
export async function describeInstances(
  ec2: Pick<AwsClientOf<"ec2">, "send">,
  filters: Filter[],
  signal?: AbortSignal,
): Promise<Instance[]> {
  const out: Instance[] = [];
  const listing = pages(
    (token) =>
      ec2.send(
        new DescribeInstancesCommand({
          Filters: filters,
          MaxResults: 1000,
          NextToken: token,
        }),
        { abortSignal: signal },
      ),
    (page) => page.NextToken,
  );
  for await (const page of listing) for (const r of page.Reservations ?? []) out.push(...(r.Instances ?? []));
  return out;
}
