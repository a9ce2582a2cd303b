/**
 * Scale benchmark: the operator (the image's bundle by default) converges many S3Buckets,
 * SqsQueues and Ec2Instances against a real kube-apiserver and moto behind a proxy that adds AWS
 * latency, then sits idle through poll rounds. One JSON document on stdout:
 *
 * - converge: time until every object is Ready, p50/p99 of create -> Ready, peak RSS, operator
 *   CPU seconds, AWS calls by operation, Kubernetes requests by verb and resource (from the API
 *   server's audit log, the operator's own user only);
 * - idle: over `--idle` seconds after converging, Kubernetes writes, AWS calls per object per
 *   poll round, CPU and RSS (sampled every second, so a chart can show RSS over time).
 *
 *   node bench/scale/scale.ts --buckets 1000 --queues 1000 --instances 150 \
 *     [--latency-ms 80 --jitter-ms 40] [--poll 60] [--idle 120] [--entry dist/kubeprovisioner.mjs] \
 *     [--args=--max-concurrent-reconciles=16] [--node-args=--max-semi-space-size=1] [--ec2-throttle]
 *
 * `--ec2-throttle` puts AWS's EC2 throttling buckets (test/support/ec2-throttle.ts) in the proxy
 * and reports the calls they refused.
 */
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startAwsProxy } from "../../test/support/aws-proxy.ts";
import { Ec2Throttle } from "../../test/support/ec2-throttle.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { childPid, procStats, type ProcStats } from "../support/proc-stats.ts";
import { readyNames } from "../support/ready.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "100" },
    queues: { type: "string", default: "100" },
    instances: { type: "string", default: "20" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    poll: { type: "string", default: "60" },
    idle: { type: "string", default: "0" },
    entry: { type: "string", default: "dist/kubeprovisioner.mjs" },
    args: { type: "string", default: "" },
    "node-args": { type: "string", default: "" },
    timeout: { type: "string", default: "1800" },
    "ec2-throttle": { type: "boolean", default: false },
  },
});
const n = {
  buckets: Number(values.buckets),
  queues: Number(values.queues),
  instances: Number(values.instances),
};
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);
const pollSeconds = Number(values.poll);
const operatorUser = "kubeprovisioner-bench-operator";

const KINDS = [
  {
    kind: "S3Bucket",
    plural: "s3buckets",
    count: n.buckets,
    spec: (name: string) => ({ bucketName: name, region: "us-east-1", tags: { bench: "scale" } }),
  },
  {
    kind: "SqsQueue",
    plural: "sqsqueues",
    count: n.queues,
    spec: (name: string) => ({ queueName: name, region: "us-east-1", tags: { bench: "scale" } }),
  },
  {
    kind: "Ec2Instance",
    plural: "ec2instances",
    count: n.instances,
    spec: () => ({ instanceType: "t3.micro", amiId: "ami-1e749f67", region: "us-east-1" }),
  },
] as const;
const NS = "bench";
const base = (plural: string): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`;

const log = (msg: string): void => {
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-scale-"));
const policy = path.join(work, "audit-policy.yaml");
writeFileSync(
  policy,
  JSON.stringify({
    apiVersion: "audit.k8s.io/v1",
    kind: "Policy",
    omitStages: ["RequestReceived", "ResponseStarted"],
    rules: [{ level: "Metadata", users: [operatorUser] }, { level: "None" }],
  }),
);
const auditLog = path.join(work, "audit.log");

/** Kubernetes requests of the operator's user by `verb resource[/subresource]`, after `from` characters. */
function auditCounts(from: number): { counts: Record<string, number>; writes: number; size: number } {
  let text: string;
  try {
    text = readFileSync(auditLog, "utf8");
  } catch {
    return { counts: {}, writes: 0, size: 0 };
  }
  const counts: Record<string, number> = {};
  let writes = 0;
  for (const line of text.slice(from).split("\n")) {
    if (line === "") continue;
    const ev = JSON.parse(line) as {
      user?: { username?: string };
      verb?: string;
      objectRef?: { resource?: string; subresource?: string };
    };
    if (ev.user?.username !== operatorUser) continue;
    const res = ev.objectRef?.resource ?? "(none)";
    const key = `${ev.verb} ${res}${ev.objectRef?.subresource ? `/${ev.objectRef.subresource}` : ""}`;
    counts[key] = (counts[key] ?? 0) + 1;
    if (["create", "update", "patch", "delete", "deletecollection"].includes(ev.verb ?? "")) writes++;
  }
  // An offset into the text as read (UTF-16 units), not bytes: the log holds non-ASCII text.
  return { counts, writes, size: text.length };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const cp = await startControlPlane({
  installCRDs: true,
  apiServerFlags: [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${auditLog}`,
    "--audit-log-format=json",
  ],
});
const moto = await startMoto();
const throttle = values["ec2-throttle"] ? new Ec2Throttle() : undefined;
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
  ...(throttle !== undefined ? { gate: throttle.gate } : {}),
});
await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
const kubeconfig = cp.writeKubeConfig(cp.userKubeConfig(operatorUser, ["system:masters"]), "bench-operator");

