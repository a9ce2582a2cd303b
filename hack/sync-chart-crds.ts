// Copies the generated CRDs (config/crd) into the Helm chart's crds/ folder
// (charts/kubeprovisioner/crds), byte for byte, and removes chart copies whose source is gone.
// Helm installs the files of crds/ when a CRD is absent and never upgrades or deletes them
// (docs/install.md, "CRDs").
//
//   node hack/sync-chart-crds.ts           write the chart copies
//   node hack/sync-chart-crds.ts --check   exit 1 and list the differences instead of writing
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The chart's crds/ folder: what Helm installs before the templates when a CRD is absent. */
export const CHART_CRDS = join(root, "charts/kubeprovisioner/crds");

/** Where the CRDs come from and where the chart keeps them. */
export interface CrdSyncDirs {
  /** @default <repo>/config/crd */
  readonly source?: string;
  /** @default <repo>/charts/kubeprovisioner/crds */
  readonly target?: string;
}

/** One file that differs between config/crd and the chart. */
export interface CrdDifference {
  readonly file: string;
  readonly change: "missing" | "changed" | "extra";
}

function yamlFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml").sort();
}

/**
 * Reads the CRD sources. Each must hold exactly one CustomResourceDefinition: one file per CRD,
 * as config/crd's kustomization lists them and as `kubectl apply -f` of the chart's crds/ applies them.
 * @throws Error naming the file when it holds anything else.
 */
function sources(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of yamlFiles(dir)) {
    const text = readFileSync(join(dir, f), "utf8");
    const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
    const kinds = docs.map((d) => (d.toJS() as { kind?: unknown } | null)?.kind);
    if (kinds.length !== 1 || kinds[0] !== "CustomResourceDefinition") {
      throw new Error(
        `${join(dir, f)}: expected exactly one CustomResourceDefinition, found ${JSON.stringify(kinds)}`,
      );
    }
    out.set(f, text);
  }
  return out;
}

/**
 * Compares config/crd with the chart's copies. Empty means in sync. Never writes.
 * @throws Error when a source file is not a single CRD.
 */
export function diffChartCrds(dirs: CrdSyncDirs = {}): CrdDifference[] {
  const source = dirs.source ?? join(root, "config/crd");
  const target = dirs.target ?? CHART_CRDS;
  const want = sources(source);
  const have = new Set(yamlFiles(target));
  const diffs: CrdDifference[] = [];
  for (const [f, text] of want) {
    if (!have.has(f)) diffs.push({ file: f, change: "missing" });
    else if (readFileSync(join(target, f), "utf8") !== text) diffs.push({ file: f, change: "changed" });
  }
  for (const f of have) if (!want.has(f)) diffs.push({ file: f, change: "extra" });
  return diffs;
}

/**
 * Makes the chart's copies equal to config/crd: writes missing and changed files, deletes extra
 * ones. Idempotent; returns what it changed.
 */
export function syncChartCrds(dirs: CrdSyncDirs = {}): CrdDifference[] {
  const source = dirs.source ?? join(root, "config/crd");
  const target = dirs.target ?? CHART_CRDS;
  const diffs = diffChartCrds({ source, target });
  mkdirSync(target, { recursive: true });
  for (const d of diffs) {
    if (d.change === "extra") rmSync(join(target, d.file));
    else writeFileSync(join(target, d.file), readFileSync(join(source, d.file)));
  }
  return diffs;
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const diffs = check ? diffChartCrds() : syncChartCrds();
  const list = diffs.map((d) => `${d.change}: ${d.file}`).join("\n  ");
  if (check && diffs.length > 0) {
    console.error(`the chart's CRDs differ from config/crd (run make manifests):\n  ${list}`);
    process.exit(1);
  }
  console.log(diffs.length === 0 ? "chart CRDs up to date" : `chart CRDs synced:\n  ${list}`);
}
