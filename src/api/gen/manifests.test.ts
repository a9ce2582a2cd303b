import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { ec2InstanceCrd, s3BucketCrd, sqsQueueCrd } from "../v1/index.ts";
import { generatedManifests as render } from "./manifests.ts";

const generatedManifests = () => render([ec2InstanceCrd(), s3BucketCrd(), sqsQueueCrd()]);

// That the committed config/crd matches the kind registry's CRDs: src/gen/files.test.ts.
describe("generated manifests", () => {
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
