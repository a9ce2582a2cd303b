/**
 * Where the operator's memory goes with many objects cached: the operator (the image's bundle
 * and V8 flags) converges `--buckets` buckets and `--queues` queues against a real
 * kube-apiserver and moto, then writes a V8 heap snapshot (`--heapsnapshot-signal`). The
 * snapshot's self sizes are summed by node type and by constructor, next to the process RSS and
 * V8's heap statistics at that moment. Writes `bench/results/heap.json`.
 *
 *   node bench/footprint/heap-snapshot.ts [--buckets 500] [--queues 500]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator } from "../../test/support/operator.ts";
import { inParallel } from "../../test/support/pool.ts";
import { repoRoot, waitFor } from "../../test/support/process.ts";
import { childPid, procStats } from "../support/proc-stats.ts";
import { imageNodeOptions } from "../support/image-node-options.ts";
import { readyNames } from "../support/ready.ts";

const { values } = parseArgs({
  options: {
    buckets: { type: "string", default: "500" },
    queues: { type: "string", default: "500" },
  },
});
const NS = "heap";
const imageFlags = imageNodeOptions().split(" ").filter(Boolean);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self sizes of a heap snapshot, summed by node type and by constructor name (objects). */
function summarize(file: string): { byType: Record<string, number>; byConstructor: Record<string, number> } {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [iType, iName, iSize] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const byType: Record<string, number> = {};
  const byConstructor: Record<string, number> = {};
  for (let i = 0; i < snap.nodes.length; i += width) {
    const size = snap.nodes[i + (iSize ?? 0)] ?? 0;
    let type = types[snap.nodes[i + (iType ?? 0)] ?? 0] ?? "?";
    // Long strings are module sources and the like; object data is short strings.
    if (type === "string" && size >= 4096) type = "string of 4 KiB or more";
    byType[type] = (byType[type] ?? 0) + size;
    if (type === "object") {
      const name = snap.strings[snap.nodes[i + (iName ?? 0)] ?? 0] ?? "?";
      byConstructor[name] = (byConstructor[name] ?? 0) + size;
    }
  }
  const mib = (r: Record<string, number>, top: number): Record<string, number> =>
    Object.fromEntries(
      Object.entries(r)
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, v]) => [k, Math.round((v / 2 ** 20) * 100) / 100]),
    );
  return { byType: mib(byType, 20), byConstructor: mib(byConstructor, 25) };
}

const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-heap-"));
let result: unknown;
try {
  await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
  const op = await startOperator({
    kubeconfig: cp.kubeconfigPath,
    env: moto.env,
    dir,
    entry: "dist/kubeprovisioner.mjs",
    nodeArgs: [...imageFlags, "--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`],
    args: ["--leader-elect=false"],
  });
  const pid = childPid(op.process.proc.pid ?? 0, "kubeprovisioner.mjs");
  const heapMiB = async (): Promise<Record<string, number>> => ({
    used: (await op.metric("nodejs_heap_size_used_bytes")) / 2 ** 20,
    total: (await op.metric("nodejs_heap_size_total_bytes")) / 2 ** 20,
    external: (await op.metric("nodejs_external_memory_bytes")) / 2 ** 20,
  });
  const seen = new Set<string>();
  /** Signals the operator and waits for the snapshot file it writes, complete. */
  const snapshot = async (): Promise<string> => {
    op.signal("SIGUSR2");
    let file = "";
    await waitFor(
      "the heap snapshot",
      async () => {
        const f = readdirSync(dir).find((x) => x.endsWith(".heapsnapshot") && !seen.has(x));
        if (f === undefined) return false;
        try {
          JSON.parse(readFileSync(path.join(dir, f), "utf8"));
        } catch {
          return false; // still being written
        }
        seen.add(f);
        file = path.join(dir, f);
        return true;
      },
      300_000,
      1000,
    );
    return file;
  };
  await new Promise((r) => setTimeout(r, 5000));
  const idle = procStats(pid);
  const idleHeap = await heapMiB();
  const idleSnapshot = summarize(await snapshot());
  const todo = [
    ...Array.from(
      { length: Number(values.buckets) },
      (_, i) => ["s3buckets", "S3Bucket", "bucketName", i] as const,
    ),
    ...Array.from(
      { length: Number(values.queues) },
      (_, i) => ["sqsqueues", "SqsQueue", "queueName", i] as const,
    ),
  ];
  await inParallel(todo, 16, async ([plural, kind, field, i]) => {
    const name = `${plural.slice(0, 3)}-heap-${String(i).padStart(5, "0")}`;
    await cp.request("POST", `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`, {
      apiVersion: "compute.cloud.com/v1",
      kind,
      metadata: { name },
      spec: { [field]: name, region: "us-east-1", tags: { bench: "heap" } },
    });
  });
  await waitFor(
    "every object Ready",
    async () => {
      let ready = 0;
      for (const plural of ["s3buckets", "sqsqueues"])
        ready += (await readyNames(cp, `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`)).length;
      return ready === todo.length;
    },
    900_000,
    1000,
  );
  const convergedHeap = await heapMiB();
  const convergedSnapshot = summarize(await snapshot());
  await op.stop();
  result = {
    objects: todo.length,
    // Writing a snapshot takes native memory the process keeps, so RSS after the first one says
    // nothing about the objects; `make bench-scale` measures RSS.
    rssMiBBeforeAnySnapshot: idle.rssMiB,
    heapMiB: { idle: idleHeap, converged: convergedHeap },
    snapshotSelfSizesMiB: {
      idle: idleSnapshot,
      converged: convergedSnapshot,
      growthByType: Object.fromEntries(
        Object.entries(convergedSnapshot.byType).map(([k, v]) => [
          k,
          Math.round((v - (idleSnapshot.byType[k] ?? 0)) * 100) / 100,
        ]),
      ),
    },
    machine: { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() },
  };
} finally {
  await moto.stop();
  await cp.stop();
}
const out = path.join(repoRoot, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, "heap.json"), JSON.stringify(result, null, 2) + "\n");
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
