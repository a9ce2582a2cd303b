/**
 * `make bench-scale`, `make bench-idle` and `make bench-throttle`: runs bench/scale/scale.ts as a fresh process per
 * size, then writes bench/results/<name>.json and its SVG charts.
 *
 *   node bench/scale/run.ts scale [--sizes 1000,5000] [--instances 150]
 *   node bench/scale/run.ts idle  [--size 1000] [--instances 150] [--idle 300] [--poll 60]
 *   node bench/scale/run.ts throttle [--instances 500]
 *   node bench/scale/run.ts startup   (zero objects: sources, tsc output, bundle, bundle as the image runs it)
 *
 * A size N is N/2 buckets and N/2 queues, plus the instances (moto's EC2 slows down sharply
 * past a few hundred instances, so EC2 stays at --instances; S3 and SQS carry the large counts).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { heapCeilingMiB } from "../../src/heap/ceiling.ts";
import { repoRoot } from "../../test/support/process.ts";
import { lineChart } from "../support/svg-chart.ts";
import { imageAllocatorEnv, imageNodeOptions } from "../support/image-node-options.ts";

const { values, positionals } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,5000" },
    size: { type: "string", default: "1000" },
    instances: { type: "string", default: "150" },
    idle: { type: "string", default: "300" },
    poll: { type: "string", default: "60" },
    "latency-ms": { type: "string", default: "80" },
    args: { type: "string", default: "" },
    "node-args": { type: "string", default: imageNodeOptions() },
  },
  allowPositionals: true,
});
const which = positionals[0] ?? "scale";

/**
 * The heap ceiling the image's process runs with under the chart's default memory limit: at start
 * it replaces itself once with `--max-old-space-size` from the cgroup's limit (src/heap/ceiling.ts).
 * This machine runs the benchmark without such a limit, so it passes the flag the image would get.
 */
function imageHeapFlag(): string {
  const values = readFileSync(path.join(repoRoot, "charts/kubeprovisioner/values.yaml"), "utf8");
  const mi = /^ {2}limits:\n(?: {4}.*\n)*? {4}memory: (\d+)Mi$/m.exec(values)?.[1];
  if (mi === undefined) throw new Error("no resources.limits.memory in Mi in the chart's values.yaml");
  return `--max-old-space-size=${heapCeilingMiB(Number(mi) * 1024 * 1024)}`;
}
const results = path.join(repoRoot, "bench/results");
mkdirSync(results, { recursive: true });

interface Run {
  objects: { buckets: number; queues: number; instances: number; total: number };
  idleRssBeforeObjectsMiB: number;
  converge: { seconds: number; peakRssMiB: number; rssMiB: number; awsCalls: Record<string, number> };
  idle?: { rssMiB: { start: number; end: number } };
  samples: { t: number; rssMiB: number; cpuSeconds: number }[];
}

function runScale(buckets: number, queues: number, extra: string[]): Run {
  const args = [
    path.join(repoRoot, "bench/scale/scale.ts"),
    `--buckets=${buckets}`,
    `--queues=${queues}`,
    `--instances=${values.instances}`,
    `--latency-ms=${values["latency-ms"]}`,
    ...(values.args !== "" ? [`--args=${values.args}`] : []),
    `--node-args=${values["node-args"]}`,
    ...extra,
  ];
  const out = execFileSync(process.execPath, args, {
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 256 << 20,
  });
  return JSON.parse(out.toString("utf8")) as Run;
}

const write = (name: string, data: unknown): void => {
  writeFileSync(
    path.join(results, name),
    typeof data === "string" ? data : JSON.stringify(data, null, 2) + "\n",
  );
};

