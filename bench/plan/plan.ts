/**
 * `make bench-plan`: `kubeprovisioner plan --live -A -o json` over an estate of live objects, as
 * a user runs it (`node dist/kubeprovisioner.mjs plan`), against a real kube-apiserver (with an
 * audit log of every request) and moto behind the counting proxy, which adds AWS latency
 * (80 ± 40 ms per call).
 *
 * The operator (the bundle with the image's V8 flags) creates and converges the estate, then is
 * stopped, so that every request from then on is the plan's. A share of the resources drifts out
 * of band, straight at moto: buckets get versioning suspended, queues another visibility
 * timeout, instances lose a tag. Then the plan runs twice, with a kubeconfig of its own user,
 * under GNU time for its peak RSS: as a user runs it (no Node flags), whose figures are the
 * result, and with the image's NODE_OPTIONS (the Dockerfile's), as the image runs the command.
 * Measured and checked for each (the run fails on any check):
 *
 * - wall time, and its phases from the audit log and the proxy: the start and the cache's sync
 *   (until the plan lists its targets), listing the targets, planning (until the last AWS call),
 *   the output and the exit;
 * - the AWS calls by service and operation, each budget's calls against its default rate and
 *   bucket (./budget.ts); mutating calls must be 0;
 * - the Kubernetes requests of the plan's user by verb and resource; writes must be 0, and every
 *   request carries the User-Agent `kubeprovisioner-plan`;
 * - the plan: exit status 2, one update per drifted object with exactly the drifted path, every
 *   other object in sync, no error.
 *
 * One JSON document: bench/results/plan.json (and stdout).
 *
 *   node bench/plan/plan.ts [--buckets 450] [--queues 450] [--instances 100] [--drift-share 0.1]
 *     [--latency-ms 80] [--jitter-ms 40] [--out bench/results/plan.json]
 */
import { DeleteTagsCommand, DescribeInstancesCommand, EC2Client } from "@aws-sdk/client-ec2";
import { PutBucketVersioningCommand, S3Client } from "@aws-sdk/client-s3";
import { GetQueueUrlCommand, SetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { auditFlags, isWrite, readAudit, type AuditEvent } from "../../test/support/audit.ts";
import { startAwsProxy } from "../../test/support/aws-proxy.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto, type Moto } from "../../test/support/moto.ts";
import { startOperator } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot, waitFor } from "../../test/support/process.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";
import { readyNames } from "../support/ready.ts";
import { machineFacts } from "../support/machine.ts";
import { writeResult } from "../support/result-file.ts";
import { requireGnuTime, runUserCommand, userCommandEnv } from "../support/user-command.ts";
import { budgetUse, callsByService, isRead } from "./budget.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "450" },
    queues: { type: "string", default: "450" },
    instances: { type: "string", default: "100" },
    "drift-share": { type: "string", default: "0.1" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    out: { type: "string", default: "bench/results/plan.json" },
  },
});
const NS = "bench";
const REGION = "us-east-1";
const PROGRAM = "dist/kubeprovisioner.mjs";
const PLAN_USER = "kubeprovisioner-bench-plan";
const PLAN_AGENT = "kubeprovisioner-plan";
const TAGS = { bench: "plan" };
const share = Number(values["drift-share"]);
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);

