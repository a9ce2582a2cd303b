/**
 * Bulk tag reads (`--bulk-tag-reads`): the steady poll of an S3Bucket or SqsQueue takes the
 * resource's tags from one shared snapshot of the account and region, read with the Resource
 * Groups Tagging API (../../aws/tag-sweep.ts) at 100 resources a call, instead of one tag read
 * per resource.
 *
 * That API answers from an index AWS updates asynchronously after tag writes and deletions, with
 * no stated bound (deleted resources have been seen in its answers for 45 minutes and more), so
 * an answer may be stale either way. The rules below keep a stale answer from ever causing a
 * wrong repair; at worst it delays noticing drift until the next direct read:
 *
 * - Only a steady poll ({@link isSteadyPoll}) uses the snapshot; existence is always read
 *   directly (the drivers' own per-resource read), never taken from the snapshot.
 * - Not within `windowMs` of the operator's own tag write to that resource ({@link noteWrite}).
 * - Only within `windowMs` of the last direct read of that resource's tags ({@link noteDirect}),
 *   so every resource's tags are read directly at least once per window (after a restart, at the
 *   first poll): drift the index does not show yet is seen by then at the latest.
 * - Not for a resource that was created anew since its last direct read (a queue's creation
 *   time, when the driver has one: an incarnation).
 * - A resource the snapshot does not name is read directly.
 * - The drivers accept snapshot tags only when they carry the object's ownership, and before any
 *   repair they re-read the tags directly and repair from that answer.
 *
 * One snapshot per region serves every object of the kind in the account (the driver is per
 * account), taken afresh once a poll period has passed since the last sweep ended. The sweep runs
 * in the background: a poll never waits for it, and reads directly while there is no snapshot yet.
 * A sweep that fails (throttled, unreachable) leaves the period to direct reads; AccessDenied
 * (tag:GetResources missing from the operator's policy) is logged once as a warning, counted,
 * and makes every read direct for one window before a sweep is tried again.
 */
import type { Registry } from "prom-client";
import { AwsError } from "../../aws/errors.ts";
import { MANAGED_BY_TAG, MANAGED_BY_VALUE, type TagMap } from "../../aws/ownership.ts";
import { sweepTags, type SweptTags } from "../../aws/tag-sweep.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { Logger } from "../../runtime/logging.ts";
import { counter } from "../../runtime/metrics/registry.ts";
import { DEFAULT_BULK_TAG_WINDOW_MS, DEFAULT_POLL_INTERVAL_MS } from "./defaults.ts";
import type { FlowFacts, ManagedObject } from "./driver.ts";
import { observesOnly } from "./management-policy.ts";
import type { IamFeature } from "./kind.ts";
import type { ReconcilerDeps } from "./setup.ts";

/** Metric names, for dashboards, alerts and tests. */
export const TAG_SNAPSHOT_METRIC_NAMES = Object.freeze({
  reads: "kubeprovisioner_bulk_tag_reads_total",
  sweeps: "kubeprovisioner_bulk_tag_sweeps_total",
});

/**
 * What bulk tag reads need from IAM, for the generated IAM table of docs/aws.md and the policies
 * of config/iam (src/gen). GetResources has no resource-level permissions. Without it the
 * operator reads tags per resource, as with the feature off (one warning, and a metric).
 */
export const BULK_TAG_READS_IAM: IamFeature = {
  name: "bulk tag reads",
  sid: "BulkTagReads",
  iam: [
    {
      action: "tag:GetResources",
      when: "only with --bulk-tag-reads; without it, tags are read per resource (one warning, and a metric)",
    },
  ],
};

/**
 * Why a steady poll read a resource's tags directly, or `snapshot` when it took them from the
 * snapshot; the `outcome` label of `kubeprovisioner_bulk_tag_reads_total`:
 * - `own-write`: the operator wrote the resource's tags within the window;
 * - `due`: no direct read of its tags within the window (also the first poll after a start);
 * - `recreated`: the resource was created anew since its last direct read;
 * - `absent`: the snapshot does not name it;
 * - `unavailable`: the sweep failed (throttled, unreachable, aborted);
 * - `denied`: the operator may not call tag:GetResources;
 * - `sweeping`: no usable snapshot while one is being read (polls never wait for a sweep);
 * - `disagreed`: counted besides `snapshot` when the snapshot's tags did not match the spec (or
 *   another setting needed a repair) and the tags were re-read directly before any repair.
 */
