/**
 * `make bench-noop`: the CPU one reconcile of a converged object costs, AWS wait excluded.
 *
 * Method: the kinds' reconcilers (the shared flow with each real driver, built by the kind
 * modules) run in this process against a real kube-apiserver (its informer cache) and moto.
 * Objects are converged first; then every object is reconciled `--rounds` times, one reconcile
 * at a time, and each reconcile's CPU is `process.cpuUsage()` after minus before. Nothing else
 * runs meanwhile, so time spent waiting for AWS (moto is another process) costs no CPU and is
 * excluded; what is measured is the flow, the driver, the SDK's serialization and parsing, and
 * the garbage collection they cause. Writes `bench/results/noop.json`.
 *
 * The first `--warmup` rounds are not timed (V8 compiles the hot paths in them). With `--profile`
 * the timed rounds also run under V8's CPU profiler, and the result says which packages the
 * busy samples fall in, split as bench/support/cpu-profile.ts splits them (the profiler's own
 * cost inflates the times of that run; `--out` names the results file).
 *
 *   node bench/noop/noop.ts [--buckets 100] [--queues 100] [--instances 30] [--rounds 5] [--warmup 1]
 *     [--profile] [--out noop]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "node:inspector/promises";
import { parseArgs } from "node:util";
import { Registry } from "prom-client";
import { AwsClients } from "../../src/aws/clients.ts";
import { cacheOptions } from "../../src/controllers.ts";
import { KINDS } from "../../src/kinds.ts";
import type { KindModule } from "../../src/reconcilers/common/kind.ts";
import { CacheOwnerDirectory } from "../../src/reconcilers/common/owner-directory.ts";
import type { ReconcilerDeps } from "../../src/reconcilers/common/setup.ts";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { Client } from "../../src/runtime/client/index.ts";
import type { ReconcileContext, Reconciler } from "../../src/runtime/controller/reconciler.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { silentLogger } from "../../src/runtime/logging.ts";
import { registrySum } from "../../src/runtime/testing/prometheus-text.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot } from "../../test/support/process.ts";
import { busyShares } from "../support/cpu-profile.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "100" },
    queues: { type: "string", default: "100" },
    instances: { type: "string", default: "30" },
    rounds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    out: { type: "string", default: "noop" },
  },
});
const NS = "noop";
const log = (msg: string): void => {
  process.stderr.write(`[noop ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

const SPECS: Record<string, { count: number; spec: (name: string) => Record<string, unknown> }> = {
  S3Bucket: {
    count: Number(values.buckets),
    spec: (name) => ({ bucketName: name, region: "us-east-1", tags: { bench: "noop" } }),
  },
  SqsQueue: {
    count: Number(values.queues),
    spec: (name) => ({ queueName: name, region: "us-east-1", tags: { bench: "noop" } }),
  },
  Ec2Instance: {
    count: Number(values.instances),
    spec: () => ({ instanceType: "t3.micro", amiId: "ami-1e749f67", region: "us-east-1" }),
  },
};

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
Object.assign(process.env, moto.env);
const stop = new AbortController();
const registry = new Registry();
const aws = new AwsClients({ endpoint: moto.endpoint, registry });
let result: unknown;
try {
  await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
  const rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry });
  // The operator's own cache settings (the outputs ConfigMaps' selector and index).
  const informers = new InformerFactory({ rest, registry, ...cacheOptions([]) });
  const client = new Client({ rest, cache: informers });
  const deps: ReconcilerDeps = {
    client,
    informers,
    aws,
    events: { recorderFor: () => ({ event: () => undefined }) },
    manager: { add: () => undefined },
    logger: silentLogger,
    registry,
    clock: systemClock,
    owners: new CacheOwnerDirectory({ client, kinds: KINDS.map((k) => k.resource) }),
    pollIntervalMs: 300_000,
  };
  const kinds = KINDS.map((kind) => ({ kind, reconciler: kind.reconciler(deps), names: [] as string[] }));
  for (const k of kinds) informers.informerFor(k.kind.resource);
  void informers.start(stop.signal);
  await informers.waitForCacheSync();

  for (const k of kinds) {
    const { count, spec } = SPECS[k.kind.resource.kind] ?? { count: 0, spec: () => ({}) };
    for (let i = 0; i < count; i++) {
      const name = `${k.kind.resource.plural.slice(0, 3)}-noop-${String(i).padStart(4, "0")}`;
      const res = await cp.request(
        "POST",
        `/apis/compute.cloud.com/v1/namespaces/${NS}/${k.kind.resource.plural}`,
        {
          apiVersion: "compute.cloud.com/v1",
          kind: k.kind.resource.kind,
          metadata: { name },
          spec: spec(name),
        },
      );
      if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
      k.names.push(name);
    }
  }
  const ctx: ReconcileContext = { logger: silentLogger, signal: stop.signal, reconcileId: "bench" };
  const isReady = (kind: KindModule, name: string): boolean => {
    const obj = client.resource(kind.resource).get({ namespace: NS, name }) as
      { status?: { conditions?: { type: string; status: string }[] } } | undefined;
    return obj?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  };
  /** Reconciles every object not yet Ready, a few at a time, until all are. */
  const converge = async (k: {
    kind: KindModule;
    reconciler: Reconciler;
    names: string[];
  }): Promise<void> => {
    for (let round = 0; ; round++) {
      const todo = k.names.filter((n) => !isReady(k.kind, n));
      if (todo.length === 0) return;
      if (round > 60) throw new Error(`${todo.length} ${k.kind.resource.plural} not Ready`);
      await inParallel(todo, 8, async (name) => {
        await k.reconciler.reconcile({ namespace: NS, name }, ctx).catch((err: unknown) => {
          if (round > 3) log(`${name}: ${String(err)}`);
        });
      });
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  for (const k of kinds) {
    await converge(k);
    log(`${k.names.length} ${k.kind.resource.plural} converged`);
  }
  // The cache has every status write; the no-op reconciles below must write nothing.
  await new Promise((r) => setTimeout(r, 2000));
  const writes = async (): Promise<number> => {
    let n = 0;
    for (const method of ["POST", "PUT", "PATCH", "DELETE"])
      n += await registrySum(registry, "rest_client_requests_total", { method });
    return n;
  };
  const writesBefore = await writes();
  const awsBefore = await registrySum(registry, "aws_api_requests_total");
  const perKind: Record<string, unknown> = {};
  const all: number[] = [];
  const session = values.profile ? new Session() : undefined;
  if (session !== undefined) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  for (const k of kinds) {
    if (k.names.length === 0) continue;
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let round = 0; round < Number(values.warmup); round++)
      for (const name of k.names) await k.reconciler.reconcile({ namespace: NS, name }, ctx);
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const name of k.names) {
        const t0 = process.hrtime.bigint();
        const c0 = process.cpuUsage();
        await k.reconciler.reconcile({ namespace: NS, name }, ctx);
        const c = process.cpuUsage(c0);
        wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
        cpu.push((c.user + c.system) / 1000);
      }
    }
    cpu.sort((a, b) => a - b);
    wall.sort((a, b) => a - b);
    all.push(...cpu);
    perKind[k.kind.resource.kind] = {
      objects: k.names.length,
      reconciles: cpu.length,
      cpuMs: { p50: quantile(cpu, 0.5), p90: quantile(cpu, 0.9), p99: quantile(cpu, 0.99), max: cpu.at(-1) },
      wallMs: { p50: quantile(wall, 0.5), p99: quantile(wall, 0.99) },
    };
    log(`${k.kind.resource.kind}: ${JSON.stringify(perKind[k.kind.resource.kind])}`);
  }
  all.sort((a, b) => a - b);
  const profile =
    session !== undefined
      ? busyShares((await session.post("Profiler.stop")).profile, { root: repoRoot })
      : undefined;
  session?.disconnect();
  result = {
    method:
      "one reconcile at a time of converged objects, in-process against kube-apiserver and moto; CPU = process.cpuUsage() delta (user+system), so AWS wait is excluded",
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      loadavg: os.loadavg(),
    },
    rounds: Number(values.rounds),
    warmupRounds: Number(values.warmup),
    kubernetesWritesDuringNoop: (await writes()) - writesBefore,
    awsCallsDuringNoop: (await registrySum(registry, "aws_api_requests_total")) - awsBefore,
    cpuMs: { p50: quantile(all, 0.5), p90: quantile(all, 0.9), p99: quantile(all, 0.99) },
    perKind,
    ...(profile !== undefined
      ? { busySamplesPercent: profile.percent, busySamplesByPackagePercent: profile.topPackages }
      : {}),
  };
} finally {
  stop.abort();
  aws.destroy();
  await moto.stop();
  await cp.stop();
}
const out = path.join(repoRoot, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, `${values.out}.json`), JSON.stringify(result, null, 2) + "\n");
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
