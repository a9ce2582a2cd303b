/**
 * The lane of the rate budgets a call draws on (./rate-budget.ts), carried from the reconcile
 * that makes it to the SDK middleware (./middleware.ts) through an async context: every call made
 * inside {@link inPollScope}, however deep in a driver, draws on the polls' share, behind real
 * work; every other call is real work. The scope also tallies the permits the poll drew, per
 * budget, which is what a poll of that object costs (./poll-demand.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { RateBudget } from "./rate-budget.ts";

/** One poll's dealings with the rate budgets. */
export interface PollScope {
  /** Permits the poll drew so far, per budget; filled by the middleware. */
  readonly drawn: Map<RateBudget, number>;
  /**
   * Permits the object's previous poll drew, per budget: a poll deferred before its first call
   * books that many, so deferred polls come back spaced by what each one costs.
   */
  readonly expected: ReadonlyMap<RateBudget, number>;
  /**
   * The slot booked for the poll on each budget (ms on the middleware's clock): calls the poll
   * sends at once, deferred together, book one slot, not one each.
   */
  readonly booked: Map<RateBudget, number>;
}

const storage = new AsyncLocalStorage<PollScope>();

/** A fresh scope for a poll whose previous one drew `expected`. */
export function pollScope(expected: ReadonlyMap<RateBudget, number> = new Map()): PollScope {
  return { drawn: new Map(), expected, booked: new Map() };
}

/** Runs `fn` as a poll: the AWS calls it makes draw on the polls' share of each budget. */
export function inPollScope<T>(scope: PollScope, fn: () => Promise<T>): Promise<T> {
  return storage.run(scope, fn);
}

/** The poll the current call belongs to; undefined for real work. */
export function currentPollScope(): PollScope | undefined {
  return storage.getStore();
}
