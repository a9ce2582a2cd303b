/**
 * `make bench-export`: `kubeprovisioner export --region us-east-1 -o DIR` of an account's whole
 * estate, as a user runs it (`node dist/kubeprovisioner.mjs export`), against a real
 * kube-apiserver (for the session's kubeconfig and cache) and moto behind the counting proxy,
 * which adds AWS latency (80 ± 40 ms per call).
 *
 * The estate is seeded straight at moto (not through the proxy, not through the operator) by
 * test/support/seed-estate.py, several resources at a time: buckets with varied settings
 * (versioning, encryption, lifecycle rules, CORS, Block Public Access, tags), queues (visibility
 * timeouts, delays, retention, FIFO, dead-letter queues inside the estate and one outside it),
 * instances with tags; every tenth bucket and queue carries another cluster's ownership tags,
 * which the export must skip. Then the export runs once, under GNU time for its peak RSS.
 * Measured and checked (the run fails on any check):
 *
 * - exit status 0; one manifest per resource of each kind but the foreign-owned ones, which are
 *   exactly the resources it skipped, and none failed;
 * - the AWS calls by service and operation, each budget's calls against its default rate and
 *   what its bucket lets through over the calls' span (../plan/budget.ts: never more); mutating
 *   calls must be 0;
 * - wall time against the read-budget bound of the export's phases (./bound.ts), the phases'
 *   spans and the calls per second the test AWS served in each.
 *
 * One JSON document: bench/results/export.json (and stdout).
 *
 *   node bench/export/export.ts [--buckets 2000] [--queues 7799] [--instances 200]
 *     [--latency-ms 80] [--jitter-ms 40] [--out bench/results/export.json]
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startAwsProxy } from "../../test/support/aws-proxy.ts";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { seedEstate } from "../../test/support/seed-estate.ts";
import { repoRoot } from "../../test/support/process.ts";
import { budgetUse, callsByService, isRead } from "../plan/budget.ts";
import { machineFacts } from "../support/machine.ts";
import { writeResult } from "../support/result-file.ts";
import { requireGnuTime, runUserCommand, userCommandEnv } from "../support/user-command.ts";
import { exportPhaseOf, phasedBound } from "./bound.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "2000" },
    queues: { type: "string", default: "7799" },
    instances: { type: "string", default: "200" },
    "latency-ms": { type: "string", default: "80" },
    "jitter-ms": { type: "string", default: "40" },
    out: { type: "string", default: "bench/results/export.json" },
  },
});
const REGION = "us-east-1";
const PROGRAM = "dist/kubeprovisioner.mjs";
const PREFIX = "estate";
/** Resources seeded at once: moto serves the seeding calls of a few threads faster than of one. */
const SEED_WORKERS = 8;
const latency = Number(values["latency-ms"]);
const jitter = Number(values["jitter-ms"]);
const counts = {
  buckets: Number(values.buckets),
  queues: Number(values.queues),
  instances: Number(values.instances),
};

