import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_RATE_BUDGETS } from "../../src/aws/budget-plan.ts";
import type { SeenCall } from "../plan/budget.ts";
import { exportPhaseOf, phasedBound } from "./bound.ts";

const call = (service: string, operation: string, at: number): SeenCall => ({ service, operation, at });
/** `n` calls of `operation`, `everyMs` apart from `from`. */
const calls = (n: number, service: string, operation: string, from: number, everyMs: number): SeenCall[] =>
  Array.from({ length: n }, (_, i) => call(service, operation, from + i * everyMs));
const sizes = {
  ...DEFAULT_RATE_BUDGETS,
  s3: { ratePerSecond: 10, burst: 5 },
  sqs: { ratePerSecond: 10, burst: 5 },
};

describe("exportPhaseOf", () => {
  it("puts the listings in one phase and each service's reads in one of its own", () => {
    for (const op of ["DescribeInstances", "ListBuckets", "GetBucketLocation", "ListQueues"])
      assert.equal(exportPhaseOf({ service: "x", operation: op }), "list", op);
    assert.equal(exportPhaseOf({ service: "s3", operation: "GetBucketTagging" }), "read s3");
    assert.equal(exportPhaseOf({ service: "sqs", operation: "GetQueueAttributes" }), "read sqs");
    assert.equal(exportPhaseOf({ service: "ec2", operation: "DescribeVolumes" }), "read ec2");
  });
});

describe("phasedBound", () => {
  it("adds up the bounds of phases that follow one another", () => {
    // 25 S3 calls then 15 SQS calls: (25 - 5) / 10 = 2 s, then (15 - 5) / 10 = 1 s.
    const b = phasedBound(
      [...calls(25, "s3", "GetBucketTagging", 0, 100), ...calls(15, "sqs", "ListQueueTags", 5_000, 100)],
      exportPhaseOf,
      sizes,
    );
    assert.deepEqual(
      b.phases.map((p) => [p.phase, p.calls, p.boundSeconds, p.binding.budget]),
      [
        ["read s3", 25, 2, "s3"],
        ["read sqs", 15, 1, "sqs"],
      ],
    );
    assert.equal(b.phases[0]?.spanSeconds, 2.4);
    assert.equal(b.phases[0]?.callsPerSecond, 25 / 2.4);
    assert.equal(b.sumOfPhaseBoundsSeconds, 3);
    assert.equal(b.overlapSeconds, 0);
    assert.equal(b.boundSeconds, 3);
  });

  it("takes the largest of the budgets one phase draws on side by side", () => {
    // EC2's per-action buckets (20/s, 99): 139 DescribeInstanceAttribute need 2 s, 119 DescribeVolumes 1 s.
    const b = phasedBound(
      [
        ...calls(139, "ec2", "DescribeInstanceAttribute", 0, 10),
        ...calls(119, "ec2", "DescribeVolumes", 0, 10),
      ],
      exportPhaseOf,
    );
    assert.equal(b.phases.length, 1);
    assert.equal(b.phases[0]?.boundSeconds, 2);
    assert.equal(b.phases[0]?.binding.key, "DescribeInstanceAttribute");
    assert.equal(b.boundSeconds, 2);
  });

  it("takes off the time phases overlapped, and is never below the largest phase", () => {
    // S3 from 0 to 2.4 s, SQS from 2 s to 3.4 s: 0.4 s side by side.
    const overlapping = phasedBound(
      [...calls(25, "s3", "GetBucketTagging", 0, 100), ...calls(15, "sqs", "ListQueueTags", 2_000, 100)],
      exportPhaseOf,
      sizes,
    );
    assert.ok(Math.abs(overlapping.overlapSeconds - 0.4) < 1e-9, String(overlapping.overlapSeconds));
    assert.ok(Math.abs(overlapping.boundSeconds - 2.6) < 1e-9, String(overlapping.boundSeconds));
    // SQS entirely within S3's span: the sum less the overlap is below S3's own bound.
    const within = phasedBound(
      [...calls(25, "s3", "GetBucketTagging", 0, 100), ...calls(15, "sqs", "ListQueueTags", 500, 100)],
      exportPhaseOf,
      sizes,
    );
    assert.ok(Math.abs(within.overlapSeconds - 1.4) < 1e-9, String(within.overlapSeconds));
    assert.equal(within.boundSeconds, 2);
  });

  it("bounds nothing that every burst covers", () => {
    const b = phasedBound(
      [call("s3", "ListBuckets", 0), ...calls(5, "s3", "GetBucketTagging", 100, 1)],
      exportPhaseOf,
      sizes,
    );
    assert.deepEqual(
      b.phases.map((p) => [p.phase, p.boundSeconds, p.binding.budget, p.binding.calls]),
      [
        ["list", 0, "s3", 1],
        ["read s3", 0, "s3", 5],
      ],
    );
    assert.equal(b.phases[0]?.callsPerSecond, 0, "a phase of one call has no span");
    assert.equal(b.boundSeconds, 0);
  });
});
