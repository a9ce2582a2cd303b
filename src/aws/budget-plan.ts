/**
 * Which client-side rate budgets an AWS call draws from, and their defaults.
 *
 * EC2 throttles each account per region and per API action, with a token bucket whose size and
 * refill rate depend on the action's class (EC2 developer guide, "Request throttling"); the
 * defaults below are those documented numbers (less one token of reserve), so a burst the
 * operator sends is one AWS accepts.
 * Each EC2 action gets a bucket of its own, sized by its class, as on AWS. RunInstances also
 * draws from AWS's instance (resource) bucket, one token per instance launched. S3 and SQS
 * publish no such buckets; each has one budget per region.
 */
import type { RateBudgetOptions } from "./rate-budget.ts";
import type { AwsService } from "./service.ts";

/** EC2 action classes with their own documented bucket sizes. */
export const EC2_ACTION_CLASSES = [
  "runInstances",
  "startInstances",
  "terminateInstances",
  "tags",
  "mutating",
  "nonMutating",
] as const;
/** One EC2 action class. */
export type Ec2ActionClass = (typeof EC2_ACTION_CLASSES)[number];

/** The names budgets are configured by (`--aws-rate-budgets`, chart value `aws.rateBudgets`). */
export const BUDGET_NAMES = [
  ...EC2_ACTION_CLASSES.map((c) => `ec2.${c}` as const),
  "ec2.runInstances.instances",
  "s3",
  "sqs",
  "sts",
] as const;
/** A configurable budget. */
export type BudgetName = (typeof BUDGET_NAMES)[number];

/** Rate and bucket size of one budget. */
export type BudgetSize = Required<Pick<RateBudgetOptions, "ratePerSecond" | "burst">>;

/**
 * EC2's documented buckets (EC2 developer guide, "Request throttling"): bucket size and refill
 * per second of each action class, and of the RunInstances instance (resource) bucket.
 */
export const EC2_DOCUMENTED_BUCKETS: Readonly<
  Record<Ec2ActionClass | "runInstances.instances", Readonly<BudgetSize>>
> = Object.freeze({
  runInstances: Object.freeze({ ratePerSecond: 2, burst: 5 }),
  startInstances: Object.freeze({ ratePerSecond: 2, burst: 5 }),
  terminateInstances: Object.freeze({ ratePerSecond: 5, burst: 100 }),
  tags: Object.freeze({ ratePerSecond: 10, burst: 100 }),
  mutating: Object.freeze({ ratePerSecond: 5, burst: 50 }),
  nonMutating: Object.freeze({ ratePerSecond: 20, burst: 100 }),
  "runInstances.instances": Object.freeze({ ratePerSecond: 2, burst: 1000 }),
});

/**
 * Tokens the client keeps back in each EC2 bucket. AWS refills its bucket from the moment a call
 * arrives, the client from the moment it sends; when a later call travels faster than the one
 * that emptied the bucket, a client that matched AWS's bucket exactly would be a fraction of a
 * token ahead and get `RequestLimitExceeded`. One token in reserve absorbs up to one refill
 * interval of such difference (half a second for RunInstances).
 */
export const EC2_RESERVE_TOKENS = 1;

const ec2Default = (b: Readonly<BudgetSize>): Readonly<BudgetSize> =>
  Object.freeze({ ratePerSecond: b.ratePerSecond, burst: Math.max(1, b.burst - EC2_RESERVE_TOKENS) });

/**
 * The defaults: EC2's documented buckets less {@link EC2_RESERVE_TOKENS}; S3 and SQS are far more
 * generous and get a plain budget.
 */
