/**
 * `make bench-restart` and `make bench-failover`: how long the operator takes to act again after
 * it was down, and after its leader goes away. The operator runs as the image runs it (the
 * bundle with the image's V8 flags) against a real kube-apiserver and moto behind the latency
 * proxy (80 ± 40 ms per call); one JSON document is written to `bench/results/<name>.json`.
 *
 * restart: N buckets, N queues and M instances converge, with one user tag each; the operator is
 *   stopped (SIGTERM), every resource's user tag is removed directly in moto (drift), and a new
 *   operator process is started. Measured from its start: ready (/readyz), the first and the
 *   last drift repair (the proxy's count of PutBucketTagging, TagQueue and CreateTags calls).
 *   The steady poll is 5 minutes away, so what repairs the drift is the start itself.
 * failover: two operator processes with leader election (the default timings: lease 15 s,
 *   renew deadline 10 s, retry 2 s) over converged objects. The leader is stopped, gracefully
 *   (SIGTERM: it releases the Lease) and then, for the next leader, with SIGKILL (the Lease must
 *   expire); at that moment a new bucket is created. Measured from the stop: until the standby
 *   holds the Lease, and until the new bucket is Ready.
 *
 *   node bench/lifecycle/lifecycle.ts restart [--buckets 100] [--queues 100] [--instances 20]
 *   node bench/lifecycle/lifecycle.ts failover [--buckets 50] [--queues 50] [--instances 0]
 */
import { DeleteTagsCommand, DescribeInstancesCommand, EC2Client } from "@aws-sdk/client-ec2";
import { GetBucketTaggingCommand, PutBucketTaggingCommand, S3Client } from "@aws-sdk/client-s3";
import { GetQueueUrlCommand, SQSClient, UntagQueueCommand } from "@aws-sdk/client-sqs";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startAwsProxy, type AwsProxy } from "../../test/support/aws-proxy.ts";
import { startControlPlane, type ControlPlane } from "../../test/support/envtest.ts";
import { startMoto, type Moto } from "../../test/support/moto.ts";
import { startOperator, type OperatorProcess } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot, waitFor } from "../../test/support/process.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";
import { readyNames } from "../support/ready.ts";

