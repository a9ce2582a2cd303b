import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AwsError, NoPermitYetError } from "../../../aws/errors.ts";
import { TerminalError } from "../../../runtime/controller/reconciler.ts";
import { ApiError } from "../../../runtime/kube/errors.ts";
import { DependencyNotReadyError, InvalidSpecError, NotReadyRetryError } from "../driver.ts";
import { CONFLICT_REQUEUE_MS, planFailure, type FailureFacts } from "./failure.ts";

const facts: FailureFacts = { recorded: false, steadyPollMs: 60_000 };
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

  it("reports a dependency that is not ready on Ready and Synced and waits for the steady poll", () => {
    const plan = planFailure(new DependencyNotReadyError("DeadLetterQueueNotReady", "dlq has no ARN"), facts);
    assert.deepEqual(plan.outcome, { requeueAfter: 60_000 });
    const value = { status: "False", reason: "DeadLetterQueueNotReady", message: "dlq has no ARN" };
    assert.deepEqual(plan.conditions, { ready: value, synced: value });
    assert.equal(plan.event, undefined);
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

  it("rethrows anything else unrecorded", () => {
    const err = new Error("boom");
    assert.deepEqual(planFailure(err, facts), { streak: "keep", outcome: { error: err } });
  });
});
