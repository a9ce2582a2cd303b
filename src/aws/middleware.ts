/**
 * SDK middleware that every client from {@link AwsClients} carries: error classification at the
 * outside, and per HTTP attempt a rate-budget permit and metrics.
 *
 * Order in the stack (outermost first):
 * 1. `kubeprovisionerErrors` (initialize, high priority): rethrows every failure as an
 *    {@link AwsError}; counts calls that failed before any attempt reached the wire.
 * 2. the SDK's retry middleware (finalizeRequest)
 * 3. `kubeprovisionerRateBudget`: waits for a permit of every budget the call draws from
 *    (budget-plan.ts), in the lane of the reconcile that makes it (./poll-scope.ts: a poll draws
 *    on the polls' share, behind real work), and reports throttled answers to them. A call that
 *    would wait longer than `maxPermitWaitMs` is not sent: it books a later slot and fails with
 *    {@link NoPermitYetError}, which says when to send it again. A poll books what its previous
 *    poll drew, and once it has drawn a permit it is never deferred: a begun poll runs to its
 *    end, so no read it made is wasted.
 * 4. `kubeprovisionerMetrics`: times and counts the attempt.
 * 5. the SDK's signing, transport and deserializer.
 * Being inside the retry loop, 3 and 4 run once per attempt; being before signing, a long wait
 * for a permit cannot make a signature stale.
 */

import type {
  FinalizeRequestMiddleware,
  HandlerExecutionContext,
  InitializeMiddleware,
  MiddlewareStack,
} from "@smithy/types";
import type { Clock } from "../runtime/clock.ts";
import { AwsError, classifyAwsError, NoPermitYetError } from "./errors.ts";
import { OK_CODE, type AwsMetrics } from "./metrics.ts";
import { currentPollScope, type PollScope } from "./poll-scope.ts";
import type { BudgetLane, RateBudget } from "./rate-budget.ts";
import type { AwsService } from "./service.ts";

/** What {@link instrumentClient} needs to know about the client it instruments. */
export interface InstrumentOptions {
  service: AwsService;
  region: string;
  metrics: AwsMetrics;
  /**
   * The budgets a call draws from, with the permits it takes from each, in the order they are
   * taken. Omit to send without client-side budgets.
   */
  budgets?: (operation: string, input: unknown) => readonly BudgetPermit[];
  /**
   * The longest a call waits for its permits; one that would wait longer books a later slot
   * and fails with {@link NoPermitYetError}. @default no limit
   */
  maxPermitWaitMs?: number;
  clock: Clock;
}

/** Permits one call takes from one budget before each attempt. */
export interface BudgetPermit {
  readonly budget: RateBudget;
  /** The budget's name in `aws_api_rate_budget_*` metrics. */
  readonly label: string;
  readonly cost: number;
}

/** Middleware names, so tests and other plugins can find or remove them. */
export const MIDDLEWARE_NAMES = Object.freeze({
  errors: "kubeprovisionerErrors",
  rateBudget: "kubeprovisionerRateBudget",
  metrics: "kubeprovisionerMetrics",
});

/** The SDK's signing middleware; ours are placed right before it. */
const SIGNING_MIDDLEWARE = "httpSigningMiddleware";

/** `ListQueuesCommand` -> `ListQueues`. */
export function operationName(context: HandlerExecutionContext): string {
  const command = context.commandName ?? "unknown";
  return command.endsWith("Command") ? command.slice(0, -"Command".length) : command;
}

/**
 * Adds the three middlewares to a client's stack. Call once per client; a second call replaces
 * the first (the names are the same and `override` is set).
 */