export const TAG_READ_OUTCOMES = [
  "snapshot",
  "own-write",
  "due",
  "recreated",
  "absent",
  "unavailable",
  "denied",
  "sweeping",
  "disagreed",
] as const;
/** One {@link TAG_READ_OUTCOMES} value. */
export type TagReadOutcome = (typeof TAG_READ_OUTCOMES)[number];

/** What {@link TagSnapshots.lookup} answers. */
export type TagLookup =
  | { readonly source: "snapshot"; readonly tags: Readonly<TagMap> }
  | { readonly source: "direct"; readonly reason: Exclude<TagReadOutcome, "snapshot" | "disagreed"> };

/**
 * Whether this reconcile may take tags from a snapshot: the flow says it is a steady poll
 * ({@link FlowFacts.poll}: the periodic poll of a converged object, no change event, nothing in
 * flight), the object is settled (Ready for its generation, a resource recorded) and managed
 * (not observe-only), and it is not being deleted. A spec change is never one: it makes the
 * object unsettled until reconciled.
 */
export function isSteadyPoll(obj: Pick<ManagedObject, "spec">, flow: FlowFacts): boolean {
  return (
    flow.poll === true && flow.settled && !flow.deleting && flow.changeHinted !== true && !observesOnly(obj)
  );
}

/** Logs at debug where a steady poll's tags come from: `snapshot`, or why they are read directly. */
export function logTagSource(ctx: { logger: Logger }, found: TagLookup): void {
  ctx.logger.debug({ tagSource: found.source === "snapshot" ? "snapshot" : found.reason }, "tag source");
}

/** Options of {@link TagSnapshots}. */
export interface TagSnapshotsOptions {
  /** The kind, for metric labels and logs (`S3Bucket`). */
  readonly kind: string;
  /** Reads one snapshot of `region`. */
  readonly sweep: (region: string) => Promise<SweptTags>;
  readonly clock: Clock;
  /** A snapshot older than this is taken afresh: the poll period. */
  readonly maxAgeMs: number;
  /** See the module comment. @default DEFAULT_BULK_TAG_WINDOW_MS */
  readonly windowMs?: number;
  readonly logger: Logger;
  readonly registry: Registry;
}

/** What the snapshot rules remember of one resource, by ARN. */
interface ResourceRecord {
  wroteAt?: number;
  directAt?: number;
  incarnation?: string;
}

/**
 * One region's snapshot: when its sweep began (what the rules judge it by) and ended (when the
 * next one may begin), and its answer or that it failed.
 */
type Snapshot = { readonly takenAt: number; readonly doneAt: number } & (
  { readonly tags: SweptTags } | { readonly failed: "unavailable" | "denied" }
);

/** The snapshots of one kind in one account, and the per-resource rules; see the module comment. */
export class TagSnapshots {
  readonly #o: TagSnapshotsOptions & { windowMs: number };
  readonly #records = new Map<string, ResourceRecord>();
  readonly #snapshots = new Map<string, Snapshot>();
  readonly #inFlight = new Map<string, Promise<Snapshot>>();
  readonly #reads: ReturnType<typeof counter<"kind" | "outcome">>;
  readonly #sweeps: ReturnType<typeof counter<"kind" | "result">>;
  #warnedDenied = false;

