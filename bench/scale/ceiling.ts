/**
 * `make bench-ceiling`: an estate at twice the old heap ceiling, in the old pod and in one whose
 * memory limit is raised. The operator (the image's bundle and V8 flags) runs inside a memory
 * cgroup (../support/memory-cgroup.ts), as in a pod.
 *
 * The estate is `--objects` objects, half S3Buckets and half SqsQueues, every one paused
 * (`compute.cloud.com/paused: "true"`): a paused object makes no AWS call, so the estate needs
 * no converge against moto, and its cached copy is as large as a converged object's (what the
 * operator holds beyond the copy for an object it polls, a paused one lacks). Each is
 * created through the API server with the status a real converged-then-paused object has: two
 * templates (`b-00000`, `q-00000`, tags as the 20,000-object run's) are converged against moto
 * by the operator, then paused, and their status and finalizer are copied onto every other
 * object with its own names. A paused object whose status says so already is written nothing by
 * the operator: the run counts its Kubernetes writes to show it.
 *
 * A. The old configuration: `--max-old-space-size=--old-heap-mib` in a `--old-limit-mib` cgroup.
 *    Recorded: how it ends (the start check's refusal, heap out of memory, the OOM killer), its
 *    exit code, the time to exit, its last words; started `--old-starts` times, as a kubelet
 *    restarts a container that exited.
 * B. The limit raised to `--new-limit-mib`, no heap flag: the ceiling comes from the cgroup. It
 *    must list every object, pass the start check and keep running for `--hold` seconds, during
 *    which `--new-buckets` unpaused S3Buckets are created and must become Ready (moto, behind
 *    80 ± 40 ms of latency). Recorded: the ceiling of its `starting` line, the time to list,
 *    heap used and total, RSS, the cgroup's peak and failcnt, writes, AWS calls, restarts.
 *
 *   node bench/scale/ceiling.ts [--objects 92000] [--old-heap-mib 192 --old-limit-mib 512]
 *     [--new-limit-mib 1024] [--hold 300]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PAUSED_ANNOTATION } from "../../src/api/v1/index.ts";
import { startAwsProxy } from "../../test/support/aws-proxy.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator, type LogLine, type OperatorProcess } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot, waitFor } from "../../test/support/process.ts";
import { cond, KindObjects, WRITES, type KubeObj } from "../../test/support/reconciler-env.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";
import { memoryCgroup, type MemoryCgroup } from "../support/memory-cgroup.ts";
import { childPid, procStats } from "../support/proc-stats.ts";
import { lineChart } from "../support/svg-chart.ts";
import { isReady } from "../support/ready.ts";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "92000" },
    "old-heap-mib": { type: "string", default: "192" },
    "old-limit-mib": { type: "string", default: "512" },
    "old-starts": { type: "string", default: "2" },
    "old-timeout": { type: "string", default: "600" },
    "new-limit-mib": { type: "string", default: "1024" },
    hold: { type: "string", default: "300" },
    "new-buckets": { type: "string", default: "20" },
    "new-after": { type: "string", default: "60" },
    "create-width": { type: "string", default: "32" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    entry: { type: "string", default: "dist/kubeprovisioner.mjs" },
    "node-args": { type: "string", default: imageNodeOptions() },
    out: { type: "string", default: "ceiling" },
  },
});
const N = Number(values.objects);
const oldHeapMiB = Number(values["old-heap-mib"]);
const oldStarts = Number(values["old-starts"]);
const holdSeconds = Number(values.hold);
const newBuckets = Number(values["new-buckets"]);
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);
const imageFlags = values["node-args"].split(" ").filter(Boolean);
const REGION = "us-east-1";
const NS = "bench";
const TAGS = { bench: "steady" };
const MiB = 2 ** 20;

const log = (msg: string): void => {
  process.stderr.write(`[ceiling ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round = (v: number, digits = 1): number => Math.round(v * 10 ** digits) / 10 ** digits;
const logTime = (l: LogLine): number => Date.parse(String(l.time));

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-ceiling-"));
// A large estate: room in etcd beyond its default 2 GiB quota for the objects and their history.
const cp = await startControlPlane({ installCRDs: true, etcdFlags: ["--quota-backend-bytes=8589934592"] });
const moto = await startMoto();
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
});
await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
const kubeconfig = cp.writeKubeConfig(
  cp.userKubeConfig("kubeprovisioner-bench", ["system:masters"]),
  "bench",
);
const cgOld = memoryCgroup(`kp-bench-ceiling-old-${process.pid}`, Number(values["old-limit-mib"]));
const cgNew = memoryCgroup(`kp-bench-ceiling-new-${process.pid}`, Number(values["new-limit-mib"]));

/** One sample of the operator's memory, seconds since its start. */
interface Sample {
  t: number;
  rssMiB: number;
  cgroupMiB: number;
  heapUsedMiB?: number;
  heapTotalMiB?: number;
}