const { values, positionals } = parseArgs({
  options: {
    buckets: { type: "string" },
    queues: { type: "string" },
    instances: { type: "string" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
  },
  allowPositionals: true,
});
const which = positionals[0] ?? "restart";
if (which !== "restart" && which !== "failover") throw new Error(`unknown benchmark ${which}`);
const defaults = which === "restart" ? [100, 100, 20] : [50, 50, 0];
const n = {
  buckets: Number(values.buckets ?? defaults[0]),
  queues: Number(values.queues ?? defaults[1]),
  instances: Number(values.instances ?? defaults[2]),
};
const NS = "bench";
const REGION = "us-east-1";
const TAG = { bench: which };
const log = (msg: string): void => {
  process.stderr.write(`[${which} ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

const KINDS = [
  {
    kind: "S3Bucket",
    plural: "s3buckets",
    count: n.buckets,
    spec: (name: string) => ({ bucketName: name, region: REGION, tags: TAG }),
  },
  {
    kind: "SqsQueue",
    plural: "sqsqueues",
    count: n.queues,
    spec: (name: string) => ({ queueName: name, region: REGION, tags: TAG }),
  },
  {
    kind: "Ec2Instance",
    plural: "ec2instances",
    count: n.instances,
    spec: () => ({ instanceType: "t3.micro", amiId: "ami-1e749f67", region: REGION, tags: TAG }),
  },
] as const;
type Kind = (typeof KINDS)[number];
const base = (plural: string): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`;
const nameOf = (k: Kind, i: number): string =>
  `${k.plural.slice(0, 3)}-${which}-${String(i).padStart(4, "0")}`;

async function readyCount(cp: ControlPlane, plural: string): Promise<number> {
  return (await readyNames(cp, base(plural))).length;
}

async function createAll(cp: ControlPlane): Promise<number> {
  const todo = KINDS.flatMap((k) => Array.from({ length: k.count }, (_, i) => ({ k, name: nameOf(k, i) })));
  await inParallel(todo, 16, async ({ k, name }) => {
    const res = await cp.request("POST", base(k.plural), {
      apiVersion: "compute.cloud.com/v1",
      kind: k.kind,
      metadata: { name },
      spec: k.spec(name),
    });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
  });
  return todo.length;
}

async function waitAllReady(cp: ControlPlane, total: number): Promise<void> {
  await waitFor(
    `${total} objects Ready`,
    async () => {
      let ready = 0;
      for (const k of KINDS) if (k.count > 0) ready += await readyCount(cp, k.plural);
      return ready === total;
    },
    900_000,
    1000,
  );
}

interface Env {
  cp: ControlPlane;
  moto: Moto;
  proxy: AwsProxy;
  dir: string;
  start(name: string, args?: string[]): Promise<OperatorProcess>;
}

async function withEnv(run: (env: Env) => Promise<unknown>): Promise<unknown> {
  const cp = await startControlPlane({ installCRDs: true });
  const moto = await startMoto();
  const latency = Number(values["latency-ms"]);
  const jitter = Number(values["jitter-ms"]);
  const proxy = await startAwsProxy(moto.endpoint, {
    latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), `kubeprovisioner-${which}-`));
  const running: OperatorProcess[] = [];
  try {
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    return await run({
      cp,
      moto,
      proxy,
      dir,
      start: async (name, args = []) => {
        const op = await startOperator({
          kubeconfig: cp.kubeconfigPath,
          env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
          dir,
          name,
          entry: "dist/kubeprovisioner.mjs",
          nodeArgs: imageNodeOptions().split(" ").filter(Boolean),
          args: ["--log-level=info", "--poll-interval=5m", ...args],
        });
        running.push(op);
        return op;
      },
    });
  } finally {
    for (const op of running) await op.stop().catch(() => undefined);
    await proxy.stop();
    await moto.stop();
    await cp.stop();
  }
}

const seconds = (from: number, to: number | undefined): number | undefined =>
  to === undefined ? undefined : (to - from) / 1000;

/** Removes the user tag of every resource directly in moto (not through the counting proxy). */
async function injectDrift(moto: Moto): Promise<void> {
  const config = {
    region: REGION,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  };
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const sqs = new SQSClient(config);
  const ec2 = new EC2Client(config);
  try {
    for (const k of KINDS) {
      for (let i = 0; i < k.count; i++) {
        const name = nameOf(k, i);
        if (k.kind === "S3Bucket") {
          const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket: name }))).TagSet ?? [];
          await s3.send(
            new PutBucketTaggingCommand({
              Bucket: name,
              Tagging: { TagSet: tags.filter((t) => t.Key !== "bench") },
            }),
          );
        } else if (k.kind === "SqsQueue") {
          const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
          await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["bench"] }));
        }
      }
      if (k.kind === "Ec2Instance" && k.count > 0) {
        const out = await ec2.send(
          new DescribeInstancesCommand({ Filters: [{ Name: "tag:bench", Values: [which] }] }),
        );
        const ids = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((x) => x.InstanceId ?? "");
        await ec2.send(new DeleteTagsCommand({ Resources: ids, Tags: [{ Key: "bench" }] }));
      }
    }
  } finally {
    s3.destroy();
    sqs.destroy();
    ec2.destroy();
  }
}

