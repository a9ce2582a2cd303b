/**
 * The measured figures BENCHMARKS.md, the README and docs/install.md quote come from the committed
 * results in bench/results/*.json: each figure below is read out of the prose and compared with
 * the value computed from the JSON, rounded as the text rounds it. A rerun of a benchmark that
 * changes a result fails here until the text says the new figure.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../support/process.ts";

interface Converge {
  seconds: number;
  peakRssMiB: number;
  cpuMsPerObject: number;
  awsCallsPerObject: Record<string, number>;
  kubeRequests: Record<string, number>;
}
interface ScaleRun {
  objects: { buckets: number; queues: number; instances: number; total: number };
  converge: Converge;
}
interface IdleRun {
  objects: ScaleRun["objects"];
  converge: Converge;
  idle: {
    kubeWrites: number;
    cpuMsPerObjectPerPoll: number;
    awsCallsPerObjectPerPoll: Record<string, number>;
  };
}

interface EventsRun {
  objects: { buckets: number; queues: number };
  eventsMode: {
    driftRepairSeconds: { p50: number; p99: number; mean: number };
    instanceStopRepairSeconds: { p50: number; p99: number };
    atRest: { readsPerObjectPerHour: number };
    atRestWithHourlySafetyNetPoll: { readsPerObjectPerHour: number };
  };
  pollOnlyMode: {
    driftRepairSeconds: { p50: number; p99: number; mean: number };
    instanceStopRepairSeconds: { p50: number; p99: number };
    atRest: { readsPerObjectPerHour: number };
    readsPerObjectPerPoll: number;
  };
  readsRatioPollOnlyToEvents: { atTheDefaultPollInterval5m: number };
}

interface CeilingStart {
  exitCode: number | string;
  outcome: string;
  secondsToExit: number;
  heapSizing: { ceilingMiB: number };
  cacheListed?: { heapUsedMiB: number; heapCeilingMiB: number };
  fatalLog?: string;
  peakHeapUsedMiB: number;
  cgroup: { peakMiB: number; failcnt: number; oomKills: number };
}
interface CeilingRun {
  objects: { total: number; buckets: number; queues: number };
  estate: { createSeconds: number };
  atZeroObjects: { heapUsedMiB: number; cacheListedHeapUsedMiB: number };
  old: { heapFlagMiB: number; memoryLimitMiB: number; starts: CeilingStart[] };
  raised: {
    heapSizing: { ceilingMiB: number; memoryLimitMiB: number };
    secondsToList: number;
    cacheListed: { objects: number; heapUsedMiB: number };
    secondsToReconcileEvery: number;
    kubeWritesAfterEveryReconcile: Record<string, number>;
    newBuckets: { count: number; ready: number; allReadySeconds: number };
    awsCalls: Record<string, number>;
    heldSeconds: number;
    restarts: number;
    atEnd: { heapUsedMiB: number; heapTotalMiB: number; rssMiB: number };
    peakRssMiB: number;
    peakHeapUsedMiB: number;
    cgroup: { memoryLimitMiB: number; peakMiB: number; failcnt: number; oomKills: number };
  };
  perThousandObjects: { heapUsedAtListMiB: number; heapUsedAtRestMiB: number };
}

const json = <T>(file: string): T =>
  JSON.parse(readFileSync(path.join(repoRoot, "bench/results", file), "utf8")) as T;
const text = (file: string): string => readFileSync(path.join(repoRoot, file), "utf8").replace(/\s+/g, " ");

const scale = json<{ runs: ScaleRun[] }>("scale.json").runs;
const startup = json<{ runs: { entry: string; nodeArgs: string[]; idle: { rssMiB: number } }[] }>(
  "startup.json",
).runs;
/** Idle RSS of the bundle, MiB, with V8 flags (the image's) or without. */
const idleBundle = (flags: boolean): string => {
  const r = startup.find((x) => x.entry === "dist/kubeprovisioner.mjs" && x.nodeArgs.length > 0 === flags);
  assert.ok(r, `startup.json has a run of the bundle ${flags ? "with" : "without"} flags`);
  return String(Math.round(r.idle.rssMiB));
};
const idle = json<IdleRun>("idle.json");
const run = (total: number): ScaleRun => {
  const r = scale.find((x) => x.objects.total === total);
  assert.ok(r, `scale.json has a run of ${total} objects`);
  return r;
};
const small = run(1150);
const large = run(5150);

const events = json<{ runs: EventsRun[] }>("events.json").runs;
/** The run whose estate has `total` buckets and queues (`--sizes`; its instances come on top). */
const eventsAt = (total: number): EventsRun => {
  const r = events.find((x) => x.objects.buckets + x.objects.queues === total);
  assert.ok(r, `events.json has a run of ${total} objects`);
  return r;
};
/** A latency's p50 and p99 as BENCHMARKS.md prints them, to `digits` decimals. */
const p50p99 = (s: { p50: number; p99: number }, digits: number): string[] => [
  s.p50.toFixed(digits),
  s.p99.toFixed(digits),
];
const ev1k = eventsAt(1000);
const ev10k = eventsAt(10000);

