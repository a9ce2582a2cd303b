import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  budgetDraws,
  DEFAULT_RATE_BUDGETS,
  EC2_DOCUMENTED_BUCKETS,
  ec2ActionClass,
  parseBudgetSpec,
} from "./budget-plan.ts";

describe("EC2 action classes", () => {
  it("sorts the actions the operator calls into AWS's classes", () => {
    assert.equal(ec2ActionClass("RunInstances"), "runInstances");
    assert.equal(ec2ActionClass("StartInstances"), "startInstances");
    assert.equal(ec2ActionClass("TerminateInstances"), "terminateInstances");
    assert.equal(ec2ActionClass("CreateTags"), "tags");
    assert.equal(ec2ActionClass("DeleteTags"), "tags");
    assert.equal(ec2ActionClass("StopInstances"), "mutating");
    assert.equal(ec2ActionClass("ModifyInstanceAttribute"), "mutating");
    assert.equal(ec2ActionClass("DescribeInstances"), "nonMutating");
    assert.equal(ec2ActionClass("DescribeImages"), "nonMutating");
    assert.equal(ec2ActionClass("GetConsoleOutput"), "nonMutating");
    assert.equal(ec2ActionClass("Describe"), "mutating", "only a whole verb prefix counts");
  });

  it("defaults to AWS's documented bucket sizes and refill rates, one token held in reserve", () => {
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.runInstances, { ratePerSecond: 2, burst: 5 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS["runInstances.instances"], { ratePerSecond: 2, burst: 1000 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.startInstances, { ratePerSecond: 2, burst: 5 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.terminateInstances, { ratePerSecond: 5, burst: 100 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.tags, { ratePerSecond: 10, burst: 100 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.mutating, { ratePerSecond: 5, burst: 50 });
    assert.deepEqual(EC2_DOCUMENTED_BUCKETS.nonMutating, { ratePerSecond: 20, burst: 100 });
    assert.deepEqual(DEFAULT_RATE_BUDGETS["ec2.runInstances"], { ratePerSecond: 2, burst: 4 });
    assert.deepEqual(DEFAULT_RATE_BUDGETS["ec2.runInstances.instances"], { ratePerSecond: 2, burst: 999 });
    assert.deepEqual(DEFAULT_RATE_BUDGETS["ec2.nonMutating"], { ratePerSecond: 20, burst: 99 });
  });

  it("draws one request token per call on the action's own bucket, plus instance tokens for RunInstances", () => {
    assert.deepEqual(budgetDraws("ec2", "DescribeInstances", {}), [
      { name: "ec2.nonMutating", key: "DescribeInstances", cost: 1 },
    ]);
    assert.deepEqual(budgetDraws("ec2", "RunInstances", { MinCount: 1, MaxCount: 4 }), [
      { name: "ec2.runInstances", key: "RunInstances", cost: 1 },
      { name: "ec2.runInstances.instances", key: "RunInstances/instances", cost: 4 },
    ]);
    assert.equal(budgetDraws("ec2", "RunInstances", {})[1]?.cost, 1);
    assert.deepEqual(budgetDraws("s3", "HeadBucket", {}), [{ name: "s3", key: "s3", cost: 1 }]);
  });
});

describe("parseBudgetSpec", () => {
  it("reads name=rate/burst pairs and off", () => {
    assert.deepEqual(parseBudgetSpec("ec2.runInstances=1/3, s3=100/200,sqs=0.5/1"), {
      "ec2.runInstances": { ratePerSecond: 1, burst: 3 },
      s3: { ratePerSecond: 100, burst: 200 },
      sqs: { ratePerSecond: 0.5, burst: 1 },
    });
    assert.equal(parseBudgetSpec("off"), false);
    assert.deepEqual(parseBudgetSpec(""), {});
  });

  it("refuses unknown names and bad numbers", () => {
    for (const bad of ["ec2=20/40", "s3=0/10", "s3=10/0", "s3=10", "s3=a/b", "s3=-1/5"])
      assert.throws(() => parseBudgetSpec(bad), RangeError, bad);
  });
});