export const DEFAULT_RATE_BUDGETS: Readonly<Record<BudgetName, Readonly<BudgetSize>>> = Object.freeze({
  "ec2.runInstances": ec2Default(EC2_DOCUMENTED_BUCKETS.runInstances),
  "ec2.startInstances": ec2Default(EC2_DOCUMENTED_BUCKETS.startInstances),
  "ec2.terminateInstances": ec2Default(EC2_DOCUMENTED_BUCKETS.terminateInstances),
  "ec2.tags": ec2Default(EC2_DOCUMENTED_BUCKETS.tags),
  "ec2.mutating": ec2Default(EC2_DOCUMENTED_BUCKETS.mutating),
  "ec2.nonMutating": ec2Default(EC2_DOCUMENTED_BUCKETS.nonMutating),
  "ec2.runInstances.instances": ec2Default(EC2_DOCUMENTED_BUCKETS["runInstances.instances"]),
  s3: Object.freeze({ ratePerSecond: 50, burst: 100 }),
  sqs: Object.freeze({ ratePerSecond: 50, burst: 100 }),
  // AssumeRole and GetCallerIdentity: a few calls per AwsAccount and session lifetime.
  sts: Object.freeze({ ratePerSecond: 10, burst: 20 }),
});

/**
 * The share of every budget polls may take by default (`--poll-budget-share`): half, so real work
 * always finds at least half of each budget free of polls, and all of it when it needs it.
 */
export const DEFAULT_POLL_BUDGET_SHARE = 0.5;

/** The class of an EC2 action: describe, get, list and search actions do not mutate. */
export function ec2ActionClass(operation: string): Ec2ActionClass {
  switch (operation) {
    case "RunInstances":
      return "runInstances";
    case "StartInstances":
      return "startInstances";
    case "TerminateInstances":
      return "terminateInstances";
    case "CreateTags":
    case "DeleteTags":
      return "tags";
    default:
      return /^(Describe|Get|List|Search)[A-Z]/.test(operation) ? "nonMutating" : "mutating";
  }
}

/**
 * One draw on a budget: `key` identifies the bucket within the service and region (the service
 * name for S3 and SQS, the action for EC2, `RunInstances/instances` for the instance bucket) and
 * labels its metrics; `cost` is the tokens taken.
 */
export interface BudgetDraw {
  readonly name: BudgetName;
  readonly key: string;
  readonly cost: number;
}

/** The budgets one call draws from, in the order they are taken. */
export function budgetDraws(service: AwsService, operation: string, input: unknown): readonly BudgetDraw[] {
  if (service !== "ec2") return [{ name: service, key: service, cost: 1 }];
  const cls = ec2ActionClass(operation);
  const request: BudgetDraw = { name: `ec2.${cls}`, key: operation, cost: 1 };
  if (operation !== "RunInstances") return [request];
  const count = (input as { MaxCount?: unknown } | undefined)?.MaxCount;
  const instances = typeof count === "number" && Number.isInteger(count) && count > 0 ? count : 1;
  return [request, { name: "ec2.runInstances.instances", key: "RunInstances/instances", cost: instances }];
}

/**
 * Parses `name=rate/burst` pairs separated by commas (`ec2.runInstances=2/5,s3=100/200`), or
 * `off` for no budgets. Rates may be fractional; bursts are at least 1.
 * @throws RangeError naming the first bad entry.
 */
export function parseBudgetSpec(text: string): Partial<Record<BudgetName, BudgetSize>> | false {
  if (text.trim() === "off") return false;
  const out: Partial<Record<BudgetName, BudgetSize>> = {};
  for (const part of text.split(",")) {
    const entry = part.trim();
    if (entry === "") continue;
    const m = /^([a-zA-Z0-9.]+)=([0-9]*\.?[0-9]+)\/([0-9]*\.?[0-9]+)$/.exec(entry);
    const name = m?.[1];
    if (m === null || name === undefined || !(BUDGET_NAMES as readonly string[]).includes(name))
      throw new RangeError(`bad budget ${JSON.stringify(entry)}`);
    const ratePerSecond = Number(m[2]);
    const burst = Number(m[3]);
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError(`bad budget ${JSON.stringify(entry)}`);
    out[name as BudgetName] = { ratePerSecond, burst };
  }
  return out;
}