const log = (msg: string): void => {
  process.stderr.write(`[export ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** Each kind's folder in the export's output, and the service its reads go to. */
const KINDS = [
  { kind: "S3Bucket", plural: "s3buckets", service: "s3" },
  { kind: "SqsQueue", plural: "sqsqueues", service: "sqs" },
  { kind: "Ec2Instance", plural: "ec2instances", service: "ec2" },
] as const;
type KindName = (typeof KINDS)[number]["kind"];

/** The manifests in `dir/<plural>`: how many, and their bytes. */
function manifestsIn(dir: string): { count: number; bytes: number } {
  if (!existsSync(dir)) return { count: 0, bytes: 0 };
  const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
  return { count: files.length, bytes: files.reduce((n, f) => n + statSync(path.join(dir, f)).size, 0) };
}

const round = (n: number, digits: number): number => Number(n.toFixed(digits));

requireGnuTime();
if (!existsSync(path.join(repoRoot, PROGRAM))) throw new Error(`${PROGRAM} is missing: make bundle`);

const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bench-export-"));
log(`work folder ${work}`);
const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const proxy = await startAwsProxy(moto.endpoint, {
  latencyMs: () => Math.max(0, latency + (Math.random() * 2 - 1) * jitter),
});
let result: Record<string, unknown>;
try {
  log(
    `seeding ${counts.buckets} buckets, ${counts.queues} queues and ${counts.instances} instances, ${SEED_WORKERS} at a time`,
  );
  const t0 = Date.now();
  const seeded = await seedEstate(moto.endpoint, counts, PREFIX, SEED_WORKERS);
  const seedSeconds = (Date.now() - t0) / 1000;
  const foreign = {
    S3Bucket: seeded.foreign.filter((n) => n.startsWith(`${PREFIX}-bucket-`)).length,
    SqsQueue: seeded.foreign.filter((n) => n.startsWith(`${PREFIX}-queue-`)).length,
    Ec2Instance: 0,
  };
  /** The manifests each kind must have: every resource of the account but the foreign-owned. */
  const expected: Record<KindName, number> = {
    S3Bucket: seeded.buckets.length,
    SqsQueue: seeded.queues.length + seeded.outside.length,
    Ec2Instance: seeded.instances.length,
  };
  const resources: Record<KindName, number> = {
    S3Bucket: expected.S3Bucket + foreign.S3Bucket,
    SqsQueue: expected.SqsQueue + foreign.SqsQueue,
    Ec2Instance: expected.Ec2Instance,
  };
  const total = resources.S3Bucket + resources.SqsQueue + resources.Ec2Instance;
  const expectedTotal = expected.S3Bucket + expected.SqsQueue + expected.Ec2Instance;
  if (
    resources.S3Bucket !== counts.buckets ||
    resources.SqsQueue !== counts.queues + seeded.outside.length ||
    resources.Ec2Instance !== counts.instances
  )
    throw new Error(`seeded ${JSON.stringify(resources)}, asked for ${JSON.stringify(counts)}`);
  log(`${total} resources seeded in ${seedSeconds.toFixed(1)} s (${seeded.foreign.length} foreign-owned)`);

  const outDir = path.join(work, "export");
  const args = ["export", "--region", REGION, "-o", outDir];
  const env = userCommandEnv({
    awsEnv: moto.env,
    awsEndpoint: proxy.endpoint,
    kubeconfig: cp.kubeconfigPath,
  });
  log(`node ${PROGRAM} ${args.join(" ")}`);
  const calls0 = proxy.calls.length;
  const run = await runUserCommand(path.join(repoRoot, PROGRAM), [], args, env, path.join(work, "time.txt"));
  const wallSeconds = (run.end - run.start) / 1000;
  const calls = proxy.calls.slice(calls0);
  log(`export: exit ${run.code}, ${wallSeconds.toFixed(1)} s, peak RSS ${run.peakRssMiB.toFixed(1)} MiB`);

  // The checks.
  if (run.code !== 0) throw new Error(`export exited ${run.code}, want 0\n${run.stderr.slice(-4000)}`);
  const summary = /^export export: (\d+) written, (\d+) skipped, (\d+) failed$/m.exec(run.stderr);
  if (summary === null) throw new Error(`export printed no summary\n${run.stderr.slice(-4000)}`);
  const [written, skipped, failed] = summary.slice(1).map(Number);
  const manifests = Object.fromEntries(
    KINDS.map((k) => [k.kind, manifestsIn(path.join(outDir, k.plural))]),
  ) as Record<KindName, { count: number; bytes: number }>;
  const wrong = KINDS.filter((k) => manifests[k.kind].count !== expected[k.kind]).map(
    (k) => `${manifests[k.kind].count} ${k.kind} manifests, want ${expected[k.kind]}`,
  );
  const skippedNames = [...run.stderr.matchAll(/^skipped (?:S3Bucket|SqsQueue|Ec2Instance) (\S+): /gm)].map(
    (m) => m[1] ?? "",
  );
  const notForeign = skippedNames.filter((n) => !seeded.foreign.includes(n));
  if (written !== expectedTotal) wrong.push(`${written} written, want ${expectedTotal}`);
  if (failed !== 0) wrong.push(`${failed} failed`);
  if (skipped !== seeded.foreign.length || notForeign.length > 0)
    wrong.push(
      `${skipped} skipped (${notForeign.slice(0, 5).join(", ")} not foreign-owned), want the ${seeded.foreign.length} foreign-owned`,
    );
  if (wrong.length > 0) throw new Error(`the export's manifests are wrong: ${wrong.join("; ")}`);
  const mutating = calls.filter((c) => !isRead(c));
  if (mutating.length > 0)
    throw new Error(`the export made mutating AWS calls: ${mutating.map((c) => c.operation).join(", ")}`);
  const budgets = budgetUse(calls, wallSeconds);
  // Calls are timed where the proxy receives them, a little after the client let them go: one
  // call beyond what the bucket lets through (calls ÷ ratioToBucket) is timing, more is a budget
  // overdrawn.
  const overdrawn = budgets.filter((b) => b.calls > b.calls / b.ratioToBucket + 1);
  if (overdrawn.length > 0)
    throw new Error(
      `budgets overdrawn: ${overdrawn.map((b) => `${b.budget} ${b.key} ${b.ratioToBucket}`).join(", ")}`,
    );

  // The phases: the start until the first AWS call (Node, the kubeconfig, the cache's sync), the
  // listing and each kind's reads (./bound.ts), the manifests written and the exit.
  const bound = phasedBound(calls, exportPhaseOf);
  const firstCall = Math.min(...bound.phases.map((p) => p.firstAt));
  const lastCall = Math.max(...bound.phases.map((p) => p.lastAt));
  const awsSpanSeconds = (lastCall - firstCall) / 1000;
  const readsPerResource = Object.fromEntries(
    KINDS.map((k) => [
      k.kind,
      round((bound.phases.find((p) => p.phase === `read ${k.service}`)?.calls ?? 0) / resources[k.kind], 2),
    ]),
  );
  const outputBytes = KINDS.reduce((n, k) => n + manifests[k.kind].bytes, 0);
  log(
    `${written} manifests; ${calls.length} AWS reads, 0 writes; bound ${bound.boundSeconds.toFixed(1)} s, wall ÷ bound ${(wallSeconds / bound.boundSeconds).toFixed(2)}`,
  );
  result = {
    estate: {
      buckets: counts.buckets,
      queues: counts.queues,
      outsideQueues: seeded.outside.length,
      instances: counts.instances,
      total,
      foreignOwned: { total: seeded.foreign.length, ...foreign },
      seedSeconds: round(seedSeconds, 1),
      seedWorkers: SEED_WORKERS,
    },
    awsLatencyMs: { mean: latency, jitter },
    command: ["node", PROGRAM, "export", "--region", REGION, "-o", "DIR"].join(" "),
    export: {
      exitCode: run.code,
      wallSeconds: round(wallSeconds, 1),
      // The AWS calls' phases, each with its span: bound.phases.
      phases: {
        startAndCacheSyncSeconds: round((firstCall - run.start) / 1000, 2),
        awsCallsSeconds: round(awsSpanSeconds, 1),
        writeAndExitSeconds: round((run.end - lastCall) / 1000, 2),
      },
      peakRssMiB: round(run.peakRssMiB, 1),
      manifests: {
        total: written,
        expected: expectedTotal,
        ...Object.fromEntries(KINDS.map((k) => [k.kind, manifests[k.kind].count])),
      },
      skipped,
      failed,
      outputBytes,
    },
    aws: {
      calls: calls.length,
      mutatingCalls: mutating.length,
      readsPerResource,
      byService: callsByService(calls),
      budgets,
      maxRatioToBucket: Math.max(...budgets.map((b) => b.ratioToBucket)),
      servedCallsPerSecond: round(calls.length / awsSpanSeconds, 1),
    },
    bound: {
      phases: bound.phases.map((p) => ({
        phase: p.phase,
        calls: p.calls,
        spanSeconds: round(p.spanSeconds, 1),
        callsPerSecond: round(p.callsPerSecond, 1),
        boundSeconds: round(p.boundSeconds, 1),
        binding: p.binding,
      })),
      sumOfPhaseBoundsSeconds: round(bound.sumOfPhaseBoundsSeconds, 1),
      overlapSeconds: round(bound.overlapSeconds, 1),
      boundSeconds: round(bound.boundSeconds, 1),
      wallToBound: round(wallSeconds / bound.boundSeconds, 2),
      awsSpanToBound: round(awsSpanSeconds / bound.boundSeconds, 2),
    },
    machine: machineFacts(),
  };
} finally {
  await proxy.stop();
  await moto.stop();
  await cp.stop();
}
// Kept when the run failed: the export's manifests say what it wrote.
rmSync(work, { recursive: true, force: true });
writeResult(path.resolve(repoRoot, values.out), result);
