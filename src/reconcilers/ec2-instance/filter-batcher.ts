/**
 * Batched instance lookups by filter: reconciles that look instances up by tag at about the same
 * time (the ownership tag of each object, or its name tags) share one DescribeInstances. Lookups
 * with the same filter names that arrive within a short window are merged into one call whose
 * filters carry the union of their values, at most {@link FilterBatcherOptions.maxLookupsPerCall}
 * lookups per call; each lookup then gets the listed instances that match its own filters.
 * A burst of N new instances thus costs about N / 200 lookups per filter shape instead of N.
 *
 * The merged answer is a superset of each lookup's answer (EC2 ORs the values of one filter and
 * ANDs the filters), and the split applies EC2's own rule to each instance: a `tag:<key>` filter
 * matches an instance with that tag whose value is one of the filter's values, and
 * `instance-state-name` one whose state is. A lookup with any other filter name, or with a value
 * holding a wildcard (`*`, `?`), is sent alone, unchanged.
 */
import type { Filter, Instance } from "@aws-sdk/client-ec2";
import { systemClock, type Clock, type TimerHandle } from "../../runtime/clock.ts";

/** Lists every instance matching `filters`, all pages (the region's EC2 client, in production). */
export type DescribeByFilters = (filters: Filter[]) => Promise<Instance[]>;

/** Options of {@link FilterBatcher}. */
export interface FilterBatcherOptions {
  describe: DescribeByFilters;
  /** @default systemClock */
  clock?: Clock;
  /** How long the first lookup of a batch waits for others to join it, in ms. @default 10 */
  windowMs?: number;
  /**
   * Lookups merged into one call; a batch that reaches it is sent at once. EC2 accepts up to
   * 1000 values per filter. @default 200
   */
  maxLookupsPerCall?: number;
}

interface Lookup {
  readonly filters: readonly Filter[];
  settled: boolean;
  resolve(found: Instance[]): void;
  reject(err: unknown): void;
}

interface Batch {
  readonly lookups: Lookup[];
  timer: TimerHandle | undefined;
}

const STATE_FILTER = "instance-state-name";

/** Whether `instance` matches every one of `filters`, by EC2's rule for the names batched here. */
export function matchesFilters(instance: Instance, filters: readonly Filter[]): boolean {
  return filters.every((f) => {
    const values = f.Values ?? [];
    if (f.Name === STATE_FILTER) return values.includes(instance.State?.Name ?? "");
    const key = f.Name?.slice("tag:".length);
    const tag = instance.Tags?.find((t) => t.Key === key);
    return tag?.Value !== undefined && values.includes(tag.Value);
  });
}

/** The filter names a lookup is merged by, or undefined when it must go alone. */
function shapeOf(filters: readonly Filter[]): string | undefined {
  const names: string[] = [];
  for (const f of filters) {
    const name = f.Name ?? "";
    if (name !== STATE_FILTER && !(name.startsWith("tag:") && name.length > "tag:".length)) return undefined;
    if ((f.Values ?? []).some((v) => v.includes("*") || v.includes("?"))) return undefined;
    names.push(name);
  }
  if (new Set(names).size !== names.length) return undefined;
  return names.sort().join("\n");
}

/** See the module comment. One per region; safe to share between workers. */
export class FilterBatcher {
  readonly #describe: DescribeByFilters;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #max: number;
  readonly #batches = new Map<string, Batch>();

  constructor(opts: FilterBatcherOptions) {
    this.#describe = opts.describe;
    this.#clock = opts.clock ?? systemClock;
    this.#windowMs = opts.windowMs ?? 10;
    this.#max = opts.maxLookupsPerCall ?? 200;
    if (!(this.#windowMs >= 0)) throw new RangeError(`windowMs must be >= 0, got ${this.#windowMs}`);
    if (!Number.isInteger(this.#max) || this.#max < 1)
      throw new RangeError(`maxLookupsPerCall must be an integer >= 1, got ${this.#max}`);
  }

  /**
   * The instances matching `filters`. Rejects with the call's error (every lookup of a failed
   * batch gets it), or with the signal's reason when `signal` aborts first.
   */
  find(filters: Filter[], signal?: AbortSignal): Promise<Instance[]> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const shape = shapeOf(filters);
    if (shape === undefined) return this.#describe(filters);
    return new Promise<Instance[]>((resolve, reject) => {
      const onAbort = (): void => lookup.reject(signal?.reason);
      const lookup: Lookup = {
        filters,
        settled: false,
        resolve: (found) => {
          if (lookup.settled) return;
          lookup.settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve(found);
        },
        reject: (err) => {
          if (lookup.settled) return;
          lookup.settled = true;
          signal?.removeEventListener("abort", onAbort);
          reject(err as Error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      let batch = this.#batches.get(shape);
      if (batch === undefined) {
        batch = { lookups: [], timer: undefined };
        this.#batches.set(shape, batch);
      }
      batch.lookups.push(lookup);
      if (batch.lookups.length >= this.#max) this.#flush(shape);
      else batch.timer ??= this.#clock.setTimeout(() => this.#flush(shape), this.#windowMs);
    });
  }

  #flush(shape: string): void {
    const batch = this.#batches.get(shape);
    if (batch === undefined) return;
    this.#batches.delete(shape);
    if (batch.timer !== undefined) this.#clock.clearTimeout(batch.timer);
    const lookups = batch.lookups.filter((l) => !l.settled);
    if (lookups.length === 0) return;
    const values = new Map<string, Set<string>>();
    for (const l of lookups)
      for (const f of l.filters) {
        const set = values.get(f.Name ?? "") ?? new Set<string>();
        for (const v of f.Values ?? []) set.add(v);
        values.set(f.Name ?? "", set);
      }
    const merged: Filter[] = [...values].map(([Name, set]) => ({ Name, Values: [...set].sort() }));
    this.#describe(merged).then(
      (found) => {
        for (const l of lookups) l.resolve(found.filter((i) => matchesFilters(i, l.filters)));
      },
      (err: unknown) => {
        for (const l of lookups) l.reject(err);
      },
    );
  }
}