const log = (msg: string): void => {
  process.stderr.write(`[plan ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** Each kind: how many, its spec, its plural, and the spec path its out-of-band drift changes. */
const KINDS = [
  {
    kind: "S3Bucket",
    plural: "s3buckets",
    count: Number(values.buckets),
    spec: (name: string) => ({ bucketName: name, region: REGION, versioning: true, tags: TAGS }),
    drifted: "spec.versioning",
  },
  {
    kind: "SqsQueue",
    plural: "sqsqueues",
    count: Number(values.queues),
    spec: (name: string) => ({ queueName: name, region: REGION, visibilityTimeoutSeconds: 30, tags: TAGS }),
    drifted: "spec.visibilityTimeoutSeconds",
  },
  {
    kind: "Ec2Instance",
    plural: "ec2instances",
    count: Number(values.instances),
    spec: (name: string) => ({
      instanceType: "t3.micro",
      amiId: "ami-1e749f67",
      region: REGION,
      tags: { ...TAGS, "bench-name": name },
    }),
    drifted: "spec.tags.bench",
  },
] as const;
type Kind = (typeof KINDS)[number];
const nameOf = (k: Kind, i: number): string => `${k.plural.slice(0, 3)}-plan-${String(i).padStart(4, "0")}`;
/** The objects of `k` that drift: the first `share` of them. */
const driftCount = (k: Kind): number => Math.round(k.count * share);
const base = (plural: string): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`;

/** The plan's JSON (docs/plan.md), the fields checked here. */
interface PlanJson {
  objects: { kind: string; name: string; action: string; changes: { path: string; actions: string[] }[] }[];
  summary: Record<string, number>;
}

/** Out of band, straight at moto (not through the counting proxy): the drift of each kind's first objects. */
async function makeDrift(moto: Moto): Promise<void> {
  const config = {
    region: REGION,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  };
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const sqs = new SQSClient(config);
  const ec2 = new EC2Client(config);
  try {
    const [buckets, queues, instances] = KINDS;
    await inParallel(names(buckets, driftCount(buckets)), 8, async (name) => {
      await s3.send(
        new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: "Suspended" } }),
      );
    });
    await inParallel(names(queues, driftCount(queues)), 8, async (name) => {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { VisibilityTimeout: "45" } }));
    });
    const drifting = names(instances, driftCount(instances));
    if (drifting.length > 0) {
      const out = await ec2.send(
        new DescribeInstancesCommand({ Filters: [{ Name: "tag:bench-name", Values: drifting }] }),
      );
      const ids = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((x) => x.InstanceId ?? "");
      if (ids.length !== drifting.length)
        throw new Error(`found ${ids.length} of the ${drifting.length} instances to drift`);
      await ec2.send(new DeleteTagsCommand({ Resources: ids, Tags: [{ Key: "bench" }] }));
    }
  } finally {
    s3.destroy();
    sqs.destroy();
    ec2.destroy();
  }
}
const names = (k: Kind, n: number): string[] => Array.from({ length: n }, (_, i) => nameOf(k, i));

/** What the plan must say: each drifted object an update of its kind's drifted path, the rest in sync. */
function checkPlan(plan: PlanJson): string[] {
  const wrong: string[] = [];
  const byKey = new Map(plan.objects.map((o) => [`${o.kind}/${o.name}`, o]));
  for (const k of KINDS) {
    for (let i = 0; i < k.count; i++) {
      const o = byKey.get(`${k.kind}/${nameOf(k, i)}`);
      const drifted = i < driftCount(k);
      const want = drifted ? `update ${k.drifted}` : "in-sync ";
      const got = o === undefined ? "missing" : `${o.action} ${o.changes.map((c) => c.path).join(",")}`;
      if (got !== want) wrong.push(`${k.kind} ${nameOf(k, i)}: ${got}, want ${want}`);
    }
  }
  const drifted = KINDS.reduce((n, k) => n + driftCount(k), 0);
  const total = KINDS.reduce((n, k) => n + k.count, 0);
  const s = plan.summary;
  const want = { objects: total, update: drifted, inSync: total - drifted, changes: drifted, error: 0 };
  for (const [field, n] of Object.entries(want))
    if (s[field] !== n) wrong.push(`summary.${field} ${s[field]}, want ${n}`);
  return wrong;
}

/** An audit event with the request's URI, which the log records. */
type Audited = AuditEvent & { auditID: string; requestURI?: string };
const ms = (t: string): number => Date.parse(t);

