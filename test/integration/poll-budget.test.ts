/**
 * Polls yield to real work, against moto through the counting proxy: with the S3 budget cut to
 * 10/s, polls held to half of it and a 2 s poll interval, 16 plain buckets need more than the
 * polls' share (16 × 2 reads every 2 s = 16/s against 5/s). The operator then polls every bucket
 * less often, as the gauge and a log line say with the figures; the S3 calls it makes while only
 * polling stay within the share; a bucket created meanwhile converges at the whole budget's pace,
 * ahead of the poll backlog; after a restart the gauge counts every bucket before the replay's
 * polls are through; and once most buckets are gone the configured interval applies again, which
 * it logs too.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const RATE = 10;
const SHARE = 0.5;
const POLL_INTERVAL_S = 2;
const BUCKETS = 16;
const STRETCH = "polls need more than their share of an AWS rate budget: the poll interval stretches";
const UNSTRETCH = "polls fit their share of the AWS rate budgets again: the configured poll interval applies";
const GAUGE = "kubeprovisioner_poll_interval_effective_seconds";
/** How much later than its send the proxy may see a call on a loaded machine, in seconds. */
const DELIVERY_S = 1;

describe("polls yield to real work on a small S3 budget", () => {
  const env = new S3Env("poll-budget", {
    operatorArgs: [
      "--poll-interval=2s",
      `--aws-rate-budgets=s3=${RATE}/5`,
      `--poll-budget-share=${SHARE * 100}%`,
    ],
  }).hooks();
  const names = Array.from({ length: BUCKETS }, (_, i) => `pb-${i}`);
  const s3Calls = (from: number, to = Number.POSITIVE_INFINITY): number =>
    env.proxy.calls.filter((c) => c.service === "s3" && c.at >= from && c.at < to).length;
  /** Reads per poll of a plain bucket, as the operator logged it. */
  let reads = 0;
  const gauge = (): Promise<number> => env.op.metric(GAUGE, { kind: "S3Bucket", account: "" });

  it("stretches the poll interval to objects × reads per poll ÷ (share × rate), logged once", async (t) => {
    await Promise.all(names.map((n) => env.create(n)));
    await Promise.all(names.map((n) => env.waitReady(n, 40_000)));
    const line = await env.op.waitForLog(STRETCH, WAIT_MS);
    assert.equal(line.kind, "S3Bucket");
    assert.equal(line.account, "");
    assert.equal(line.pollShare, SHARE);
    assert.equal(line.budgetRatePerSecond, RATE);
    assert.equal(line.configuredIntervalSeconds, POLL_INTERVAL_S);
    assert.ok(Number(line.intervalSeconds) > POLL_INTERVAL_S, `${String(line.intervalSeconds)} s`);
    // Once every bucket has been polled, the gauge holds the full figure.
    reads = Number(line.readsPerPoll);
    assert.ok(reads >= 2, `a plain bucket's poll reads at least twice, logged ${reads}`);
    const expected = (BUCKETS * reads) / (SHARE * RATE);
    await waitFor("every bucket counted", async () => (await gauge()) >= expected * 0.95, WAIT_MS, 250);
    const seconds = await gauge();
    t.diagnostic(`effective poll interval ${seconds} s; computed ${expected} s from ${reads} reads per poll`);
    assert.ok(Math.abs(seconds - expected) <= expected * 0.1, `${seconds} s, want ${expected} s`);
    assert.equal(env.op.logLines().filter((l) => l.msg === STRETCH).length, 1, "logged once");
  });

  it("keeps polls within their share of the budget", async (t) => {
    const from = Date.now();
    const windowMs = 6_000;
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const calls = s3Calls(from, from + windowMs);
    // The polls' share of the rate over the window, plus their share of the burst.
    const bound = SHARE * RATE * (windowMs / 1000) + SHARE * 5;
    // The proxy times a call when this process reads it, which on a loaded machine can be up to a
    // second after the operator's budget let it go (both event loops wait their turn for a core):
    // the calls counted were sent within a window up to a second longer. Still far below the
    // whole budget's 60 calls, or the 96 the buckets' polls would ask for.
    const ceiling = bound + SHARE * RATE * DELIVERY_S;
    t.diagnostic(`${calls} S3 calls in ${windowMs} ms of polling only; the share allows ${bound}`);
    assert.ok(
      calls <= ceiling,
      `${calls} S3 calls in ${windowMs} ms, at most ${bound} allowed (${ceiling} as received)`,
    );
    assert.ok(calls >= bound * 0.6, `${calls} S3 calls in ${windowMs} ms: polls use their share`);
    // Each bucket is polled about as often as the gauge says.
    const measured = (BUCKETS * reads * windowMs) / 1000 / calls;
    const stated = await gauge();
    assert.ok(
      Math.abs(measured - stated) <= stated * 0.25,
      `polled every ${measured} s, the gauge says ${stated} s`,
    );
    assert.equal(env.proxy.count("CreateBucket"), BUCKETS, "no real work in the window");
  });

  it("converges a new bucket ahead of the poll backlog", async (t) => {
    const started = Date.now();
    await env.create("pb-fresh");
    await env.waitReady("pb-fresh", 20_000);
    const tookS = (Date.now() - started) / 1000;
    const stretchedS = await gauge();
    t.diagnostic(`the new bucket converged in ${tookS} s; polls come every ${stretchedS} s`);
    assert.ok(
      tookS < stretchedS / 2,
      `the new bucket took ${tookS} s while each poll waits ${stretchedS} s for its turn`,
    );
  });

  it("counts every bucket in the gauge from a restart on, before the replay's polls are through", async (t) => {
    // With one worker, each replayed poll waits for its permits in turn instead of being deferred,
    // so the replay of the 17 buckets drains at the polls' pace (2 reads at 5/s, 0.4 s a bucket):
    // the buckets still queued count at the mean from the start, not once the worker reaches them.
    await env.op.stop();
    const op = await env.startOperator(["--max-concurrent-reconciles=1"]);
    const all = BUCKETS + 1;
    const expected = (all * reads) / (SHARE * RATE);
    await waitFor("every bucket counted", async () => (await gauge()) >= expected * 0.95, WAIT_MS, 100);
    const polled = new Set(
      op
        .logLines()
        .filter((l) => l.msg === "reconcile done, requeueing after delay" && String(l.name).startsWith("pb-"))
        .map((l) => l.name),
    ).size;
    t.diagnostic(`the gauge counted all ${all} buckets when ${polled} had been polled since the restart`);
    assert.ok(polled < all / 2, `${polled} of ${all} buckets polled when the gauge counted them all`);
  });

  it("goes back to the configured interval once the estate fits the share, and logs it", async () => {
    const gone = names.slice(0, BUCKETS - 2);
    await Promise.all(gone.map((n) => env.delete(n)));
    await Promise.all(gone.map((n) => env.waitGone(n, WAIT_MS)));
    const line = await env.op.waitForLog(UNSTRETCH, WAIT_MS);
    assert.equal(line.kind, "S3Bucket");
    assert.ok(Number(line.objects) < BUCKETS, `${String(line.objects)} objects`);
    await waitFor(
      "the gauge back at the poll interval",
      async () => (await gauge()) === POLL_INTERVAL_S,
      15_000,
      250,
    );
  });
});
