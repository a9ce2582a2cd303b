/**
 * Cost of a /metrics scrape that includes `kubeprovisioner_managed_resources`, which counts the
 * cached objects of each kind by their Ready and Synced conditions at scrape time.
 *
 * For each size, three kinds share the objects equally (10% not Ready, 5% not Synced, 1% without
 * conditions), as the informer cache holds them (frozen). After untimed warm-up scrapes, REPS
 * scrapes are timed one by one and the median and p90 are reported. The registry holds only this
 * gauge, so the time is the gauge's own cost. Writes bench/results/managed-resources.json.
 *
 *   node bench/metrics/managed-resources.ts [--sizes 1000,10000,100000] [--reps 31]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Registry } from "prom-client";
import type { Condition } from "../../src/api/v1/index.ts";
import type { ManagedObject } from "../../src/reconcilers/common/driver.ts";
import { countManagedResources } from "../../src/reconcilers/common/metrics.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    reps: { type: "string", default: "31" },
  },
});
const sizes = values.sizes.split(",").map(Number);
const reps = Number(values.reps);
const KINDS = ["Ec2Instance", "S3Bucket", "SqsQueue"];

function objects(kind: string, n: number): readonly Readonly<ManagedObject>[] {
  const out: Readonly<ManagedObject>[] = [];
  for (let i = 0; i < n; i++) {
    const at = "2026-01-01T00:00:00Z";
    const conditions: Condition[] =
      i % 100 === 0
        ? []
        : [
            {
              type: "Ready",
              status: i % 10 === 0 ? "False" : "True",
              reason: "R",
              message: "",
              lastTransitionTime: at,
            },
            {
              type: "Synced",
              status: i % 20 === 0 ? "False" : "True",
              reason: "S",
              message: "",
              lastTransitionTime: at,
            },
          ];
    out.push(
      Object.freeze({
        apiVersion: "compute.cloud.com/v1",
        kind,
        metadata: { namespace: `ns-${i % 50}`, name: `${kind.toLowerCase()}-${i}` },
        spec: {
          region: "us-east-1",
          deletionPolicy: "Delete",
          adoptExisting: false,
          onDeletedOutOfBand: "Recreate",
        },
        status: { conditions },
      } as const),
    );
  }
  return out;
}

async function timeScrapes(registry: Registry): Promise<{ medianMs: number; p90Ms: number }> {
  for (let i = 0; i < 5; i++) await registry.metrics();
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await registry.metrics();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number): number => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN;
  return { medianMs: Number(at(0.5).toFixed(3)), p90Ms: Number(at(0.9).toFixed(3)) };
}

const results = [];
for (const total of sizes) {
  const registry = new Registry();
  for (const kind of KINDS) {
    const cached = objects(kind, Math.round(total / KINDS.length));
    countManagedResources(registry, kind, () => cached);
  }
  const scrape = await timeScrapes(registry);
  results.push({ objects: total, scrape });
  console.log(
    `${String(total).padStart(7)} objects: scrape median ${scrape.medianMs} ms, p90 ${scrape.p90Ms} ms`,
  );
}

const out = {
  benchmark: "managed-resources-gauge",
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
  reps,
  results,
};
const file = path.join(import.meta.dirname, "../results/managed-resources.json");
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
