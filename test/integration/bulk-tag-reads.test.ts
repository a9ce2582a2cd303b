/**
 * Bulk tag reads (`--bulk-tag-reads`) on the real API server and moto, counted at the AWS proxy:
 * steady polls of buckets and queues read their tags from GetResources sweeps instead of
 * GetBucketTagging and ListQueueTags, tag drift made out of band is still repaired (after a direct
 * re-read), and after the operator's own tag write no poll takes its tags from the snapshot
 * within the window. moto answers GetResources from live state; the rules that guard against
 * AWS's lagging index are unit-tested with stale answers (src/reconcilers/*\/bulk-tags.test.ts).
 *
 * The estate has BULK_TAG_OBJECTS buckets and as many queues (default 12, which `make test` runs:
 * every poll of every object is a few AWS calls every 2 s, so the estate's size sets the file's
 * load on the test AWS, not its length); BENCHMARKS.md's figures are of 30 and of 200. A large
 * estate polls each object less often than every 2 s, so give it a longer window. The reads per
 * object and poll, before and with bulk reads, are printed for BENCHMARKS.md.
 *
 * The window (BULK_TAG_WINDOW_S, default 20 s) is ten poll periods. On a machine loaded by other
 * test files, an object's polls have come more than 10 s apart and a sweep has taken seconds: a
 * 10 s window then closed before a fresh snapshot showed the drift (so the drift was found by the
 * window's direct read, never through the snapshot), or held a single poll after the repair.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PutBucketTaggingCommand } from "@aws-sdk/client-s3";
import { TagQueueCommand } from "@aws-sdk/client-sqs";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const N = Number(process.env.BULK_TAG_OBJECTS ?? 12);
const NS = "bulk-tags";
/** `--bulk-tag-window` in seconds (BULK_TAG_WINDOW_S, default 20): see the module comment. */
const WINDOW_S = Number(process.env.BULK_TAG_WINDOW_S ?? 20);
const BULK = ["--bulk-tag-reads=true", `--bulk-tag-window=${WINDOW_S}s`];
const READS = [
  "HeadBucket",
  "GetBucketTagging",
  "GetBucketVersioning",
  "GetQueueAttributes",
  "ListQueueTags",
  "GetQueueUrl",
  "GetResources",
] as const;

// The figures below are per 2 s poll.
const buckets = new S3Env(NS, { operatorArgs: ["--poll-interval=2s"] });
const queues = new SqsEnv(NS);

/** Proxy counts of {@link READS}. */
const counts = (): Record<string, number> =>
  Object.fromEntries(READS.map((op) => [op, buckets.proxy.count(op)]));

/**
 * AWS reads per object and poll over the next `polls` polls of every object (counted as
 * reconciles of each controller), by operation; GetResources also per 2 s `--poll-interval` of
 * wall time (a large estate polls each object less often than that).
 */
async function readsPerPoll(polls: number): Promise<Record<string, number>> {
  const start = counts();
  const startedAt = Date.now();
  const s3Start = await buckets.reconciles();
  const sqsStart = await queues.reconciles();
  await waitFor(
    `${polls} polls of every object`,
    async () =>
      (await buckets.reconciles()) >= s3Start + polls * N &&
      (await queues.reconciles()) >= sqsStart + polls * N,
    60_000 + polls * N * 200,
    200,
  );
  const end = counts();
  const s3Polls = (await buckets.reconciles()) - s3Start;
  const sqsPolls = (await queues.reconciles()) - sqsStart;
  const per = (op: string, n: number): number => ((end[op] ?? 0) - (start[op] ?? 0)) / n;
  return {
    HeadBucket: per("HeadBucket", s3Polls),
    GetBucketTagging: per("GetBucketTagging", s3Polls),
    GetBucketVersioning: per("GetBucketVersioning", s3Polls),
    GetQueueAttributes: per("GetQueueAttributes", sqsPolls),
    ListQueueTags: per("ListQueueTags", sqsPolls),
    GetQueueUrl: per("GetQueueUrl", sqsPolls),
    GetResources: per("GetResources", s3Polls + sqsPolls),
    GetResourcesPerPollInterval: per("GetResources", (Date.now() - startedAt) / 2000),
  };
}

