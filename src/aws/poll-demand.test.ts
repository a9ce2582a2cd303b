import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { pino } from "pino";
import { Registry } from "prom-client";
import { registrySamples } from "../runtime/testing/prometheus-text.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { POLL_METRIC_NAMES, PollDemand } from "./poll-demand.ts";
import { RateBudget } from "./rate-budget.ts";

function setup() {
  const registry = new Registry();
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  const demand = new PollDemand({ registry, logger: pino({ level: "info" }, sink) });
  const gaugeOf = async (kind: string, account = ""): Promise<number | undefined> =>
    (await registrySamples(registry, POLL_METRIC_NAMES.effectiveInterval)).find(
      (s) => s.labels.kind === kind && s.labels.account === account,
    )?.value;
  return { demand, lines, gaugeOf };
}

const clock = new FakeClock();
const budget = (rate: number, share: number, name = "s3/us-east-1/s3") =>
  new RateBudget({ ratePerSecond: rate, burst: 10, pollShare: share, clock, name });
const S3 = { kind: "S3Bucket", account: "" };

describe("PollDemand", () => {
  it("keeps the configured interval while the polls fit their share", async () => {
    const { demand, gaugeOf, lines } = setup();
    const s3 = budget(10, 0.5);
    // 20 objects × 2 permits every 10 s: 4 permits/s of a 5/s share.
    for (let i = 0; i < 20; i++) demand.polled(S3, `ns/b${i}`, 10_000, new Map([[s3, 2]]));
    assert.equal(demand.effectiveIntervalMs(S3), 10_000);
    assert.equal(await gaugeOf("S3Bucket"), 10);
    assert.equal(lines.length, 0);
  });

  it("stretches to objects × permits per poll ÷ (share × rate) and logs it once", async () => {
    const { demand, gaugeOf, lines } = setup();
    const s3 = budget(10, 0.5);
    for (let i = 0; i < 100; i++) demand.polled(S3, `ns/b${i}`, 10_000, new Map([[s3, 2]]));
    // 100 × 2 / (0.5 × 10) = 40 s.
    assert.equal(demand.effectiveIntervalMs(S3), 40_000);
    assert.equal(await gaugeOf("S3Bucket"), 40);
    assert.equal(lines.length, 1, "logged once, when the stretch began");
    assert.deepEqual(
      {
        msg: lines[0]?.msg,
        objects: lines[0]?.objects,
        readsPerPoll: lines[0]?.readsPerPoll,
        pollShare: lines[0]?.pollShare,
        intervalSeconds: lines[0]?.intervalSeconds,
        configuredIntervalSeconds: lines[0]?.configuredIntervalSeconds,
        budget: lines[0]?.budget,
      },
      {
        msg: "polls need more than their share of an AWS rate budget: the poll interval stretches",
        // The stretch starts with the 26th object: 26 × 2 / 10 s = 5.2/s over the 5/s share.
        objects: 26,
        readsPerPoll: 2,
        pollShare: 0.5,
        intervalSeconds: 10.4,
        configuredIntervalSeconds: 10,
        budget: "s3/us-east-1/s3",
      },
    );
    // The same poll again changes nothing and logs nothing.
    demand.polled(S3, "ns/b0", 10_000, new Map([[s3, 2]]));
    assert.equal(lines.length, 1);
  });

  it("counts objects due to be polled, but not yet polled, at their kind's mean", async () => {
    const { demand, gaugeOf, lines } = setup();
    const s3 = budget(10, 0.5);
    // Before any poll completes, nothing is known of the permits: the configured interval holds.
    for (let i = 0; i < 90; i++) demand.scheduled(S3, `ns/b${i}`, 10_000);
    assert.equal(await gaugeOf("S3Bucket"), 10);
    // 10 polls complete at 2 permits: 100 objects × 2 / (0.5 × 10) = 40 s, as if all had polled.
    for (let i = 90; i < 100; i++) demand.polled(S3, `ns/b${i}`, 10_000, new Map([[s3, 2]]));
    assert.equal(demand.effectiveIntervalMs(S3), 40_000);
    assert.equal(await gaugeOf("S3Bucket"), 40);
    assert.equal(lines.length, 1, "logged once");
    assert.equal(lines[0]?.objects, 91, "the stretch shows at the first complete poll, with the 90 due");
    // A scheduled object that then polls counts once, at what it drew; a forgotten one not at all.
    demand.polled(S3, "ns/b0", 10_000, new Map([[s3, 2]]));
    demand.scheduled(S3, "ns/b0", 10_000);
    assert.equal(demand.effectiveIntervalMs(S3), 40_000);
    for (let i = 1; i < 90; i++) demand.forget("S3Bucket", `ns/b${i}`);
    // 11 objects × 2 / 5 = 4.4 s: below the configured 10 s.
    assert.equal(demand.effectiveIntervalMs(S3), 10_000);
  });

  it("counts each object at its own interval and reports the interval most of a kind's objects poll at", async () => {
    const { demand, gaugeOf, lines } = setup();
    const s3 = budget(10, 0.5);
    // 20 objects every 60 s and 2 every 10 s (their own poll interval), 2 permits each: 1.07/s.
    for (let i = 0; i < 20; i++) demand.polled(S3, `ns/b${i}`, 60_000, new Map([[s3, 2]]));
    for (let i = 0; i < 2; i++) demand.polled(S3, `ns/fast${i}`, 10_000, new Map([[s3, 2]]));
    assert.equal(await gaugeOf("S3Bucket"), 60, "the interval of most objects, not of the last poll");
    assert.equal(lines.length, 0);
    // Due, not yet polled: 50 at 10 s and then 10 at 10 min, each at the mean of 2 permits and at
    // its own interval: 1.07 + 50 × 2 / 10 + 10 × 2 / 600 = 11.1/s, 2.22 × the 5/s share.
    for (let i = 0; i < 50; i++) demand.scheduled(S3, `ns/new${i}`, 10_000);
    for (let i = 0; i < 10; i++) demand.scheduled(S3, `ns/slow${i}`, 600_000);
    const factor = ((20 * 2) / 60 + (2 * 2) / 10 + (50 * 2) / 10 + (10 * 2) / 600) / 5;
    // Now most objects (52) poll every 10 s: that interval, stretched.
    assert.ok(Math.abs((demand.effectiveIntervalMs(S3) ?? 0) - 10_000 * factor) < 1e-6);
    assert.equal(lines.length, 1, "the stretch is logged");
    assert.equal(lines[0]?.configuredIntervalSeconds, 10);
    // Forgetting the objects due at 10 s leaves 20 at 60 s as the most: 1.1/s fits the share.
    for (let i = 0; i < 50; i++) demand.forget("S3Bucket", `ns/new${i}`);
    assert.equal(demand.effectiveIntervalMs(S3), 60_000);
  });

  it("logs the end of a stretch once objects are gone, below 95 % of the share", async () => {
    const { demand, gaugeOf, lines } = setup();
    const s3 = budget(10, 0.5);
    for (let i = 0; i < 30; i++) demand.polled(S3, `ns/b${i}`, 10_000, new Map([[s3, 2]]));
    assert.equal(lines.length, 1);
    demand.forget("S3Bucket", "ns/b0");
    demand.forget("S3Bucket", "ns/b1");
    demand.forget("S3Bucket", "ns/b2");
    demand.forget("S3Bucket", "ns/b3");
    demand.forget("S3Bucket", "ns/b4");
    // 25 objects: exactly the share; still counted as stretched (no flapping at the edge).
    assert.equal(lines.length, 1);
    assert.equal(await gaugeOf("S3Bucket"), 10);
    demand.forget("S3Bucket", "ns/b5");
    demand.forget("S3Bucket", "ns/b6");
    assert.equal(lines.length, 2);
    assert.equal(
      lines[1]?.msg,
      "polls fit their share of the AWS rate budgets again: the configured poll interval applies",
    );
    assert.equal(lines[1]?.objects, 23);
  });

  it("splits a budget among the kinds that poll it, and takes a kind's busiest budget", () => {
    const { demand } = setup();
    const sqs = budget(10, 0.5, "sqs/us-east-1/sqs");
    const s3 = budget(100, 0.5);
    const queues = { kind: "SqsQueue", account: "" };
    for (let i = 0; i < 50; i++) demand.polled(queues, `ns/q${i}`, 10_000, new Map([[sqs, 1]]));
    for (let i = 0; i < 50; i++)
      demand.polled(
        S3,
        `ns/b${i}`,
        10_000,
        new Map([
          [s3, 2],
          [sqs, 1],
        ]),
      );
    // sqs: 100 permits per 10 s = 10/s against a 5/s share: both kinds stretch 2×; s3 is idle.
    assert.equal(demand.effectiveIntervalMs(queues), 20_000);
    assert.equal(demand.effectiveIntervalMs(S3), 20_000);
  });

  it("keeps accounts apart and forgets an account's gauge when its objects are gone", async () => {
    const { demand, gaugeOf } = setup();
    const own = budget(10, 0.5);
    const other = budget(10, 0.5, "111122223333/s3/us-east-1/s3");
    const team = { kind: "S3Bucket", account: "team-a" };
    for (let i = 0; i < 50; i++) demand.polled(S3, `ns/b${i}`, 10_000, new Map([[own, 2]]));
    demand.polled(team, "team/b", 10_000, new Map([[other, 2]]));
    assert.equal(demand.effectiveIntervalMs(S3), 20_000);
    assert.equal(demand.effectiveIntervalMs(team), 10_000);
    assert.equal(await gaugeOf("S3Bucket", "team-a"), 10);
    demand.forget("S3Bucket", "team/b");
    assert.equal(await gaugeOf("S3Bucket", "team-a"), undefined);
    assert.equal(demand.effectiveIntervalMs(team), undefined);
  });

  it("remembers what each object's last poll drew", () => {
    const { demand } = setup();
    const s3 = budget(10, 0.5);
    assert.equal(demand.expected("S3Bucket", "ns/a").size, 0);
    demand.polled(S3, "ns/a", 10_000, new Map([[s3, 7]]));
    assert.deepEqual([...demand.expected("S3Bucket", "ns/a")], [[s3, 7]]);
    assert.equal(demand.expected("SqsQueue", "ns/a").size, 0, "per kind");
  });
});