export function instrumentClient<I extends object, O extends object>(
  stack: MiddlewareStack<I, O>,
  options: InstrumentOptions,
): void {
  const { service, region, metrics, budgets, clock } = options;
  /** Contexts of calls where at least one attempt reached the metrics middleware. */
  const attempted = new WeakSet<HandlerExecutionContext>();

  const errors: InitializeMiddleware<I, O> = (next, context) => async (args) => {
    try {
      return await next(args);
    } catch (err) {
      const operation = operationName(context);
      const wrapped = AwsError.from(err, { service, operation });
      // A call deferred by its budget never left the process: it is counted as deferred.
      if (!attempted.has(context) && !(wrapped instanceof NoPermitYetError))
        metrics.observeRequest(service, region, operation, wrapped.info.code, undefined);
      throw wrapped;
    }
  };

  const metricsMw: FinalizeRequestMiddleware<I, O> = (next, context) => async (args) => {
    attempted.add(context);
    const operation = operationName(context);
    const start = clock.now();
    try {
      const result = await next(args);
      metrics.observeRequest(service, region, operation, OK_CODE, (clock.now() - start) / 1000);
      return result;
    } catch (err) {
      const { code } = classifyAwsError(err, { service, operation });
      metrics.observeRequest(service, region, operation, code, (clock.now() - start) / 1000);
      throw err;
    }
  };

  stack.add(errors, { name: MIDDLEWARE_NAMES.errors, step: "initialize", priority: "high", override: true });

  if (budgets !== undefined) {
    const maxWait = options.maxPermitWaitMs ?? Number.POSITIVE_INFINITY;
    const budgetMw: FinalizeRequestMiddleware<I, O> = (next, context) => async (args) => {
      const operation = operationName(context);
      const permits = budgets(operation, (args as { input?: unknown }).input);
      const poll = currentPollScope();
      const lane: BudgetLane = poll === undefined ? "work" : "poll";
      if (maxWait < Number.POSITIVE_INFINITY && (poll === undefined || poll.drawn.size === 0))
        deferIfLong(operation, permits, poll);
      for (const p of permits) {
        let waitedMs = 0;
        for (let i = 0; i < p.cost; i++) waitedMs += await p.budget.acquire(undefined, lane);
        poll?.drawn.set(p.budget, (poll.drawn.get(p.budget) ?? 0) + p.cost);
        metrics.observeBudgetWait(service, region, p.label, waitedMs / 1000);
      }
      try {
        return await next(args);
      } catch (err) {
        // EC2 answers RequestLimitExceeded for an empty request bucket and an empty resource
        // bucket alike: every budget the call drew from slows down.
        if (classifyAwsError(err).kind === "throttled") for (const p of permits) p.budget.onThrottle();
        throw err;
      }
    };
    /**
     * Throws NoPermitYetError, with a later slot booked, when a budget would hold the call longer
     * than maxWait; a poll books the permits its previous poll drew from the budget.
     */
    const deferIfLong = (
      operation: string,
      permits: readonly BudgetPermit[],
      poll: PollScope | undefined,
    ): void => {
      const lane: BudgetLane = poll === undefined ? "work" : "poll";
      const late = permits.filter((p) => p.budget.delayFor(p.cost, lane) > maxWait);
      if (late.length === 0) return;
      let retryAfterMs = 0;
      for (const p of late) {
        retryAfterMs = Math.max(retryAfterMs, book(p, poll));
        metrics.observeBudgetDeferral(service, region, p.label);
      }
      throw new NoPermitYetError(service, operation, late.map((p) => p.label).join(", "), retryAfterMs);
    };
    /** Books `p` for a later slot and returns how long until it; a poll books once per budget. */
    const book = (p: BudgetPermit, poll: PollScope | undefined): number => {
      if (poll === undefined) return p.budget.book(p.cost);
      const now = clock.now();
      const slot = poll.booked.get(p.budget);
      if (slot !== undefined) return Math.max(0, slot - now);
      const ms = p.budget.book(Math.max(p.cost, poll.expected.get(p.budget) ?? 0), "poll");
      poll.booked.set(p.budget, now + ms);
      return ms;
    };
    stack.addRelativeTo(budgetMw, {
      name: MIDDLEWARE_NAMES.rateBudget,
      relation: "before",
      toMiddleware: SIGNING_MIDDLEWARE,
      override: true,
    });
  }

  stack.addRelativeTo(metricsMw, {
    name: MIDDLEWARE_NAMES.metrics,
    relation: "before",
    toMiddleware: SIGNING_MIDDLEWARE,
    override: true,
  });
}
