/**
 * Soak (`make soak`, outside `make test` and `make test-faults`): SOAK_OBJECTS objects (default
 * 1000; EC2 instances capped at 150, moto's EC2 slows sharply past a few hundred) kept for
 * SOAK_MINUTES (default 30) with a 60 s poll period, and drift injected straight into AWS every
 * minute: foreign and changed tags on an instance, a bucket and a queue, a bucket's versioning
 * suspended, a queue's visibility timeout changed, one queue deleted out of band. Each drift must
 * be repaired within one poll period (plus the time to observe it); the operator's resident
 * memory stays flat within 10 % after warm-up; its reconcile error rate does not grow.
 */
import { CreateTagsCommand, DescribeInstancesCommand } from "@aws-sdk/client-ec2";
import {
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
} from "@aws-sdk/client-s3";
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
} from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor } from "../support/process.ts";
import { Fleet, REGIONS, type FleetObject, type Kind } from "../faults/fleet.ts";
import { record } from "../faults/results.ts";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const OBJECTS = Number(process.env.SOAK_OBJECTS ?? 1000);
const POLL_S = 60;
/** Time to observe a repair on top of the poll period: this test's 2 s polling and a busy worker queue. */
const OBSERVE_SLACK_S = 20;
const EC2 = Math.min(150, Math.floor(OBJECTS / 5));
const S3 = Math.floor((OBJECTS - EC2) / 2);
const SQS = OBJECTS - EC2 - S3;