/** A started operator, sampled every `everyMs` until it exits or is stopped. */
interface Run {
  op: OperatorProcess;
  pid: number;
  t0: number;
  samples: Sample[];
  stopSampling(): void;
}

let runs = 0;
const live: OperatorProcess[] = [];
async function start(cg: MemoryCgroup, nodeArgs: string[], everyMs: number): Promise<Run> {
  runs++;
  const t0 = Date.now();
  const op = await cg.inside(() =>
    startOperator({
      kubeconfig,
      env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: work,
      name: `operator-${runs}`,
      entry: values.entry,
      nodeArgs,
      waitReady: false,
      args: ["--log-level=info", "--leader-elect=false"],
    }),
  );
  live.push(op);
  // The node process replaces itself once to size its heap (same pid): wait for its start line.
  await op.waitForLog("starting", 60_000);
  const pid = childPid(op.process.proc.pid ?? 0, path.basename(values.entry));
  const samples: Sample[] = [];
  let sampling = true;
  /** RSS and cgroup usage now; undefined once the process is gone (a zombie has no VmRSS). */
  const memory = (): Sample | undefined => {
    try {
      const rssMiB = procStats(pid).rssMiB;
      if (!Number.isFinite(rssMiB)) return undefined;
      return {
        t: round((Date.now() - t0) / 1000, 0),
        rssMiB: round(rssMiB),
        cgroupMiB: round(cg.usage().usageMiB),
      };
    } catch {
      return undefined;
    }
  };
  void (async () => {
    while (sampling && op.process.proc.exitCode === null) {
      const s = memory();
      if (s === undefined) break;
      try {
        const metrics = AbortSignal.timeout(Math.max(1000, everyMs - 500));
        const text = await fetch(op.metricsUrl ?? "", { signal: metrics }).then((r) => r.text());
        const gauge = (name: string): number | undefined => {
          const m = new RegExp(`^${name} (\\S+)`, "m").exec(text);
          return m?.[1] !== undefined ? round(Number(m[1]) / MiB) : undefined;
        };
        samples.push({
          ...s,
          heapUsedMiB: gauge("nodejs_heap_size_used_bytes"),
          heapTotalMiB: gauge("nodejs_heap_size_total_bytes"),
        });
      } catch {
        // Exiting, or too busy to answer in time: the RSS is still worth having.
        samples.push(s);
      }
      await sleep(everyMs);
    }
  })();
  return { op, pid, t0, samples, stopSampling: () => (sampling = false) };
}

/** The sum of `rest_client_requests_total` over Kubernetes writes, by method. */
async function kubeWrites(op: OperatorProcess): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const method of WRITES) out[method] = await op.metric("rest_client_requests_total", { method });
  return out;
}

const pausedNow = (o: KubeObj | undefined): boolean =>
  cond(o, "Synced")?.reason === "Paused" && cond(o, "Synced")?.observedGeneration === o?.metadata.generation;

const specOf = (field: string, name: string): Record<string, unknown> => ({
  [field]: name,
  region: REGION,
  tags: TAGS,
});
const kindOf = (kind: string, plural: string, field: string): KindObjects<KubeObj> =>
  new KindObjects<KubeObj>(
    cp,
    { kind, plural, controller: kind.toLowerCase(), mutating: [], defaults: (name) => specOf(field, name) },
    NS,
  );
const kinds = [
  { objs: kindOf("S3Bucket", "s3buckets", "bucketName"), prefix: "b", count: Math.ceil(N / 2) },
  { objs: kindOf("SqsQueue", "sqsqueues", "queueName"), prefix: "q", count: Math.floor(N / 2) },
];
const buckets = kinds[0]?.objs as KindObjects<KubeObj>;
const nameOf = (prefix: string, i: number): string => `${prefix}-${String(i).padStart(5, "0")}`;