requireGnuTime();
if (!existsSync(path.join(repoRoot, PROGRAM))) throw new Error(`${PROGRAM} is missing: make bundle`);

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bench-plan-"));
log(`work folder ${work}`);
const audit = auditFlags({ reads: true, dir: work });
const cp = await startControlPlane({ installCRDs: true, apiServerFlags: audit.flags });
const moto = await startMoto();
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
});
let result: Record<string, unknown>;
try {
  await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
  const op = await startOperator({
    kubeconfig: cp.kubeconfigPath,
    env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
    dir: work,
    entry: PROGRAM,
    nodeArgs: imageNodeOptions().split(" ").filter(Boolean),
    args: ["--log-level=info", "--leader-elect=false", "--poll-interval=5m"],
  });
  const todo = KINDS.flatMap((k) => names(k, k.count).map((name) => ({ k, name })));
  const total = todo.length;
  log(`creating ${total} objects`);
  const t0 = Date.now();
  await inParallel(todo, 16, async ({ k, name }) => {
    const res = await cp.request("POST", base(k.plural), {
      apiVersion: "compute.cloud.com/v1",
      kind: k.kind,
      metadata: { name },
      spec: k.spec(name),
    });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
  });
  await waitFor(
    `${total} objects Ready`,
    async () => {
      let ready = 0;
      for (const k of KINDS) if (k.count > 0) ready += (await readyNames(cp, base(k.plural))).length;
      return ready === total;
    },
    1_800_000,
    2000,
  );
  const convergeSeconds = (Date.now() - t0) / 1000;
  log(`${total} objects Ready in ${convergeSeconds.toFixed(1)} s; stopping the operator`);
  await op.stop();
  await makeDrift(moto);
  const drifted = KINDS.reduce((n, k) => n + driftCount(k), 0);
  log(`drift made on ${drifted} resources; planning`);

  const kubeconfig = cp.writeKubeConfig(cp.userKubeConfig(PLAN_USER, ["system:masters"]), "bench-plan");
  const env = userCommandEnv({ awsEnv: moto.env, awsEndpoint: proxy.endpoint, kubeconfig });
  /** One plan with `nodeArgs`, measured and checked (see the module comment). */
  const measure = async (nodeArgs: readonly string[]) => {
    const calls0 = proxy.calls.length;
    const run = await runUserCommand(
      path.join(repoRoot, PROGRAM),
      nodeArgs,
      ["plan", "--live", "-A", "-o", "json"],
      env,
      path.join(work, "time.txt"),
    );
    const wallSeconds = (run.end - run.start) / 1000;
    if (run.code !== 2) throw new Error(`plan exited ${run.code}, want 2 (changes to make)\n${run.stderr}`);
    const plan = JSON.parse(run.stdout) as PlanJson;
    const wrong = checkPlan(plan);
    if (wrong.length > 0)
      throw new Error(`the plan does not match the drift made:\n${wrong.slice(0, 20).join("\n")}`);

    const calls = proxy.calls.slice(calls0);
    const mutating = calls.filter((c) => !isRead(c));
    if (mutating.length > 0)
      throw new Error(`the plan made mutating AWS calls: ${mutating.map((c) => c.operation).join(", ")}`);
    const budgets = budgetUse(calls, wallSeconds);

    // The API server logs a request before it answers (the log backend blocks), so every write
    // of the plan is in the log by now. A watch has two events (its start and its end): one
    // request.
    const events = (readAudit(audit.file) as Audited[]).filter(
      (e) =>
        e.user.username === PLAN_USER &&
        ms(e.requestReceivedTimestamp) >= run.start &&
        ms(e.requestReceivedTimestamp) <= run.end,
    );
    const requests = [...new Map(events.map((e) => [e.auditID, e])).values()];
    const writes = requests.filter(isWrite);
    if (writes.length > 0)
      throw new Error(
        `the plan wrote to Kubernetes: ${writes.map((e) => `${e.verb} ${e.requestURI}`).join(", ")}`,
      );
    const otherAgents = requests.filter((e) => e.userAgent?.startsWith(PLAN_AGENT) !== true);
    if (otherAgents.length > 0)
      throw new Error(`requests of the plan's user without its User-Agent: ${otherAgents[0]?.userAgent}`);
    const kubeRequests: Record<string, number> = {};
    for (const e of requests) {
      const key = `${e.verb} ${e.objectRef?.resource ?? "(none)"}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ""}`;
      kubeRequests[key] = (kubeRequests[key] ?? 0) + 1;
    }

    // Phases. The cache's informers list each managed kind first (a first page, and pages that
    // continue it); the plan's own list of its targets is each kind's second first page, after
    // the cache synced, and the last of the lists.
    const managed = new Set<string>(KINDS.map((k) => k.plural));
    const lists = requests
      .filter((e) => e.verb === "list" && managed.has(e.objectRef?.resource ?? ""))
      .sort((a, b) => ms(a.requestReceivedTimestamp) - ms(b.requestReceivedTimestamp));
    const targetLists = KINDS.map(
      (k) =>
        lists.filter(
          (e) => e.objectRef?.resource === k.plural && !/[?&]continue=/.test(e.requestURI ?? ""),
        )[1],
    );
    if (targetLists.some((e) => e === undefined))
      throw new Error("the audit log lacks the plan's lists of its targets");
    const synced = Math.min(...targetLists.map((e) => ms(e?.requestReceivedTimestamp ?? "")));
    const listed = Math.max(...lists.map((e) => ms(e.stageTimestamp)));
    const lastCall = Math.max(...calls.map((c) => c.at));
    const seconds = (from: number, to: number): number => Number(((to - from) / 1000).toFixed(3));

    const readsPerObject: Record<string, number> = {};
    for (const [svc, ops] of Object.entries(callsByService(calls))) {
      const kind = { s3: KINDS[0], sqs: KINDS[1], ec2: KINDS[2] }[svc];
      if (kind !== undefined)
        readsPerObject[kind.kind] = Object.values(ops).reduce((a, b) => a + b, 0) / kind.count;
    }
    log(
      `plan${nodeArgs.length > 0 ? ` with ${nodeArgs.join(" ")}` : ""}: ${wallSeconds.toFixed(1)} s, peak RSS ${run.peakRssMiB.toFixed(1)} MiB, ${calls.length} AWS reads, 0 writes`,
    );
    return {
      command: ["node", ...nodeArgs, PROGRAM, "plan", "--live", "-A", "-o", "json"].join(" "),
      plan: {
        exitCode: run.code,
        wallSeconds,
        phases: {
          startAndCacheSyncSeconds: seconds(run.start, synced),
          listTargetsSeconds: seconds(synced, listed),
          planSeconds: seconds(listed, lastCall),
          outputAndExitSeconds: seconds(lastCall, run.end),
        },
        peakRssMiB: Number(run.peakRssMiB.toFixed(1)),
        summary: plan.summary,
        matchesDrift: true,
        outputBytes: Buffer.byteLength(run.stdout),
      },
      aws: {
        calls: calls.length,
        mutatingCalls: mutating.length,
        readsPerObject,
        byService: callsByService(calls),
        budgets,
        maxRatioToRate: Math.max(...budgets.map((b) => b.ratioToRate)),
        maxRatioToBucket: Math.max(...budgets.map((b) => b.ratioToBucket)),
      },
      kubernetes: {
        user: PLAN_USER,
        userAgent: PLAN_AGENT,
        requests: requests.length,
        writes: writes.length,
        byVerbAndResource: kubeRequests,
      },
    };
  };
  const asUserRuns = await measure([]);
  // The image's NODE_OPTIONS apply when the image runs the command.
  const withImageFlags = await measure(imageNodeOptions().split(" ").filter(Boolean));
  result = {
    objects: {
      buckets: KINDS[0].count,
      queues: KINDS[1].count,
      instances: KINDS[2].count,
      total,
    },
    drift: {
      share,
      objects: drifted,
      made: Object.fromEntries(KINDS.map((k) => [k.kind, { count: driftCount(k), path: k.drifted }])),
    },
    awsLatencyMs: { mean: latency, jitter },
    estate: { convergeSeconds },
    ...asUserRuns,
    withImageFlags: {
      command: withImageFlags.command,
      wallSeconds: withImageFlags.plan.wallSeconds,
      peakRssMiB: withImageFlags.plan.peakRssMiB,
      summary: withImageFlags.plan.summary,
      awsCalls: withImageFlags.aws.calls,
      mutatingCalls: withImageFlags.aws.mutatingCalls,
      kubeRequests: withImageFlags.kubernetes.requests,
      kubeWrites: withImageFlags.kubernetes.writes,
    },
    machine: machineFacts(),
  };
} finally {
  await proxy.stop();
  await moto.stop();
  await cp.stop();
}
// Kept when the run failed: the operator's log and the audit log say why.
rmSync(work, { recursive: true, force: true });
writeResult(path.resolve(repoRoot, values.out), result);
