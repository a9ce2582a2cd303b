/**
 * Every YAML text users apply or Helm renders, read the way kubectl reads it, must mean what the
 * project wrote: config/ file by file (`kubectl apply -f`) and directory by directory (`kubectl
 * apply -k`, which reads through kustomize first), `helm template` of the chart with the default
 * values and with every optional part on, the chart's values.yaml, and the ```yaml examples of the
 * README and docs/. What the project meant is the YAML 1.2 reading of the same text (for
 * config/crd also the generator's objects); kubectl, a YAML 1.1 reader, is the oracle of what
 * users get. Any value whose type or text differs fails, naming the file, the path and both values.
 *
 * kubectl reads files with its resource builder, the reader `kubectl create -f` and `apply -f`
 * use, run here without a server (test/support/yaml-readers.ts); policy-version.test.ts checks
 * against a real API server that `kubectl create --dry-run=client` reads config/ the same way.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { awsAccountModule } from "../../src/accounts/index.ts";
import { KINDS } from "../../src/kinds.ts";
import { toYaml, YAML_TRAPS } from "../../src/gen/yaml.ts";
import { repoRoot, trackTempDir } from "../support/process.ts";
import { buildableConfigDir } from "../support/samples-aws.ts";
import {
  differences,
  identity,
  kubectlReads,
  kustomizeReads,
  meant,
  type Json,
} from "../support/yaml-readers.ts";
import { helm, templateArgs } from "./helm.ts";
import { mkdtempSync } from "node:fs";
import os from "node:os";

/** Compares documents pairwise (in order), naming `where` in each difference. */
function compare(where: string, want: readonly Json[], got: readonly Json[]): string[] {
  if (want.length !== got.length)
    return [`${where}: ${want.length} documents meant, kubectl read ${got.length}`];
  return want.flatMap((w, i) => differences(w, got[i]).map((d) => `${where} (${identity(w)}) ${d}`));
}

/** Checks one YAML text: kubectl must read exactly its YAML 1.2 meaning. */
async function fileFindings(where: string, text: string): Promise<string[]> {
  try {
    return compare(where, meant(text), await kubectlReads(text));
  } catch (err) {
    return [`${where}: ${(err as Error).message}`];
  }
}

/** A YAML text that is not a Kubernetes object (values, a fragment), as the value of an object kubectl reads. */
function wrapped(text: string): string {
  const body = text
    .split("\n")
    .map((l) => (l === "" ? l : `  ${l}`))
    .join("\n");
  return `apiVersion: roundtrip.invalid/v1\nkind: Wrapped\nmetadata:\n  name: wrapped\nvalue:\n${body}\n`;
}

