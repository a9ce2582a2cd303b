/** A benchmark's result: a JSON file under bench/results, and the same on standard output. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Writes `result` as indented JSON to `file` (its folder made if absent) and to standard output. */
export function writeResult(file: string, result: unknown): void {
  const text = JSON.stringify(result, null, 2) + "\n";
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(text);
}
