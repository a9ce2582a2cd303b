/**
 * `make bench-scale-steady`: a large estate past the S3 read budget. The operator (the image's
 * bundle and V8 flags) runs inside a memory cgroup limited to `--memory-limit` MiB, so it sizes
 * its heap ceiling from that limit at start (src/heap/ceiling.ts), as in a pod.
 *
 * 1. Converge: `--buckets` S3Buckets and `--queues` SqsQueues (and `--instances` Ec2Instances)
 *    are created with generous budgets (`--create-budgets`), so the estate is there in minutes.
 *    Measured: time, peak RSS, V8 heap in use before any object and after, at rest.
 * 2. Steady: the operator restarts with the S3 budget cut (`--steady-budgets`, default
 *    s3=10/10), so steady polling alone needs more than the budget. AWS sits behind the latency
 *    proxy, which also keeps an S3 token bucket of the same rate (burst `--aws-burst`) and
 *    answers SlowDown when it is empty: a call the client's budget let through too early is
 *    counted as a throttling error. After `--new-after` seconds, `--new-buckets` new buckets are
 *    created; the time until all are Ready is compared with their rate-budget bound. Over the
 *    whole `--steady` window: operator CPU per object polled, with the AWS SDK's share (a V8
 *    CPU profile of the steady operator, each sample's function mapped through the source map
 *    of its own script, entry point or chunk, to its package: bench/support/cpu-profile.ts; the
 *    bundle needs its source maps, as `make bundle` writes them), the poll
 *    rate per kind, hence the effective poll interval, and the operator's own
 *    `kubeprovisioner_poll_interval_effective_seconds` where it exports it.
 *
 * `--passes a,b` runs the steady phase once per name, restarting the operator each time (the
 * estate stays); with `--wait-for FILE` the last pass starts only once FILE exists, for instance
 * after the bundle was rebuilt from another revision.
 *
 *   node bench/scale/steady.ts [--buckets 10000 --queues 10000 --instances 0] [--steady 600]
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startAwsProxy } from "../../test/support/aws-proxy.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator, type OperatorProcess } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot } from "../../test/support/process.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";
import { memoryCgroup } from "../support/memory-cgroup.ts";
import { childPid, procStats } from "../support/proc-stats.ts";
import { busyShares, longestProfile } from "../support/cpu-profile.ts";
import { linkedSourceMap } from "../support/source-map.ts";
import { lineChart } from "../support/svg-chart.ts";
import { readyNames } from "../support/ready.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "10000" },
    queues: { type: "string", default: "10000" },
    instances: { type: "string", default: "0" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    poll: { type: "string", default: "300" },
    "create-budgets": { type: "string", default: "s3=200/400,sqs=200/400" },
    "steady-budgets": { type: "string", default: "s3=10/10" },
    "aws-rate": { type: "string", default: "10" },
    "aws-burst": { type: "string", default: "12" },
    steady: { type: "string", default: "600" },
    "new-buckets": { type: "string", default: "200" },
    "new-after": { type: "string", default: "60" },
    "memory-limit": { type: "string", default: "1024" },
    entry: { type: "string", default: "dist/kubeprovisioner.mjs" },
    "node-args": { type: "string", default: imageNodeOptions() },
    args: { type: "string", default: "" },
    "wait-for": { type: "string", default: "" },
    passes: { type: "string", default: "steady" },
    out: { type: "string", default: "scale-20k" },
  },
});
const n = {
  buckets: Number(values.buckets),
  queues: Number(values.queues),
  instances: Number(values.instances),
};
const total = n.buckets + n.queues + n.instances;
const REGION = "us-east-1";
const NS = "bench";
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);
const steadySeconds = Number(values.steady);
const newBuckets = Number(values["new-buckets"]);
const limitMiB = Number(values["memory-limit"]);
const awsRate = Number(values["aws-rate"]);
const awsBurst = Number(values["aws-burst"]);
const steadyBudget = /s3=(\d+(?:\.\d+)?)\/(\d+)/.exec(values["steady-budgets"]);
const s3Rate = Number(steadyBudget?.[1] ?? 10);
const s3Burst = Number(steadyBudget?.[2] ?? 10);

const log = (msg: string): void => {
  process.stderr.write(`[steady ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;
const base = (plural: string): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`;
const MiB = 2 ** 20;

const cg = memoryCgroup(`kp-bench-steady-${process.pid}`, limitMiB);
const cgRead = cg.read;

// --- an S3 token bucket in the proxy: AWS's answer to a client that goes faster than the budget
let gateOn = false;
let tokens = awsBurst;
let refilled = Date.now();
const refused: Record<string, number> = {};
const S3_OPS = /Bucket|Object|^ListBuckets$/;
function gate(operation: string): "forward" | "throttle" {
  if (!gateOn || !S3_OPS.test(operation)) return "forward";
  const now = Date.now();
  tokens = Math.min(awsBurst, tokens + ((now - refilled) / 1000) * awsRate);
  refilled = now;
  if (tokens >= 1) {
    tokens -= 1;
    return "forward";
  }
  refused[operation] = (refused[operation] ?? 0) + 1;
  return "throttle";
}

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-steady-"));
const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
  gate,
});
await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
const kubeconfig = cp.writeKubeConfig(
  cp.userKubeConfig("kubeprovisioner-bench", ["system:masters"]),
  "bench",
);

let op: OperatorProcess | undefined;
let starts = 0;
/** Starts the operator inside the cgroup: this process joins it for the spawn, then leaves. */
async function start(
  budgets: string,
  nodeExtra: string[],
  entry = values.entry,
): Promise<{ op: OperatorProcess; pid: number }> {
  starts++;
  const o = await cg.inside(() =>
    startOperator({
      kubeconfig,
      env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: work,
      name: `operator-${starts}`,
      entry,
      nodeArgs: [...values["node-args"].split(" ").filter(Boolean), ...nodeExtra],
      waitReady: false,
      args: [
        "--log-level=info",
        "--leader-elect=false",
        `--poll-interval=${values.poll}s`,
        `--aws-rate-budgets=${budgets}`,
        ...values.args.split(" ").filter(Boolean),
      ],
    }),
  );
  await o.waitReady(120_000);
  op = o;
  return { op: o, pid: childPid(o.process.proc.pid ?? 0, entry) };
}
const heapUsedMiB = async (o: OperatorProcess): Promise<number> =>
  round((await o.metric("nodejs_heap_size_used_bytes")) / MiB, 1);