/** Each "tag source" line the operator logged for object `name`: where the tags came from, and when. */
const tagReads = (env: S3Env | SqsEnv, name: string): { source: string; time: number }[] =>
  env.op
    .logLines()
    .filter((l) => l.name === name && l.namespace === NS && l.msg === "tag source")
    .map((l) => ({ source: String(l.tagSource), time: Date.parse(String(l.time)) }));

/** The `tagSource` of each "tag source" line the operator logged for object `name`. */
const tagSources = (env: S3Env | SqsEnv, name: string): string[] => tagReads(env, name).map((r) => r.source);

/**
 * The sources of `name`'s tag reads within the window after the operator's repair of drift put
 * after its read number `from`, once that window is over. The repair is the write before its
 * first `own-write` read; the read logged just before that one found the drift (a steady poll
 * logs its source before any re-read or write), so the window is counted from it: every read
 * counted is inside the window after the write. Reads are taken by their log time, not by when
 * the test noticed the repair, which on a loaded machine may be after the polls that follow it.
 */
async function readsWithinWindowOfRepair(env: S3Env | SqsEnv, name: string, from: number): Promise<string[]> {
  // Each wait spans at most one window and a slow round of polls over the estate.
  const waitMs = WINDOW_S * 1000 + 30_000 + N * 200;
  let written = -1;
  await waitFor(
    `a poll of ${name} after the operator's write`,
    async () => {
      written = tagReads(env, name).findIndex((r, i) => i > from && r.source === "own-write");
      return written >= 0;
    },
    waitMs,
    100,
  );
  const reads = tagReads(env, name);
  const found = reads[written - 1];
  assert.ok(
    found !== undefined,
    `a read of ${name} that found the drift: ${reads.map((r) => r.source).join(",")}`,
  );
  const end = found.time + WINDOW_S * 1000;
  await waitFor(
    `the window after the write to ${name}, and a poll after it`,
    async () => tagReads(env, name).some((r) => r.time >= end),
    waitMs,
    100,
  );
  return tagReads(env, name)
    .slice(written)
    .filter((r) => r.time < end)
    .map((r) => r.source);
}

/**
 * Waits until a poll of `name` has read its tags directly (for any reason but the operator's own
 * write), and has finished: its next polls within the window take the tags from the snapshot.
 */
async function justReadDirectly(env: S3Env | SqsEnv, name: string): Promise<void> {
  const seen = tagSources(env, name).length;
  let finished = Infinity;
  await waitFor(
    `a direct tag read of ${name}`,
    async () => {
      if (
        tagSources(env, name)
          .slice(seen)
          .some((s) => s !== "snapshot" && s !== "own-write")
      )
        finished = Math.min(finished, env.reconcilesOf(name) + 1);
      return env.reconcilesOf(name) >= finished;
    },
    WINDOW_S * 1000 + 30_000,
    50,
  );
}

const bulkMetric = (kind: string, outcome: string): Promise<number> =>
  buckets.op.metric("kubeprovisioner_bulk_tag_reads_total", { kind, outcome });

