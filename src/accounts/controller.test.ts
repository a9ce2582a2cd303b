import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ACCOUNT_FINALIZER, type AwsAccount } from "../api/v1/index.ts";
import { AwsError } from "../aws/errors.ts";
import { silentLogger } from "../runtime/logging.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import {
  AwsAccountReconciler,
  failureOf,
  SecretUnavailableError,
  type AwsAccountReconcilerOptions,
} from "./controller.ts";

const account = {
  spec: {
    roleArn: "arn:aws:iam::222222222222:role/t",
    sessionDurationSeconds: 3600,
    adoption: "Disallowed" as const,
    allowedNamespaces: {},
  },
};
const denied = new AwsError({
  kind: "terminal",
  code: "AccessDenied",
  service: "sts",
  operation: "AssumeRole",
  message: "STS AssumeRole failed with AccessDenied: not authorized",
  access: "denied",
});

describe("failureOf", () => {
  it("reports the AssumeRole failure inside the call it was providing credentials for", () => {
    const outer = new AwsError(
      {
        kind: "terminal",
        code: "CredentialsProviderError",
        service: "sts",
        operation: "GetCallerIdentity",
        message: "x",
      },
      { cause: denied },
    );
    const [reason, message] = failureOf(outer, account);
    assert.equal(reason, "AssumeRoleFailed");
    assert.match(message, /^AccessDenied: could not assume arn:aws:iam::222222222222:role\/t: AssumeRole: /);
  });

  it("names an unreadable external-ID Secret", () => {
    const err = new Error("wrapped", { cause: new SecretUnavailableError("Secret ns/ids does not exist") });
    assert.deepEqual(failureOf(err, account), ["ExternalIdUnavailable", "Secret ns/ids does not exist"]);
  });

  it("reports anything else as AssumeRoleFailed with its text", () => {
    assert.deepEqual(failureOf(new Error("boom"), account), [
      "AssumeRoleFailed",
      "could not assume arn:aws:iam::222222222222:role/t: Error: boom",
    ]);
  });
});

describe("AwsAccountReconciler", () => {
  /** An AwsAccount reconciler whose STS answers with `sts.answer` (an error, or an identity). */
  function setup() {
    const sts: { answer: Error | { Account: string; Arn: string }; calls: number } = {
      answer: denied,
      calls: 0,
    };
    const stored: { account: AwsAccount } = {
      account: {
        apiVersion: "compute.cloud.com/v1",
        kind: "AwsAccount",
        metadata: { name: "team-a", uid: "u1", generation: 1, finalizers: [ACCOUNT_FINALIZER] },
        spec: account.spec,
      },
    };
    const events: string[] = [];
    const client = {
      get: () => structuredClone(stored.account),
      addFinalizer: async (a: AwsAccount) => a,
      removeFinalizer: async () => undefined,
      updateStatus: async (a: AwsAccount) => (stored.account = structuredClone(a)),
    };
    const sessions = {
      stsRegion: "us-east-1",
      forget: () => {},
      entry: () => ({
        aws: {
          client: async () => ({
            send: async () => {
              sts.calls += 1;
              if (sts.answer instanceof Error) throw sts.answer;
              return sts.answer;
            },
          }),
        },
      }),
    };
    const clock = new FakeClock();
    const reconciler = new AwsAccountReconciler({
      client: client as unknown as AwsAccountReconcilerOptions["client"],
      sessions: sessions as unknown as AwsAccountReconcilerOptions["sessions"],
      kinds: [],
      namespaces: () => undefined,
      recorder: { event: (_o, type, reason) => events.push(`${type}:${reason}`) },
      clock,
      checkIntervalMs: 300_000,
    });
    const ready = () => stored.account.status?.conditions?.find((c) => c.type === "Ready");
    return { sts, reconciler, ready, events, clock };
  }
  const ctx = { logger: silentLogger, signal: new AbortController().signal, reconcileId: "r" };
  const req = { name: "team-a" };
  const min = 60_000;

  it("looks again at a refused AssumeRole from the check interval doubling to an hour, saying what to fix, until it is assumed", async () => {
    const { sts, reconciler, ready, events, clock } = setup();
    const delays: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const result = await reconciler.reconcile(req, ctx);
      delays.push(result);
      await clock.advance(result.requeueAfter ?? 0);
    }
    assert.deepEqual(
      delays,
      [5, 10, 20, 40, 60, 60].map((m) => ({ requeueAfter: m * min })),
    );
    assert.equal(sts.calls, 6, "one AssumeRole per look, no hot loop");
    assert.equal(ready()?.reason, "AssumeRoleFailed");
    assert.match(
      ready()?.message ?? "",
      /^AccessDenied: could not assume arn:aws:iam::222222222222:role\/t: /,
    );
    assert.match(ready()?.message ?? "", /sts:AssumeRole and sts:TagSession on the AwsAccount's role/);
    assert.match(ready()?.message ?? "", /tried again after 5m0s, then at doubling intervals up to 1h0m0s/);
    assert.deepEqual(events, ["Warning:AssumeRoleFailed"], "one Event while the message stays the same");

    sts.answer = { Account: "222222222222", Arn: "arn:aws:sts::222222222222:assumed-role/t/s" };
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfter: 5 * min });
    assert.equal(ready()?.status, "True");
    sts.answer = denied;
    assert.deepEqual(
      await reconciler.reconcile(req, ctx),
      { requeueAfter: 5 * min },
      "afresh after a success",
    );
  });

  it("takes no step of the ladder for a refused check that ran before its retry was due", async () => {
    const { reconciler, clock } = setup();
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfter: 5 * min });
    // The account is looked at again early (an edit, an object that names it): the retry stays put.
    await clock.advance(2 * min);
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfter: 3 * min });
    await clock.advance(3 * min);
    assert.deepEqual(
      await reconciler.reconcile(req, ctx),
      { requeueAfter: 10 * min },
      "the 10-minute step is kept",
    );
  });

  it("hands a throttled or transient failure back to the controller's backoff", async () => {
    const { sts, reconciler, ready } = setup();
    sts.answer = new AwsError({
      kind: "throttled",
      code: "Throttling",
      service: "sts",
      operation: "AssumeRole",
      message: "STS AssumeRole failed with Throttling: rate exceeded",
    });
    await assert.rejects(reconciler.reconcile(req, ctx), (e: unknown) => e === sts.answer);
    assert.equal(ready()?.reason, "AssumeRoleFailed");
    assert.doesNotMatch(ready()?.message ?? "", /tried again after/);
  });
});
