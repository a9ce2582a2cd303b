/**
 * Generated deployment files stay in step with their sources: the chart's CRD copies with
 * config/crd, and the plain manifests in config/ with the chart (`make manifests` fixes both).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { CONFIG_AWS_SECRET, CONFIG_NAMESPACE, renderConfig, staleConfig } from "../../hack/gen-config.ts";
import { diffChartCrds, syncChartCrds } from "../../hack/sync-chart-crds.ts";
import { repoRoot } from "../support/process.ts";
import { toolPath } from "../support/tools.ts";
import { at, find, parseManifests } from "./helm.ts";

const execFileP = promisify(execFile);

const CRD = (name: string, extra = ""): string =>
  `# comment\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${name}\n${extra}`;

describe("chart CRDs", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "kp-crd-sync-"));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("are identical to config/crd (run `make manifests` when this fails)", () => {
    assert.deepEqual(diffChartCrds(), []);
  });

  it("differences are detected, then synced away, and a second sync changes nothing", () => {
    const source = path.join(tmp, "src");
    const target = path.join(tmp, "dst");
    mkdirSync(source);
    writeFileSync(path.join(source, "a.yaml"), CRD("as.example.com"));
    writeFileSync(path.join(source, "b.yaml"), CRD("bs.example.com"));
    writeFileSync(path.join(source, "kustomization.yaml"), "resources: [a.yaml, b.yaml]\n");
    syncChartCrds({ source, target });
    assert.deepEqual(diffChartCrds({ source, target }), []);

    writeFileSync(path.join(source, "b.yaml"), CRD("bs.example.com", "spec: {}\n"));
    writeFileSync(path.join(source, "c.yaml"), CRD("cs.example.com"));
    writeFileSync(path.join(target, "old.yaml"), CRD("olds.example.com"));
    const expected = [
      { file: "b.yaml", change: "changed" },
      { file: "c.yaml", change: "missing" },
      { file: "old.yaml", change: "extra" },
    ];
    assert.deepEqual(diffChartCrds({ source, target }), expected);
    assert.deepEqual(syncChartCrds({ source, target }), expected);
    assert.deepEqual(diffChartCrds({ source, target }), []);
    assert.deepEqual(syncChartCrds({ source, target }), []);
    assert.deepEqual(readdirSync(target).sort(), ["a.yaml", "b.yaml", "c.yaml"]);
    assert.equal(
      readFileSync(path.join(target, "b.yaml"), "utf8"),
      readFileSync(path.join(source, "b.yaml"), "utf8"),
    );
  });

  it("refuses a source file that is not exactly one CRD", () => {
    const source = path.join(tmp, "multi");
    mkdirSync(source);
    writeFileSync(path.join(source, "two.yaml"), `${CRD("as.example.com")}---\n${CRD("bs.example.com")}`);
    assert.throws(
      () => diffChartCrds({ source, target: path.join(tmp, "none") }),
      /two\.yaml: expected exactly one CustomResourceDefinition/,
    );
  });
});

describe("plain manifests in config/", () => {
  const rendered = renderConfig();

  it("are what the chart renders today (run `make manifests` when this fails)", () => {
    assert.deepEqual(staleConfig(rendered), []);
  });

  it("a changed or new generated file counts as stale", () => {
    const changed = new Map(rendered);
    const deployment = changed.get("config/manager/deployment.yaml");
    assert.ok(deployment);
    changed.set("config/manager/deployment.yaml", deployment.replace("replicas: 2", "replicas: 3"));
    changed.set("config/rbac/new-role.yaml", "kind: Role\n");
    assert.deepEqual(staleConfig(changed), ["config/manager/deployment.yaml", "config/rbac/new-role.yaml"]);
    changed.delete("config/rbac/new-role.yaml");
    changed.delete("config/manager/poddisruptionbudget.yaml");
    changed.set("config/manager/deployment.yaml", deployment);
    assert.deepEqual(
      staleConfig(changed),
      ["config/manager/poddisruptionbudget.yaml"],
      "a file the chart no longer renders is stale",
    );
  });

  it("build with kustomize into the CRDs, RBAC and a Deployment reading AWS keys from an optional Secret", async () => {
    const { stdout } = await execFileP(
      toolPath("kubectl"),
      ["kustomize", path.join(repoRoot, "config/default")],
      { maxBuffer: 32 * 1024 * 1024 },
    );
    const m = parseManifests(stdout);
    assert.deepEqual(m.map((x) => x.kind).sort(), [
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "Deployment",
      "Namespace",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    const d = find(m, "Deployment");
    assert.equal(d.metadata.namespace, CONFIG_NAMESPACE);
    assert.equal(d.metadata.labels?.["helm.sh/chart"], undefined, "no Helm-only labels");
    const env = at(d, "spec", "template", "spec", "containers", 0, "env") as {
      name: string;
      valueFrom?: unknown;
    }[];
    // Optional, so IRSA and Pod Identity users apply config/ as it is, without the Secret.
    for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]) {
      assert.deepEqual(env.find((e) => e.name === key)?.valueFrom, {
        secretKeyRef: { name: CONFIG_AWS_SECRET, key, optional: true },
      });
    }
    for (const x of m)
      assert.equal(
        x.metadata.annotations?.["helm.sh/resource-policy"],
        undefined,
        `${x.kind} carries no Helm annotation`,
      );
  });
});