async function ready(o: OperatorProcess, kind: string): Promise<number> {
  return o.metric("kubeprovisioner_managed_resources", { kind, ready: "True" });
}
async function effectiveInterval(o: OperatorProcess): Promise<Record<string, number> | string> {
  try {
    const out: Record<string, number> = {};
    for (const kind of ["S3Bucket", "SqsQueue"])
      out[kind] = round(await o.metric("kubeprovisioner_poll_interval_effective_seconds", { kind }), 1);
    return out;
  } catch {
    return "not exported by this build";
  }
}

/**
 * A copy of the bundle for one pass (the entry point, its chunks, their source maps, and the
 * package.json the operator reads its version from, laid out as in the image), so that a
 * rebuild of dist/ during the pass neither changes the code that runs nor the maps its CPU
 * profile is read through. Another entry (sources, tsc output) runs where it is.
 */
function snapshotBundle(dest: string): string {
  const entry = path.resolve(repoRoot, values.entry);
  if (!entry.endsWith(".mjs")) return entry;
  const dist = path.join(dest, "dist");
  mkdirSync(dist, { recursive: true });
  cpSync(path.join(repoRoot, "package.json"), path.join(dest, "package.json"));
  for (const f of [entry, `${entry}.map`]) if (existsSync(f)) cpSync(f, path.join(dist, path.basename(f)));
  const chunks = path.join(path.dirname(entry), "chunks");
  if (existsSync(chunks)) cpSync(chunks, path.join(dist, "chunks"), { recursive: true });
  return path.join(dist, path.basename(entry));
}

/** Microseconds of the monotonic clock, as V8's CPU profiles count time. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * The split of the steady operator's busy CPU samples (bench/support/cpu-profile.ts), over the
 * same window as its CPU time, each frame read through the source map of its own script.
 */
function cpuSplit(
  profDir: string,
  entry: string,
  window: { fromUs: number; toUs: number },
): { cpuBusySamplesPercent: Record<string, number> | string; cpuProfile?: Record<string, unknown> } {
  const prof = longestProfile(profDir);
  if (prof === undefined) return { cpuBusySamplesPercent: "no profile written" };
  if (entry.endsWith(".mjs") && linkedSourceMap(entry) === undefined)
    return { cpuBusySamplesPercent: `${values.entry} has no source map: build it with make bundle` };
  const { startTime, endTime } = prof.profile;
  // The profile's clock is this process's monotonic clock; a window outside it is not read.
  const inside = window.fromUs >= startTime && window.toUs <= endTime;
  const s = busyShares(prof.profile, { root: repoRoot, ...(inside ? { window } : {}) });
  return {
    cpuBusySamplesPercent: s.percent,
    cpuProfile: {
      samples: inside ? "the steady window" : "the whole profile (its clock is not this process's)",
      profileSeconds: round((endTime - startTime) / 1e6, 1),
      busySamples: s.busySamples,
      topPackagesPercent: s.topPackages,
    },
  };
}

