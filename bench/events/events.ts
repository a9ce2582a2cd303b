/**
 * `make bench-events`: drift-repair latency and AWS reads at rest, with change events and with
 * polling only, at growing estates (half S3Buckets, half SqsQueues, each with one tag, plus
 * `--instances` Ec2Instances) on one real kube-apiserver and the test AWS behind the latency
 * proxy. The events queue has the policy, and the default event bus the four rules, of
 * docs/aws.md#change-events. Writes bench/results/events.json and bench/results/events-*.svg.
 *
 *   node bench/events/events.ts [--sizes 1000,10000] [--polls 60,300] [--drifts 200] [--instances 20]
 *
 * Per size, in this order (one estate, grown from one size to the next):
 *
 * 1. events mode: the operator reads the change-event queue (`--change-events`, the safety-net
 *    poll at its default `--poll-interval-with-events=1h`). Reads are counted over `--rest`
 *    seconds at rest. Then `--drifts` buckets and queues drift, `--drift-rate` per second: each
 *    resource's tag is changed directly in the test AWS, and the CloudTrail event AWS would send
 *    for that call is put straight into the queue (the test AWS sends no CloudTrail events).
 *    Among them, every instance is stopped directly in the test AWS, which sends EC2's own
 *    "stopping" and "stopped" events through the documented rule before StopInstances answers;
 *    nothing is injected for them. Latency runs from that message's arrival in the queue (the
 *    injected message sent, or StopInstances answered) to the operator's repair call
 *    (PutBucketTagging, TagQueue or StartInstances) answered.
 * 2. poll-only mode: the operator restarts without `--change-events` and with the size's poll
 *    interval (`--polls`), and the rules are disabled. Once its start has observed every bucket
 *    and queue (one read of each), reads are counted over exactly one poll interval: one poll of
 *    every object. Drift, the instances' stops included, is made at times drawn uniformly over
 *    that interval, so its latency is uniform over the interval whatever the objects' poll phases
 *    (mean interval/2), and nothing reads the queue.
 * 3. The operator restarts in events mode (the rules enabled again), and the next size's objects
 *    are created.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { EC2Client, StopInstancesCommand } from "@aws-sdk/client-ec2";
import { GetBucketTaggingCommand, PutBucketTaggingCommand, S3Client } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
  TagQueueCommand,
} from "@aws-sdk/client-sqs";
import { cloudTrailEvent } from "../../src/change-events/testing/events.ts";
import { startAwsProxy, type ProxiedCall } from "../../test/support/aws-proxy.ts";
import {
  documentedPatterns,
  documentedQueuePolicy,
  eventBridge,
  ruleToQueue,
} from "../../test/support/change-event-rules.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator, type OperatorProcess } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot } from "../../test/support/process.ts";
import { childPid, procStats } from "../support/proc-stats.ts";
import { lineChart } from "../support/svg-chart.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000" },
    polls: { type: "string", default: "60,300" },
    drifts: { type: "string", default: "200" },
    instances: { type: "string", default: "20" },
    "drift-rate": { type: "string", default: "4" },
    rest: { type: "string", default: "60" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    entry: { type: "string", default: "dist/kubeprovisioner.mjs" },
    "node-args": { type: "string", default: imageNodeOptions() },
    out: { type: "string", default: "events" },
  },
});
const sizes = values.sizes.split(",").map(Number);
const polls = values.polls.split(",").map(Number);
const driftCount = Number(values.drifts);
const instanceCount = Number(values.instances);
const driftRate = Number(values["drift-rate"]);
const restSeconds = Number(values.rest);
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);
const REGION = "us-east-1";
const ACCOUNT = "123456789012";
const NS = "bench";
const EVENTS_QUEUE = "kp-change-events";
const WITH_EVENTS = "1h";

const log = (msg: string): void => {
  process.stderr.write(`[events ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const base = (plural: string): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`;
const bucketName = (i: number): string => `evb-${String(i).padStart(5, "0")}`;
const queueName = (i: number): string => `evq-${String(i).padStart(5, "0")}`;
const instanceName = (i: number): string => `evi-${String(i).padStart(3, "0")}`;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const round = (v: number, digits = 3): number => Math.round(v * 10 ** digits) / 10 ** digits;

/** AWS calls that only read: what a poll costs. */
const isRead = (op: string): boolean => /^(Get|List|Head|Describe|Receive)/.test(op);
function byOperation(calls: readonly ProxiedCall[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.operation] = (out[c.operation] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-events-"));
const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
  resources: true,
});
const credentials = { accessKeyId: "testing", secretAccessKey: "testing" };
// Out-of-band changes and injected events go to moto directly: the proxy counts the operator only.
const s3 = new S3Client({ region: REGION, endpoint: moto.endpoint, forcePathStyle: true, credentials });
const sqs = new SQSClient({ region: REGION, endpoint: moto.endpoint, credentials });
const ec2 = new EC2Client({ region: REGION, endpoint: moto.endpoint, credentials });
await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
const kubeconfig = cp.writeKubeConfig(
  cp.userKubeConfig("kubeprovisioner-bench", ["system:masters"]),
  "bench",
);
const eventsUrl = (await sqs.send(new CreateQueueCommand({ QueueName: EVENTS_QUEUE }))).QueueUrl ?? "";
// The queue's policy and the rules, as docs/aws.md#change-events has users make them.
const eventsArn =
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: eventsUrl, AttributeNames: ["QueueArn"] })))
    .Attributes?.QueueArn ?? "";
