/**
 * Sizes of the fault cases and where their figures go. `FAULTS_PROFILE=full` (`make test-faults`)
 * runs every case at the size the reliability report states; anything else runs the reduced pass
 * that `make test` includes. With `FAULTS_RESULTS=1` each case merges its figures into
 * bench/results/faults.json (keyed by profile and case), which `test/faults/report.ts` renders into
 * docs/reliability.md; without it the figures are only printed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "../support/process.ts";
import { profileOf, sizedBy, type Profile } from "../support/profile.ts";

export const profile: Profile = profileOf("FAULTS_PROFILE");

/** `full` when running the full suite, else `reduced`. */
export const sized = sizedBy("FAULTS_PROFILE");

export const resultsFile = path.join(repoRoot, "bench/results/faults.json");

/** The file's shape: profile -> case -> figures. */
export type Results = Partial<Record<Profile | "soak", Record<string, CaseFigures>>>;

/** Figures of one case. */
export interface CaseFigures {
  /** When the case ran (ISO time). */
  ranAt: string;
  /** CPUs and load of the machine at the time. */
  machine: string;
  /** The sizes used. */
  sizes: Record<string, number | string>;
  /** The measured figures. */
  figures: Record<string, number | string | boolean>;
}

/** Prints the figures of `name` and, with FAULTS_RESULTS=1, merges them into {@link resultsFile}. */
export function record(
  name: string,
  sizes: CaseFigures["sizes"],
  figures: CaseFigures["figures"],
  group: Profile | "soak" = profile,
): void {
  const entry: CaseFigures = {
    ranAt: new Date().toISOString(),
    machine: `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "unknown"}), load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
    sizes,
    figures,
  };
  console.log(`[faults] ${group}/${name}: ${JSON.stringify({ sizes, figures })}`);
  if (process.env.FAULTS_RESULTS !== "1") return;
  const all: Results = existsSync(resultsFile)
    ? (JSON.parse(readFileSync(resultsFile, "utf8")) as Results)
    : {};
  all[group] = { ...(all[group] ?? {}), [name]: entry };
  mkdirSync(path.dirname(resultsFile), { recursive: true });
  writeFileSync(resultsFile, `${JSON.stringify(all, null, 2)}\n`);
}