function mix(): FleetObject[] {
  const out: FleetObject[] = [];
  const add = (kind: Kind, n: number, prefix: string): void => {
    for (let i = 0; i < n; i++)
      out.push({ kind, name: `${prefix}-${i}`, region: REGIONS[i % REGIONS.length] as string });
  };
  add("Ec2Instance", EC2, "soak-vm");
  add("S3Bucket", S3, "soak-bucket");
  add("SqsQueue", SQS, "soak-queue");
  return out;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

describe(`soak: ${OBJECTS} objects for ${MINUTES} minutes with drift every minute`, () => {
  const fleet = new Fleet();
  before(() => fleet.start());
  after(() => fleet.stop());

  it("repairs every drift within a poll period, with flat memory and no growth in errors", async () => {
    const objs = mix();
    const op = await fleet.startOperator([
      "--leader-elect=false",
      `--poll-interval=${POLL_S}s`,
      "--max-concurrent-reconciles=8",
    ]);
    await fleet.createAll(objs);
    const converge = await fleet.waitReady(objs, 30 * 60_000);
    const uid = new Map((await fleet.list()).map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.uid]));
    const byKind = (k: Kind): FleetObject[] => objs.filter((o) => o.kind === k);
    const s3 = fleet.s3Client();

    const rss: number[] = [];
    const errors: number[] = [];
    const repairs: number[] = [];
    const late: string[] = [];
    const t0 = performance.now();
    for (let minute = 0; minute < MINUTES; minute++) {
      const start = performance.now();
      const vm = byKind("Ec2Instance")[minute % EC2];
      const bucket = byKind("S3Bucket")[minute % S3];
      const queue = byKind("SqsQueue")[minute % SQS];
      const lost = byKind("SqsQueue")[(minute + Math.floor(SQS / 2)) % SQS];
      assert.ok(vm && bucket && queue && lost);
      const checks: [string, () => Promise<boolean>][] = [];

      // An instance's tags.
      const instanceId = (
        await fleet.list().then((l) => l.find((o) => o.kind === "Ec2Instance" && o.metadata.name === vm.name))
      )?.status as { instanceId?: string } | undefined;
      const iid = instanceId?.instanceId ?? "";
      await fleet.ec2(vm.region).send(
        new CreateTagsCommand({
          Resources: [iid],
          Tags: [
            { Key: "fleet", Value: "drifted" },
            { Key: "intruder", Value: "x" },
          ],
        }),
      );
      checks.push([
        `tags of ${vm.name}`,
        async () => {
          const r = await fleet.ec2(vm.region).send(new DescribeInstancesCommand({ InstanceIds: [iid] }));
          const tags = r.Reservations?.[0]?.Instances?.[0]?.Tags ?? [];
          return (
            tags.some((t) => t.Key === "fleet" && t.Value === "faults") &&
            !tags.some((t) => t.Key === "intruder")
          );
        },
      ]);

      // A bucket's tags and versioning.
      const current = await s3.send(new GetBucketTaggingCommand({ Bucket: bucket.name }));
      await s3.send(
        new PutBucketTaggingCommand({
          Bucket: bucket.name,
          Tagging: {
            TagSet: [
              ...(current.TagSet ?? []).filter((t) => t.Key !== "fleet"),
              { Key: "fleet", Value: "drifted" },
              { Key: "intruder", Value: "x" },
            ],
          },
        }),
      );
      await s3.send(
        new PutBucketVersioningCommand({
          Bucket: bucket.name,
          VersioningConfiguration: { Status: "Suspended" },
        }),
      );
      checks.push([
        `tags and versioning of ${bucket.name}`,
        async () => {
          const t = await s3.send(new GetBucketTaggingCommand({ Bucket: bucket.name }));
          const v = await s3.send(new GetBucketVersioningCommand({ Bucket: bucket.name }));
          const tags = t.TagSet ?? [];
          return (
            v.Status === "Enabled" &&
            tags.some((x) => x.Key === "fleet" && x.Value === "faults") &&
            !tags.some((x) => x.Key === "intruder")
          );
        },
      ]);

      // A queue's attributes and tags.
      const sqs = fleet.sqs(queue.region);
      const { QueueUrl: url } = await sqs.send(new GetQueueUrlCommand({ QueueName: queue.name }));
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "99" } }),
      );
      await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { fleet: "drifted", intruder: "x" } }));
      checks.push([
        `attributes and tags of ${queue.name}`,
        async () => {
          const a = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["VisibilityTimeout"] }),
          );
          const t = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
          return (
            a.Attributes?.VisibilityTimeout === "45" &&
            t.Tags?.fleet === "faults" &&
            t.Tags.intruder === undefined
          );
        },
      ]);

      // One queue deleted out of band: recreated with its ownership tags.
      const lostSqs = fleet.sqs(lost.region);
      const { QueueUrl: lostUrl } = await lostSqs.send(new GetQueueUrlCommand({ QueueName: lost.name }));
      await lostSqs.send(new DeleteQueueCommand({ QueueUrl: lostUrl }));
      checks.push([
        `recreation of ${lost.name}`,
        async () => {
          const got = await lostSqs
            .send(new GetQueueUrlCommand({ QueueName: lost.name }))
            .catch(() => undefined);
          if (got?.QueueUrl === undefined) return false;
          const t = await lostSqs.send(new ListQueueTagsCommand({ QueueUrl: got.QueueUrl }));
          return t.Tags?.[OWNERSHIP_TAGS.uid] === uid.get(`SqsQueue/${lost.name}`);
        },
      ]);

      const injected = performance.now();
      await Promise.all(
        checks.map(async ([what, ok]) => {
          try {
            await waitFor(what, ok, (POLL_S + OBSERVE_SLACK_S) * 1000, 2000);
            repairs.push((performance.now() - injected) / 1000);
          } catch {
            late.push(`minute ${minute}: ${what}`);
          }
        }),
      );
      rss.push(await op.metric("process_resident_memory_bytes"));
      errors.push(await op.metric("controller_runtime_reconcile_errors_total"));
      const left = 60_000 - (performance.now() - start);
      if (left > 0) await delay(left);
    }
    const soakMinutes = (performance.now() - t0) / 60_000;

    // Memory: after a warm-up fifth, the last fifth's mean against the next fifth's mean.
    const fifth = Math.max(1, Math.floor(rss.length / 5));
    const baseline = mean(rss.slice(fifth, 2 * fifth));
    const final = mean(rss.slice(-fifth));
    const rssGrowth = final / baseline - 1;
    // Errors: per-minute increments, second half against first half.
    const perMinute = errors.map((e, i) => e - (i === 0 ? 0 : (errors[i - 1] ?? 0)));
    const half = Math.floor(perMinute.length / 2);
    const firstHalf = mean(perMinute.slice(0, half));
    const secondHalf = mean(perMinute.slice(half));
    const census = await fleet.census();
    const sortedRepairs = [...repairs].sort((a, b) => a - b);

    record(
      "soak",
      { objects: OBJECTS, ec2: EC2, s3: S3, sqs: SQS, minutes: MINUTES, pollSeconds: POLL_S, regions: 3 },
      {
        convergeSeconds: Math.round(converge / 1000),
        soakMinutes: Number(soakMinutes.toFixed(1)),
        driftsInjected: MINUTES * 4,
        driftsRepaired: repairs.length,
        repairSecondsMedian: Number((sortedRepairs[Math.floor(sortedRepairs.length / 2)] ?? 0).toFixed(1)),
        repairSecondsMax: Number((sortedRepairs.at(-1) ?? 0).toFixed(1)),
        repairBoundSeconds: POLL_S + OBSERVE_SLACK_S,
        rssMiBBaseline: Math.round(baseline / 2 ** 20),
        rssMiBFinal: Math.round(final / 2 ** 20),
        rssGrowthPercent: Number((rssGrowth * 100).toFixed(1)),
        reconcileErrorsPerMinuteFirstHalf: Number(firstHalf.toFixed(2)),
        reconcileErrorsPerMinuteSecondHalf: Number(secondHalf.toFixed(2)),
        duplicates: census.duplicates.length,
        orphans: census.orphans.length,
      },
      "soak",
    );
    assert.deepEqual(late, [], "every drift repaired within a poll period");
    assert.ok(rssGrowth <= 0.1, `RSS grew ${(rssGrowth * 100).toFixed(1)} %`);
    assert.ok(secondHalf <= firstHalf * 1.5 + 1, `errors per minute ${firstHalf} -> ${secondHalf}`);
    assert.deepEqual(census.duplicates, []);
    assert.deepEqual(census.orphans, []);
    assert.deepEqual(census.notReady, []);
  });
});