await sqs.send(
  new SetQueueAttributesCommand({
    QueueUrl: eventsUrl,
    Attributes: { Policy: JSON.stringify(documentedQueuePolicy(eventsArn)) },
  }),
);
const rules: string[] = [];
for (const [i, pattern] of documentedPatterns().entries())
  rules.push(await ruleToQueue(moto.endpoint, { name: `bench-${i + 1}`, pattern, queueArn: eventsArn }));
/** Turns the rules on (events mode) or off (poll-only mode, where nothing reads the queue). */
async function setRules(enabled: boolean): Promise<void> {
  for (const Name of rules)
    await eventBridge(moto.endpoint, enabled ? "EnableRule" : "DisableRule", { Name });
}

let op: OperatorProcess | undefined;
let starts = 0;
async function restart(mode: "events" | "poll", pollSeconds: number): Promise<number> {
  await op?.stop();
  starts++;
  op = await startOperator({
    kubeconfig,
    env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
    dir: work,
    name: `operator-${starts}-${mode}`,
    entry: values.entry,
    nodeArgs: values["node-args"].split(" ").filter(Boolean),
    args: [
      "--log-level=info",
      "--leader-elect=false",
      `--poll-interval=${pollSeconds}s`,
      ...(mode === "events"
        ? [`--change-events=${eventsUrl}`, `--poll-interval-with-events=${WITH_EVENTS}`]
        : []),
    ],
  });
  await setRules(mode === "events");
  const from = proxy.calls.length;
  if (mode === "events") {
    const o = op;
    const deadline = Date.now() + 60_000;
    while ((await o.metric("kubeprovisioner_change_events_queue_healthy", { queue: eventsUrl })) < 1) {
      if (Date.now() > deadline) throw new Error("the change-event queue is not read");
      await sleep(200);
    }
  }
  return from;
}

/** Waits until buckets and queues [0, count) have each been read once since proxy call `from`. */
async function observedAll(from: number, count: number): Promise<void> {
  const missing = new Set<string>();
  for (let i = 0; i < count; i++) missing.add(`b/${bucketName(i)}`).add(`q/${queueName(i)}`);
  let i = from;
  const deadline = Date.now() + 1800_000;
  while (missing.size > 0) {
    if (Date.now() > deadline) throw new Error(`${missing.size} objects not observed`);
    for (; i < proxy.calls.length; i++) {
      const c = proxy.calls[i];
      if (c?.resource === undefined) continue;
      if (c.operation === "GetBucketTagging") missing.delete(`b/${c.resource}`);
      if (c.operation === "ListQueueTags") missing.delete(`q/${c.resource}`);
    }
    await sleep(500);
  }
}

