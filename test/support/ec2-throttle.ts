/**
 * EC2's request throttling as AWS documents it (EC2 developer guide, "Request throttling"), for
 * an {@link AwsProxy} gate: one token bucket per action, sized by the action's class, plus the
 * RunInstances instance bucket, refilled continuously. A call whose bucket is empty is refused.
 * Written independently of the operator's own budgets (src/aws/budget-plan.ts) so that a test
 * compares the operator against AWS's numbers, not against itself.
 */
import type { RequestGate } from "./aws-proxy.ts";

interface Bucket {
  tokens: number;
  size: number;
  refillPerSecond: number;
  at: number;
}

/** Bucket size and refill per second of an EC2 action. */
function requestBucketOf(action: string): [number, number] {
  if (action === "RunInstances" || action === "StartInstances") return [5, 2];
  if (action === "TerminateInstances") return [100, 5];
  if (action === "CreateTags" || action === "DeleteTags") return [100, 10];
  if (/^(Describe|Get|List|Search)/.test(action)) return [100, 20];
  return [50, 5];
}

/** EC2 throttling state: every bucket starts full. */
export class Ec2Throttle {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  /** Calls refused so far, by action. */
  readonly refused = new Map<string, number>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A gate for {@link startAwsProxy}: EC2 calls (query protocol) go through the buckets. */
  readonly gate: RequestGate = (operation, body) => {
    const params = new URLSearchParams(body);
    if (params.get("Action") !== operation) return "forward"; // not an EC2 query call
    const [size, refill] = requestBucketOf(operation);
    const ok = this.#take(operation, size, refill, 1);
    let instancesOk = true;
    if (ok && operation === "RunInstances") {
      instancesOk = this.#take("RunInstances/instances", 1000, 2, Number(params.get("MaxCount") ?? "1"));
      if (!instancesOk) this.#give(operation);
    }
    if (ok && instancesOk) return "forward";
    this.refused.set(operation, (this.refused.get(operation) ?? 0) + 1);
    return "throttle";
  };

  #bucket(key: string, size: number, refill: number): Bucket {
    let b = this.#buckets.get(key);
    const now = this.#now();
    if (b === undefined) {
      b = { tokens: size, size, refillPerSecond: refill, at: now };
      this.#buckets.set(key, b);
    }
    b.tokens = Math.min(b.size, b.tokens + ((now - b.at) / 1000) * b.refillPerSecond);
    b.at = now;
    return b;
  }

  #take(key: string, size: number, refill: number, n: number): boolean {
    const b = this.#bucket(key, size, refill);
    if (b.tokens < n) return false;
    b.tokens -= n;
    return true;
  }

  #give(key: string): void {
    const b = this.#buckets.get(key);
    if (b !== undefined) b.tokens = Math.min(b.size, b.tokens + 1);
  }
}
