/** An estate made outside the operator, with boto3 (./seed-estate.py), for the export's tests and benchmark. */
import path from "node:path";
import { repoRoot, runCommand } from "./process.ts";

/** What seed-estate.py made, each kind in the order of its numbers. */
export interface SeededEstate {
  buckets: string[];
  queues: string[];
  instances: string[];
  /** Buckets and queues with another cluster's ownership tags. */
  foreign: string[];
  /** Queue URLs outside the estate's prefix (a dead-letter queue). */
  outside: string[];
}

/** Seeds the test AWS at `endpoint` with `counts` resources named from `prefix`, `workers` at a time. */
export async function seedEstate(
  endpoint: string,
  counts: { buckets: number; queues: number; instances: number },
  prefix: string,
  workers = 1,
): Promise<SeededEstate> {
  const seed = await runCommand(path.join(repoRoot, ".venv/bin/python"), [
    path.join(repoRoot, "test/support/seed-estate.py"),
    endpoint,
    String(counts.buckets),
    String(counts.queues),
    String(counts.instances),
    prefix,
    `--workers=${workers}`,
  ]);
  return JSON.parse(seed.stdout) as SeededEstate;
}