/**
 * Creates the Ec2Instances, waits until they are Ready (running), and returns their instance IDs.
 */
async function launch(count: number): Promise<string[]> {
  for (let i = 0; i < count; i++) {
    const res = await cp.request("POST", base("ec2instances"), {
      apiVersion: "compute.cloud.com/v1",
      kind: "Ec2Instance",
      metadata: { name: instanceName(i) },
      spec: { instanceType: "t3.micro", amiId: "ami-1e749f67", region: REGION, tags: { bench: "events" } },
    });
    if (res.status !== 201) throw new Error(`create Ec2Instance: ${res.status} ${res.text}`);
  }
  const deadline = Date.now() + 600_000;
  while ((await readyCount("Ec2Instance")) < count) {
    if (Date.now() > deadline) throw new Error("the instances are not Ready");
    await sleep(1000);
  }
  const list = await cp.request("GET", base("ec2instances"));
  const items = (list.body as { items?: { status?: { instanceId?: string } }[] }).items ?? [];
  const ids = items.map((o) => o.status?.instanceId ?? "").filter((id) => id !== "");
  if (ids.length !== count) throw new Error(`${ids.length} of ${count} instances have an ID`);
  return ids;
}

/** Waits for the next answered `operation` at the proxy, from call `from` on. */
async function nextCall(operation: string, from: number): Promise<void> {
  const deadline = Date.now() + 1800_000;
  while (!proxy.calls.slice(from).some((c) => c.operation === operation)) {
    if (Date.now() > deadline) throw new Error(`no ${operation}`);
    await sleep(200);
  }
}

async function readyCount(kind: string): Promise<number> {
  return (await op?.metric("kubeprovisioner_managed_resources", { kind, ready: "True" })) ?? 0;
}

/** Creates buckets and queues [from, to) and waits until all objects so far are Ready. */
async function grow(from: number, to: number): Promise<number> {
  const t0 = Date.now();
  const todo = Array.from({ length: to - from }, (_, k) => from + k).flatMap((i) => [
    {
      plural: "s3buckets",
      kind: "S3Bucket",
      spec: { bucketName: bucketName(i), region: REGION, tags: { bench: "events" } },
    },
    {
      plural: "sqsqueues",
      kind: "SqsQueue",
      spec: { queueName: queueName(i), region: REGION, tags: { bench: "events" } },
    },
  ]);
  const creating = inParallel(todo, 16, async (t) => {
    const res = await cp.request("POST", base(t.plural), {
      apiVersion: "compute.cloud.com/v1",
      kind: t.kind,
      metadata: { name: t.spec.bucketName ?? t.spec.queueName },
      spec: t.spec,
    });
    if (res.status !== 201) throw new Error(`create ${t.kind}: ${res.status} ${res.text}`);
  });
  const deadline = Date.now() + 1800_000;
  for (;;) {
    await sleep(2000);
    const ready = (await readyCount("S3Bucket")) + (await readyCount("SqsQueue"));
    if (ready >= 2 * to) break;
    if (Date.now() > deadline) throw new Error(`only ${ready}/${2 * to} Ready`);
    log(`${ready}/${2 * to} Ready`);
  }
  await creating;
  return (Date.now() - t0) / 1000;
}

interface Drift {
  kind: "S3Bucket" | "SqsQueue" | "Ec2Instance";
  resource: string;
  arrivedAt: number;
  repairedAt?: number;
}