describe(`bulk tag reads over ${N} buckets and ${N} queues`, () => {
  let before_: Record<string, number> = {};
  before(async () => {
    await buckets.start();
    queues.attachTo(buckets);
  });
  after(() => buckets.stop());

  it("polls with a tag read per object without the flag", async () => {
    for (let i = 0; i < N; i++) {
      await buckets.create(`b-${i}`, { bucketName: `bulk-b-${i}` });
      await queues.create(`q-${i}`, { queueName: `bulk-q-${i}` });
    }
    for (let i = 0; i < N; i++) {
      await buckets.waitReady(`b-${i}`, 120_000);
      await queues.waitReady(`q-${i}`, 120_000);
    }
    before_ = await readsPerPoll(5);
    console.log(`reads per object and poll, per-resource tag reads: ${JSON.stringify(before_)}`);
    assert.ok(
      before_.GetBucketTagging! >= 0.9,
      `GetBucketTagging per bucket poll: ${before_.GetBucketTagging}`,
    );
    assert.ok(before_.ListQueueTags! >= 0.9, `ListQueueTags per queue poll: ${before_.ListQueueTags}`);
    assert.equal(before_.GetResources, 0);
  });

  it("takes steady polls' tags from GetResources sweeps with --bulk-tag-reads", async () => {
    await buckets.op.stop();
    await buckets.startOperator(BULK);
    queues.attachTo(buckets);
    // The first poll of each object after the start reads its tags directly; the next ones may not.
    await waitFor(
      "polls answered from the snapshot",
      async () =>
        (await bulkMetric("S3Bucket", "snapshot")) >= N && (await bulkMetric("SqsQueue", "snapshot")) >= N,
      60_000 + N * 300,
      200,
    );
    const bulk = await readsPerPoll(10);
    console.log(
      `reads per object and poll, bulk tag reads (window ${WINDOW_S}s, poll 2s): ${JSON.stringify(bulk)}`,
    );
    // Existence is still read per object, every poll.
    assert.ok(
      bulk.GetBucketVersioning! >= 0.9,
      `GetBucketVersioning per bucket poll: ${bulk.GetBucketVersioning}`,
    );
    assert.ok(
      bulk.GetQueueAttributes! >= 0.9,
      `GetQueueAttributes per queue poll: ${bulk.GetQueueAttributes}`,
    );
    // Tags directly only once per window (every tenth 2 s poll), not on every poll.
    assert.ok(bulk.GetBucketTagging! <= 0.4, `GetBucketTagging per bucket poll: ${bulk.GetBucketTagging}`);
    assert.ok(bulk.ListQueueTags! <= 0.4, `ListQueueTags per queue poll: ${bulk.ListQueueTags}`);
    const perObjectBefore = before_.GetBucketTagging! + before_.GetBucketVersioning! + before_.HeadBucket!;
    const perObjectAfter = bulk.GetBucketTagging! + bulk.GetBucketVersioning! + bulk.HeadBucket!;
    assert.ok(
      perObjectAfter < perObjectBefore - 0.5,
      `S3 reads per bucket poll ${perObjectBefore} -> ${perObjectAfter}`,
    );
    // At most one sweep per kind and poll interval (moto cuts pages at 100 tags: 19 resources
    // with the 5 ownership tags, where AWS pages hold 100 resources).
    assert.ok(bulk.GetResources! > 0);
    assert.ok(
      bulk.GetResourcesPerPollInterval! <= 2 * Math.ceil(N / 19) + 1,
      `GetResources per poll interval: ${bulk.GetResourcesPerPollInterval}`,
    );
  });

  it("repairs tag drift made out of band after a direct re-read, then reads directly after its own write", async () => {
    const disagreedBefore = await bulkMetric("S3Bucket", "disagreed");
    // Right after a direct read of b-0, so that its next poll takes the drift from the snapshot.
    await justReadDirectly(buckets, "b-0");
    const from = tagSources(buckets, "b-0").length;
    const tags = await buckets.bucketTags("bulk-b-0");
    await buckets.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "bulk-b-0",
        Tagging: { TagSet: Object.entries({ ...tags, drift: "x" }).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
    await waitFor(
      "the drift repaired",
      async () => !("drift" in (await buckets.bucketTags("bulk-b-0"))),
      30_000 + N * 200,
      200,
    );
    await buckets.waitEvent("b-0", "Normal", "Updated", WAIT_MS);
    assert.ok(
      (await bulkMetric("S3Bucket", "disagreed")) > disagreedBefore,
      "the snapshot's drift was re-read",
    );
    assert.equal(ready(await buckets.get("b-0"))?.status, "True");
    // Within the window after that write, every poll of b-0 reads its tags directly.
    const after = await readsWithinWindowOfRepair(buckets, "b-0", from);
    assert.ok(after.length >= 2, `tag sources after the write: ${after.join(",")}`);
    assert.deepEqual([...new Set(after)], ["own-write"]);
  });

  it("repairs a queue's tag drift made out of band the same way", async () => {
    const disagreedBefore = await bulkMetric("SqsQueue", "disagreed");
    const { url } = await queues.queue("bulk-q-0");
    await justReadDirectly(queues, "q-0");
    const from = tagSources(queues, "q-0").length;
    await queues.sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { drift: "x" } }));
    await waitFor(
      "the drift repaired",
      async () => !("drift" in (await queues.queue("bulk-q-0")).tags),
      30_000 + N * 200,
      200,
    );
    assert.ok(
      (await bulkMetric("SqsQueue", "disagreed")) > disagreedBefore,
      `tag sources of q-0: ${tagSources(queues, "q-0").slice(-6).join(",")}`,
    );
    const after = await readsWithinWindowOfRepair(queues, "q-0", from);
    assert.ok(after.length >= 2, `tag sources after the write: ${after.join(",")}`);
    assert.deepEqual([...new Set(after)], ["own-write"]);
  });
});