const ceiling = json<CeilingRun>("ceiling.json");
const ceiling4k = json<CeilingRun>("ceiling-4k.json");
const [oldFirst, oldSecond] = ceiling.old.starts;
const raised = ceiling.raised;

const thousands = (n: number): string => Math.round(n).toLocaleString("en-US");
/** Kubernetes writes of a converge: patches, status updates and created Events. */
const writes = (c: Converge): number =>
  Object.entries(c.kubeRequests)
    .filter(([k]) => /^(patch|update|create) /.test(k))
    .reduce((sum, [, n]) => sum + n, 0);
/** Status updates per object of one kind (`plural`, `count` objects). */
const statusUpdates = (c: Converge, plural: string, count: number): number =>
  (c.kubeRequests[`update ${plural}/status`] ?? 0) / count;

/** Busy CPU samples by part of the program, percent (bench/support/cpu-profile.ts's groups). */
type CpuSplit = Record<
  "operator (src)" | "AWS SDK" | "Node internals" | "GC" | "prom-client" | "pino" | "other",
  number
>;
const steadyWall = json<{ steady: { cpuBusySamplesPercent: CpuSplit }[] }>("scale-steady-wall.json");
const steadySplit = (): CpuSplit => {
  const s = steadyWall.steady[0]?.cpuBusySamplesPercent;
  assert.ok(s !== undefined && typeof s === "object", "scale-steady-wall.json has a CPU split");
  return s;
};
const noopSplit = json<{ busySamplesPercent: CpuSplit }>("noop-profile.json").busySamplesPercent;
/** The SDK, Node and operator shares of the samples outside GC, whole percent. */
const withoutGc = (s: CpuSplit): string[] =>
  [s["AWS SDK"], s["Node internals"], s["operator (src)"]].map((v) =>
    String(Math.round((100 * v) / (100 - s.GC))),
  );