const samples: { t: number; phase: string; rssMiB: number; cgroupMiB: number }[] = [];
const t00 = Date.now();
let phase = "converge";
let sampledPid = 0;
const sampler = setInterval(() => {
  try {
    const s = procStats(sampledPid);
    samples.push({
      t: round((Date.now() - t00) / 1000, 0),
      phase,
      rssMiB: round(s.rssMiB, 1),
      cgroupMiB: round(cgRead("memory.usage_in_bytes") / MiB, 1),
    });
  } catch {
    /* between operators */
  }
}, 5000);

let result: Record<string, unknown> | undefined;
try {
  // --- 1. converge with generous budgets
  let { op: o, pid } = await start(values["create-budgets"], []);
  sampledPid = pid;
  const startLine = await o.waitForLog("starting");
  await sleep(5000);
  const atZero = { rssMiB: round(procStats(pid).rssMiB, 1), heapUsedMiB: await heapUsedMiB(o) };
  log(
    `operator ready in a ${limitMiB} MiB cgroup: heap ${JSON.stringify(startLine.heap)}; creating ${total} objects`,
  );
  const todo = [
    ...Array.from({ length: n.buckets }, (_, i) => ({
      plural: "s3buckets",
      kind: "S3Bucket",
      name: `b-${String(i).padStart(5, "0")}`,
      spec: (nm: string) => ({ bucketName: nm, region: REGION, tags: { bench: "steady" } }),
    })),
    ...Array.from({ length: n.queues }, (_, i) => ({
      plural: "sqsqueues",
      kind: "SqsQueue",
      name: `q-${String(i).padStart(5, "0")}`,
      spec: (nm: string) => ({ queueName: nm, region: REGION, tags: { bench: "steady" } }),
    })),
    ...Array.from({ length: n.instances }, (_, i) => ({
      plural: "ec2instances",
      kind: "Ec2Instance",
      name: `i-${String(i).padStart(5, "0")}`,
      spec: () => ({ instanceType: "t3.micro", amiId: "ami-1e749f67", region: REGION }),
    })),
  ].sort((a, b) => a.name.slice(-5).localeCompare(b.name.slice(-5)));
  const t0 = Date.now();
  const cpu0 = procStats(pid).cpuSeconds;
  const creating = inParallel(todo, 16, async (t) => {
    const res = await cp.request("POST", base(t.plural), {
      apiVersion: "compute.cloud.com/v1",
      kind: t.kind,
      metadata: { name: t.name },
      spec: t.spec(t.name),
    });
    if (res.status !== 201) throw new Error(`create ${t.name}: ${res.status} ${res.text}`);
  });
  for (;;) {
    await sleep(5000);
    const r =
      (await ready(o, "S3Bucket")) +
      (await ready(o, "SqsQueue")) +
      (n.instances > 0 ? await ready(o, "Ec2Instance") : 0);
    log(`${r}/${total} Ready`);
    if (r >= total) break;
    if (Date.now() - t0 > 3600_000) throw new Error(`only ${r}/${total} Ready after an hour`);
  }
  await creating;
  const convergeSeconds = (Date.now() - t0) / 1000;
  const convergeCpu = procStats(pid).cpuSeconds - cpu0;
  await sleep(30_000);
  const s = procStats(pid);
  const converge = {
    seconds: round(convergeSeconds, 1),
    cpuMsPerObject: round((convergeCpu * 1000) / total),
    peakRssMiB: round(s.peakRssMiB, 1),
    rssAtRestMiB: round(s.rssMiB, 1),
    cgroupPeakMiB: round(cgRead("memory.max_usage_in_bytes") / MiB, 1),
    heapUsedAtRestMiB: await heapUsedMiB(o),
    heapTotalAtRestMiB: round((await o.metric("nodejs_heap_size_total_bytes")) / MiB, 1),
  };
  const perThousand = {
    heapUsedMiB: round(((converge.heapUsedAtRestMiB - atZero.heapUsedMiB) * 1000) / total),
    rssAtRestMiB: round(((converge.rssAtRestMiB - atZero.rssMiB) * 1000) / total),
    peakRssMiB: round(((converge.peakRssMiB - atZero.rssMiB) * 1000) / total),
  };
  log(`converged in ${converge.seconds} s: ${JSON.stringify(converge)}`);

  // --- 2. steady, S3 budget cut, once per pass (a restart each: the estate stays)
  const passes = values.passes.split(",");
  const steadyPasses: Record<string, unknown>[] = [];
  for (const [p, label] of passes.entries()) {
    if (values["wait-for"] !== "" && p === passes.length - 1) {
      log(`waiting for ${values["wait-for"]}`);
      while (!existsSync(values["wait-for"])) await sleep(5000);
    }
    phase = `steady ${label}`;
    await o.stop();
    const profDir = path.join(work, `prof-${p}`);
    mkdirSync(profDir, { recursive: true });
    gateOn = true;
    const calls0 = proxy.calls.length;
    // A V8 CPU profile of the steady operator (1 ms sampling), written when it exits, of the
    // bundle as it was when the pass started.
    const entry = snapshotBundle(path.join(work, `bundle-${p}`));
    ({ op: o, pid } = await start(
      values["steady-budgets"],
      ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=1000"],
      entry,
    ));
    sampledPid = pid;
    const steadyStart = Date.now();
    const cpuS0 = procStats(pid).cpuSeconds;
    const steadyFromUs = monotonicUs();
    log(
      `steady with ${values["steady-budgets"]}: ${steadySeconds} s, ${newBuckets} new buckets after ${values["new-after"]} s`,
    );
    await sleep(Number(values["new-after"]) * 1000);
    const newStart = Date.now();
    const cpuBeforeNew = procStats(pid).cpuSeconds;
    const callsBeforeNew = proxy.calls.length;
    const readyNew = new Map<string, number>();
    await inParallel(
      Array.from({ length: newBuckets }, (_, i) => `nb${p}-${String(i).padStart(5, "0")}`),
      16,
      async (name) => {
        const res = await cp.request("POST", base("s3buckets"), {
          apiVersion: "compute.cloud.com/v1",
          kind: "S3Bucket",
          metadata: { name, labels: { "bench-phase": `new-${p}` } },
          spec: { bucketName: name, region: REGION, tags: { bench: "steady" } },
        });
        if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
      },
    );
    const createdNewSeconds = (Date.now() - newStart) / 1000;
    while (readyNew.size < newBuckets) {
      await sleep(1000);
      for (const name of await readyNames(cp, `${base("s3buckets")}?labelSelector=bench-phase%3Dnew-${p}`))
        if (!readyNew.has(name)) readyNew.set(name, Date.now());
      if (Date.now() - newStart > steadySeconds * 1000 + 600_000) break;
    }
    const newSeconds = (Math.max(...readyNew.values()) - newStart) / 1000;
    const newCalls = proxy.calls
      .slice(callsBeforeNew)
      .filter((c) => /^(HeadBucket|CreateBucket|PutBucketTagging)$/.test(c.operation));
    // Their own calls: HeadBucket (absent), CreateBucket, PutBucketTagging, each on the cut budget.
    const newBound = Math.max(0, newBuckets * 3 - s3Burst) / s3Rate;
    const remaining = steadyStart + steadySeconds * 1000 - Date.now();
    if (remaining > 0) await sleep(remaining);
    const steadyElapsed = (Date.now() - steadyStart) / 1000;
    const cpuSteady = procStats(pid).cpuSeconds - cpuS0;
    const steadyToUs = monotonicUs();
    const steadyCalls = proxy.calls.slice(calls0);
    const count = (op: string): number => steadyCalls.filter((c) => c.operation === op).length;
    // One poll of a bucket reads its tags once, one of a queue its tags once.
    const bucketPolls = count("GetBucketTagging");
    const queuePolls = count("ListQueueTags");
    const objectsPolled = bucketPolls + queuePolls;
    const effective = await effectiveInterval(o);
    const sNow = procStats(pid);
    // From the new buckets' creation on: the restart's first observation of every object is real
    // work, so only once it is done do the polls alone read the estate.
    const afterNew = proxy.calls.slice(callsBeforeNew);
    const afterNewSeconds = (Date.now() - newStart) / 1000;
    const steady = {
      label,
      revision: execFileSync("git", ["-C", repoRoot, "log", "-1", "--format=%h %s"], {
        encoding: "utf8",
      }).trim(),
      loadavg: os.loadavg(),
      seconds: round(steadyElapsed, 1),
      budgets: values["steady-budgets"],
      operatorArgs: values.args,
      awsCalls: Object.fromEntries(
        Object.entries(
          steadyCalls.reduce<Record<string, number>>(
            (a, c) => ((a[c.operation] = (a[c.operation] ?? 0) + 1), a),
            {},
          ),
        ).sort((a, b) => b[1] - a[1]),
      ),
      s3CallsPerSecond: round(steadyCalls.filter((c) => S3_OPS.test(c.operation)).length / steadyElapsed),
      pollsPerSecond: {
        S3Bucket: round(bucketPolls / steadyElapsed),
        SqsQueue: round(queuePolls / steadyElapsed),
      },
      effectivePollIntervalSeconds: {
        measured: {
          S3Bucket: round((n.buckets + (p + 1) * newBuckets) / (bucketPolls / steadyElapsed), 0),
          SqsQueue: round(n.queues / (queuePolls / steadyElapsed), 0),
        },
        afterNewBuckets: {
          S3Bucket: round(
            (n.buckets + (p + 1) * newBuckets) /
              (afterNew.filter((c) => c.operation === "GetBucketTagging").length / afterNewSeconds),
            0,
          ),
          SqsQueue: round(
            n.queues / (afterNew.filter((c) => c.operation === "ListQueueTags").length / afterNewSeconds),
            0,
          ),
        },
        operatorMetric: effective,
      },
      cpu: {
        seconds: round(cpuSteady, 1),
        msPerObjectPolled: round((cpuSteady * 1000) / objectsPolled, 2),
      },
      throttlingErrors: Object.values(refused).reduce((a, b) => a + b, 0),
      refusedByOperation: refused,
      newBuckets: {
        count: newBuckets,
        ready: readyNew.size,
        createdThroughApiSeconds: round(createdNewSeconds, 1),
        allReadySeconds: round(newSeconds, 1),
        boundSeconds: round(newBound, 1),
        ratioToBound: round(newSeconds / newBound),
        ownCalls: newCalls.length,
        cpuSecondsMeanwhile: round(procStats(pid).cpuSeconds - cpuBeforeNew, 1),
      },
      rssMiB: round(sNow.rssMiB, 1),
      peakRssMiB: round(sNow.peakRssMiB, 1),
      heapUsedMiB: await heapUsedMiB(o),
    };
    log(`steady: ${JSON.stringify(steady)}`);
    await o.stop();
    steadyPasses.push({ ...steady, ...cpuSplit(profDir, entry, { fromUs: steadyFromUs, toUs: steadyToUs }) });
  }
  phase = "done";
  clearInterval(sampler);
  result = {
    objects: { ...n, total },
    awsLatencyMs: { mean: latency, jitter },
    entry: values.entry,
    nodeArgs: values["node-args"],
    pollInterval: `${values.poll}s`,
    cgroup: {
      memoryLimitMiB: limitMiB,
      peakMiB: round(cgRead("memory.max_usage_in_bytes") / MiB, 1),
      failcnt: cgRead("memory.failcnt"),
    },
    heapSizing: startLine.heap,
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      loadavgEnd: os.loadavg(),
    },
    atZeroObjects: atZero,
    converge,
    perThousandObjects: perThousand,
    steady: steadyPasses,
    samples,
  };
} finally {
  clearInterval(sampler);
  await op?.stop().catch(() => undefined);
  await proxy.stop();
  await moto.stop();
  await cp.stop();
  cg.remove();
}
const results = path.join(repoRoot, "bench/results");
writeFileSync(
  path.join(results, `${values.out}.json`),
  JSON.stringify({ ...result, samples: undefined }, null, 2) + "\n",
);
writeFileSync(
  path.join(results, `${values.out}-memory.svg`),
  lineChart({
    title: `Operator memory, ${total} objects: converge, then steady polling at the cut S3 budget`,
    xLabel: "seconds",
    yLabel: "MiB",
    series: [
      { name: "RSS", points: samples.map((s) => [s.t, s.rssMiB] as const) },
      {
        name: `cgroup usage (limit ${limitMiB} MiB)`,
        points: samples.map((s) => [s.t, s.cgroupMiB] as const),
      },
    ],
  }),
);