/** Checks a YAML text that is not an object: kubectl's reading of it, wrapped, against its 1.2 meaning. */
async function fragmentFindings(where: string, text: string): Promise<string[]> {
  const docs = text.split(/^---\s*$/m).filter((d) => d.trim() !== "" && meant(d).length > 0);
  const out: string[] = [];
  for (const doc of docs) {
    try {
      const [want] = meant(doc);
      const [got] = await kubectlReads(wrapped(doc));
      out.push(
        ...differences(want, (got as { value?: Json } | undefined)?.value).map((d) => `${where} ${d}`),
      );
    } catch (err) {
      out.push(`${where}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** Whether a YAML text is one or more Kubernetes objects (each with apiVersion and kind). */
function isObjects(text: string): boolean {
  try {
    const docs = meant(text);
    return (
      docs.length > 0 &&
      docs.every((d) => d !== null && typeof d === "object" && "apiVersion" in d && "kind" in d)
    );
  } catch {
    return false;
  }
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(path.join(repoRoot, dir))
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort()
    .map((f) => `${dir}/${f}`);

/** The folders of config/ users apply: each holds a kustomization.yaml. */
const CONFIG_DIRS = readdirSync(path.join(repoRoot, "config"), { withFileTypes: true })
  .filter(
    (e) =>
      e.isDirectory() && readdirSync(path.join(repoRoot, "config", e.name)).includes("kustomization.yaml"),
  )
  .map((e) => `config/${e.name}`)
  .sort();

/** The YAML files a kustomization builds from: its `resources`, folders followed. */
function kustomizationFiles(dir: string): string[] {
  const [k] = meant(readFileSync(path.join(repoRoot, dir, "kustomization.yaml"), "utf8")) as [
    { resources?: string[] },
  ];
  return (k.resources ?? []).flatMap((r) => {
    const target = path.posix.normalize(`${dir}/${r}`);
    return r.endsWith(".yaml") ? [target] : kustomizationFiles(target);
  });
}

/** Every optional part of the chart on: monitoring, dashboard, network policy, accounts, secrets. */
const ALL_OPTIONAL_VALUES = {
  aws: {
    region: "eu-west-1",
    endpoint: "https://aws.example.internal",
    existingSecret: "aws-keys",
    existingSecretOptional: true,
    rateBudgets: { "ec2.nonMutating": "10/50", sts: "5/10" },
  },
  awsAccounts: {
    accounts: {
      "team-a": {
        roleArn: "arn:aws:iam::111122223333:role/kubeprovisioner-tenant",
        externalId: "team-a",
        allowedNamespaces: { names: ["team-a"] },
      },
    },
    externalIdSecretNamespaces: ["kp-ids"],
  },
  metrics: {
    certSecret: "metrics-tls",
    serviceMonitor: { enabled: true, labels: { release: "prom" } },
    dashboard: { enabled: true, annotations: { grafana_folder: "Operators" } },
    prometheusRule: { enabled: true, labels: { release: "prom" }, alertLabels: { team: "platform" } },
  },
  controller: {
    watchNamespaces: ["team-a", "team-b"],
    defaultTags: { release: "2024-01-01", enabled: "yes", build: "0777" },
    ignoreTagPrefixes: ["backup:", "CostCenter"],
    requireAccount: true,
  },
  serviceAccount: { annotations: { "example.com/since": "2024-01-01" } },
  extraArgs: ["--leader-election-retry-period=3s"],
  extraEnv: [{ name: "FEATURE_X", value: "on" }],
  networkPolicy: { enabled: true },
  podAnnotations: { "example.com/on": "yes" },
  podLabels: { tier: "n" },
  nodeSelector: { "kubernetes.io/os": "linux" },
  tolerations: [{ key: "dedicated", operator: "Equal", value: "true", effect: "NoSchedule" }],
  priorityClassName: "system-cluster-critical",
};

/** The ```yaml blocks of the README and docs/*.md, with where each starts. */
function docExamples(): { where: string; text: string }[] {
  const pages = [
    "README.md",
    ...readdirSync(path.join(repoRoot, "docs"))
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  const out: { where: string; text: string }[] = [];
  for (const page of pages) {
    const text = readFileSync(path.join(repoRoot, page), "utf8");
    for (const m of text.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)) {
      const line = text.slice(0, m.index).split("\n").length;
      out.push({ where: `${page}:${line}`, text: m[1] ?? "" });
    }
  }
  return out;
}

describe("YAML that users apply or Helm renders, read by kubectl", () => {
  it("the comparison catches what YAML 1.1 changes, and the project's writer leaves kubectl nothing to change", async () => {
    const plain = YAML_TRAPS.filter((t) => t !== "" && !/^[<=~]/.test(t) && !t.includes(" "));
    const naive = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: traps\ndata:\n${plain.map((t, i) => `  k${i}: ${t}\n`).join("")}`;
    assert.notDeepEqual(await fileFindings("plain", naive), [], "plain traps are read differently");
    const written = toYaml({
      apiVersion: "roundtrip.invalid/v1",
      kind: "Traps",
      metadata: { name: "traps" },
      list: [...YAML_TRAPS],
      map: Object.fromEntries(YAML_TRAPS.filter((t) => t !== "<<").map((t) => [t === "" ? "empty" : t, t])),
    });
    assert.deepEqual(await fileFindings("written (-f)", written), []);
    const dir = mkdtempSync(path.join(os.tmpdir(), "kp-roundtrip-"));
    trackTempDir(dir);
    writeFileSync(path.join(dir, "traps.yaml"), written);
    writeFileSync(path.join(dir, "kustomization.yaml"), toYaml({ resources: ["traps.yaml"] }));
    assert.deepEqual(differences(meant(written)[0], (await kustomizeReads(dir))[0]), [], "written (-k)");
  });

  it("config/: every file, read as `kubectl apply -f` reads it, means what it says", async () => {
    const findings: string[] = [];
    for (const dir of CONFIG_DIRS)
      for (const file of yamlFiles(dir))
        findings.push(...(await fileFindings(file, readFileSync(path.join(repoRoot, file), "utf8"))));
    assert.deepEqual(findings, []);
  });

  it("config/crd is what the generator meant: the kinds' CRDs, unchanged by the YAML text", () => {
    const crds = [...KINDS.map((k) => k.crd()), awsAccountModule.crd()];
    for (const crd of crds) {
      const file = `config/crd/${crd.spec.group}_${crd.spec.names.plural}.yaml`;
      const [doc] = meant(readFileSync(path.join(repoRoot, file), "utf8"));
      assert.deepEqual(differences(JSON.parse(JSON.stringify(crd)) as Json, doc), [], file);
    }
  });

  it("config/: every directory, read as `kubectl apply -k` reads it, means what its files say", async () => {
    const findings: string[] = [];
    assert.ok(CONFIG_DIRS.includes("config/default") && CONFIG_DIRS.includes("config/samples"));
    for (const dir of CONFIG_DIRS) {
      const files = kustomizationFiles(dir);
      const want = new Map(
        files.flatMap((f) =>
          meant(readFileSync(path.join(repoRoot, f), "utf8")).map((d) => [identity(d), d] as const),
        ),
      );
      let got: Json[];
      try {
        got = await kustomizeReads(buildableConfigDir(dir));
      } catch (err) {
        findings.push(`${dir}: ${(err as Error).message}`);
        continue;
      }
      assert.deepEqual(
        got.map(identity).sort(),
        [...want.keys()].sort(),
        `${dir}: the objects kustomize builds`,
      );
      for (const g of got)
        findings.push(
          ...differences(want.get(identity(g)), g).map(
            (d) => `kubectl apply -k ${dir} (${identity(g)}) ${d}`,
          ),
        );
    }
    assert.deepEqual(findings, []);
  });

  for (const [what, values] of [
    ["the default values", undefined],
    ["every optional part on", ALL_OPTIONAL_VALUES],
  ] as const) {
    it(`helm template with ${what} renders what kubectl (and Helm's own reader) read the same way`, async () => {
      // The chart's crds/ too, which helm template prints only when asked.
      const extra: string[] = ["--include-crds"];
      if (values !== undefined) {
        const dir = mkdtempSync(path.join(os.tmpdir(), "kp-roundtrip-"));
        trackTempDir(dir);
        writeFileSync(path.join(dir, "values.yaml"), toYaml(values));
        extra.push("-f", path.join(dir, "values.yaml"));
      }
      const res = await helm(templateArgs({}, extra));
      assert.equal(res.code, 0, res.stderr);
      const findings = await fileFindings(`helm template (${what})`, res.stdout);
      assert.deepEqual(findings, []);
      if (values !== undefined) {
        const kinds = meant(res.stdout).map((d) => (d as { kind: string }).kind);
        for (const k of [
          "ServiceMonitor",
          "PrometheusRule",
          "NetworkPolicy",
          "AwsAccount",
          "CustomResourceDefinition",
          "ValidatingAdmissionPolicy",
        ])
          assert.ok(kinds.includes(k), `renders a ${k}`);
        // The values reached Helm as written: the default tags every resource carries, an env value.
        type Container = { args: string[]; env: { name: string; value?: string }[] };
        const deployment = meant(res.stdout).find((d) => (d as { kind: string }).kind === "Deployment") as
          { spec: { template: { spec: { containers: Container[] } } } } | undefined;
        const container = deployment?.spec.template.spec.containers[0];
        const tagsArg = container?.args.find((a) => a.startsWith("--default-tags="));
        assert.deepEqual(tagsArg?.slice("--default-tags=".length).split(",").sort(), [
          "build=0777",
          "enabled=yes",
          "release=2024-01-01",
        ]);
        assert.equal(container?.env.find((e) => e.name === "FEATURE_X")?.value, "on");
      }
    });
  }

  it("the chart's values.yaml: Helm reads every default as written", async () => {
    const file = "charts/kubeprovisioner/values.yaml";
    assert.deepEqual(await fragmentFindings(file, readFileSync(path.join(repoRoot, file), "utf8")), []);
  });

  it("the ```yaml examples of the README and docs/ mean what they say", async () => {
    const examples = docExamples();
    assert.ok(examples.length >= 10, `examples found: ${examples.length}`);
    const findings: string[] = [];
    for (const { where, text } of examples)
      findings.push(
        ...(isObjects(text) ? await fileFindings(where, text) : await fragmentFindings(where, text)),
      );
    assert.deepEqual(findings, []);
  });
});