let result: Record<string, unknown> | undefined;
const chart: { name: string; points: (readonly [number, number])[] }[] = [];
try {
  // --- the templates: converged against moto, then paused, by the operator as run B runs it
  const tmpl = await start(cgNew, imageFlags, 5000);
  await tmpl.op.waitReady(120_000);
  const zeroListed = await tmpl.op.waitForLog("cache listed", 60_000);
  await sleep(5000);
  const atZero = {
    cacheListedHeapUsedMiB: Number(zeroListed.heapUsedMiB),
    heapUsedMiB: round((await tmpl.op.metric("nodejs_heap_size_used_bytes")) / MiB),
    rssMiB: round(procStats(tmpl.pid).rssMiB),
  };
  const templates = new Map<string, { status: unknown; finalizers: string[] }>();
  for (const { objs, prefix } of kinds) {
    const name = nameOf(prefix, 0);
    await objs.create(name);
    await objs.waitReady(name, 120_000);
    await objs.patch(name, { metadata: { annotations: { [PAUSED_ANNOTATION]: "true" } } });
    const paused = (await objs.waitUntil(
      name,
      "Synced=False Paused",
      (o) => pausedNow(o) && isReady(o),
      120_000,
    )) as KubeObj;
    templates.set(objs.kind.kind, { status: paused.status, finalizers: paused.metadata.finalizers ?? [] });
    log(`template ${objs.kind.kind} ${name}: ${JSON.stringify(paused.status)}`);
  }
  tmpl.stopSampling();
  await tmpl.op.stop();
  const templateAwsCalls = proxy.calls.length;

  // --- the estate, straight through the API server: create, then the status subresource
  const todo = kinds
    .flatMap((k) => Array.from({ length: k.count - 1 }, (_, i) => ({ k, name: nameOf(k.prefix, i + 1) })))
    .sort((a, b) => a.name.slice(2).localeCompare(b.name.slice(2)));
  const width = Number(values["create-width"]);
  log(`creating ${todo.length} paused objects, ${width} at a time`);
  const c0 = Date.now();
  let created = 0;
  const progress = setInterval(
    () => log(`${created}/${todo.length} created (${round(created / ((Date.now() - c0) / 1000))}/s)`),
    30_000,
  );
  try {
    await inParallel(todo, width, async ({ k, name }) => {
      const { objs } = k;
      const t = templates.get(objs.kind.kind);
      if (t === undefined) throw new Error(`no template for ${objs.kind.kind}`);
      const res = await cp.request("POST", objs.base, {
        apiVersion: "compute.cloud.com/v1",
        kind: objs.kind.kind,
        metadata: { name, annotations: { [PAUSED_ANNOTATION]: "true" }, finalizers: t.finalizers },
        spec: objs.kind.defaults(name),
      });
      if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
      const status = JSON.parse(JSON.stringify(t.status).replaceAll(nameOf(k.prefix, 0), name)) as unknown;
      const put = await cp.request("PUT", `${objs.base}/${name}/status`, {
        ...(res.body as object),
        status,
      });
      if (put.status !== 200) throw new Error(`status ${name}: ${put.status} ${put.text}`);
      created++;
    });
  } finally {
    clearInterval(progress);
  }
  const createSeconds = (Date.now() - c0) / 1000;
  log(`estate of ${N} objects in ${round(createSeconds)} s`);

  // --- A: the old configuration
  const old: Record<string, unknown>[] = [];
  for (let s = 0; s < oldStarts; s++) {
    const a = await start(cgOld, [...imageFlags, `--max-old-space-size=${oldHeapMiB}`], 2000);
    const startLine = a.op.logLines().find((l) => l.msg === "starting");
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      a.op.process.exited,
      new Promise<"still running">((resolve) => {
        timer = setTimeout(() => resolve("still running"), Number(values["old-timeout"]) * 1000);
      }),
    ]);
    clearTimeout(timer);
    const exitSeconds = (Date.now() - a.t0) / 1000;
    a.stopSampling();
    if (code === "still running") await a.op.stop();
    const lines = a.op.logLines();
    const listed = lines.find((l) => l.msg === "cache listed");
    const fatal = lines.find((l) => l.level === 60);
    const text = a.op.logText();
    const v8 = /^FATAL ERROR: .*$/m.exec(text)?.[0];
    const usage = cgOld.usage();
    const run = {
      start: s + 1,
      exitCode: code,
      outcome:
        code === "still running"
          ? "running"
          : fatal !== undefined && /JS heap ceiling/.test(String(fatal.msg))
            ? "start check refused"
            : v8 !== undefined
              ? "V8 heap out of memory"
              : cgOld.oomKills() > 0
                ? "killed by the cgroup OOM killer"
                : "exited",
      secondsToExit: round(exitSeconds),
      heapSizing: startLine?.heap,
      cacheListed: listed === undefined ? undefined : { ...listed, level: undefined, time: undefined },
      secondsToList:
        listed !== undefined && startLine !== undefined
          ? round((logTime(listed) - logTime(startLine)) / 1000)
          : undefined,
      fatalLog: fatal?.msg,
      stderrV8: v8,
      lastStderrLines: text
        .split("\n")
        .filter((l) => l !== "" && !l.startsWith("{"))
        .slice(-6),
      peakHeapUsedMiB: Math.max(0, ...a.samples.map((x) => x.heapUsedMiB ?? 0)),
      peakRssMiB: Math.max(0, ...a.samples.map((x) => x.rssMiB)),
      cgroup: { peakMiB: round(usage.peakMiB), failcnt: usage.failcnt, oomKills: cgOld.oomKills() },
    };
    log(`old configuration, start ${s + 1}: ${JSON.stringify(run)}`);
    old.push(run);
    if (s === 0) {
      chart.push({
        name: `old: heap used (ceiling ${oldHeapMiB} MiB)`,
        points: a.samples
          .filter((x) => x.heapUsedMiB !== undefined)
          .map((x) => [x.t, x.heapUsedMiB ?? 0] as const),
      });
      chart.push({
        name: `old: RSS (limit ${cgOld.limitMiB} MiB)`,
        points: a.samples.map((x) => [x.t, x.rssMiB] as const),
      });
    }
  }

  // --- B: the limit raised, the ceiling from the cgroup
  const calls0 = proxy.calls.length;
  const b = await start(cgNew, imageFlags, 5000);
  const startLine = b.op.logLines().find((l) => l.msg === "starting") as LogLine;
  const listed = await b.op.waitForLog("cache listed", 1_800_000);
  const listSeconds = (logTime(listed) - logTime(startLine)) / 1000;
  log(`listed ${String(listed.objects)} objects in ${round(listSeconds)} s: ${JSON.stringify(listed)}`);
  await b.op.waitReady(120_000);
  const readySeconds = (Date.now() - b.t0) / 1000;
  const reconciles = async (): Promise<number> => b.op.metric("controller_runtime_reconcile_total");
  await waitFor("every object reconciled once", async () => (await reconciles()) >= N, 1_800_000, 1000);
  const reconciledSeconds = (Date.now() - b.t0) / 1000;
  const writesAfterReconcile = await kubeWrites(b.op);
  log(
    `every object reconciled ${round(reconciledSeconds)} s after the start; writes ${JSON.stringify(writesAfterReconcile)}`,
  );
  const holdUntil = Date.now() + holdSeconds * 1000;
  await sleep(Number(values["new-after"]) * 1000);
  const n0 = Date.now();
  const newNames = Array.from({ length: newBuckets }, (_, i) => `nb-${String(i).padStart(5, "0")}`);
  await inParallel(newNames, 8, async (name) => {
    await buckets.create(name);
  });
  const readyAt = new Map<string, number>();
  await waitFor(
    `${newBuckets} new buckets Ready`,
    async () => {
      await inParallel(
        newNames.filter((nm) => !readyAt.has(nm)),
        8,
        async (nm) => {
          if (isReady(await buckets.get(nm))) readyAt.set(nm, Date.now());
        },
      );
      return readyAt.size === newBuckets;
    },
    600_000,
    1000,
  );
  const newReadySeconds = (Math.max(...readyAt.values()) - n0) / 1000;
  log(`${newBuckets} new buckets Ready in ${round(newReadySeconds)} s`);
  if (Date.now() < holdUntil) await sleep(holdUntil - Date.now());
  const exited = b.op.process.proc.exitCode;
  const heapUsedMiB = round((await b.op.metric("nodejs_heap_size_used_bytes")) / MiB);
  const heapTotalMiB = round((await b.op.metric("nodejs_heap_size_total_bytes")) / MiB);
  const s = procStats(b.pid);
  const usage = cgNew.usage();
  const writes = await kubeWrites(b.op);
  const awsCalls = proxy.calls
    .slice(calls0)
    .reduce<Record<string, number>>((acc, c) => ((acc[c.operation] = (acc[c.operation] ?? 0) + 1), acc), {});
  b.stopSampling();
  const heapAt = (t: number): number | undefined =>
    b.samples.find((x) => x.t >= t && x.heapUsedMiB !== undefined)?.heapUsedMiB;
  const raised = {
    heapSizing: startLine.heap,
    secondsToList: round(listSeconds),
    cacheListed: { ...listed, level: undefined, time: undefined },
    secondsToReady: round(readySeconds),
    secondsToReconcileEvery: round(reconciledSeconds),
    reconciles: await reconciles(),
    kubeWritesAfterEveryReconcile: writesAfterReconcile,
    kubeWritesInAll: writes,
    newBuckets: { count: newBuckets, ready: readyAt.size, allReadySeconds: round(newReadySeconds) },
    awsCalls,
    heldSeconds: round((Date.now() - b.t0) / 1000, 0),
    exitCode: exited,
    restarts: exited === null ? 0 : 1,
    atEnd: { heapUsedMiB, heapTotalMiB, rssMiB: round(s.rssMiB) },
    peakRssMiB: round(s.peakRssMiB),
    peakHeapUsedMiB: Math.max(0, ...b.samples.map((x) => x.heapUsedMiB ?? 0)),
    heapUsedMiBBeforeNewBuckets: heapAt(round((n0 - b.t0) / 1000, 0) - 10),
    cgroup: {
      memoryLimitMiB: cgNew.limitMiB,
      peakMiB: round(usage.peakMiB),
      failcnt: usage.failcnt,
      oomKills: cgNew.oomKills(),
    },
  };
  log(`raised limit: ${JSON.stringify(raised)}`);
  chart.push({
    name: "raised: heap used",
    points: b.samples
      .filter((x) => x.heapUsedMiB !== undefined)
      .map((x) => [x.t, x.heapUsedMiB ?? 0] as const),
  });
  chart.push({
    name: `raised: RSS (limit ${cgNew.limitMiB} MiB)`,
    points: b.samples.map((x) => [x.t, x.rssMiB] as const),
  });
  await b.op.stop();

  const perThousand = (mib: number): number => round(((mib - atZero.cacheListedHeapUsedMiB) * 1000) / N, 2);
  result = {
    objects: { total: N, buckets: kinds[0]?.count, queues: kinds[1]?.count, paused: N },
    entry: values.entry,
    nodeArgs: values["node-args"],
    awsLatencyMs: { mean: latency, jitter },
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      loadavgEnd: os.loadavg(),
    },
    templates: Object.fromEntries(templates),
    templateAwsCalls,
    estate: { createSeconds: round(createSeconds), width },
    atZeroObjects: atZero,
    old: { heapFlagMiB: oldHeapMiB, memoryLimitMiB: cgOld.limitMiB, starts: old },
    raised,
    perThousandObjects: {
      heapUsedAtListMiB: perThousand(Number(listed.heapUsedMiB)),
      heapUsedAtRestMiB: round(
        (((raised.heapUsedMiBBeforeNewBuckets ?? NaN) - atZero.heapUsedMiB) * 1000) / N,
        2,
      ),
      rssAtRestMiB: round(((raised.atEnd.rssMiB - atZero.rssMiB) * 1000) / N, 2),
    },
  };
} finally {
  for (const o of live) await o.stop().catch(() => undefined);
  await proxy.stop();
  await moto.stop();
  await cp.stop();
  cgOld.remove();
  cgNew.remove();
}
const results = path.join(repoRoot, "bench/results");
writeFileSync(path.join(results, `${values.out}.json`), JSON.stringify(result, null, 2) + "\n");
writeFileSync(
  path.join(results, `${values.out}.svg`),
  lineChart({
    title: `Operator memory with ${N.toLocaleString("en-US")} paused objects: the old heap ceiling and a raised limit`,
    xLabel: "seconds since the operator started",
    yLabel: "MiB",
    series: chart,
  }),
);