  constructor(opts: TagSnapshotsOptions) {
    const windowMs = opts.windowMs ?? DEFAULT_BULK_TAG_WINDOW_MS;
    if (!(windowMs > 0)) throw new RangeError(`windowMs must be > 0, got ${windowMs}`);
    if (!(opts.maxAgeMs > 0)) throw new RangeError(`maxAgeMs must be > 0, got ${opts.maxAgeMs}`);
    this.#o = { ...opts, windowMs };
    ({ reads: this.#reads, sweeps: this.#sweeps } = tagSnapshotMetrics(opts.registry));
    for (const outcome of TAG_READ_OUTCOMES) this.#reads.inc({ kind: opts.kind, outcome }, 0);
    for (const result of ["ok", "failed", "denied"]) this.#sweeps.inc({ kind: opts.kind, result }, 0);
  }

  /** The operator is writing the tags of `arn` (call it before the write). */
  noteWrite(arn: string): void {
    this.#record(arn).wroteAt = this.#o.clock.now();
  }

  /**
   * The tags of `arn` were just read directly. `incarnation`: what identifies this very resource
   * beside its ARN (a queue's creation time), when the driver knows it.
   */
  noteDirect(arn: string, incarnation?: string): void {
    const r = this.#record(arn);
    r.directAt = this.#o.clock.now();
    if (incarnation !== undefined) r.incarnation = incarnation;
  }

  /** The next steady poll of `arn` reads its tags directly (a direct read contradicted the snapshot). */
  distrust(arn: string): void {
    const r = this.#records.get(arn);
    if (r !== undefined) delete r.directAt;
  }

  /** Counts an outcome that the driver decides: `disagreed`. */
  count(outcome: TagReadOutcome): void {
    this.#reads.inc({ kind: this.#o.kind, outcome });
  }

  /**
   * The tags of `arn` in `region` for a steady poll, from the snapshot when the rules allow it,
   * else why they must be read directly; counted either way. `incarnation`: as for
   * {@link noteDirect}, read directly in this poll. Never throws for a failed sweep.
   */
  async lookup(region: string, arn: string, incarnation?: string): Promise<TagLookup> {
    const answer = await this.#lookup(region, arn, incarnation);
    this.count(answer.source === "snapshot" ? "snapshot" : answer.reason);
    return answer;
  }

  async #lookup(region: string, arn: string, incarnation: string | undefined): Promise<TagLookup> {
    const now = this.#o.clock.now();
    const { windowMs } = this.#o;
    const r = this.#records.get(arn);
    if (r?.wroteAt !== undefined && now - r.wroteAt < windowMs)
      return { source: "direct", reason: "own-write" };
    if (r?.directAt === undefined || now - r.directAt >= windowMs) return { source: "direct", reason: "due" };
    if (incarnation !== undefined && r.incarnation !== undefined && r.incarnation !== incarnation)
      return { source: "direct", reason: "recreated" };
    const snapshot = this.#snapshot(region);
    if (snapshot === undefined) return { source: "direct", reason: "sweeping" };
    if ("failed" in snapshot) return { source: "direct", reason: snapshot.failed };
    // A write after the sweep began is covered by the first rule; one shortly before it is not.
    if (r.wroteAt !== undefined && snapshot.takenAt - r.wroteAt < windowMs)
      return { source: "direct", reason: "own-write" };
    const tags = snapshot.tags.get(arn);
    return tags === undefined ? { source: "direct", reason: "absent" } : { source: "snapshot", tags };
  }

  #record(arn: string): ResourceRecord {
    let r = this.#records.get(arn);
    if (r === undefined) {
      r = {};
      this.#records.set(arn, r);
    }
    return r;
  }

