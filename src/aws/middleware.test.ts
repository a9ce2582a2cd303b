import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { ListQueuesCommand, QueueDoesNotExist, SQSClient } from "@aws-sdk/client-sqs";
import { Registry } from "prom-client";
import { systemClock } from "../runtime/clock.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { AwsError, NO_PERMIT_YET_CODE, NoPermitYetError } from "./errors.ts";
import { AWS_METRIC_NAMES, AwsMetrics } from "./metrics.ts";
import { MIDDLEWARE_NAMES, instrumentClient } from "./middleware.ts";
import { inPollScope, pollScope } from "./poll-scope.ts";
import { RateBudget } from "./rate-budget.ts";
import { registrySamples, registrySum } from "../runtime/testing/prometheus-text.ts";

// A scripted transport in place of the network: each call to handle() takes the next canned
// answer. The SDK's real serializers, retry strategy and deserializers all run.

interface Canned {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

function ok(body: unknown): Canned {
  return { status: 200, body: JSON.stringify(body) };
}

function sqsError(status: number, type: string, legacy: string, message: string): Canned {
  return {
    status,
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${type}`, message }),
    headers: { "x-amzn-query-error": `${legacy};Sender` },
  };
}

function scriptedHandler(answers: Canned[]) {
  const sent: string[] = [];
  return {
    sent,
    handler: {
      async handle(request: { headers: Record<string, string> }) {
        sent.push(request.headers["x-amz-target"] ?? "");
        const next = answers.shift();
        if (next === undefined) throw new Error("no canned answer left");
        return {
          response: {
            statusCode: next.status,
            headers: { "content-type": "application/x-amz-json-1.0", ...next.headers },
            body: Readable.from([Buffer.from(next.body)]),
          },
        };
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs() {
        return {};
      },
    },
  };
}

function setup(
  answers: Canned[],
  opts: {
    maxAttempts?: number;
    credentialsFail?: boolean;
    region?: string;
    budget?: RateBudget;
    maxPermitWaitMs?: number;
  } = {},
) {
  const region = opts.region ?? "us-east-1";
  const registry = new Registry();
  const metrics = new AwsMetrics({ registry });
  const budget = opts.budget ?? new RateBudget({ ratePerSecond: 1000, burst: 10 });
  const { handler, sent } = scriptedHandler(answers);
  const client = new SQSClient({
    region,
    endpoint: "http://sqs.test.invalid",
    maxAttempts: opts.maxAttempts ?? 1,
    requestHandler: handler,
    credentials: opts.credentialsFail
      ? () =>
          Promise.reject(
            Object.assign(new Error("Could not load credentials from any providers"), {
              name: "CredentialsProviderError",
            }),
          )
      : { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
  });
  instrumentClient(client.middlewareStack, {
    service: "sqs",
    region,
    metrics,
    budgets: () => [{ budget, label: "sqs", cost: 1 }],
    ...(opts.maxPermitWaitMs !== undefined ? { maxPermitWaitMs: opts.maxPermitWaitMs } : {}),
    clock: systemClock,
  });
  return { client, registry, budget, sent };
}

async function requestCounts(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of await registrySamples(registry, AWS_METRIC_NAMES.requests))
    out[`${v.labels.operation}/${v.labels.code}`] = v.value;
  return out;
}

async function durationCount(registry: Registry): Promise<number> {
  return registrySum(registry, `${AWS_METRIC_NAMES.duration}_count`);
}

describe("instrumentClient", () => {
  it("counts a successful call as OK under its operation name and times it", async () => {
    const { client, registry, sent } = setup([ok({ QueueUrls: ["http://q/1"] })]);
    const out = await client.send(new ListQueuesCommand({}));
    assert.deepEqual(out.QueueUrls, ["http://q/1"]);
    assert.deepEqual(sent, ["AmazonSQS.ListQueues"]);
    assert.deepEqual(await requestCounts(registry), { "ListQueues/OK": 1 });
    assert.equal(await durationCount(registry), 1);
  });

  it("labels requests and durations with the client's region", async () => {
    const { client, registry } = setup([ok({ QueueUrls: [] })], { region: "eu-west-3" });
    await client.send(new ListQueuesCommand({}));
    for (const name of [AWS_METRIC_NAMES.requests, AWS_METRIC_NAMES.duration]) {
      const metric = registry.getSingleMetric(name);
      assert.ok(metric);
      const regions = new Set((await metric.get()).values.map((v) => v.labels.region));
      assert.deepEqual([...regions], ["eu-west-3"], name);
    }
  });

  it("throws AwsError with the SDK exception as cause", async () => {
    const { client, registry } = setup([
      sqsError(
        400,
        "QueueDoesNotExist",
        "AWS.SimpleQueueService.NonExistentQueue",
        "The specified queue does not exist.",
      ),
    ]);
    const err = await client.send(new ListQueuesCommand({})).then(
      () => assert.fail("expected a failure"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AwsError);
    assert.ok(err.cause instanceof QueueDoesNotExist);
    assert.deepEqual(
      { kind: err.info.kind, code: err.info.code, service: err.info.service, operation: err.info.operation },
      { kind: "not-found", code: "QueueDoesNotExist", service: "sqs", operation: "ListQueues" },
    );
    assert.deepEqual(await requestCounts(registry), { "ListQueues/QueueDoesNotExist": 1 });
  });

  it("halves the budget when AWS throttles and counts the throttled code", async () => {
    const { client, registry, budget } = setup([
      sqsError(400, "RequestThrottled", "RequestThrottled", "Rate exceeded"),
    ]);
    await assert.rejects(
      client.send(new ListQueuesCommand({})),
      (e: unknown) => e instanceof AwsError && e.kind === "throttled",
    );
    assert.equal(budget.rate, 500);
    assert.deepEqual(await requestCounts(registry), { "ListQueues/RequestThrottled": 1 });
  });

  it("takes a permit and records a sample for every attempt, retries included", async () => {
    const { client, registry, sent } = setup(
      [
        { status: 500, body: JSON.stringify({ __type: "InternalFailure", message: "boom" }) },
        ok({ QueueUrls: [] }),
      ],
      { maxAttempts: 2 },
    );
    await client.send(new ListQueuesCommand({}));
    assert.equal(sent.length, 2);
    assert.deepEqual(await requestCounts(registry), { "ListQueues/InternalFailure": 1, "ListQueues/OK": 1 });
    assert.equal(await durationCount(registry), 2);
  });

  it("counts a call that failed before reaching the wire, without a duration sample", async () => {
    const { client, registry, sent } = setup([], { credentialsFail: true });
    await assert.rejects(
      client.send(new ListQueuesCommand({})),
      (e: unknown) => e instanceof AwsError && e.code === "CredentialsProviderError" && e.kind === "terminal",
    );
    assert.equal(sent.length, 0);
    assert.deepEqual(await requestCounts(registry), { "ListQueues/CredentialsProviderError": 1 });
    assert.equal(await durationCount(registry), 0);
  });

  it("defers a call its budget would hold too long, without sending or counting it as a request", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 1, burst: 1, clock });
    const { client, registry, sent } = setup([ok({ QueueUrls: [] }), ok({ QueueUrls: [] })], {
      budget,
      maxPermitWaitMs: 500,
    });
    await client.send(new ListQueuesCommand({}));
    const deferred = async (): Promise<NoPermitYetError> => {
      const err = await client.send(new ListQueuesCommand({})).then(
        () => assert.fail("expected the call to be deferred"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof NoPermitYetError);
      return err;
    };
    const first = await deferred();
    assert.deepEqual(
      { code: first.code, kind: first.kind, retryAfterMs: first.retryAfterMs },
      { code: NO_PERMIT_YET_CODE, kind: "throttled", retryAfterMs: 1000 },
    );
    assert.equal((await deferred()).retryAfterMs, 2000, "the next one is booked a permit later");
    assert.equal(sent.length, 1, "the deferred calls were not sent");
    assert.deepEqual(await requestCounts(registry), { "ListQueues/OK": 1 }, "nor counted as requests");
    assert.equal(await registrySum(registry, AWS_METRIC_NAMES.budgetDeferrals), 2);
    await clock.advance(first.retryAfterMs);
    await client.send(new ListQueuesCommand({}));
    assert.equal(sent.length, 2, "sent again at its slot, it goes out");
  });

  it("draws a poll's calls on the polls' share and tallies them in its scope", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 10, burst: 2, pollShare: 0.5, clock });
    const { client, sent } = setup([ok({ QueueUrls: [] }), ok({ QueueUrls: [] })], {
      budget,
      maxPermitWaitMs: 500,
    });
    const scope = pollScope();
    await inPollScope(scope, () => client.send(new ListQueuesCommand({})));
    assert.equal(sent.length, 1);
    assert.deepEqual([...scope.drawn], [[budget, 1]]);
    assert.equal(budget.tryAcquire("poll"), false, "the poll used the polls' one-permit burst");
    assert.equal(budget.available, 1, "real work still has the rest of the burst");
    await client.send(new ListQueuesCommand({}));
    assert.equal(scope.drawn.get(budget), 1, "a call outside the scope is not the poll's");
  });

  it("defers a poll before its first call booking what its previous poll drew, never once begun", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 4, burst: 1, pollShare: 0.5, clock });
    const { client, sent } = setup([ok({ QueueUrls: [] }), ok({ QueueUrls: [] })], {
      budget,
      maxPermitWaitMs: 400,
    });
    budget.tryAcquire("poll");
    const expected = new Map([[budget, 3]]);
    const refused = await inPollScope(pollScope(expected), () => client.send(new ListQueuesCommand({}))).then(
      () => assert.fail("expected a deferral"),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof NoPermitYetError);
    assert.equal(refused.retryAfterMs, 1500, "when the three permits are due at the polls' 2/s");
    const next = await inPollScope(pollScope(expected), () => client.send(new ListQueuesCommand({}))).then(
      () => assert.fail("expected a deferral"),
      (e: unknown) => e,
    );
    assert.ok(next instanceof NoPermitYetError);
    assert.equal(next.retryAfterMs, 3000, "booked three poll permits (1.5 s) after the first");
    // A poll that has drawn already waits for its next permit however long it takes.
    const begun = pollScope();
    begun.drawn.set(budget, 1);
    const call = inPollScope(begun, () => client.send(new ListQueuesCommand({})));
    while (budget.waiting === 0) await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(500);
    await call;
    assert.equal(sent.length, 1);
    assert.equal(begun.drawn.get(budget), 2);
  });

  it("books one slot for the calls a poll sends at once, however many are deferred", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ ratePerSecond: 4, burst: 1, pollShare: 0.5, clock });
    const { client } = setup([], { budget, maxPermitWaitMs: 400 });
    budget.tryAcquire("poll");
    const scope = pollScope(new Map([[budget, 2]]));
    const results = await inPollScope(scope, () =>
      Promise.allSettled([client.send(new ListQueuesCommand({})), client.send(new ListQueuesCommand({}))]),
    );
    const waits = results.map((r) =>
      r.status === "rejected" && r.reason instanceof NoPermitYetError ? r.reason.retryAfterMs : -1,
    );
    assert.deepEqual(waits, [1000, 1000], "both told the one slot, when two poll permits are due");
    assert.equal(budget.book(1, "poll"), 1500, "the next poll: one poll permit after those two, not four");
  });

  it("places the budget and metrics inside the retry loop and before signing", () => {
    const { client } = setup([]);
    const order = client.middlewareStack.identify();
    const at = (prefix: string) => order.findIndex((n) => n.startsWith(prefix));
    assert.ok(at(MIDDLEWARE_NAMES.errors) >= 0);
    assert.ok(at(MIDDLEWARE_NAMES.errors) < at("retryMiddleware"));
    assert.ok(at("retryMiddleware") < at(MIDDLEWARE_NAMES.rateBudget));
    assert.ok(at(MIDDLEWARE_NAMES.rateBudget) < at(MIDDLEWARE_NAMES.metrics));
    assert.ok(at(MIDDLEWARE_NAMES.metrics) < at("httpSigningMiddleware"));
  });
});
