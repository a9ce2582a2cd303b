import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AwsError, NoPermitYetError } from "../../../aws/errors.ts";
import { TerminalError } from "../../../runtime/controller/reconciler.ts";
import { ApiError } from "../../../runtime/kube/errors.ts";
import { DependencyNotReadyError, InvalidSpecError, NotReadyRetryError } from "../driver.ts";
import { classifyAwsError } from "../../../aws/errors.ts";
import { accessAdvice, CONFLICT_REQUEUE_MS, planFailure, type FailureFacts } from "./failure.ts";

const retry = { initialMs: 300_000, maxMs: 3_600_000 };
const facts: FailureFacts = { recorded: false, steadyPollMs: 60_000, access: { retry } };
const aws = (kind: "terminal" | "throttled" | "retryable", code: string): AwsError =>
  new AwsError({ kind, code, service: "ec2", operation: "RunInstances", message: "no" });

describe("planFailure", () => {
  it("requeues a write that met a newer version shortly, recording nothing", () => {
    const plan = planFailure(new ApiError({ status: 409, reason: "Conflict", message: "modified" }), facts);
    assert.deepEqual(plan.outcome, { requeueAfter: CONFLICT_REQUEUE_MS });
    assert.equal(plan.conditions, undefined);
    assert.equal(plan.event, undefined);
    assert.equal(plan.streak, "keep");
  });

  it("requeues a call the rate budget deferred for its booked slot (at least 1 ms)", () => {
    const later = planFailure(new NoPermitYetError("ec2", "RunInstances", "RunInstances", 4500), facts);
    assert.deepEqual(later.outcome, { requeueAfter: 4500 });
    assert.equal(later.streak, "keep");
    assert.equal(later.conditions, undefined);
    const now = planFailure(new NoPermitYetError("ec2", "RunInstances", "RunInstances", 0), facts);
    assert.deepEqual(now.outcome, { requeueAfter: 1 });
  });

  it("reports a dependency that is not ready on Ready and Synced, with one Event, and waits for the steady poll", () => {
    const err = new DependencyNotReadyError("DeadLetterQueueNotReady", "dlq has no ARN");
    const plan = planFailure(err, { ...facts, ready: { reason: "Available", message: "queue exists" } });
    assert.deepEqual(plan.outcome, { requeueAfter: 60_000 });
    const value = { status: "False", reason: "DeadLetterQueueNotReady", message: "dlq has no ARN" };
    assert.deepEqual(plan.conditions, { ready: value, synced: value });
    assert.deepEqual(plan.event, { reason: "DeadLetterQueueNotReady", message: "dlq has no ARN" });
    assert.deepEqual(planFailure(err, facts).event, plan.event, "a first wait, before any condition");
    const again = planFailure(err, {
      ...facts,
      ready: { reason: "DeadLetterQueueNotReady", message: "dlq has no ARN" },
    });
    assert.equal(again.event, undefined, "a wait Ready already reports emits nothing more");
    assert.deepEqual(again.conditions, plan.conditions);
    const other = planFailure(err, {
      ...facts,
      ready: { reason: "DeadLetterQueueNotReady", message: "no dlq" },
    });
    assert.deepEqual(other.event, plan.event, "a wait for something else is a new one");
  });

  it("reports a need not yet usable on Synced only and hands the error back for a retry", () => {
    const err = new NotReadyRetryError("AccountNotReady", "cannot assume the role");
    const plan = planFailure(err, facts);
    assert.equal((plan.outcome as { error: unknown }).error, err);
    assert.deepEqual(plan.conditions, {
      synced: { status: "False", reason: "AccountNotReady", message: "cannot assume the role" },
    });
  });

  it("ends a terminal failure in a TerminalError with one Warning, Ready kept only for a recorded resource it does not refuse", () => {
    const err = aws("terminal", "InvalidAMIID.NotFound");
    const fresh = planFailure(err, facts);
    const value = { status: "False", reason: "InvalidAMIID_NotFound", message: "RunInstances: no" };
    assert.deepEqual(fresh.conditions, { ready: value, synced: value });
    assert.deepEqual(fresh.event, { reason: "InvalidAMIID_NotFound", message: "RunInstances: no" });
    assert.equal(fresh.streak, "end");
    const thrown = (fresh.outcome as { error: unknown }).error;
    assert.ok(thrown instanceof TerminalError);
    assert.equal(thrown.cause, err);

    const recorded = planFailure(err, { ...facts, recorded: true });
    assert.deepEqual(recorded.conditions, { synced: value }, "a recorded resource keeps its Ready");
    const refused = planFailure(new InvalidSpecError("NotOwned", "not ours", { notReady: true }), {
      ...facts,
      recorded: true,
    });
    const notOwned = { status: "False", reason: "NotOwned", message: "not ours" };
    assert.deepEqual(
      refused.conditions,
      { ready: notOwned, synced: notOwned },
      "a refusal turns Ready False",
    );
  });

  it("counts a retryable AWS error in the streak, to be recorded on Synced once it persists, and rethrows it", () => {
    for (const kind of ["throttled", "retryable"] as const) {
      const err = aws(kind, "RequestLimitExceeded");
      const plan = planFailure(err, facts);
      assert.equal(plan.streak, "count");
      assert.deepEqual(plan.conditions, {
        synced: { status: "False", reason: "RequestLimitExceeded", message: "RunInstances: no" },
      });
      assert.equal((plan.outcome as { error: unknown }).error, err);
      assert.equal(plan.event, undefined);
    }
  });

  it("retries a failure of the operator's access on the access backoff, saying which action to grant and when it is tried again", () => {
    // As the SDK throws S3's AccessDenied; the call's IAM action is not named after it.
    const raw = Object.assign(
      new Error(
        "User: arn:aws:sts::1:assumed-role/op/s is not authorized to perform: s3:GetEncryptionConfiguration",
      ),
      {
        name: "AccessDenied",
        $fault: "client",
        $metadata: { httpStatusCode: 403 },
      },
    );
    const err = new AwsError(classifyAwsError(raw, { service: "s3", operation: "GetBucketEncryption" }), {
      cause: raw,
    });
    assert.equal(err.info.access, "denied");
    const iam = [
      { action: "s3:CreateBucket" },
      { action: "s3:GetEncryptionConfiguration", calls: ["GetBucketEncryption"] },
    ];
    const plan = planFailure(err, { ...facts, access: { iam, retry } });
    assert.deepEqual(plan.outcome, { retryAccess: true });
    assert.equal(plan.streak, "end");
    const ready = plan.conditions?.ready;
    assert.equal(ready?.reason, "AccessDenied", "the AWS code stays the reason");
    assert.equal(ready?.status, "False");
    assert.equal(
      ready?.message,
      "GetBucketEncryption: S3 GetBucketEncryption failed with AccessDenied: User: arn:aws:sts::1:assumed-role/op/<session> is not " +
        "authorized to perform: s3:GetEncryptionConfiguration; the IAM identity lacks a permission for this call; " +
        "the operator's IAM role needs s3:GetEncryptionConfiguration: config/iam/policy.json allows it " +
        "(config/iam/policy-tag-scoped.json on resources carrying the managed-by tag only); see " +
        "docs/eks.md#2-the-iam-policy; tried again after 5m0s, then at doubling intervals up to 1h0m0s " +
        "until it succeeds (at once when the spec changes)",
    );
    assert.deepEqual(plan.event, { reason: "AccessDenied", message: ready?.message });
    const recorded = planFailure(err, { ...facts, recorded: true, access: { iam, retry } });
    assert.equal(recorded.conditions?.ready, undefined, "a recorded resource keeps its Ready");
  });

  it("names the AwsAccount's role as the one to grant, and the action after the call when the kind does not list it", () => {
    const err = new AwsError({
      kind: "terminal",
      code: "UnauthorizedOperation",
      service: "ec2",
      operation: "DescribeInstances",
      message: "EC2 DescribeInstances failed with UnauthorizedOperation: no",
      access: "denied",
    });
    const advice = accessAdvice(err.info, { account: "team-a", retry });
    assert.match(
      advice,
      /^; the role of AwsAccount team-a needs ec2:DescribeInstances: config\/iam\/policy\.json/,
    );
  });

  it("says what a denied AssumeRole needs on both sides, and adds only the retry to a code whose hint says what to do", () => {
    const assume = accessAdvice(
      {
        kind: "terminal",
        code: "AccessDenied",
        service: "sts",
        operation: "AssumeRole",
        message: "x",
        access: "denied",
      },
      { account: "team-a", retry },
    );
    assert.match(assume, /sts:AssumeRole and sts:TagSession on the AwsAccount's role/);
    assert.match(assume, /trust policy must allow both/);
    assert.match(assume, /docs\/accounts\.md#iam-the-operators-role-and-the-tenant-role/);
    for (const access of ["credentials", "prerequisite"] as const) {
      const advice = accessAdvice(
        { kind: "terminal", code: "X", service: "ec2", operation: "RunInstances", message: "x", access },
        { retry },
      );
      assert.equal(
        advice,
        "; tried again after 5m0s, then at doubling intervals up to 1h0m0s until it succeeds (at once when the spec changes)",
      );
    }
  });

  it("ends any other terminal AWS error in a TerminalError, as before", () => {
    const plan = planFailure(aws("terminal", "InvalidParameterValue"), facts);
    assert.ok((plan.outcome as { error: unknown }).error instanceof TerminalError);
  });

  it("rethrows anything else unrecorded", () => {
    const err = new Error("boom");
    assert.deepEqual(planFailure(err, facts), { streak: "keep", outcome: { error: err } });
  });
});
