/**
 * Batched instance lookups: reconciles that need DescribeInstances at about the same time share
 * one call. IDs requested within a short window are collected and sent together, up to
 * {@link DescribeBatcherOptions.maxIdsPerCall} per call, so N instances polled together cost
 * about N/1000 calls instead of N.
 *
 * The call filters on `instance-id` rather than passing `InstanceIds`: with `InstanceIds`, one
 * unknown or not-yet-visible ID fails the whole call with `InvalidInstanceID.NotFound`, which
 * would punish every other caller of the batch. With the filter an unknown ID is simply absent.
 *
 * Lookups that run one after another (a controller with a single worker) never meet in a window.
 * For them the batcher can keep a snapshot: with {@link DescribeBatcherOptions.trackMs} set, it
 * remembers the IDs it was asked about, fills every call up to the per-call limit with them, and
 * keeps every answer; a lookup that accepts an answer of a given age
 * ({@link LookupOptions.maxAgeMs}) is then served from the snapshot without a call.
 */
import type { Filter, Instance, Reservation } from "@aws-sdk/client-ec2";
import { pages } from "../../aws/pages.ts";
import { systemClock, type Clock, type TimerHandle } from "../../runtime/clock.ts";

/** One page of `DescribeInstances`, as the batcher asks for it. */
export interface DescribePageInput {
  Filters: Filter[];
  MaxResults: number;
  NextToken?: string;
}

/** What the batcher needs from a page of the answer. */
export interface DescribePageOutput {
  Reservations?: Reservation[] | undefined;
  NextToken?: string | undefined;
}

/** Sends one `DescribeInstances` page (the EC2 client of one region, in production). */
export type DescribePage = (input: DescribePageInput) => Promise<DescribePageOutput>;

/** Options of {@link DescribeBatcher}. */
export interface DescribeBatcherOptions {
  describe: DescribePage;
  /** @default systemClock */
  clock?: Clock;
  /**
   * How long the first lookup of a batch waits for others to join it, in ms. Every lookup pays
   * at most this much extra latency. @default 10
   */
  windowMs?: number;
  /**
   * IDs per call; a batch that reaches this size is sent at once without waiting for the window.
   * EC2 accepts at most 1000 values per filter and 1000 results per page. @default 1000
   */
  maxIdsPerCall?: number;
  /**
   * How long an instance ID is remembered after it was last asked for, in ms; 0 remembers
   * nothing. Remembered IDs fill every call up to {@link maxIdsPerCall} (most recently asked
   * first) and their answers go into the snapshot. Set it above the poll period (say twice it),
   * so an instance polled every period stays remembered. IDs that EC2 no longer lists or lists
   * as `terminated` are forgotten at once. @default 0
   */
  trackMs?: number;
}

/** Options of one {@link DescribeBatcher.get}. */
export interface LookupOptions {
  /**
   * The oldest snapshot answer the caller accepts, in ms: a snapshot entry taken at most this
   * long ago is returned without a call. 0 always asks EC2. @default 0
   */
  maxAgeMs?: number;
  /** Rejects the lookup (and drops its ID from the open batch) when aborted. */
  signal?: AbortSignal;
}

/** AWS's page size limit for DescribeInstances. */
const MAX_RESULTS = 1000;

interface Waiter {
  resolve(instance: Instance | undefined): void;
  reject(err: unknown): void;
}

/** An answer kept in the snapshot: the instance, or undefined for "not listed". */
interface SnapshotEntry {
  instance: Instance | undefined;
  /** When the call that answered was sent (clock ms): the answer is at least this old. */
  takenAt: number;
}

