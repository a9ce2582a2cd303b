/**
 * EC2's rate limits as AWS enforces them: moto behind a proxy that keeps EC2's documented token
 * buckets (one per action, sized by class, plus the RunInstances instance bucket) and answers
 * `503 RequestLimitExceeded` when one is empty. A burst of instance creates from the operator,
 * with its default budgets and workers, must converge without a single refused call, and
 * without a worker held on a RunInstances permit for longer than the client's longest wait (a
 * create that would wait longer is requeued for its booked permit instead).
 */
import { EC2Client, RunInstancesCommand } from "@aws-sdk/client-ec2";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ec2Throttle } from "../support/ec2-throttle.ts";
import { Ec2Env, ec2Sized } from "./reconciler-ec2-fixture.ts";

/** More launches than the RunInstances bucket holds (5). */
const BURST = ec2Sized({ full: 16, reduced: 10 });

describe("EC2 rate budgets against AWS's throttling buckets", () => {
  /** When set, the buckets' clock stands still there: no token comes back during a burst. */
  let frozenAt: number | undefined;
  const throttle = new Ec2Throttle(() => frozenAt ?? Date.now());
  const f = new Ec2Env({
    ns: "ec2-throttling",
    proxy: { gate: throttle.gate },
  }).hooks();

  it("launches a burst of instances with no RequestLimitExceeded", async () => {
    const start = Date.now();
    for (let i = 0; i < BURST; i++) await f.create(`burst-${i}`);
    for (let i = 0; i < BURST; i++) await f.waitReady(`burst-${i}`, 60_000);
    const seconds = (Date.now() - start) / 1000;
    assert.deepEqual(Object.fromEntries(throttle.refused), {}, "no call was refused");
    assert.equal(f.proxy.count("RunInstances"), BURST, "one launch per object");
    // The RunInstances bucket (5, then 2 per second) paces the launches: the burst cannot have
    // been faster than AWS allows, so the budget did hold calls back.
    assert.ok(seconds >= (BURST - 5) / 2, `${seconds} s for ${BURST} launches`);
    const waited = (suffix: string, labels: Record<string, string> = {}): Promise<number> =>
      f.op.metric(`aws_api_rate_budget_wait_seconds${suffix}`, { budget: "RunInstances", ...labels });
    const launches = await waited("_count");
    assert.equal(launches, BURST, "one permit wait per launch");
    // The longest wait is 2 s (DEFAULT_MAX_PERMIT_WAIT_MS); the next histogram bucket is 2.5 s.
    assert.equal(await waited("_bucket", { le: "2.5" }), launches, "no launch waited for longer");
  });

  it("does refuse a client without budgets that sends the same burst", async () => {
    const ec2 = new EC2Client({
      region: "us-east-1",
      endpoint: f.proxy.endpoint,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
      maxAttempts: 1,
    });
    const before = throttle.refused.get("RunInstances") ?? 0;
    // Long after the last launch, so the RunInstances bucket is full (5), and no refill while the
    // burst arrives, however long it takes to reach the proxy on a busy machine.
    frozenAt = Date.now() + 10_000;
    try {
      const results = await Promise.allSettled(
        Array.from({ length: BURST }, () =>
          ec2.send(new RunInstancesCommand({ ImageId: "ami-1e749f67", MinCount: 1, MaxCount: 1 })),
        ),
      );
      const refused = results.filter(
        (r) => r.status === "rejected" && (r.reason as { name?: string }).name === "RequestLimitExceeded",
      );
      assert.equal(refused.length, BURST - 5, `${refused.length} of ${BURST} refused`);
      assert.equal((throttle.refused.get("RunInstances") ?? 0) - before, refused.length);
    } finally {
      frozenAt = undefined;
      ec2.destroy();
    }
  });
});