async function restart(env: Env): Promise<unknown> {
  const { cp, moto, proxy } = env;
  const first = await env.start("operator-1", ["--leader-elect=false"]);
  const total = await createAll(cp);
  await waitAllReady(cp, total);
  log(`${total} objects Ready; stopping the operator`);
  await first.stop();
  await injectDrift(moto);
  const repairs = (): number =>
    proxy.count("PutBucketTagging") + proxy.count("TagQueue") + proxy.count("CreateTags");
  const before = repairs();
  const calls0 = proxy.calls.length;
  log(`drift injected into ${total} resources; starting the operator again`);
  const t0 = Date.now();
  let firstRepair: number | undefined;
  const watcher = setInterval(() => {
    if (firstRepair === undefined && repairs() > before) firstRepair = Date.now();
  }, 50);
  await env.start("operator-2", ["--leader-elect=false"]);
  const ready = Date.now();
  await waitFor("every drift repaired", async () => repairs() - before >= total, 600_000, 50);
  const done = Date.now();
  clearInterval(watcher);
  const byOp: Record<string, number> = {};
  for (const c of proxy.calls.slice(calls0)) byOp[c.operation] = (byOp[c.operation] ?? 0) + 1;
  return {
    objects: { ...n, total },
    secondsFromStart: {
      ready: seconds(t0, ready),
      firstRepair: seconds(t0, firstRepair),
      allRepaired: seconds(t0, done),
    },
    awsCallsUntilRepaired: byOp,
  };
}

async function failover(env: Env): Promise<unknown> {
  const { cp } = env;
  const electionArgs = ["--leader-elect", `--leader-election-namespace=${NS}`, "--leader-election-id=bench"];
  const ops = new Map<string, OperatorProcess>();
  const add = async (name: string): Promise<void> => {
    const op = await env.start(name, electionArgs);
    ops.set(await op.identity(), op);
  };
  const holder = async (): Promise<string | undefined> => {
    const res = await cp.request("GET", `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/bench`);
    return (res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity;
  };
  await add("operator-a");
  await add("operator-b");
  await waitFor("a leader", async () => ops.has((await holder()) ?? ""), 60_000, 200);
  const total = await createAll(cp);
  await waitAllReady(cp, total);
  log(`${total} objects Ready`);
  const handover = async (how: "graceful" | "kill", probe: string): Promise<Record<string, unknown>> => {
    const leaderId = (await holder()) ?? "";
    const leader = ops.get(leaderId);
    if (leader === undefined) throw new Error(`the lease holder ${leaderId} is not one of ours`);
    const t0 = Date.now();
    if (how === "graceful") await leader.stop();
    else leader.kill();
    ops.delete(leaderId);
    const res = await cp.request("POST", base("s3buckets"), {
      apiVersion: "compute.cloud.com/v1",
      kind: "S3Bucket",
      metadata: { name: probe },
      spec: { bucketName: probe, region: REGION },
    });
    if (res.status !== 201) throw new Error(`create ${probe}: ${res.text}`);
    let leading: number | undefined;
    await waitFor(
      "a new leader",
      async () => {
        const h = await holder();
        if (h !== undefined && h !== "" && h !== leaderId && ops.has(h)) leading = Date.now();
        return leading !== undefined;
      },
      120_000,
      100,
    );
    await waitFor(
      `${probe} Ready`,
      async () => {
        const obj = (await cp.request("GET", `${base("s3buckets")}/${probe}`)).body as {
          status?: { conditions?: { type: string; status: string }[] };
        };
        return obj.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
      },
      120_000,
      100,
    );
    const ready = Date.now();
    log(`${how}: leader after ${seconds(t0, leading)} s, new object Ready after ${seconds(t0, ready)} s`);
    return { secondsToNewLeader: seconds(t0, leading), secondsToNewObjectReady: seconds(t0, ready) };
  };
  const graceful = await handover("graceful", "bkt-failover-graceful");
  await add("operator-c");
  const killed = await handover("kill", "bkt-failover-kill");
  return {
    objects: { ...n, total },
    leaderElection: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
    graceful,
    sigkill: killed,
  };
}

const measured = await withEnv(which === "restart" ? restart : failover);
const result = {
  ...(measured as Record<string, unknown>),
  awsLatencyMs: { mean: Number(values["latency-ms"]), jitter: Number(values["jitter-ms"]) },
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    node: process.version,
    loadavg: os.loadavg(),
  },
};
const out = path.join(repoRoot, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, `${which}.json`), JSON.stringify(result, null, 2) + "\n");
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