const steady20k = json<{
  perThousandObjects: { heapUsedMiB: number; rssAtRestMiB: number };
  steady: {
    newBuckets: { allReadySeconds: number; ratioToBound: number };
    throttlingErrors: number;
    effectivePollIntervalSeconds: {
      measured: Record<string, number>;
      operatorMetric: Record<string, number>;
    };
  }[];
}>("scale-20k.json");
const steady20kPass = (): (typeof steady20k.steady)[number] => {
  const s = steady20k.steady[0];
  assert.ok(s !== undefined, "scale-20k.json has a steady pass");
  return s;
};
const plan = json<{
  objects: { buckets: number; queues: number; instances: number; total: number };
  drift: { objects: number; made: Record<string, { count: number; path: string }> };
  plan: {
    exitCode: number;
    wallSeconds: number;
    phases: Record<
      "startAndCacheSyncSeconds" | "listTargetsSeconds" | "planSeconds" | "outputAndExitSeconds",
      number
    >;
    peakRssMiB: number;
    outputBytes: number;
    summary: Record<string, number>;
  };
  aws: {
    calls: number;
    mutatingCalls: number;
    readsPerObject: Record<string, number>;
    byService: Record<string, Record<string, number>>;
    budgets: {
      budget: string;
      ratePerSecond: number;
      burst: number;
      calls: number;
      callsPerSecond: number;
      ratioToRate: number;
      ratioToBucket: number;
    }[];
  };
  kubernetes: { requests: number; writes: number };
  withImageFlags: { wallSeconds: number; peakRssMiB: number };
}>("plan.json");
/** The plan's use of budget `name`, as the budget table of BENCHMARKS.md prints it. */
const planBudget = (name: string): string[] => {
  const b = plan.aws.budgets.find((x) => x.budget === name);
  assert.ok(b !== undefined, `plan.json has the ${name} budget`);
  return [
    String(b.ratePerSecond),
    String(b.burst),
    String(b.calls),
    b.callsPerSecond.toFixed(1),
    b.ratioToRate.toFixed(2),
    b.ratioToBucket.toFixed(2),
  ];
};
const exportRun = json<{
  estate: {
    buckets: number;
    queues: number;
    outsideQueues: number;
    instances: number;
    total: number;
    foreignOwned: { total: number };
  };
  export: {
    exitCode: number;
    wallSeconds: number;
    phases: Record<"startAndCacheSyncSeconds" | "awsCallsSeconds" | "writeAndExitSeconds", number>;
    peakRssMiB: number;
    manifests: { total: number; S3Bucket: number; SqsQueue: number; Ec2Instance: number };
    skipped: number;
    failed: number;
    outputBytes: number;
  };
  aws: {
    calls: number;
    mutatingCalls: number;
    readsPerResource: Record<string, number>;
    maxRatioToBucket: number;
    servedCallsPerSecond: number;
  };
  bound: {
    phases: {
      phase: string;
      calls: number;
      spanSeconds: number;
      callsPerSecond: number;
      boundSeconds: number;
      binding: { budget: string; key: string; ratePerSecond: number; burst: number };
    }[];
    sumOfPhaseBoundsSeconds: number;
    overlapSeconds: number;
    boundSeconds: number;
    wallToBound: number;
  };
  machine: { loadavg: number[] };
}>("export.json");
/** One phase of the export as the phase table of BENCHMARKS.md prints it. */
const exportPhase = (name: string): string[] => {
  const p = exportRun.bound.phases.find((x) => x.phase === name);
  assert.ok(p !== undefined, `export.json has the phase ${name}`);
  const { budget, key, ratePerSecond, burst } = p.binding;
  return [
    thousands(p.calls),
    p.spanSeconds.toFixed(1),
    p.callsPerSecond.toFixed(1),
    `\`${budget}\`${key !== budget ? `, \`${key}\`` : ""} (${ratePerSecond}/s, ${burst})`,
    p.boundSeconds.toFixed(1),
  ];
};
/** The figures: the file, a pattern whose groups capture the figures, and what they must be. */
const FIGURES: { file: string; what: string; pattern: RegExp; want: () => string[] }[] = [
  {
    file: "BENCHMARKS.md",
    what: "idle RSS of the bundle, and of the bundle as the image runs it",
    pattern:
      /\| now: the bundle `dist\/kubeprovisioner\.mjs` and its chunks \| (\d+) MiB \| \| now: the bundle with the image's V8 flags and heap ceiling \(the image\) \| (\d+) MiB/,
    want: () => [idleBundle(false), idleBundle(true)],
  },
  {
    file: "BENCHMARKS.md",
    what: "Kubernetes writes converging 5,150 objects, and the time they take at the API server's rate",
    pattern:
      /That is ([\d,]+) writes in that run .*? at (\d+) per second .*? the writes alone take (\d+) s\./,
    want: () => [thousands(writes(large.converge)), "82", String(Math.round(writes(large.converge) / 82))],
  },
  {
    file: "BENCHMARKS.md",
    what: "time until all Ready, now",
    pattern: /\| time until all Ready \|(?: [^|]+ \|){3} ([\d.]+) s \| ([\d.]+) s \|/,
    want: () => [small.converge.seconds.toFixed(1), large.converge.seconds.toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "5,150 objects against the write estimate",
    pattern: /\| ÷ bound \(goal ≤ 1\.2\) \|(?: [^|]+ \|){4} [\d.]+ \(([\d.]+) × the write estimate\) \|/,
    want: () => [(large.converge.seconds / Math.round(writes(large.converge) / 82)).toFixed(2)],
  },
  {
    file: "BENCHMARKS.md",
    what: "peak RSS, now",
    pattern: /\| peak RSS \|(?: [^|]+ \|){3} ([\d.]+) MiB \| ([\d.]+) MiB \|/,
    want: () => [small.converge.peakRssMiB.toFixed(1), large.converge.peakRssMiB.toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "operator CPU per converged object, now",
    pattern:
      /\| operator CPU per converged object \(goal ≤ 10 ms\) \|(?: [^|]+ \|){3} ([\d.]+) ms \| ([\d.]+) ms \|/,
    want: () => [small.converge.cpuMsPerObject.toFixed(1), large.converge.cpuMsPerObject.toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "status updates per object (S3Bucket and SqsQueue, Ec2Instance) and aggregated Events at 5,150",
    pattern:
      /\| Kubernetes requests per object \|(?: [^|]+ \|){3} 1 finalizer patch, (\d) status updates \(Ec2Instance: (\d)\), 1 Event \| same \(Events aggregated: ([\d,]+) for ([\d,]+)\) \|/,
    want: () => {
      for (const r of [small, large]) {
        assert.equal(statusUpdates(r.converge, "s3buckets", r.objects.buckets), 2, "S3 status updates");
        assert.equal(statusUpdates(r.converge, "sqsqueues", r.objects.queues), 2, "SQS status updates");
        assert.equal(
          statusUpdates(r.converge, "ec2instances", r.objects.instances),
          statusUpdates(small.converge, "ec2instances", small.objects.instances),
          "EC2 status updates, both runs",
        );
      }
      return [
        "2",
        String(statusUpdates(small.converge, "ec2instances", small.objects.instances)),
        thousands(large.converge.kubeRequests["create events"] ?? 0),
        thousands(large.objects.total),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "EC2 calls per instance converging in the idle run",
    pattern: /\(`filter-batcher\.ts`\): ([\d.]+) per instance in the idle run below/,
    want: () => [(idle.converge.awsCallsPerObject.Ec2Instance ?? 0).toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "EC2 calls per instance converging, 30-minute idle run",
    pattern: /and ([\d.]+) in the 30-minute one, with the lookups by tag batched/,
    want: () => [(idle.converge.awsCallsPerObject.Ec2Instance ?? 0).toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "idle: Kubernetes writes, calls per bucket and queue per poll, CPU per object per poll (30 min)",
    pattern:
      /\| Kubernetes writes while idle \|(?: [^|]+ \|){2} (\d+) \|.*?\| S3 calls per bucket per poll \|(?: [^|]+ \|){2} ([\d.]+) \|.*?\| SQS calls per queue per poll \|(?: [^|]+ \|){2} ([\d.]+) \|.*?\| operator CPU per object per poll \|(?: [^|]+ \|){2} ([\d.]+) ms \|/,
    want: () => [
      String(idle.idle.kubeWrites),
      (idle.idle.awsCallsPerObjectPerPoll.S3Bucket ?? 0).toFixed(2),
      (idle.idle.awsCallsPerObjectPerPoll.SqsQueue ?? 0).toFixed(2),
      idle.idle.cpuMsPerObjectPerPoll.toFixed(2),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "CPU per object per poll, prose",
    pattern: /CPU per object per poll was ([\d.]+) ms/,
    want: () => [idle.idle.cpuMsPerObjectPerPoll.toFixed(2)],
  },
  {
    file: "README.md",
    what: "peak RSS converging 5,150 objects",
    pattern: /Peak RSS while converging 5,150 objects: (\d+) MiB/,
    want: () => [String(Math.round(large.converge.peakRssMiB))],
  },
  {
    file: "README.md",
    what: "converge times",
    pattern: /plus 150 instances Ready in (\d+) s .*? 5,150 objects take (\d+) s,/,
    want: () => [String(Math.round(small.converge.seconds)), String(Math.round(large.converge.seconds))],
  },
  {
    file: "README.md",
    what: "calls per instance converging: the idle run's batched lookups to the largest scale run",
    pattern: /3 per queue, and ([\d.]+)–([\d.]+) per instance/,
    want: () => [
      (idle.converge.awsCallsPerObject.Ec2Instance ?? 0).toFixed(1),
      Math.max(...scale.map((r) => r.converge.awsCallsPerObject.Ec2Instance ?? 0)).toFixed(1),
    ],
  },
  {
    file: "README.md",
    what: "CPU per object per poll at rest (upper end: the committed idle run)",
    pattern: /[\d.]+–([\d.]+) ms of CPU per object per poll/,
    want: () => [idle.idle.cpuMsPerObjectPerPoll.toFixed(1)],
  },
  {
    file: "BENCHMARKS.md",
    what: "change events: drift repair p50 and p99, events and poll only, 1,000 and 10,000 objects",
    pattern:
      /\| drift repair p50, from the event's arrival \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) s \| \| drift repair p99 \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) s \|/,
    want: () => [
      ev1k.eventsMode.driftRepairSeconds.p50.toFixed(3),
      ev1k.pollOnlyMode.driftRepairSeconds.p50.toFixed(1),
      ev10k.eventsMode.driftRepairSeconds.p50.toFixed(3),
      ev10k.pollOnlyMode.driftRepairSeconds.p50.toFixed(1),
      ev1k.eventsMode.driftRepairSeconds.p99.toFixed(3),
      ev1k.pollOnlyMode.driftRepairSeconds.p99.toFixed(1),
      ev10k.eventsMode.driftRepairSeconds.p99.toFixed(3),
      ev10k.pollOnlyMode.driftRepairSeconds.p99.toFixed(1),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "change events: instances stopped out of band, started again, p50 and p99",
    pattern:
      /\| instance stopped out of band, started again: p50 \/ p99 \| ([\d.]+) s \/ ([\d.]+) s \| ([\d.]+) s \/ ([\d.]+) s \| ([\d.]+) s \/ ([\d.]+) s \| ([\d.]+) s \/ ([\d.]+) s \|/,
    want: () =>
      [ev1k, ev10k].flatMap((r) => [
        ...p50p99(r.eventsMode.instanceStopRepairSeconds, 3),
        ...p50p99(r.pollOnlyMode.instanceStopRepairSeconds, 1),
      ]),
  },
  {
    file: "BENCHMARKS.md",
    what: "change events: AWS reads per object per hour at rest and the ratio at the default poll",
    pattern:
      /\| AWS reads per object per hour at rest, measured \| ([\d.]+) \(the queue's long polls\) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| \| the same with the hourly safety-net poll \| ([\d.]+) \| \| ([\d.]+) \| \| \| poll only at the default 5 min ÷ events \(goal ≥ 10\) \| \*\*([\d.]+)\*\* \| \| \*\*([\d.]+)\*\* \| \|/,
    want: () => [
      ev1k.eventsMode.atRest.readsPerObjectPerHour.toFixed(2),
      ev1k.pollOnlyMode.atRest.readsPerObjectPerHour.toFixed(1),
      ev10k.eventsMode.atRest.readsPerObjectPerHour.toFixed(3),
      ev10k.pollOnlyMode.atRest.readsPerObjectPerHour.toFixed(1),
      ev1k.eventsMode.atRestWithHourlySafetyNetPoll.readsPerObjectPerHour.toFixed(2),
      ev10k.eventsMode.atRestWithHourlySafetyNetPoll.readsPerObjectPerHour.toFixed(2),
      ev1k.readsRatioPollOnlyToEvents.atTheDefaultPollInterval5m.toFixed(1),
      ev10k.readsRatioPollOnlyToEvents.atTheDefaultPollInterval5m.toFixed(1),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "the steady operator's busy CPU by part, 2,000 objects",
    pattern:
      /\| operator \(`src`\) \| AWS SDK \(`@aws-sdk`, `@smithy`\) \| Node internals \(HTTP, net, streams, crypto\) \| GC \| prom-client \| pino \| other \| \|(?: ---: \|){7} \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \|/,
    want: () => {
      const s = steadySplit();
      return [
        s["operator (src)"],
        s["AWS SDK"],
        s["Node internals"],
        s.GC,
        s["prom-client"],
        s.pino,
        s.other,
      ].map((v) => v.toFixed(1));
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "noop's busy CPU by part, in the noop section",
    pattern:
      /\| Node's HTTP, net and stream internals, with connection setup \|.*?\|(?: ---: \|){5} \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \|/,
    want: () =>
      [
        noopSplit["Node internals"],
        noopSplit["AWS SDK"],
        noopSplit["operator (src)"],
        noopSplit.GC,
        noopSplit["prom-client"] + noopSplit.pino + noopSplit.other,
      ].map((v) => v.toFixed(1)),
  },
  {
    file: "BENCHMARKS.md",
    what: "noop's busy CPU by part beside the steady one, and both without GC",
    pattern:
      /gives ([\d.]+) % SDK, ([\d.]+) % Node, ([\d.]+) % operator and ([\d.]+) % GC\. Without GC the two agree within five points \(steady: (\d+) % SDK, (\d+) % Node, (\d+) % operator of the other samples; noop: (\d+) %, (\d+) %, (\d+) %\)/,
    want: () => [
      ...[noopSplit["AWS SDK"], noopSplit["Node internals"], noopSplit["operator (src)"], noopSplit.GC].map(
        (v) => v.toFixed(1),
      ),
      ...withoutGc(steadySplit()),
      ...withoutGc(noopSplit),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "memory per 1,000 objects at 20,020",
    pattern:
      /\| \*\*per 1,000 objects: heap in use \/ RSS at rest\*\* \| \*\*([\d.]+) \/ ([\d.]+) MiB\*\* \|/,
    want: () => [
      steady20k.perThousandObjects.heapUsedMiB.toFixed(2),
      steady20k.perThousandObjects.rssAtRestMiB.toFixed(2),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "200 new buckets at 20,020 objects, the poll intervals measured and the gauge",
    pattern:
      /\| 20,020 objects, S3 at 10\/s, polls yield to real work \| \| \| --- \| ---: \| \| 200 new buckets, all Ready \| ([\d.]+) s \| \| ÷ the bound of 59 s \(goal ≤ 1\.2\) \| \*\*([\d.]+)\*\* \| \| throttling errors \(SlowDown from the proxy's bucket\) \| (\d+) \|.*?\| effective poll interval from the measured poll rate, S3Bucket \/ SqsQueue \(configured 300 s\) \| ([\d,]+) s \/ ([\d,]+) s \|.*?\| `kubeprovisioner_poll_interval_effective_seconds` S3Bucket \/ SqsQueue \| ([\d,]+) s \/ ([\d,]+) s \|/,
    want: () => {
      const p = steady20kPass();
      const e = p.effectivePollIntervalSeconds;
      return [
        p.newBuckets.allReadySeconds.toFixed(1),
        p.newBuckets.ratioToBound.toFixed(2),
        String(p.throttlingErrors),
        thousands(e.measured.S3Bucket ?? NaN),
        thousands(e.measured.SqsQueue ?? NaN),
        thousands(e.operatorMetric.S3Bucket ?? NaN),
        thousands(e.operatorMetric.SqsQueue ?? NaN),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "old heap ceiling, twice it: the estate, the ceilings and how each configuration went",
    pattern:
      /\*\*Method\*\* \(`bench\/scale\/ceiling\.ts`\)\. ([\d,]+) objects, ([\d,]+) S3Buckets and ([\d,]+) SqsQueues .*? 32 at a time \(([\d,]+) s\)\..*?\| heap ceiling \(`heap\.ceilingMiB` of the `starting` line\) \| (\d+) MiB \| (\d+) MiB \| \| how it went \| V8 heap out of memory during the initial list: exit (\d+) \(SIGABRT\) ([\d.]+) s after the start, and again ([\d.]+) s after a second start \| listed, passed the start check, still running after (\d+) s: (\d+) restarts \|/,
    want: () => {
      assert.ok(oldFirst && oldSecond, "two starts of the old configuration");
      for (const st of [oldFirst, oldSecond]) assert.equal(st.outcome, "V8 heap out of memory");
      assert.equal(oldSecond.exitCode, oldFirst.exitCode, "the same exit on the second start");
      return [
        thousands(ceiling.objects.total),
        thousands(ceiling.objects.buckets),
        thousands(ceiling.objects.queues),
        thousands(ceiling.estate.createSeconds),
        String(oldFirst.heapSizing.ceilingMiB),
        String(raised.heapSizing.ceilingMiB),
        String(oldFirst.exitCode),
        oldFirst.secondsToExit.toFixed(1),
        oldSecond.secondsToExit.toFixed(1),
        String(raised.heldSeconds),
        String(raised.restarts),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "old heap ceiling, twice it: list, heap, RSS and cgroup of both configurations",
    pattern:
      /\| initial list \| not completed \(peak heap in use ([\d.]+) MiB\) \| ([\d,]+) objects in ([\d.]+) s \| \| heap in use after the list, after a full collection \(the start check's `cache listed`\) \| \| (\d+) MiB, (\d+) % of the ceiling \(the check allows 60 %\) \| \| peak while listing: heap in use \/ RSS \/ cgroup usage \| \| ([\d.]+) \/ ([\d.]+) \/ ([\d.]+) MiB \| \| at the end: heap in use \/ `heapTotal` \/ RSS \| \| ([\d.]+) \/ ([\d.]+) \/ ([\d.]+) MiB \| \| cgroup peak, `memory\.failcnt`, OOM kills \| ([\d.]+) MiB, (\d+), (\d+) \| ([\d.]+) MiB, (\d+), (\d+) \|/,
    want: () => {
      assert.ok(oldFirst, "a start of the old configuration");
      assert.equal(oldFirst.cacheListed, undefined, "the old configuration never listed");
      return [
        oldFirst.peakHeapUsedMiB.toFixed(1),
        thousands(raised.cacheListed.objects),
        raised.secondsToList.toFixed(1),
        String(raised.cacheListed.heapUsedMiB),
        String(Math.round((100 * raised.cacheListed.heapUsedMiB) / raised.heapSizing.ceilingMiB)),
        raised.peakHeapUsedMiB.toFixed(1),
        raised.peakRssMiB.toFixed(1),
        raised.cgroup.peakMiB.toFixed(1),
        raised.atEnd.heapUsedMiB.toFixed(1),
        raised.atEnd.heapTotalMiB.toFixed(1),
        raised.atEnd.rssMiB.toFixed(1),
        oldFirst.cgroup.peakMiB.toFixed(1),
        String(oldFirst.cgroup.failcnt),
        String(oldFirst.cgroup.oomKills),
        raised.cgroup.peakMiB.toFixed(1),
        String(raised.cgroup.failcnt),
        String(raised.cgroup.oomKills),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "old heap ceiling, twice it: writes for the paused estate and the new buckets' work",
    pattern:
      /\| operator's Kubernetes writes for the 92,000 \| \| (\d+) \(each reconciled once, within ([\d.]+) s of the start\) \| \| (\d+) new unpaused S3Buckets, all Ready \| \| ([\d.]+) s \(HeadBucket, CreateBucket, PutBucketTagging: (\d+) each, the only AWS calls\) \|/,
    want: () => {
      const { HeadBucket, CreateBucket, PutBucketTagging, GetCallerIdentity, ...other } = raised.awsCalls;
      assert.deepEqual(other, {}, "no other AWS call than the new buckets' (and the caller identity)");
      assert.ok((GetCallerIdentity ?? 0) <= 1, "at most one caller-identity lookup");
      assert.equal(HeadBucket, CreateBucket, "one HeadBucket per CreateBucket");
      assert.equal(PutBucketTagging, CreateBucket, "one PutBucketTagging per CreateBucket");
      assert.equal(raised.newBuckets.ready, raised.newBuckets.count, "every new bucket Ready");
      return [
        String(Object.values(raised.kubeWritesAfterEveryReconcile).reduce((a, b) => a + b, 0)),
        raised.secondsToReconcileEvery.toFixed(1),
        String(raised.newBuckets.count),
        raised.newBuckets.allReadySeconds.toFixed(1),
        String(CreateBucket),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "old heap ceiling, twice it: the start check's refusal at 4,000 objects",
    pattern:
      /at 4,000 objects under a (\d+) MiB ceiling \(`node bench\/scale\/ceiling\.ts --objects=(\d+) --old-heap-mib=(\d+) --old-limit-mib=(\d+) --new-limit-mib=(\d+)`, `bench\/results\/ceiling-4k\.json`\) it refused with exit code (\d+) and its message, and on the next start the same estate ended in V8's heap out of memory instead/,
    want: () => {
      const [first, second] = ceiling4k.old.starts;
      assert.ok(first && second, "two starts at 4,000 objects");
      assert.equal(first.outcome, "start check refused");
      assert.equal(second.outcome, "V8 heap out of memory");
      assert.match(
        first.fatalLog ?? "",
        /^the cache of \d+ objects fills \d+ MiB of the \d+ MiB JS heap ceiling/,
      );
      return [
        String(first.heapSizing.ceilingMiB),
        String(ceiling4k.objects.total),
        String(ceiling4k.old.heapFlagMiB),
        String(ceiling4k.old.memoryLimitMiB),
        String(ceiling4k.raised.cgroup.memoryLimitMiB),
        String(first.exitCode),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "old heap ceiling, twice it: heap per 1,000 paused objects",
    pattern:
      /\*\*([\d.]+) MiB per 1,000 at rest\*\* here \(heap in use over ([\d.]+) MiB at zero objects, by the same gauge as the 20,020-object run; ([\d.]+) after a full collection, over (\d+) MiB\)/,
    want: () => [
      ceiling.perThousandObjects.heapUsedAtRestMiB.toFixed(2),
      ceiling.atZeroObjects.heapUsedMiB.toFixed(1),
      ceiling.perThousandObjects.heapUsedAtListMiB.toFixed(2),
      String(ceiling.atZeroObjects.cacheListedHeapUsedMiB),
    ],
  },
  {
    file: "docs/install.md",
    what: "the 92,000 paused objects under a raised limit, and the old ceiling's end",
    pattern:
      /At ([\d,]+) paused objects under a (\d+) GiB limit \(BENCHMARKS\.md, "The old heap ceiling and twice it"\) the cache filled (\d+) MiB of the (\d+) MiB ceiling, and the initial list took the cgroup's usage to (\d+) MiB at its peak; under the old fixed (\d+) MiB ceiling the same estate ended in V8's heap out of memory during the initial list/,
    want: () => {
      assert.equal(oldFirst?.outcome, "V8 heap out of memory");
      return [
        thousands(ceiling.objects.total),
        String(raised.cgroup.memoryLimitMiB / 1024),
        String(raised.cacheListed.heapUsedMiB),
        String(raised.heapSizing.ceilingMiB),
        String(Math.round(raised.cgroup.peakMiB)),
        String(ceiling.old.heapFlagMiB),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "a plan of 1,000 live objects: wall time, phases, the plan, reads, writes and peak RSS",
    pattern:
      /\| wall time of the plan \| \*\*([\d.]+) s\*\* \| \| start and cache sync \| ([\d.]+) s \| \| listing the targets \| ([\d.]+) s \| \| planning, until the last AWS call \| ([\d.]+) s \| \| output \((\d+) KB of JSON\) and exit \| ([\d.]+) s \| \| the plan \| (\d+) to update \((\d+) `spec\.versioning`, (\d+) `spec\.visibilityTimeoutSeconds`, (\d+) `spec\.tags\.bench`\), (\d+) in sync, (\d+) errors, exit (\d) \| \| AWS reads \| ([\d,]+): (\d) per bucket .*?, (\d) per queue .*?, (\d+) `DescribeInstances` for the (\d+) instances, (\d) `GetCallerIdentity` \| \| mutating AWS calls \| (\d+) \| \| Kubernetes requests of the plan \| (\d+) .*?; (\d+) writes \| \| peak RSS of the plan's process \| ([\d.]+) MiB \| \| the same plan with the image's V8 flags \(`--max-semi-space-size=1`\): wall time, peak RSS \| ([\d.]+) s, ([\d.]+) MiB \|.*? took (\d+) MiB off the peak at the same pace/,
    want: () => {
      const p = plan.plan;
      const made = (kind: string): string => String(plan.drift.made[kind]?.count);
      return [
        p.wallSeconds.toFixed(1),
        p.phases.startAndCacheSyncSeconds.toFixed(2),
        p.phases.listTargetsSeconds.toFixed(2),
        p.phases.planSeconds.toFixed(1),
        String(Math.round(p.outputBytes / 1000)),
        p.phases.outputAndExitSeconds.toFixed(2),
        String(p.summary.update),
        made("S3Bucket"),
        made("SqsQueue"),
        made("Ec2Instance"),
        String(p.summary.inSync),
        String(p.summary.error),
        String(p.exitCode),
        thousands(plan.aws.calls),
        String(plan.aws.readsPerObject.S3Bucket),
        String(plan.aws.readsPerObject.SqsQueue),
        String(plan.aws.byService.ec2?.DescribeInstances),
        String(plan.objects.instances),
        String(plan.aws.byService.sts?.GetCallerIdentity),
        String(plan.aws.mutatingCalls),
        String(plan.kubernetes.requests),
        String(plan.kubernetes.writes),
        p.peakRssMiB.toFixed(1),
        plan.withImageFlags.wallSeconds.toFixed(1),
        plan.withImageFlags.peakRssMiB.toFixed(1),
        String(Math.round(p.peakRssMiB - plan.withImageFlags.peakRssMiB)),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "a plan of 1,000 live objects: the S3 and SQS budgets, and the ratios the prose quotes",
    pattern:
      /\| `s3` \((\d+)\/s, (\d+)\) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| \| `sqs` \((\d+)\/s, (\d+)\) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|.*?what its bucket allows and no more \(([\d.]+) and ([\d.]+);.*?each is at ([\d.]+) of its rate/,
    want: () => {
      const s3 = planBudget("s3");
      const sqs = planBudget("sqs");
      assert.equal(s3[4], sqs[4], "S3 and SQS at the same share of their rate");
      return [...s3, ...sqs, s3[5] ?? "", sqs[5] ?? "", s3[4] ?? ""];
    },
  },
  {
    file: "README.md",
    what: "a plan of 1,000 live objects",
    pattern:
      /\*\*Plan\.\*\* `kubeprovisioner plan --live` of ([\d,]+) live objects, (\d+) of them drifted, takes (\d+) s, .*? with (\d+) mutating AWS calls and (\d+) Kubernetes writes\./,
    want: () => [
      thousands(plan.objects.total),
      String(plan.drift.objects),
      String(Math.round(plan.plan.wallSeconds)),
      String(plan.aws.mutatingCalls),
      String(plan.kubernetes.writes),
    ],
  },
  {
    file: "BENCHMARKS.md",
    what: "an export of 10,000 resources: the estate, wall time, phases, manifests, reads, RSS and bound",
    pattern:
      /\*\*Result\*\* \(load average ([\d.]+) at the end\): \| \| ([\d,]+) resources: ([\d,]+) buckets, ([\d,]+) queues, ([\d,]+) instances; ([\d,]+) foreign-owned \| \| --- \| ---: \| \| wall time of the export \| \*\*([\d.]+) s\*\* \| \| start and cache sync, until the first AWS call \| ([\d.]+) s \| \| AWS calls, from the first to the last \| ([\d.]+) s \| \| writing the manifests \(([\d,]+) KB\) and exit \| ([\d.]+) s \| \| manifests \| ([\d,]+) written \(([\d,]+) S3Bucket, ([\d,]+) SqsQueue, ([\d,]+) Ec2Instance\), ([\d,]+) skipped \(foreign-owned\), (\d+) failed, exit (\d+) \| \| AWS reads \| ([\d,]+): ([\d.]+) per bucket, ([\d.]+) per queue, ([\d.]+) per instance, and ([\d,]+) listing \| \| mutating AWS calls \| (\d+) \| \| peak RSS of the export's process \| ([\d.]+) MiB \| \| read-budget bound \| ([\d.]+) s; wall time ([\d.]+) × the bound \| \| calls per second the test AWS served, over the AWS calls \| ([\d.]+) \| \| most of a budget's bucket used over the span of its calls \| ([\d.]+) \|/,
    want: () => {
      const { estate: e, export: x, aws, bound } = exportRun;
      return [
        (exportRun.machine.loadavg[0] ?? 0).toFixed(1),
        thousands(e.total),
        thousands(e.buckets),
        thousands(e.queues + e.outsideQueues),
        thousands(e.instances),
        thousands(e.foreignOwned.total),
        x.wallSeconds.toFixed(1),
        x.phases.startAndCacheSyncSeconds.toFixed(2),
        x.phases.awsCallsSeconds.toFixed(1),
        thousands(x.outputBytes / 1000),
        x.phases.writeAndExitSeconds.toFixed(2),
        thousands(x.manifests.total),
        thousands(x.manifests.S3Bucket),
        thousands(x.manifests.SqsQueue),
        thousands(x.manifests.Ec2Instance),
        thousands(x.skipped),
        String(x.failed),
        String(x.exitCode),
        thousands(aws.calls),
        String(aws.readsPerResource.S3Bucket),
        String(aws.readsPerResource.SqsQueue),
        String(aws.readsPerResource.Ec2Instance),
        thousands(bound.phases.find((p) => p.phase === "list")?.calls ?? 0),
        String(aws.mutatingCalls),
        x.peakRssMiB.toFixed(1),
        bound.boundSeconds.toFixed(1),
        bound.wallToBound.toFixed(2),
        aws.servedCallsPerSecond.toFixed(1),
        aws.maxRatioToBucket.toFixed(2),
      ];
    },
  },
  {
    file: "BENCHMARKS.md",
    what: "an export of 10,000 resources: each phase's calls, span, pace and bound, and the export's bound",
    pattern:
      /\| listing \| ([\d,]+) \| ([\d.]+) s \| ([\d.]+) \| (.+?) \| ([\d.]+) s \| \| reading the instances \| ([\d,]+) \| ([\d.]+) s \| ([\d.]+) \| (.+?) \| ([\d.]+) s \| \| reading the buckets \| ([\d,]+) \| ([\d.]+) s \| ([\d.]+) \| (.+?) \| ([\d.]+) s \| \| reading the queues \| ([\d,]+) \| ([\d.]+) s \| ([\d.]+) \| (.+?) \| ([\d.]+) s \| \| the export \| ([\d,]+) \| \| \| sum ([\d.]+) s, less ([\d.]+) s side by side \| ([\d.]+) s \|/,
    want: () => [
      ...exportPhase("list"),
      ...exportPhase("read ec2"),
      ...exportPhase("read s3"),
      ...exportPhase("read sqs"),
      thousands(exportRun.aws.calls),
      exportRun.bound.sumOfPhaseBoundsSeconds.toFixed(1),
      exportRun.bound.overlapSeconds.toFixed(1),
      exportRun.bound.boundSeconds.toFixed(1),
    ],
  },
  {
    file: "README.md",
    what: "an export of 10,000 resources",
    pattern:
      /\*\*Export\.\*\* `kubeprovisioner export` of ([\d,]+) resources \(([\d,]+) of them foreign-owned, skipped\) writes ([\d,]+) manifests in ([\d,]+) s, ([\d.]+) × its read-budget bound, with (\d+) mutating AWS calls and a peak RSS of ([\d.]+) MiB\./,
    want: () => [
      thousands(exportRun.estate.total),
      thousands(exportRun.estate.foreignOwned.total),
      thousands(exportRun.export.manifests.total),
      thousands(exportRun.export.wallSeconds),
      exportRun.bound.wallToBound.toFixed(2),
      String(exportRun.aws.mutatingCalls),
      exportRun.export.peakRssMiB.toFixed(1),
    ],
  },
];

describe("benchmark figures in BENCHMARKS.md and the README", () => {
  it("are the committed results of bench/results/*.json", () => {
    const wrong: string[] = [];
    for (const f of FIGURES) {
      const m = f.pattern.exec(text(f.file));
      if (m === null) {
        wrong.push(`${f.file}: ${f.what}: the sentence is not found (${f.pattern.source})`);
        continue;
      }
      const got = m.slice(1);
      const want = f.want();
      if (JSON.stringify(got) !== JSON.stringify(want))
        wrong.push(
          `${f.file}: ${f.what}: the text says ${got.join(", ")}, the results say ${want.join(", ")}`,
        );
    }
    assert.deepEqual(wrong, []);
  });
});
