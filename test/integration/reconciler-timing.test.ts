/**
 * Per-object timing, against the real API server and moto: the `compute.cloud.com/poll-interval`
 * and `compute.cloud.com/reconcile-requested-at` annotations on SqsQueues. The operator polls
 * every 10 minutes here, so within the test only an object's own interval or a change of the
 * object brings a reconcile. A queue annotated with 10s is polled every 10 s (its reads in the
 * proxy's log, two per poll, and the times of its polls in the operator's log) while one without
 * the annotation is not polled at all; a reconcile request repairs an out-of-band tag at once,
 * once, and is echoed in status.lastHandledReconcileAt, while other metadata changes bring no
 * reconcile; a poll interval out of bounds is reported (PollIntervalValid=False, a Warning Event)
 * and leaves the object on the operator's interval, Ready and Synced; correcting it applies at
 * once.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TagQueueCommand } from "@aws-sdk/client-sqs";
import { POLL_INTERVAL_ANNOTATION, RECONCILE_REQUESTED_AT_ANNOTATION } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "timing";
/** The operator's debug line that ends a reconcile with a requeue after a delay. */
const REQUEUED = "reconcile done, requeueing after delay";
const PERIOD_MS = 10_000;

describe("the per-object timing annotations", () => {
  const env = new SqsEnv(NS, ["--poll-interval=10m"], { proxy: { resources: true } }).hooks();
  const [fast, slow, bad] = ["timing-fast", "timing-slow", "timing-bad"];

  /** Creates queue `name` (its queueName too) with `annotations`. */
  const create = async (name: string, annotations: Record<string, string>): Promise<void> => {
    const res = await env.cp.request("POST", env.base, {
      apiVersion: "compute.cloud.com/v1",
      kind: "SqsQueue",
      metadata: { name, annotations },
      spec: { region: "us-east-1", queueName: name },
    });
    assert.equal(res.status, 201, res.text);
  };
  /** When the reconciles of `name` that ended with a requeue ended, by the operator's log. */
  const requeues = (name: string): number[] =>
    env.op
      .logLines()
      .filter((l) => l.name === name && l.namespace === NS && l.msg === REQUEUED)
      .map((l) => Date.parse(String(l.time)));
  /** The SQS calls about queue `name` the proxy received after `from` and up to `to`. */
  const reads = (name: string, from: number, to = Number.POSITIVE_INFINITY): string[] =>
    env.proxy.calls
      .filter((c) => c.service === "sqs" && c.resource === name && c.at > from && c.at <= to)
      .map((c) => c.operation);

  it("polls at the object's interval, handles a reconcile request at once, and reports a refused interval", async (t) => {
    await Promise.all([
      create(fast, { [POLL_INTERVAL_ANNOTATION]: "10s" }),
      create(slow, {}),
      create(bad, { [POLL_INTERVAL_ANNOTATION]: "5s" }),
    ]);
    await Promise.all([env.waitReady(fast), env.waitReady(slow), env.waitReady(bad)]);
    const valid = (o: Parameters<typeof cond>[0]) => cond(o, "PollIntervalValid");
    const fastCond = valid(await env.get(fast));
    assert.deepEqual(
      [fastCond?.status, fastCond?.reason, fastCond?.message],
      ["True", "PollIntervalSet", "polled every 10s, as the compute.cloud.com/poll-interval annotation says"],
    );

    // The refused value: reported, and the rest of the reconcile went on as ever.
    const badObj = await env.get(bad);
    assert.equal(valid(badObj)?.reason, "InvalidPollInterval");
    assert.equal(
      valid(badObj)?.message,
      'the compute.cloud.com/poll-interval annotation "5s" is shorter than 10s: it takes a duration ' +
        "from 10s to 24h; the operator's poll interval applies",
    );
    assert.equal(ready(badObj)?.status, "True");
    assert.equal(cond(badObj, "Synced")?.status, "True");
    await env.waitEvent(bad, "Warning", "InvalidPollInterval");
    assert.equal(valid(await env.get(slow)), undefined, "no condition without the annotation");

    // A reconcile request repairs an out-of-band change at once, though the next poll is 10 minutes away.
    const { url } = await env.queue(slow);
    await env.sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { "out-of-band": "yes" } }));
    const requestedAt = new Date().toISOString();
    const asked = Date.now();
    await env.patch(slow, {
      metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: requestedAt } },
    });
    const handled = await env.waitUntil(
      slow,
      "the request echoed",
      (o) => o?.status?.lastHandledReconcileAt === requestedAt,
    );
    const echoedMs = Date.now() - asked;
    t.diagnostic(`request handled and echoed ${echoedMs} ms after it was made`);
    assert.ok(echoedMs < PERIOD_MS, `${echoedMs} ms: far sooner than the 10 min poll`);
    assert.equal(handled?.metadata.generation, 1, "an annotation leaves the generation as it was");
    assert.equal((await env.queue(slow)).tags["out-of-band"], undefined, "the drift is repaired");
    await env.waitEvent(slow, "Normal", "Updated");
    const handledAt = Date.now();
    // Other metadata changes bring no reconcile.
    await env.patch(slow, {
      metadata: { labels: { team: "payments" }, annotations: { "example.com/note": "x" } },
    });

    // Two polls of the fast queue, each 10 s after the previous one.
    const fastPolls = requeues(fast).length;
    await waitFor(
      "two more polls of the fast queue",
      async () => requeues(fast).length >= fastPolls + 2,
      WAIT_MS,
      100,
    );
    const times = requeues(fast).slice(fastPolls - 1, fastPolls + 2);
    const [t0, t1, t2] = times as [number, number, number];
    const gaps = [t1 - t0, t2 - t1];
    t.diagnostic(`the fast queue's polls came ${gaps.join(" ms and ")} ms apart`);
    for (const gap of gaps) assert.ok(gap >= PERIOD_MS - 50 && gap < PERIOD_MS + 5_000, `${gap} ms apart`);
    assert.deepEqual(
      reads(fast, t0, t2).sort(),
      ["GetQueueAttributes", "GetQueueAttributes", "ListQueueTags", "ListQueueTags"],
      "two reads per poll, two polls",
    );

    // Meanwhile the others kept the operator's 10 minutes: no poll, not a single read.
    assert.deepEqual(reads(slow, handledAt, t2), [], "the slow queue");
    assert.deepEqual(reads(bad, asked, t2), [], "the queue whose interval was refused");
    const since = (name: string) => requeues(name).filter((at) => at > asked).length;
    assert.equal(since(slow), 1, "one reconcile for the request, none since");
    assert.equal(since(bad), 0);

    // Correcting the value applies at once: the change of the annotation enqueues the object.
    await env.patch(bad, { metadata: { annotations: { [POLL_INTERVAL_ANNOTATION]: "1h" } } });
    const corrected = await env.waitUntil(
      bad,
      "PollIntervalValid=True",
      (o) => valid(o)?.status === "True",
      PERIOD_MS,
    );
    assert.equal(
      valid(corrected)?.message,
      "polled every 1h0m0s, as the compute.cloud.com/poll-interval annotation says",
    );
  });
});