/** The operator's call that repairs each kind's drift. */
const REPAIR: Readonly<Record<Drift["kind"], string>> = {
  S3Bucket: "PutBucketTagging",
  SqsQueue: "TagQueue",
  Ec2Instance: "StartInstances",
};

/**
 * Makes `resource` drift directly in the test AWS: a bucket's or queue's tag changed (in events
 * mode, then AWS's CloudTrail event for that call put into the queue), or an instance stopped
 * (EC2's own events reach the queue through the rule, while it is enabled).
 */
async function drift(kind: Drift["kind"], resource: string, withEvent: boolean): Promise<Drift> {
  const value = `drift-${randomUUID().slice(0, 8)}`;
  if (kind === "Ec2Instance") {
    await ec2.send(new StopInstancesCommand({ InstanceIds: [resource] }));
    return { kind, resource, arrivedAt: Date.now() };
  }
  if (kind === "S3Bucket") {
    const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket: resource }))).TagSet ?? [];
    const TagSet = tags.map((t) => (t.Key === "bench" ? { Key: "bench", Value: value } : t));
    await s3.send(new PutBucketTaggingCommand({ Bucket: resource, Tagging: { TagSet } }));
  } else {
    await sqs.send(
      new TagQueueCommand({
        QueueUrl: `${eventsUrl.slice(0, eventsUrl.lastIndexOf("/"))}/${resource}`,
        Tags: { bench: value },
      }),
    );
  }
  if (withEvent) {
    const event =
      kind === "S3Bucket"
        ? cloudTrailEvent({
            eventSource: "s3.amazonaws.com",
            eventName: "PutBucketTagging",
            requestParameters: { bucketName: resource, Host: `${resource}.s3.amazonaws.com`, tagging: "" },
            account: ACCOUNT,
            region: REGION,
          })
        : cloudTrailEvent({
            eventSource: "sqs.amazonaws.com",
            eventName: "TagQueue",
            requestParameters: {
              queueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${resource}`,
              tags: { bench: value },
            },
            account: ACCOUNT,
            region: REGION,
          });
    await sqs.send(new SendMessageCommand({ QueueUrl: eventsUrl, MessageBody: JSON.stringify(event) }));
  }
  return { kind, resource, arrivedAt: Date.now() };
}

/**
 * `count` random objects among the first `size` buckets and queues, half of each kind, and every
 * instance, in random order.
 */
function pick(
  size: number,
  count: number,
  instanceIds: readonly string[],
): { kind: Drift["kind"]; resource: string }[] {
  const choose = (n: number, k: number): number[] => {
    const all = Array.from({ length: n }, (_, i) => i);
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [all[i], all[j]] = [all[j] ?? 0, all[i] ?? 0];
    }
    return all.slice(0, k);
  };
  const half = size / 2;
  return [
    ...choose(half, Math.floor(count / 2)).map((i) => ({
      kind: "S3Bucket" as const,
      resource: bucketName(i),
    })),
    ...choose(half, Math.ceil(count / 2)).map((i) => ({ kind: "SqsQueue" as const, resource: queueName(i) })),
    ...instanceIds.map((id) => ({ kind: "Ec2Instance" as const, resource: id })),
  ].sort(() => Math.random() - 0.5);
}

/** The repairs of one group of drifts: latencies in seconds, sorted, and how many were not repaired. */
interface Repairs {
  latencies: number[];
  unrepaired: number;
}

/**
 * Makes the drifts at the given offsets (ms from now) and waits for each one's repair: the first
 * repair call of its kind (PutBucketTagging, TagQueue, StartInstances) for its resource answered
 * after it arrived, for the buckets' and queues' tags and for the instances.
 */
async function measureDrifts(
  targets: { kind: Drift["kind"]; resource: string }[],
  offsetsMs: number[],
  withEvent: boolean,
  timeoutMs: number,
): Promise<Record<"tags" | "instances", Repairs>> {
  const start = Date.now();
  const pending = new Map<string, Drift>();
  const done: Drift[] = [];
  let scanned = proxy.calls.length;
  const scan = (): void => {
    for (; scanned < proxy.calls.length; scanned++) {
      const c = proxy.calls[scanned];
      if (c === undefined || c.status < 200 || c.status >= 300 || c.resource === undefined) continue;
      const d = pending.get(c.resource);
      if (d !== undefined && c.operation === REPAIR[d.kind] && (c.answeredAt ?? 0) >= d.arrivedAt) {
        d.repairedAt = c.answeredAt ?? 0;
        pending.delete(c.resource);
        done.push(d);
      }
    }
  };
  const making = (async () => {
    for (const [i, t] of targets.entries()) {
      const wait = start + (offsetsMs[i] ?? 0) - Date.now();
      if (wait > 0) await sleep(wait);
      scan();
      // Registered before the change, so a repair racing the registration is not missed.
      const d: Drift = { ...t, arrivedAt: Number.POSITIVE_INFINITY };
      pending.set(t.resource, d);
      const made = await drift(t.kind, t.resource, withEvent);
      d.arrivedAt = made.arrivedAt;
    }
  })();
  const deadline = start + timeoutMs;
  for (;;) {
    await sleep(100);
    scan();
    if (done.length === targets.length || Date.now() > deadline) break;
  }
  await making;
  const ofKind = (kinds: readonly Drift["kind"][]) => ({
    latencies: done
      .filter((d) => kinds.includes(d.kind))
      .map((d) => ((d.repairedAt ?? 0) - d.arrivedAt) / 1000)
      .sort((a, b) => a - b),
    unrepaired: [...pending.values()].filter((d) => kinds.includes(d.kind)).length,
  });
  return { tags: ofKind(["S3Bucket", "SqsQueue"]), instances: ofKind(["Ec2Instance"]) };
}

/** AWS calls of the operator in [from, to) of the proxy's record, per object per hour. */
function readsPerObjectPerHour(calls: readonly ProxiedCall[], objects: number, seconds: number) {
  const reads = calls.filter((c) => isRead(c.operation));
  const eventQueueReads = reads.filter((c) => c.resource === EVENTS_QUEUE).length;
  const perHour = (n: number): number => round((n / objects) * (3600 / seconds));
  return {
    seconds: round(seconds, 1),
    calls: byOperation(calls),
    reads: reads.length,
    readsPerObjectPerHour: perHour(reads.length),
    ofWhichEventQueuePerObjectPerHour: perHour(eventQueueReads),
    pollReadsPerObjectPerHour: perHour(reads.length - eventQueueReads),
  };
}

const stats = (latencies: number[]) => ({
  samples: latencies.length,
  p50: round(quantile(latencies, 0.5)),
  p90: round(quantile(latencies, 0.9)),
  p99: round(quantile(latencies, 0.99)),
  max: round(latencies.at(-1) ?? NaN),
  mean: round(latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1)),
});

/** One line of a mode's latencies for the log. */
const summary = (r: Record<"tags" | "instances", Repairs>): string =>
  (["tags", "instances"] as const)
    .map(
      (g) =>
        `${g} p50 ${quantile(r[g].latencies, 0.5)} s, p99 ${quantile(r[g].latencies, 0.99)} s, ${r[g].unrepaired} unrepaired`,
    )
    .join("; ");

/** A cumulative latency curve: % of drifts repaired by each latency. */
const cumulative = (name: string, latencies: readonly number[]) => ({
  name,
  points: latencies.map((l, i): [number, number] => [l, (100 * (i + 1)) / latencies.length]),
});

const runs: Record<string, unknown>[] = [];
const curves: { name: string; points: [number, number][] }[] = [];
const readPoints: [number, number, number][] = [];
try {
  let made = 0;
  let from = await restart("events", polls[0] ?? 60);
  log(`launching ${instanceCount} instances`);
  const instanceIds = await launch(instanceCount);
  for (const [k, size] of sizes.entries()) {
    const pollSeconds = polls[k] ?? polls.at(-1) ?? 300;
    const half = size / 2;
    const objects = size + instanceCount;
    const loadStart = os.loadavg();
    log(`growing to ${size} objects (${half} buckets, ${half} queues)`);
    const convergeSeconds = await grow(made, half);
    // The objects of the previous size observed since this operator started, so none is still
    // in its first reconcile (the new ones are Ready).
    await observedAll(from, made);
    made = half;
    await sleep(5000);

    log(`events mode at ${size}: ${restSeconds} s at rest`);
    let c0 = proxy.calls.length;
    let t0 = Date.now();
    await sleep(restSeconds * 1000);
    const eventsRest = readsPerObjectPerHour(proxy.calls.slice(c0), objects, (Date.now() - t0) / 1000);
    const pid = childPid(op?.process.proc.pid ?? 0, path.basename(values.entry));
    const memEvents = procStats(pid);
    const heapEvents = (await op?.metric("nodejs_heap_size_used_bytes")) ?? 0;
    log(`events mode at ${size}: ${driftCount} drifts and ${instanceCount} instance stops at ${driftRate}/s`);
    const evTargets = pick(size, driftCount, instanceIds);
    const ev = await measureDrifts(
      evTargets,
      evTargets.map((_, i) => (i * 1000) / driftRate),
      true,
      (evTargets.length / driftRate) * 1000 + 120_000,
    );
    const received =
      (await op?.metric("kubeprovisioner_change_events_received_total", { queue: eventsUrl })) ?? 0;
    log(`events: ${summary(ev)}`);

    log(`poll-only mode at ${size}: --poll-interval=${pollSeconds}s`);
    from = await restart("poll", pollSeconds);
    await observedAll(from, half);
    // The instances poll together, at the multiples of the poll interval: their first such
    // round after the start, so that drifts meet their steady polls.
    if (instanceCount > 0) await nextCall("DescribeInstances", proxy.calls.length);
    c0 = proxy.calls.length;
    t0 = Date.now();
    const pollTargets = pick(size, driftCount, instanceIds);
    const offsets = pollTargets.map(() => Math.random() * pollSeconds * 1000).sort((a, b) => a - b);
    const measuring = measureDrifts(pollTargets, offsets, false, 2 * pollSeconds * 1000 + 60_000);
    await sleep(pollSeconds * 1000);
    const pollRest = readsPerObjectPerHour(proxy.calls.slice(c0), objects, (Date.now() - t0) / 1000);
    const po = await measuring;
    log(`poll-only: ${summary(po)}`);

    // The safety-net poll reads each object once an hour; its reads per poll are what one poll
    // of every object cost in the poll-only window.
    const readsPerPoll = (pollRest.reads / objects) * 1;
    const eventsWithSafetyNet = round(eventsRest.readsPerObjectPerHour + readsPerPoll);
    runs.push({
      objects: { buckets: half, queues: half, instances: instanceCount, total: objects },
      convergeSeconds: round(convergeSeconds, 1),
      eventsMode: {
        flags: { changeEvents: eventsUrl, pollIntervalWithEvents: WITH_EVENTS },
        atRest: eventsRest,
        atRestWithHourlySafetyNetPoll: {
          readsPerObjectPerHour: eventsWithSafetyNet,
          note: "the window lies before any object's first safety-net poll (1 h after its last reconcile); one poll of every object per hour is added at the reads per object per poll measured in poll-only mode",
        },
        driftRepairSeconds: stats(ev.tags.latencies),
        unrepaired: ev.tags.unrepaired,
        instanceStopRepairSeconds: stats(ev.instances.latencies),
        instancesUnrepaired: ev.instances.unrepaired,
        driftsPerSecond: driftRate,
        eventsReceived: received,
        rssMiB: round(memEvents.rssMiB, 1),
        heapUsedMiB: round(heapEvents / 2 ** 20, 1),
      },
      pollOnlyMode: {
        flags: { pollInterval: `${pollSeconds}s` },
        atRest: pollRest,
        readsPerObjectPerPoll: round(readsPerPoll),
        driftRepairSeconds: stats(po.tags.latencies),
        expectedMeanSeconds: pollSeconds / 2,
        boundSeconds: pollSeconds,
        unrepaired: po.tags.unrepaired,
        instanceStopRepairSeconds: stats(po.instances.latencies),
        instancesUnrepaired: po.instances.unrepaired,
      },
      readsRatioPollOnlyToEvents: {
        measuredWindow: round(pollRest.readsPerObjectPerHour / eventsRest.readsPerObjectPerHour, 1),
        withHourlySafetyNetPoll: round(pollRest.readsPerObjectPerHour / eventsWithSafetyNet, 1),
        atTheDefaultPollInterval5m: round((readsPerPoll * 3600) / 300 / eventsWithSafetyNet, 1),
      },
      loadavg: { start: loadStart, end: os.loadavg() },
    });
    readPoints.push([size, (readsPerPoll * 3600) / 300, eventsWithSafetyNet]);
    curves.push(
      cumulative(`events, ${size} objects`, ev.tags.latencies),
      cumulative(`events, ${size} objects, instance stops`, ev.instances.latencies),
      cumulative(`poll only (${pollSeconds} s), ${size} objects`, po.tags.latencies),
      cumulative(`poll only (${pollSeconds} s), ${size} objects, instance stops`, po.instances.latencies),
    );
    if (k + 1 < sizes.length) from = await restart("events", polls[k + 1] ?? pollSeconds);
  }
  await op?.stop();
} finally {
  s3.destroy();
  sqs.destroy();
  ec2.destroy();
  await proxy.stop();
  await moto.stop();
  await cp.stop();
}
const results = path.join(repoRoot, "bench/results");
mkdirSync(results, { recursive: true });
writeFileSync(
  path.join(results, `${values.out}.json`),
  JSON.stringify(
    {
      method: {
        awsLatencyMs: { mean: latency, jitter },
        entry: values.entry,
        nodeArgs: values["node-args"],
        drifts: driftCount,
        driftsPerSecond: driftRate,
        restSeconds,
        instances: instanceCount,
        latencyFrom:
          "the event's arrival in the queue: the injected CloudTrail event sent, or StopInstances answered (the test AWS sends EC2's own state-change events before it answers); poll-only: the drift's moment",
        latencyTo:
          "the test AWS's answer to the operator's repair call (PutBucketTagging, TagQueue, StartInstances)",
      },
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        node: process.version,
        loadavgEnd: os.loadavg(),
      },
      runs,
    },
    null,
    2,
  ) + "\n",
);
const chart = (file: string, title: string, mode: string): void => {
  writeFileSync(
    path.join(results, file),
    lineChart({
      title,
      xLabel: "seconds from the event's arrival to the repair",
      yLabel: "% of drifts repaired",
      series: curves.filter((c) => c.name.startsWith(mode)),
    }),
  );
};
chart(`${values.out}-latency.svg`, "Drift repair with change events (cumulative)", "events");
chart(`${values.out}-poll-latency.svg`, "Drift repair by polling only (cumulative)", "poll");
writeFileSync(path.join(results, `${values.out}-reads.svg`), readsChart(readPoints));

/** Reads per object per hour by estate size: polling only at the default 5 min, and events. */
function readsChart(points: readonly (readonly [number, number, number])[]): string {
  return lineChart({
    title: "AWS reads per object per hour at rest",
    xLabel: "objects",
    yLabel: "reads per object per hour",
    series: [
      {
        name: "poll only, every 5 min (reads per poll measured × 12)",
        points: points.map((p) => [p[0], p[1]]),
      },
      { name: "events, with the hourly safety-net poll", points: points.map((p) => [p[0], p[2]]) },
    ],
  });
}