/**
 * Collects instance lookups for one region and answers them with shared `DescribeInstances`
 * calls.
 *
 * Guarantees: every {@link get} settles exactly once, with the instance of that ID (in whatever
 * state, `terminated` included), `undefined` when EC2 does not list it, or the error of the call
 * that carried it (every caller of a failed batch gets that error); an aborted caller is rejected
 * at once and its ID is dropped from the batch if no one else wants it. The same ID asked twice
 * in one window is sent once. Caveat: a batch in flight is not cancelled by its callers' signals
 * (other callers may still want it); the SDK's request timeout bounds it.
 *
 * Snapshot guarantees: a lookup without `maxAgeMs` (or with 0) always joins a call, so existing
 * callers see exactly what they saw without a snapshot. A lookup with `maxAgeMs` > 0 is answered
 * from the snapshot only with an answer of a call sent at most `maxAgeMs` ago (a "not listed"
 * answer included: callers that act on absence must confirm it with a fresh lookup). An answer
 * from a call sent before {@link invalidate} of its ID is never stored. No call carries more than
 * `maxIdsPerCall` IDs or the same ID twice; IDs not asked for within `trackMs` are not sent.
 */
export class DescribeBatcher {
  readonly #describe: DescribePage;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxIds: number;
  readonly #trackMs: number;
  /** Remembered IDs with when they were last asked for, least recently asked first. */
  #tracked = new Map<string, number>();
  #snapshot = new Map<string, SnapshotEntry>();
  /** Calls started so far; orders invalidations against calls in flight. */
  #started = 0;
  /** Calls in flight. */
  #inFlight = 0;
  /** IDs invalidated while calls were in flight, with {@link #started} at that moment. */
  #invalidated = new Map<string, number>();
  /** IDs of the open batch (not yet sent), each with its callers in arrival order. */
  #open = new Map<string, Waiter[]>();
  /** The timer that sends the open batch; set exactly when the open batch is non-empty. */
  #timer: TimerHandle | undefined;
  #calls = 0;

