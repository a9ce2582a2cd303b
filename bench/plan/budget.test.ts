import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_RATE_BUDGETS } from "../../src/aws/budget-plan.ts";
import { budgetUse, callsByService, isRead, type SeenCall } from "./budget.ts";

const call = (service: string, operation: string, at: number): SeenCall => ({ service, operation, at });

describe("budgetUse", () => {
  it("charges S3 and SQS calls to their service's budget and EC2 calls to their action's", () => {
    const calls = [
      call("s3", "HeadBucket", 0),
      call("s3", "GetBucketTagging", 1000),
      call("sqs", "GetQueueAttributes", 0),
      call("ec2", "DescribeInstances", 0),
      call("ec2", "DescribeVolumes", 500),
      call("ec2", "DescribeInstances", 2000),
    ];
    const use = budgetUse(calls, 4);
    assert.deepEqual(
      use.map((u) => [u.budget, u.key, u.calls]),
      [
        ["s3", "s3", 2],
        ["ec2.nonMutating", "DescribeInstances", 2],
        ["sqs", "sqs", 1],
        ["ec2.nonMutating", "DescribeVolumes", 1],
      ],
    );
    const s3 = use[0];
    assert.equal(s3?.callsPerSecond, 0.5);
    assert.equal(s3?.ratioToRate, 0.5 / DEFAULT_RATE_BUDGETS.s3.ratePerSecond);
    // Two calls one second apart: the bucket lets through its burst plus a second of refill.
    assert.equal(
      s3?.ratioToBucket,
      2 / (DEFAULT_RATE_BUDGETS.s3.burst + DEFAULT_RATE_BUDGETS.s3.ratePerSecond),
    );
  });

  it("says when calls outran a budget: more than a full bucket and its refill", () => {
    const size = { ratePerSecond: 2, burst: 3 };
    const sizes = { ...DEFAULT_RATE_BUDGETS, sqs: size };
    // 9 calls within 2 s: the bucket allows 3 + 2 x 2 = 7.
    const calls = Array.from({ length: 9 }, (_, i) => call("sqs", "GetQueueAttributes", i * 250));
    const [use] = budgetUse(calls, 2, sizes);
    assert.equal(use?.ratioToBucket, 9 / 7);
    assert.equal(use?.ratioToRate, 9 / 2 / 2);
  });

  it("refuses a call of a service the operator has no client for", () => {
    assert.throws(() => budgetUse([call("iam", "GetRole", 0)], 1), /iam \(GetRole\)/);
  });
});

describe("callsByService and isRead", () => {
  it("counts calls by service and operation, largest first", () => {
    assert.deepEqual(
      callsByService([
        call("sqs", "GetQueueUrl", 0),
        call("s3", "HeadBucket", 0),
        call("sqs", "GetQueueAttributes", 0),
        call("sqs", "GetQueueAttributes", 0),
      ]),
      { s3: { HeadBucket: 1 }, sqs: { GetQueueAttributes: 2, GetQueueUrl: 1 } },
    );
  });

  it("takes AWS's read verbs as reads and every other call as mutating", () => {
    for (const op of ["HeadBucket", "GetBucketVersioning", "ListQueueTags", "DescribeInstances"])
      assert.equal(isRead({ operation: op }), true, op);
    for (const op of ["PutBucketVersioning", "TagQueue", "CreateTags", "Getaway", "StopInstances"])
      assert.equal(isRead({ operation: op }), false, op);
  });
});