const samples: { t: number; rssMiB: number; cpuSeconds: number }[] = [];
let result: Record<string, unknown> | undefined;
try {
  const op = await startOperator({
    kubeconfig,
    env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
    dir: work,
    entry: values.entry,
    nodeArgs: values["node-args"].split(" ").filter(Boolean),
    args: [
      "--log-level=info",
      "--leader-elect=false",
      `--poll-interval=${pollSeconds}s`,
      ...values.args.split(" ").filter(Boolean),
    ],
  });
  const pid = childPid(op.process.proc.pid ?? 0, path.basename(values.entry));
  const t0 = Date.now();
  const sampler = setInterval(() => {
    try {
      const s = procStats(pid);
      samples.push({ t: (Date.now() - t0) / 1000, rssMiB: s.rssMiB, cpuSeconds: s.cpuSeconds });
    } catch {
      /* the process is gone */
    }
  }, 1000);
  const atStart: ProcStats = procStats(pid);
  const audit0 = auditCounts(0);
  const calls0 = proxy.calls.length;
  log(
    `operator ready: ${atStart.rssMiB.toFixed(1)} MiB RSS; creating ${n.buckets} buckets, ${n.queues} queues, ${n.instances} instances`,
  );

  const created = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const todo = KINDS.flatMap((k) =>
    Array.from({ length: k.count }, (_, i) => ({
      k,
      name: `${k.plural.slice(0, 3)}-scale-${String(i).padStart(5, "0")}`,
    })),
  );
  // Interleave the kinds, as a mixed apply would.
  todo.sort((a, b) => a.name.slice(-5).localeCompare(b.name.slice(-5)));
  const createStart = Date.now();
  const creating = inParallel(todo, 16, async ({ k, name }) => {
    const res = await cp.request("POST", base(k.plural), {
      apiVersion: "compute.cloud.com/v1",
      kind: k.kind,
      metadata: { name },
      spec: k.spec(name),
    });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
    created.set(`${k.plural}/${name}`, Date.now());
  });
  const total = todo.length;
  const deadline = Date.now() + Number(values.timeout) * 1000;
  let createdAll = false;
  void creating.then(() => {
    createdAll = true;
    log(`all ${total} created in ${((Date.now() - createStart) / 1000).toFixed(1)} s`);
  });
  while (readyAt.size < total) {
    if (Date.now() > deadline)
      throw new Error(`only ${readyAt.size}/${total} Ready after ${values.timeout} s`);
    await new Promise((r) => setTimeout(r, 500));
    for (const k of KINDS) {
      if (k.count === 0) continue;
      const now = Date.now();
      for (const name of await readyNames(cp, base(k.plural)))
        if (!readyAt.has(`${k.plural}/${name}`)) readyAt.set(`${k.plural}/${name}`, now);
    }
    if (samples.length % 10 === 0)
      log(`${readyAt.size}/${total} Ready${createdAll ? "" : " (still creating)"}`);
  }
  await creating;
  const convergeSeconds = (Date.now() - createStart) / 1000;
  const atReady = procStats(pid);
  const heapMiB = async (): Promise<Record<string, number>> => ({
    heapUsed: (await op.metric("nodejs_heap_size_used_bytes")) / 2 ** 20,
    heapTotal: (await op.metric("nodejs_heap_size_total_bytes")) / 2 ** 20,
    external: (await op.metric("nodejs_external_memory_bytes")) / 2 ** 20,
  });
  const heapAtReady = await heapMiB();
  const latencies = [...readyAt]
    .map(([key, at]) => (at - (created.get(key) ?? at)) / 1000)
    .sort((a, b) => a - b);
  const converge = {
    seconds: convergeSeconds,
    applyToReadySeconds: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) },
    rssMiB: atReady.rssMiB,
    peakRssMiB: atReady.peakRssMiB,
    heapMiB: heapAtReady,
    cpuSeconds: atReady.cpuSeconds - atStart.cpuSeconds,
    cpuMsPerObject: ((atReady.cpuSeconds - atStart.cpuSeconds) * 1000) / total,
    awsCalls: byOperation(proxy.calls.slice(calls0)),
    awsCallsPerObject: perKind(proxy.calls.slice(calls0)),
    kubeRequests: auditCounts(audit0.size).counts,
    ...(throttle !== undefined ? { refusedByEc2Throttling: Object.fromEntries(throttle.refused) } : {}),
  };
  log(
    `converged in ${convergeSeconds.toFixed(1)} s; RSS ${atReady.rssMiB.toFixed(1)} MiB (peak ${atReady.peakRssMiB.toFixed(1)})`,
  );

  let idle: Record<string, unknown> | undefined;
  const idleSeconds = Number(values.idle);
  if (idleSeconds > 0) {
    const audit1 = auditCounts(0);
    const calls1 = proxy.calls.length;
    const s1 = procStats(pid);
    const idleStart = Date.now();
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const s2 = procStats(pid);
    const rounds = (Date.now() - idleStart) / 1000 / pollSeconds;
    const idleCalls = proxy.calls.slice(calls1);
    const audit2 = auditCounts(audit1.size);
    idle = {
      seconds: idleSeconds,
      pollIntervalSeconds: pollSeconds,
      kubeWrites: audit2.writes,
      kubeRequests: audit2.counts,
      awsCalls: byOperation(idleCalls),
      awsCallsPerObjectPerPoll: Object.fromEntries(
        Object.entries(perKindCounts(idleCalls)).map(([kind, c]) => [
          kind,
          c / rounds / (kindCount(kind) || 1),
        ]),
      ),
      cpuMsPerObjectPerPoll: ((s2.cpuSeconds - s1.cpuSeconds) * 1000) / rounds / total,
      rssMiB: { start: s1.rssMiB, end: s2.rssMiB, peak: s2.peakRssMiB },
      heapMiB: await heapMiB(),
    };
    log(
      `idle ${idleSeconds} s: ${audit2.writes} Kubernetes writes, RSS ${s1.rssMiB.toFixed(1)} -> ${s2.rssMiB.toFixed(1)} MiB`,
    );
  }
  clearInterval(sampler);
  result = {
    objects: { ...n, total },
    awsLatencyMs: { mean: latency, jitter },
    entry: values.entry,
    operatorArgs: values.args,
    nodeArgs: values["node-args"],
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      loadavg: os.loadavg(),
    },
    idleRssBeforeObjectsMiB: atStart.rssMiB,
    converge,
    ...(idle !== undefined ? { idle } : {}),
    samples,
  };
  await op.stop();
} finally {
  await proxy.stop();
  await moto.stop();
  await cp.stop();
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");

function byOperation(calls: readonly { operation: string; status: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.operation] = (out[c.operation] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}

/** The kind an AWS operation serves: EC2 and SQS operations name their service's nouns. */
function kindOf(operation: string): string {
  if (/Queue|Message/.test(operation)) return "SqsQueue";
  if (/Bucket|Object/.test(operation)) return "S3Bucket";
  return "Ec2Instance";
}
function perKindCounts(calls: readonly { operation: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[kindOf(c.operation)] = (out[kindOf(c.operation)] ?? 0) + 1;
  return out;
}
function kindCount(kind: string): number {
  return KINDS.find((k) => k.kind === kind)?.count ?? 0;
}
function perKind(calls: readonly { operation: string }[]): Record<string, number> {
  return Object.fromEntries(
    Object.entries(perKindCounts(calls)).map(([kind, c]) => [kind, c / (kindCount(kind) || 1)]),
  );
}
