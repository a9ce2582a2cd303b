/**
 * What polling costs the AWS rate budgets, and the poll interval the polls' share of them allows.
 *
 * Every complete poll of an object reports the permits it drew from each budget (./poll-scope.ts).
 * A budget's poll demand is the sum, over the objects, of the permits of each one's last poll
 * divided by its poll interval. Polls never take more than their share of a budget (the budget
 * serves them from that share only, and the middleware books deferred polls at the share's rate),
 * so when the demand exceeds `pollShare` × the budget's rate, every object on it is polled less
 * often than configured, by the factor demand ÷ (share × rate).
 *
 * Each object counts at its own poll interval (an object may set its own: the
 * `compute.cloud.com/poll-interval` annotation). Per kind and account (a group) the effective
 * interval is the configured one (the interval most of the group's objects are polled at, the
 * longer one on a tie) times the largest such factor among the budgets its polls draw on, and
 * never less than the configured one; every object of the group stretches by that factor. For a
 * group alone on its budget, all at one interval, that is objects × permits per poll ÷
 * (share × rate). It is exported as
 * `kubeprovisioner_poll_interval_effective_seconds{kind,account}` and logged at info once when a
 * group's interval starts stretching and once when it stops (below 95 % of the share, so a demand
 * hovering at the share does not log every poll).
 *
 * An object that is due to be polled but whose poll has not completed since the process started
 * (a new object, every object after a restart, or one whose polls are being deferred) counts
 * with its group's mean permits per poll on each budget, at its own interval, once one object of
 * the group has been polled ({@link PollDemand.scheduled}): under a stretch most polls wait, and
 * counting only the polled objects would understate the demand. The rate is each budget's configured one, not the
 * lower one AWS throttling may hold it at for a while.
 */
import type { Gauge, Registry } from "prom-client";
import { defaultRegistry, gauge } from "../runtime/metrics/registry.ts";
import { silentLogger, type Logger } from "../runtime/logging.ts";
import type { RateBudget } from "./rate-budget.ts";

/** Metric names, for dashboards and tests. */
export const POLL_METRIC_NAMES = Object.freeze({
  effectiveInterval: "kubeprovisioner_poll_interval_effective_seconds",
});

/** A stretch below this (after one above 1) ends a stretch. */
const STOP_BELOW = 0.95;

/** Whom a poll is counted for: the kind, and the AwsAccount (empty for the operator's own credentials). */
export interface PollGroup {
  readonly kind: string;
  readonly account: string;
}

/** What one group's polls cost one budget. */
interface Use {
  objects: number;
  permits: number;
}

interface GroupState extends PollGroup {
  /** Objects whose last complete poll is recorded. */
  objects: number;
  /** Objects due to be polled with no complete poll recorded yet: they count at the mean. */
  unmeasured: number;
  /** The unmeasured objects per poll interval (ms). */
  readonly unmeasuredByInterval: Map<number, number>;
  /** Every object of the group, measured or not, per poll interval (ms). */
  readonly byInterval: Map<number, number>;
  /** The group's configured poll interval, in ms, as last worked out ({@link configuredInterval}). */
  intervalMs: number;
  readonly uses: Map<RateBudget, Use>;
  stretched: boolean;
}

/** An object due to be polled with no complete poll recorded yet. */
interface Unmeasured {
  readonly group: GroupState;
  readonly intervalMs: number;
}

/** The last complete poll of one object. */
interface ObjectPoll {
  readonly group: GroupState;
  readonly intervalMs: number;
  /** Interned: objects whose polls drew alike share one map. */
  readonly drawn: ReadonlyMap<RateBudget, number>;
}

/** Options of {@link PollDemand}. */
export interface PollDemandOptions {
  /** @default defaultRegistry */
  registry?: Registry;
  /** Where the start and end of a stretch are logged. @default silentLogger */
  logger?: Logger;
}

/** See the module comment. */
export class PollDemand {
  readonly #gauge: Gauge<"kind" | "account">;
  readonly #logger: Logger;
  readonly #objects = new Map<string, ObjectPoll>();
  /** The objects in {@link GroupState.unmeasured}, by id. */
  readonly #unmeasured = new Map<string, Unmeasured>();
  /**
   * Per budget: the permits its objects' last polls drew, summed per poll interval (whole numbers,
   * so adding and removing objects never drifts), and how many objects poll it.
   */
  readonly #budgets = new Map<RateBudget, { permitsByInterval: Map<number, number>; objects: number }>();
  readonly #groups = new Map<string, GroupState>();
  readonly #profiles = new Map<string, ReadonlyMap<RateBudget, number>>();
  readonly #ids = new WeakMap<RateBudget, number>();
  #nextId = 0;