  /**
   * The region's snapshot, without waiting: the current one while younger than the poll period
   * (counted from the end of its sweep, so a sweep longer than the period is not followed by
   * another at once). Past that a new sweep starts in the background, and until it ends the last
   * answer serves while it is younger than the window (its age never makes a wrong repair: the
   * rules judge a resource by when the answer's sweep began, and read each one directly once per
   * window); with none, undefined (the poll reads directly). A poll never waits for a sweep, so a
   * slow or throttled one holds no worker.
   */
  #snapshot(region: string): Snapshot | undefined {
    const current = this.#snapshots.get(region);
    const now = this.#o.clock.now();
    const limit = current === undefined ? 0 : this.#ageLimit(current);
    if (current !== undefined && now - current.doneAt < limit) return current;
    if (!this.#inFlight.has(region)) {
      this.#inFlight.set(
        region,
        this.#take(region).finally(() => this.#inFlight.delete(region)),
      );
    }
    if (current !== undefined && !("failed" in current) && now - current.doneAt < this.#o.windowMs)
      return current;
    return undefined;
  }

  /** Resolves once no sweep is in flight (a sweep runs in the background of the polls). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight.values());
  }

  /** How long a snapshot serves: the poll period; after AccessDenied, one window. */
  #ageLimit(s: Snapshot): number {
    return "failed" in s && s.failed === "denied" ? this.#o.windowMs : this.#o.maxAgeMs;
  }

  async #take(region: string): Promise<Snapshot> {
    const takenAt = this.#o.clock.now();
    let snapshot: Snapshot;
    try {
      const tags = await this.#o.sweep(region);
      snapshot = { takenAt, doneAt: this.#o.clock.now(), tags };
      this.#sweeps.inc({ kind: this.#o.kind, result: "ok" });
      this.#prune(takenAt);
    } catch (err) {
      const denied = err instanceof AwsError && /^AccessDenied/.test(err.code);
      this.#sweeps.inc({ kind: this.#o.kind, result: denied ? "denied" : "failed" });
      if (denied && !this.#warnedDenied) {
        this.#warnedDenied = true;
        this.#o.logger.warn(
          { kind: this.#o.kind, region },
          "bulk tag reads need tag:GetResources, which the operator's IAM identity may not call; " +
            "tags are read per resource (add the action to its policy, or turn --bulk-tag-reads off)",
        );
      } else if (!denied) {
        this.#o.logger.debug(
          { kind: this.#o.kind, region, err },
          "bulk tag read failed; tags are read per resource",
        );
      }
      snapshot = { takenAt, doneAt: this.#o.clock.now(), failed: denied ? "denied" : "unavailable" };
    }
    this.#snapshots.set(region, snapshot);
    return snapshot;
  }

  /** Forgets resources not read nor written within the window: their next poll reads directly anyway. */
  #prune(now: number): void {
    const { windowMs } = this.#o;
    for (const [arn, r] of this.#records) {
      const last = Math.max(r.directAt ?? -Infinity, r.wroteAt ?? -Infinity);
      if (now - last >= windowMs) this.#records.delete(arn);
    }
  }
}

/**
 * The two counters of bulk tag reads in `registry`, declared whether or not the feature is on
 * (with it off they have no series), as every metric the operator documents is.
 */
export function tagSnapshotMetrics(registry: Registry): {
  reads: ReturnType<typeof counter<"kind" | "outcome">>;
  sweeps: ReturnType<typeof counter<"kind" | "result">>;
} {
  return {
    reads: counter(registry, {
      name: TAG_SNAPSHOT_METRIC_NAMES.reads,
      help: "Tag reads of steady polls with --bulk-tag-reads, by kind and outcome: from the snapshot, or read directly and why.",
      labelNames: ["kind", "outcome"],
    }),
    sweeps: counter(registry, {
      name: TAG_SNAPSHOT_METRIC_NAMES.sweeps,
      help: "Snapshots of tags taken with the Resource Groups Tagging API (GetResources), by kind and result (ok, failed, denied).",
      labelNames: ["kind", "result"],
    }),
  };
}

/**
 * The snapshots of one kind's driver (one account's clients) when `deps` turn bulk tag reads on:
 * resources of GetResources type `resourceType` (`s3`, `sqs`) that carry the operator's
 * managed-by tag. Undefined when they are off.
 */
export function kindTagSnapshots(
  deps: Pick<ReconcilerDeps, "aws" | "clock" | "logger" | "registry" | "pollIntervalMs" | "bulkTagReads">,
  kind: string,
  resourceType: string,
): TagSnapshots | undefined {
  const on = deps.bulkTagReads;
  if (on === undefined) {
    if (deps.registry !== undefined) tagSnapshotMetrics(deps.registry);
    return undefined;
  }
  const { aws } = deps;
  return new TagSnapshots({
    kind,
    sweep: (region) =>
      sweepTags(aws, { region, resourceType, tag: { key: MANAGED_BY_TAG, value: MANAGED_BY_VALUE } }),
    clock: deps.clock,
    maxAgeMs: deps.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    windowMs: on.windowMs,
    logger: deps.logger,
    registry: deps.registry,
  });
}