if (which === "scale") {
  const runs: Run[] = [];
  for (const size of values.sizes.split(",").map(Number)) {
    // The operator's default poll interval (5m): the steady polls of early objects then stay out
    // of the converge at these sizes.
    runs.push(runScale(Math.floor(size / 2), Math.ceil(size / 2), ["--poll=300"]));
  }
  // The per-second samples make the JSON large; the chart below keeps what a reader needs.
  write("scale.json", { runs: runs.map(({ samples: _s, ...r }) => r) });
  const totals = runs.map((r) => r.objects.total);
  const pts = (f: (r: Run) => number): [number, number][] => runs.map((r, i) => [totals[i] ?? 0, f(r)]);
  write(
    "scale-time.svg",
    lineChart({
      title: "Time until every object is Ready",
      xLabel: "objects (half buckets, half queues, plus instances)",
      yLabel: "seconds",
      series: [{ name: "converge", points: pts((r) => r.converge.seconds) }],
    }),
  );
  write(
    "scale-rss.svg",
    lineChart({
      title: "Operator RSS against object count",
      xLabel: "objects",
      yLabel: "MiB",
      series: [
        { name: "peak during converge", points: pts((r) => r.converge.peakRssMiB) },
        { name: "after converge", points: pts((r) => r.converge.rssMiB) },
        { name: "before any object", points: pts((r) => r.idleRssBeforeObjectsMiB) },
      ],
    }),
  );
  write(
    "scale-aws-calls.svg",
    lineChart({
      title: "AWS calls to converge",
      xLabel: "objects",
      yLabel: "calls",
      series: [
        {
          name: "all operations",
          points: pts((r) => Object.values(r.converge.awsCalls).reduce((a, b) => a + b, 0)),
        },
      ],
    }),
  );
} else if (which === "idle") {
  const size = Number(values.size);
  const run = runScale(Math.floor(size / 2), Math.ceil(size / 2), [
    `--poll=${values.poll}`,
    `--idle=${values.idle}`,
  ]);
  write("idle.json", { ...run, samples: run.samples.filter((_, i) => i % 5 === 0) });
  write(
    "idle-rss.svg",
    lineChart({
      title: `Operator RSS while converging ${run.objects.total} objects, then idle`,
      xLabel: "seconds since the operator was ready",
      yLabel: "MiB",
      series: [{ name: "RSS", points: run.samples.map((s) => [s.t, s.rssMiB] as const) }],
    }),
  );
} else if (which === "startup") {
  // RSS of the operator with zero objects, ready and settled, per way of running it; the first
  // three read the admin kubeconfig file.
  const entries: [string, string, string[]][] = [
    ["src/main.ts", "", []],
    ["dist/main.js", "", []],
    ["dist/kubeprovisioner.mjs", "", []],
    // What the image runs: its V8 flags and the heap ceiling of the chart's memory limit, its
    // allocator settings, and the in-cluster configuration of a pod.
    [
      "dist/kubeprovisioner.mjs",
      `${values["node-args"]} ${imageHeapFlag()}`,
      ["--in-cluster", ...imageAllocatorEnv().map((e) => `--env=${e}`)],
    ],
  ];
  const runs = entries.map(([entry, nodeArgs, extra]) => {
    const out = execFileSync(
      process.execPath,
      [
        path.join(repoRoot, "bench/footprint/startup-rss.ts"),
        `--entry=${entry}`,
        "--settle=20",
        ...extra,
        "--",
        ...nodeArgs.split(" ").filter(Boolean),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    return JSON.parse(out.toString("utf8")) as unknown;
  });
  write("startup.json", { runs });
} else if (which === "throttle") {
  const instances = Number(values.instances);
  const run = runScale(0, 0, ["--ec2-throttle", `--poll=${values.poll}`]) as Run & {
    converge: { refusedByEc2Throttling?: Record<string, number> };
  };
  // RunInstances draws on a bucket of 5 refilled at 2 per second: no client can launch faster.
  const boundSeconds = Math.max(0, instances - 5) / 2;
  write("throttle.json", {
    instances,
    runInstancesBoundSeconds: boundSeconds,
    convergeSeconds: run.converge.seconds,
    ratioToBound: run.converge.seconds / boundSeconds,
    refused: run.converge.refusedByEc2Throttling ?? {},
    awsCalls: run.converge.awsCalls,
    peakRssMiB: run.converge.peakRssMiB,
  });
} else {
  throw new Error(`unknown benchmark ${which}: scale, idle or throttle`);
}
