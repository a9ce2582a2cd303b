/**
 * Batched instance lookups: reconciles that need DescribeInstances at about the same time share
 * one call. IDs requested within a short window are collected and sent together, up to
 * {@link DescribeBatcherOptions.maxIdsPerCall} per call, so N instances polled together cost
 * about N/1000 calls instead of N.
 *
 * The call filters on `instance-id` rather than passing `InstanceIds`: with `InstanceIds`, one
 * unknown or not-yet-visible ID fails the whole call with `InvalidInstanceID.NotFound`, which
 * would punish every other caller of the batch. With the filter an unknown ID is simply absent.
 */
import type { Filter, Instance, Reservation } from "@aws-sdk/client-ec2";
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
}

/** AWS's page size limit for DescribeInstances. */
const MAX_RESULTS = 1000;

interface Waiter {
  resolve(instance: Instance | undefined): void;
  reject(err: unknown): void;
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
 */
export class DescribeBatcher {
  readonly #describe: DescribePage;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxIds: number;
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

  /** The instance with ID `instanceId`, or undefined when EC2 does not list it. */
  get(instanceId: string, signal?: AbortSignal): Promise<Instance | undefined> {
    return new Promise<Instance | undefined>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
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
    try {
      let nextToken: string | undefined;
      const seenTokens = new Set<string>();
      do {
        this.#calls += 1;
        const page = await this.#describe({
          Filters: [{ Name: "instance-id", Values: [...batch.keys()] }],
          MaxResults: MAX_RESULTS,
          ...(nextToken !== undefined ? { NextToken: nextToken } : {}),
        });
        for (const reservation of page.Reservations ?? []) {
          for (const instance of reservation.Instances ?? []) {
            const id = instance.InstanceId;
            if (id !== undefined && batch.has(id)) found.set(id, instance);
          }
        }
        nextToken = page.NextToken !== undefined && page.NextToken !== "" ? page.NextToken : undefined;
        // A token seen before would loop forever; EC2 never does this, a broken endpoint might.
        if (nextToken !== undefined && seenTokens.has(nextToken)) nextToken = undefined;
        if (nextToken !== undefined) seenTokens.add(nextToken);
      } while (nextToken !== undefined);
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      return;
    }
    for (const [id, waiters] of batch) {
      const instance = found.get(id);
      for (const w of waiters) w.resolve(instance);
    }
  }
}
