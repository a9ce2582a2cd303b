import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { generatedManifests } from "./manifests.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");

describe("generated manifests", () => {
  it("match the committed files in config/crd (run `make manifests` when this fails)", async () => {
    for (const [path, text] of generatedManifests()) {
      const committed = await readFile(join(root, path), "utf8").catch(() => "<missing>");
      assert.equal(committed, text, `${path} is stale: run make manifests`);
    }
  });

  it("are deterministic", () => {
    assert.deepEqual([...generatedManifests()], [...generatedManifests()]);
  });

  it("parse back to CRDs, and the kustomization lists every one", () => {
    const files = generatedManifests();
    const kustomization = parse(files.get("config/crd/kustomization.yaml") ?? "") as { resources: string[] };
    const crdFiles = [...files.keys()].filter((p) => !p.endsWith("kustomization.yaml"));
    assert.deepEqual(
      kustomization.resources,
      crdFiles.map((p) => p.slice("config/crd/".length)),
    );
    for (const path of crdFiles) {
      const doc = parse(files.get(path) ?? "") as { kind: string; metadata: { name: string } };
      assert.equal(doc.kind, "CustomResourceDefinition");
      assert.ok(path.endsWith(`compute.cloud.com_${doc.metadata.name.split(".")[0]}.yaml`));
    }
  });
});
