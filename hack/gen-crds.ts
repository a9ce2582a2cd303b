// Writes the files generated from the sources (src/gen/files.ts): the CRDs (config/crd), the
// chart's manager ClusterRole, the IAM table of docs/aws.md and the IAM policies of config/iam,
// from the kind registry.
//
//   node hack/gen-crds.ts           write the files
//   node hack/gen-crds.ts --check   exit 1 and list the stale files instead of writing
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles } from "../src/gen/files.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const stale: string[] = [];

for (const [path, text] of generatedFiles(root)) {
  const full = join(root, path);
  const current = await readFile(full, "utf8").catch(() => undefined);
  if (current === text) continue;
  stale.push(path);
  if (!check) {
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  }
}

if (check && stale.length > 0) {
  console.error(`stale generated files (run make manifests):\n  ${stale.join("\n  ")}`);
  process.exit(1);
}
console.log(stale.length === 0 ? "generated files up to date" : `wrote ${stale.join(", ")}`);
