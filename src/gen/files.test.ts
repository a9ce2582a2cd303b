import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse } from "yaml";
import { KINDS } from "../kinds.ts";
import { callsOf, type KindModule } from "../reconcilers/common/kind.ts";
import { generatedFiles } from "./files.ts";
import { renderIamTable, withIamTable } from "./iam.ts";
import { IAM_POLICY, IAM_POLICY_TAG_SCOPED } from "./iam-policy.ts";
import { managerRules, MANAGER_RULES, namespacedRules, renderManagerRules } from "./rbac.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

describe("files generated from the kind registry", () => {
  it("match the committed files (run `make manifests` when this fails)", async () => {
    const files = generatedFiles(root);
    for (const path of [
      "config/crd/kustomization.yaml",
      MANAGER_RULES,
      "docs/aws.md",
      IAM_POLICY,
      IAM_POLICY_TAG_SCOPED,
    ]) {
      assert.ok(files.has(path), `${path} is generated`);
    }
    for (const [path, text] of files) {
      const committed = await readFile(join(root, path), "utf8").catch(() => "<missing>");
      assert.equal(committed, text, `${path} is stale: run make manifests`);
    }
  });

  it("give every kind a CRD, its rules in the ClusterRole and its actions in the IAM table", () => {
    const files = generatedFiles(root);
    const table = renderIamTable(KINDS);
    const rules = managerRules(KINDS);
    for (const kind of KINDS) {
      const crd = parse(files.get(`config/crd/compute.cloud.com_${kind.resource.plural}.yaml`) ?? "") as {
        spec: { names: { kind: string } };
      };
      assert.equal(crd.spec.names.kind, kind.resource.kind);
      for (const rule of kind.kubernetes) {
        for (const r of rule.resources) {
          assert.ok(
            rules.some((m) => m.resources.includes(r) && rule.verbs.every((v) => m.verbs.includes(v))),
            `${r} is granted`,
          );
        }
      }
      for (const a of kind.iam)
        assert.ok(table.includes(`| ${kind.resource.kind} | \`${a.action}\` |`), a.action);
    }
  });

  it("render the manager's rules as YAML sequences once the Helm directives are dropped", () => {
    const text = renderManagerRules(KINDS, [])
      .replace(/\{\{\/\*[\s\S]*?\*\/\}\}/g, "")
      .split("\n")
      .filter((l) => !/^\s*\{\{/.test(l))
      .join("\n");
    const rules = parse(text) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const all = managerRules(KINDS);
    // Every kind's rules, and the list and watch its references need when their kind is off.
    for (const rule of all)
      for (const r of rule.resources)
        assert.ok(
          rules.some((m) => m.resources.includes(r) && rule.verbs.every((v) => m.verbs.includes(v))),
          `${r} is granted`,
        );
  });

  it("grant a kind's rules only while it runs, and list and watch of a kind its running kinds reference", () => {
    const rules = namespacedRules(KINDS);
    const whenOf = (resource: string, verb: string): string[] | undefined =>
      rules
        .filter((r) => r.verbs.includes(verb))
        .flatMap((r) => r.resources.filter((x) => x.name === resource))
        .flatMap((x) => x.when ?? ["always"]);
    assert.deepEqual(whenOf("ec2instances", "patch"), ["$on.ec2Instance"]);
    assert.deepEqual(whenOf("sqsqueues/status", "update"), ["$on.sqsQueue"]);
    assert.deepEqual(whenOf("events", "create"), ["always"]);
    assert.deepEqual(whenOf("configmaps", "create")?.sort(), [
      "$on.ec2Instance",
      "$on.s3Bucket",
      "$on.sqsQueue",
    ]);
    // An S3Bucket's notifications name SqsQueues, and an SqsQueue's allowS3Notifications S3Buckets.
    assert.ok(whenOf("sqsqueues", "watch")?.includes("(and (not $on.sqsQueue) $on.s3Bucket)"));
    assert.ok(whenOf("s3buckets", "watch")?.includes("(and (not $on.s3Bucket) $on.sqsQueue)"));
  });

  it("refuse a page without the IAM table markers instead of losing its text", () => {
    assert.throws(() => withIamTable("# AWS\n", KINDS), /markers/);
  });
});

describe("the kind folders", () => {
  /** Every folder of src/reconcilers but common, with the KindModule its index.ts exports. */
  async function kindFolders(): Promise<{ dir: string; kind: KindModule }[]> {
    const base = join(root, "src/reconcilers");
    const out: { dir: string; kind: KindModule }[] = [];
    for (const entry of await readdir(base, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === "common") continue;
      const dir = join(base, entry.name);
      const mod = (await import(pathToFileURL(join(dir, "index.ts")).href)) as Record<string, unknown>;
      const kinds = Object.values(mod).filter((v): v is KindModule => KINDS.includes(v as KindModule));
      assert.equal(kinds.length, 1, `${entry.name}/index.ts exports one registered kind`);
      out.push({ dir, kind: kinds[0] as KindModule });
    }
    return out;
  }

  it("are each one registered kind, and every registered kind has one", async () => {
    const found = (await kindFolders()).map((f) => f.kind);
    assert.equal(found.length, KINDS.length);
    assert.deepEqual(new Set(found), new Set(KINDS));
  });

  it("declare exactly the IAM actions their AWS calls need", async () => {
    for (const { dir, kind } of await kindFolders()) {
      // Every module of the kind's folder, its subfolders included (S3's one module per setting),
      // but not its test fakes.
      const sources = (await readdir(dir, { recursive: true })).filter(
        (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.split(sep).includes("testing"),
      );
      const made = new Set<string>();
      for (const f of sources) {
        for (const m of (await readFile(join(dir, f), "utf8")).matchAll(
          /\bnew ([A-Z][A-Za-z0-9]+)Command\(/g,
        )) {
          if (m[1] !== undefined) made.add(m[1]);
        }
      }
      const granted = new Set(kind.iam.flatMap((a) => [...callsOf(a)]));
      assert.deepEqual(
        [...made].sort(),
        [...granted].sort(),
        `${kind.resource.kind}: calls made vs. IAM actions`,
      );
    }
  });
});
