/**
 * Reads the per-repetition JSON lines of both benchmark programs and writes
 * bench/results/queue.json: the median wall time and reconcile count of each side, the largest
 * overlap count seen in any repetition (one overlap in any run is a failure), and
 * ratio_wall = ts / client_go. Prints a markdown table.
 *
 * Usage: node bench/queue/summarize.ts <ts-lines-file> <go-lines-file> <output.json>
 */
import { readFileSync, writeFileSync } from "node:fs";

interface Run {
  wall_s: number;
  reconciles: number;
  overlaps: number;
  stale_keys: number;
}

interface Side {
  wall_s: number;
  reconciles: number;
  overlaps: number;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function read(path: string): Run[] {
  const runs = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Run);
  if (runs.length === 0) throw new Error(`no runs in ${path}`);
  return runs;
}

function summarise(runs: Run[]): Side {
  return {
    wall_s: Number(median(runs.map((r) => r.wall_s)).toFixed(4)),
    reconciles: Math.round(median(runs.map((r) => r.reconciles))),
    overlaps: Math.max(...runs.map((r) => r.overlaps)),
  };
}

const [tsFile, goFile, outFile] = process.argv.slice(2);
if (tsFile === undefined || goFile === undefined || outFile === undefined) {
  console.error("usage: summarize.ts <ts-lines> <go-lines> <out.json>");
  process.exit(2);
}
const tsRuns = read(tsFile);
const goRuns = read(goFile);
const ts = summarise(tsRuns);
const clientGo = summarise(goRuns);
const result = { ts, client_go: clientGo, ratio_wall: Number((ts.wall_s / clientGo.wall_s).toFixed(3)) };
writeFileSync(outFile, JSON.stringify(result) + "\n");

const stale = [...tsRuns, ...goRuns].reduce((n, r) => n + r.stale_keys, 0);
console.log(`| queue | wall (s, median of ${tsRuns.length}) | reconciles | overlaps |`);
console.log("| --- | ---: | ---: | ---: |");
console.log(
  `| kubeprovisioner WorkQueue (TypeScript) | ${ts.wall_s.toFixed(4)} | ${ts.reconciles} | ${ts.overlaps} |`,
);
console.log(
  `| client-go workqueue (Go) | ${clientGo.wall_s.toFixed(4)} | ${clientGo.reconciles} | ${clientGo.overlaps} |`,
);
console.log(`\nratio_wall (ts / client_go) = ${result.ratio_wall}`);
if (ts.overlaps > 0 || clientGo.overlaps > 0 || stale > 0) {
  console.error(`FAIL: overlaps ts=${ts.overlaps} client_go=${clientGo.overlaps}, stale keys ${stale}`);
  process.exit(1);
}
