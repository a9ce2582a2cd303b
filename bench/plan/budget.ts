/**
 * The AWS calls of one `kubeprovisioner plan` against the operator's default rate budgets
 * (src/aws/budget-plan.ts): each call is charged to the budget it draws from (one per service and
 * region for S3 and SQS, one per action for EC2), and each budget's calls are compared with what
 * it lets through.
 */
import {
  budgetDraws,
  DEFAULT_RATE_BUDGETS,
  type BudgetName,
  type BudgetSize,
} from "../../src/aws/budget-plan.ts";
import { AWS_SERVICES, type AwsService } from "../../src/aws/service.ts";

/** One call as the counting proxy saw it. */
export interface SeenCall {
  readonly service: string;
  readonly operation: string;
  /** When the proxy received it, ms since the epoch. */
  readonly at: number;
}

/** Calls that only read: AWS's read verbs. Anything else counts as a mutating call. */
export const READ_OPERATION = /^(Get|Head|List|Describe)[A-Z]/;

/** Whether `c` is a read. */
export const isRead = (c: Pick<SeenCall, "operation">): boolean => READ_OPERATION.test(c.operation);

/** How one budget was used. */
export interface BudgetUse {
  /** The budget's name (`s3`, `ec2.nonMutating`, ...) and its bucket (the service, or the EC2 action). */
  readonly budget: BudgetName;
  readonly key: string;
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly calls: number;
  /** Calls per second over the plan's wall time, and that rate divided by the budget's rate. */
  readonly callsPerSecond: number;
  readonly ratioToRate: number;
  /**
   * Calls divided by the most the budget lets through from its first call to its last: a full
   * bucket (`burst`) plus the refill over that span. Above 1 means the budget was overdrawn.
   */
  readonly ratioToBucket: number;
}

/** Calls by service, then by operation, each sorted by count, largest first. */
export function callsByService(calls: readonly SeenCall[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const c of calls) {
    const ops = (out[c.service] ??= {});
    ops[c.operation] = (ops[c.operation] ?? 0) + 1;
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([svc, ops]) => [svc, Object.fromEntries(Object.entries(ops).sort((x, y) => y[1] - x[1]))]),
  );
}

/**
 * Each budget the calls drew on, over a plan of `wallSeconds`, with the budgets' sizes (the
 * defaults unless given). A call of a service the operator has no client for is an error.
 */
export function budgetUse(
  calls: readonly SeenCall[],
  wallSeconds: number,
  sizes: Readonly<Record<BudgetName, Readonly<BudgetSize>>> = DEFAULT_RATE_BUDGETS,
): BudgetUse[] {
  const byBucket = new Map<string, { budget: BudgetName; key: string; at: number[] }>();
  for (const c of calls) {
    if (!(AWS_SERVICES as readonly string[]).includes(c.service))
      throw new Error(`a call of ${c.service} (${c.operation}), a service the operator has no client for`);
    for (const draw of budgetDraws(c.service as AwsService, c.operation, undefined)) {
      const id = `${draw.name} ${draw.key}`;
      const entry = byBucket.get(id) ?? { budget: draw.name, key: draw.key, at: [] };
      entry.at.push(c.at);
      byBucket.set(id, entry);
    }
  }
  return [...byBucket.values()]
    .map(({ budget, key, at }) => {
      const { ratePerSecond, burst } = sizes[budget];
      const span = (Math.max(...at) - Math.min(...at)) / 1000;
      const callsPerSecond = at.length / wallSeconds;
      return {
        budget,
        key,
        ratePerSecond,
        burst,
        calls: at.length,
        callsPerSecond,
        ratioToRate: callsPerSecond / ratePerSecond,
        ratioToBucket: at.length / (burst + ratePerSecond * span),
      };
    })
    .sort((a, b) => b.calls - a.calls);
}