  constructor(opts: DescribeBatcherOptions) {
    this.#describe = opts.describe;
    this.#clock = opts.clock ?? systemClock;
    this.#windowMs = opts.windowMs ?? 10;
    this.#maxIds = opts.maxIdsPerCall ?? 1000;
    this.#trackMs = opts.trackMs ?? 0;
    if (!(this.#trackMs >= 0)) throw new RangeError(`trackMs must be >= 0, got ${this.#trackMs}`);
    if (!(this.#windowMs >= 0)) throw new RangeError(`windowMs must be >= 0, got ${this.#windowMs}`);
    if (!Number.isInteger(this.#maxIds) || this.#maxIds < 1 || this.#maxIds > 1000) {
      throw new RangeError(`maxIdsPerCall must be an integer in 1..1000, got ${this.#maxIds}`);
    }
  }

  /** `DescribeInstances` pages sent so far. */
  get calls(): number {
    return this.#calls;
  }

  /** IDs waiting in the open batch. */
  get pending(): number {
    return this.#open.size;
  }

  /** IDs remembered for prefetching. */
  get tracked(): number {
    return this.#tracked.size;
  }

  /**
   * The instance with ID `instanceId`, or undefined when EC2 does not list it: from the snapshot
   * when an answer no older than `opts.maxAgeMs` is there, else from a (batched) call.
   */
  get(instanceId: string, opts: LookupOptions = {}): Promise<Instance | undefined> {
    const { signal } = opts;
    const maxAgeMs = opts.maxAgeMs ?? 0;
    return new Promise<Instance | undefined>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const now = this.#clock.now();
      this.#remember(instanceId, now);
      const kept = this.#snapshot.get(instanceId);
      if (maxAgeMs > 0 && kept !== undefined && now - kept.takenAt <= maxAgeMs) {
        // A copy: what one caller does with its answer must not change the next one's.
        resolve(kept.instance === undefined ? undefined : structuredClone(kept.instance));
        return;
      }
      const batch = this.#open;
      const onAbort = (): void => {
        const waiters = batch.get(instanceId);
        if (waiters !== undefined && this.#open === batch) {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          if (waiters.length === 0) batch.delete(instanceId);
          if (batch.size === 0) this.#cancelTimer();
        }
        reject(signal?.reason as Error);
      };
      const waiter: Waiter = {
        resolve: (instance) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(instance);
        },
        reject: (err) => {
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const waiters = batch.get(instanceId);
      if (waiters !== undefined) waiters.push(waiter);
      else batch.set(instanceId, [waiter]);
      if (batch.size >= this.#maxIds) this.#send();
      else this.#timer ??= this.#clock.setTimeout(() => this.#send(), this.#windowMs);
    });
  }

  /**
   * Drops the snapshot entry of `instanceId` and makes calls already in flight not store one:
   * call it after changing the instance, so a later lookup does not see it as it was before.
   */
  invalidate(instanceId: string): void {
    this.#snapshot.delete(instanceId);
    if (this.#inFlight > 0) this.#invalidated.set(instanceId, this.#started);
  }

  #remember(instanceId: string, now: number): void {
    if (this.#trackMs <= 0) return;
    // Re-inserting keeps the map ordered by the time last asked.
    this.#tracked.delete(instanceId);
    this.#tracked.set(instanceId, now);
  }

  /** Forgets IDs not asked for within `trackMs`, and snapshot entries older than that. */
  #prune(now: number): void {
    // Least recently asked first: stop at the first one still remembered.
    for (const [id, askedAt] of this.#tracked) {
      if (now - askedAt <= this.#trackMs) break;
      this.#tracked.delete(id);
    }
    for (const [id, e] of this.#snapshot) {
      if (now - e.takenAt > this.#trackMs && !this.#tracked.has(id)) this.#snapshot.delete(id);
    }
  }

  /** The IDs of one call: the batch's, then remembered ones (most recently asked first) up to the limit. */
  #idsFor(batch: Map<string, Waiter[]>): string[] {
    const ids = [...batch.keys()];
    if (this.#trackMs <= 0) return ids;
    this.#prune(this.#clock.now());
    if (ids.length >= this.#maxIds) return ids;
    const remembered = [...this.#tracked.keys()];
    for (let k = remembered.length - 1; k >= 0 && ids.length < this.#maxIds; k--) {
      const id = remembered[k];
      if (id !== undefined && !batch.has(id)) ids.push(id);
    }
    return ids;
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Sends the open batch and opens a new one. */
  #send(): void {
    this.#cancelTimer();
    const batch = this.#open;
    this.#open = new Map();
    if (batch.size > 0) void this.#run(batch);
  }

  async #run(batch: Map<string, Waiter[]>): Promise<void> {
    const found = new Map<string, Instance>();
    const ids = this.#idsFor(batch);
    const wanted = new Set(ids);
    const takenAt = this.#clock.now();
    const started = ++this.#started;
    this.#inFlight += 1;
    try {
      const listing = pages(
        (nextToken) => {
          this.#calls += 1;
          return this.#describe({
            Filters: [{ Name: "instance-id", Values: ids }],
            MaxResults: MAX_RESULTS,
            ...(nextToken !== undefined ? { NextToken: nextToken } : {}),
          });
        },
        (page) => page.NextToken,
      );
      for await (const page of listing) {
        for (const reservation of page.Reservations ?? []) {
          for (const instance of reservation.Instances ?? []) {
            const id = instance.InstanceId;
            if (id !== undefined && wanted.has(id)) found.set(id, instance);
          }
        }
      }
    } catch (err) {
      this.#settled();
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      return;
    }
    if (this.#trackMs > 0) this.#store(ids, found, takenAt, started);
    this.#settled();
    for (const [id, waiters] of batch) {
      const instance = found.get(id);
      for (const w of waiters) w.resolve(instance);
    }
  }

  /** Ends a call; once none is in flight, no invalidation needs remembering. */
  #settled(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0) this.#invalidated.clear();
  }

  /** Keeps the answers of a call sent at `takenAt` as the `started`-th call. */
  #store(ids: string[], found: Map<string, Instance>, takenAt: number, started: number): void {
    for (const id of ids) {
      if ((this.#invalidated.get(id) ?? -1) >= started) continue;
      const prev = this.#snapshot.get(id);
      if (prev !== undefined && prev.takenAt > takenAt) continue;
      const instance = found.get(id);
      // A copy: the callers of this call get the original and may change it.
      this.#snapshot.set(id, {
        instance: instance === undefined ? undefined : structuredClone(instance),
        takenAt,
      });
      // Gone for good: stop asking about it (a later lookup remembers it again).
      if (instance === undefined || instance.State?.Name === "terminated") this.#tracked.delete(id);
    }
  }
}