  constructor(options: PollDemandOptions = {}) {
    this.#gauge = gauge(options.registry ?? defaultRegistry, {
      name: POLL_METRIC_NAMES.effectiveInterval,
      help: "The interval converged objects are polled at, per kind and AwsAccount (empty: the operator's own credentials), in seconds: the configured poll interval, stretched when the polls need more than their share of an AWS rate budget.",
      labelNames: ["kind", "account"],
    });
    this.#logger = options.logger ?? silentLogger;
  }

  /** The permits the last poll of `key` (of `kind`) drew, per budget; empty before its first. */
  expected(kind: string, key: string): ReadonlyMap<RateBudget, number> {
    return this.#objects.get(`${kind}\0${key}`)?.drawn ?? EMPTY;
  }

  /** Records a complete poll of `key`, which is polled every `intervalMs` and drew `drawn`. */
  polled(group: PollGroup, key: string, intervalMs: number, drawn: ReadonlyMap<RateBudget, number>): void {
    const id = `${group.kind}\0${key}`;
    const g = this.#group(group);
    this.#dropUnmeasured(id);
    const profile = this.#intern(drawn);
    const prev = this.#objects.get(id);
    if (prev !== undefined && prev.group === g && prev.intervalMs === intervalMs && prev.drawn === profile)
      return;
    if (prev !== undefined) this.#remove(prev);
    const entry: ObjectPoll = { group: g, intervalMs, drawn: profile };
    this.#add(entry);
    this.#objects.set(id, entry);
    this.#update();
  }

  /**
   * Records that `key` is due to be polled every `intervalMs` (its reconcile asked for a steady
   * poll) although no poll of it completed yet: until one does, it counts at its group's mean.
   */
  scheduled(group: PollGroup, key: string, intervalMs: number): void {
    const id = `${group.kind}\0${key}`;
    if (this.#objects.has(id)) return;
    const g = this.#group(group);
    const prev = this.#unmeasured.get(id);
    if (prev?.group === g && prev.intervalMs === intervalMs) return;
    this.#dropUnmeasured(id);
    this.#unmeasured.set(id, { group: g, intervalMs });
    g.unmeasured += 1;
    count(g.unmeasuredByInterval, intervalMs, 1);
    count(g.byInterval, intervalMs, 1);
    this.#update();
  }

  /** Forgets `key` (of `kind`): the object is gone. */
  forget(kind: string, key: string): void {
    const id = `${kind}\0${key}`;
    const wasUnmeasured = this.#dropUnmeasured(id);
    const prev = this.#objects.get(id);
    if (prev !== undefined) {
      this.#objects.delete(id);
      this.#remove(prev);
    }
    if (prev !== undefined || wasUnmeasured) this.#update();
  }

  /** Removes `id` from the unmeasured objects; whether it was one. */
  #dropUnmeasured(id: string): boolean {
    const u = this.#unmeasured.get(id);
    if (u === undefined) return false;
    this.#unmeasured.delete(id);
    u.group.unmeasured -= 1;
    count(u.group.unmeasuredByInterval, u.intervalMs, -1);
    count(u.group.byInterval, u.intervalMs, -1);
    return true;
  }

  /** The effective poll interval of `group` in ms; undefined while none of its objects was polled. */
  effectiveIntervalMs(group: PollGroup): number | undefined {
    const g = this.#groups.get(groupId(group));
    return g === undefined || g.objects === 0 ? undefined : this.#stretchOf(g).intervalMs;
  }

  #group(group: PollGroup): GroupState {
    const id = groupId(group);
    let g = this.#groups.get(id);
    if (g === undefined) {
      g = {
        kind: group.kind,
        account: group.account,
        objects: 0,
        unmeasured: 0,
        unmeasuredByInterval: new Map(),
        byInterval: new Map(),
        intervalMs: 0,
        uses: new Map(),
        stretched: false,
      };
      this.#groups.set(id, g);
    }
    return g;
  }

  #intern(drawn: ReadonlyMap<RateBudget, number>): ReadonlyMap<RateBudget, number> {
    const parts: string[] = [];
    for (const [b, n] of drawn) {
      let id = this.#ids.get(b);
      if (id === undefined) this.#ids.set(b, (id = this.#nextId++));
      parts.push(`${id}=${n}`);
    }
    const signature = parts.sort().join(",");
    let profile = this.#profiles.get(signature);
    if (profile === undefined) {
      profile = new Map(drawn);
      this.#profiles.set(signature, profile);
    }
    return profile;
  }

  #add(e: ObjectPoll): void {
    e.group.objects += 1;
    count(e.group.byInterval, e.intervalMs, 1);
    for (const [b, n] of e.drawn) {
      const budget = this.#budgets.get(b) ?? { permitsByInterval: new Map<number, number>(), objects: 0 };
      budget.permitsByInterval.set(e.intervalMs, (budget.permitsByInterval.get(e.intervalMs) ?? 0) + n);
      budget.objects += 1;
      this.#budgets.set(b, budget);
      const use = e.group.uses.get(b) ?? { objects: 0, permits: 0 };
      use.objects += 1;
      use.permits += n;
      e.group.uses.set(b, use);
    }
  }

  #remove(e: ObjectPoll): void {
    e.group.objects -= 1;
    count(e.group.byInterval, e.intervalMs, -1);
    for (const [b, n] of e.drawn) {
      const budget = this.#budgets.get(b);
      if (budget !== undefined) {
        const left = (budget.permitsByInterval.get(e.intervalMs) ?? 0) - n;
        if (left > 0) budget.permitsByInterval.set(e.intervalMs, left);
        else budget.permitsByInterval.delete(e.intervalMs);
        budget.objects -= 1;
        if (budget.objects <= 0) this.#budgets.delete(b);
      }
      const use = e.group.uses.get(b);
      if (use !== undefined) {
        use.objects -= 1;
        use.permits -= n;
        if (use.objects <= 0) e.group.uses.delete(b);
      }
    }
  }

  /** The largest stretch among the budgets `g` polls, with its budget and the interval it makes. */
  #stretchOf(g: GroupState): { factor: number; budget: RateBudget | undefined; intervalMs: number } {
    let factor = 0;
    let budget: RateBudget | undefined;
    for (const b of g.uses.keys()) {
      const f = this.#perSecond(b) / (b.pollShare * b.maxRate);
      if (f > factor) [factor, budget] = [f, b];
    }
    return { factor, budget, intervalMs: g.intervalMs * Math.max(1, factor) };
  }

  /**
   * The permits per second the polls of budget `b` need: the measured objects' last polls, and
   * each group's unmeasured objects at that group's mean permits per poll on `b`, each at its own
   * interval.
   */
  #perSecond(b: RateBudget): number {
    let sum = 0;
    for (const [intervalMs, permits] of this.#budgets.get(b)?.permitsByInterval ?? [])
      sum += (permits * 1000) / intervalMs;
    for (const g of this.#groups.values()) {
      const use = g.uses.get(b);
      if (g.unmeasured === 0 || use === undefined || use.objects === 0) continue;
      for (const [intervalMs, n] of g.unmeasuredByInterval)
        sum += (n * (use.permits / use.objects) * 1000) / intervalMs;
    }
    return sum;
  }

  /** Publishes every group's effective interval and logs the stretches that start or end. */
  #update(): void {
    for (const [id, g] of this.#groups) {
      const labels = { kind: g.kind, account: g.account };
      if (g.objects === 0 && g.unmeasured === 0) {
        if (g.stretched) this.#log(g, false, { factor: 0, budget: undefined, intervalMs: g.intervalMs });
        this.#gauge.remove(labels);
        this.#groups.delete(id);
        continue;
      }
      g.intervalMs = configuredInterval(g.byInterval);
      const s = this.#stretchOf(g);
      this.#gauge.set(labels, s.intervalMs / 1000);
      if (!g.stretched && s.factor > 1) this.#log(g, true, s);
      else if (g.stretched && s.factor < STOP_BELOW) this.#log(g, false, s);
    }
  }

  #log(
    g: GroupState,
    stretched: boolean,
    s: { factor: number; budget: RateBudget | undefined; intervalMs: number },
  ): void {
    g.stretched = stretched;
    const use = s.budget === undefined ? undefined : g.uses.get(s.budget);
    const fields = {
      kind: g.kind,
      account: g.account,
      objects: g.objects + g.unmeasured,
      configuredIntervalSeconds: g.intervalMs / 1000,
      intervalSeconds: round(s.intervalMs / 1000),
      ...(s.budget !== undefined && use !== undefined
        ? {
            budget: s.budget.name,
            budgetRatePerSecond: s.budget.maxRate,
            pollShare: s.budget.pollShare,
            readsPerPoll: round(use.permits / use.objects),
            pollDemandPerSecond: round(this.#perSecond(s.budget)),
          }
        : {}),
    };
    if (stretched)
      this.#logger.info(
        fields,
        "polls need more than their share of an AWS rate budget: the poll interval stretches",
      );
    else
      this.#logger.info(
        fields,
        "polls fit their share of the AWS rate budgets again: the configured poll interval applies",
      );
  }
}

const EMPTY: ReadonlyMap<RateBudget, number> = new Map();

/** Adds `delta` to the count of `key` in `counts`, dropping a count that reaches 0. */
function count(counts: Map<number, number>, key: number, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

/** The interval most objects are polled at (the longer one on a tie), from their counts per interval. */
function configuredInterval(byInterval: ReadonlyMap<number, number>): number {
  let best = 0;
  let most = 0;
  for (const [intervalMs, n] of byInterval)
    if (n > most || (n === most && intervalMs > best)) [best, most] = [intervalMs, n];
  return best;
}

function groupId(g: PollGroup): string {
  return `${g.kind}\0${g.account}`;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
