/**
 * The names, counts and versions the README and docs/ state are the repository's: the chart's
 * Deployment, namespace and ClusterRoles as config/ renders them, one name for the operator's IAM
 * role (the one eks.md creates), the test concurrency of the Makefile, the number of kinds, CRDs
 * and emulator samples, the pinned tool versions of hack/versions.env, and the release versions
 * (the chart's appVersion and version, with a CHANGELOG.md section), and what a make test costs
 * (the latest sessions of bench/results/test-loop.json). Reads files only: no
 * process, no network.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import { costFigures, type TestLoopResults } from "../../bench/test-loop/results.ts";
import { KINDS } from "../../src/kinds.ts";
import { numberOf, PAGES, paragraphs, read, repoEntries } from "./pages.ts";

const ENTRIES = repoEntries();

/** The chart's objects as config/ renders them (generated from the chart with the default release). */
function configObjects(): { kind: string; metadata: { name: string; namespace?: string } }[] {
  return ["config/manager/deployment.yaml", "config/manager/namespace.yaml", ...rbacFiles()].flatMap((f) =>
    parseAllDocuments(read(f)).map((d) => d.toJS() as { kind: string; metadata: { name: string } }),
  );
}
function rbacFiles(): string[] {
  return [...ENTRIES].filter(
    (e) => /^config\/rbac\/[^/]+\.yaml$/.test(e) && !e.endsWith("kustomization.yaml"),
  );
}

describe("the docs name the objects as the chart and the IAM steps make them", () => {
  it("the Deployment, namespace and ClusterRoles the pages name are the chart's", () => {
    const objects = configObjects();
    const names = (kind: string): string[] =>
      objects.filter((o) => o.kind === kind).map((o) => o.metadata.name);
    const [deployment] = names("Deployment");
    const [namespace] = names("Namespace");
    const clusterRoles = new Set(names("ClusterRole"));
    const problems: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const m of text.matchAll(/\bdeployment\/(kubeprovisioner[a-z0-9-]*)/g))
        if (m[1] !== deployment) problems.push(`${page}: deployment/${m[1]}, the chart's is ${deployment}`);
      for (const m of text.matchAll(/(?:-n |--namespace[ =]|namespace\/)(kubeprovisioner-[a-z]+)\b/g))
        if (m[1] !== namespace) problems.push(`${page}: namespace ${m[1]}, config/manager's is ${namespace}`);
      for (const m of text.matchAll(/(?:--clusterrole=|clusterrole\/)(kubeprovisioner-[a-z-]+)/g))
        if (!clusterRoles.has(m[1] ?? "")) problems.push(`${page}: ClusterRole ${m[1]} is not the chart's`);
      for (const m of text.matchAll(/`(kubeprovisioner-[a-z-]+)` ClusterRole/g))
        if (!clusterRoles.has(m[1] ?? "")) problems.push(`${page}: ClusterRole ${m[1]} is not the chart's`);
    }
    assert.deepEqual(problems, []);
  });

  it("the operator's IAM role has one name on every page: the one eks.md creates", () => {
    const created = /aws iam create-role --role-name ([\w+=,.@-]+)/.exec(read("docs/eks.md"))?.[1];
    assert.ok(created !== undefined, "docs/eks.md creates the operator's role");
    // Roles that are not the operator's own: tenants', replication, samples, placeholders, and
    // wildcards of a policy's Resource.
    const other = /tenant|replication|sample|<|\$|\*/;
    const problems: string[] = [];
    for (const page of PAGES)
      for (const m of read(page).matchAll(/:role\/([\w+=,.@<>$*-]+)/g)) {
        const name = m[1] ?? "";
        if (!other.test(name) && name !== created)
          problems.push(`${page}: role/${name}, eks.md creates ${created}`);
      }
    assert.deepEqual([...new Set(problems)], []);
  });
});

/** `KEY=value` pins of hack/versions.env. */
function pins(): Record<string, string> {
  return Object.fromEntries(
    [...read("hack/versions.env").matchAll(/^([A-Z0-9_]+)=(.*)$/gm)].map((m) => [
      m[1],
      (m[2] ?? "").replace(/^"|"$/g, ""),
    ]),
  );
}

describe("the docs' counts and versions are the code's", () => {
  it("how many test files run at a time is the Makefile's TEST_CONCURRENCY", () => {
    const n = Number(/^TEST_CONCURRENCY \?= (\d+)$/m.exec(read("Makefile"))?.[1]);
    assert.ok(n > 0);
    const problems: string[] = [];
    for (const page of PAGES)
      for (const sentence of paragraphs(read(page)).flatMap((p) => p.split(/(?<=[.;:])\s+/)))
        for (const m of sentence.matchAll(/\b(\w+) (?:test )?files? at a time\b/gi)) {
          // The one-at-a-time targets say so with their own names.
          const one = /test-cluster|test-faults|TEST_CONCURRENCY=1|--test-concurrency=1/.test(sentence);
          if (one && numberOf(m[1] ?? "") === 1) continue;
          if (numberOf(m[1] ?? "") !== n) problems.push(`${page}: "${m[0]}", the Makefile runs ${n}`);
        }
    assert.deepEqual(problems, []);
    const stated = [...read("README.md").matchAll(/\b(\w+) test files at a time\b/gi)].map((m) =>
      numberOf(m[1] ?? ""),
    );
    assert.ok(stated.includes(n), `README says how many test files run at a time (${n})`);
  });

  it("what README says a make test costs is the latest measured sessions of bench/results/test-loop.json", () => {
    const results = JSON.parse(read("bench/results/test-loop.json")) as TestLoopResults;
    const cost = paragraphs(read("README.md")).find((p) =>
      p.startsWith("**What a first `make test` costs.**"),
    );
    assert.ok(cost !== undefined, "README's paragraph on what a make test costs");
    const kinds = (["warm", "first"] as const).filter((k) => results.sessions.some((s) => s.kind === k));
    assert.ok(kinds.includes("warm"), "a warm session is recorded");
    for (const kind of kinds) {
      const { time, tests } = costFigures(results, kind);
      assert.ok(
        cost.includes(`${time} for ${tests} tests`),
        `README names the ${kind} figures "${time} for ${tests} tests"`,
      );
    }
  });

  it("the number of kinds, CRDs and emulator samples is the registry's and config/'s", () => {
    const crds = [...ENTRIES].filter((e) => /^config\/crd\/[^/]+_[^/]+\.yaml$/.test(e)).length;
    const samples = (parse(read("config/samples/kustomization.yaml")) as { resources: string[] }).resources
      .map((f) => parseAllDocuments(read(`config/samples/${f}`)).length)
      .reduce((a, b) => a + b, 0);
    const problems: string[] = [];
    for (const page of PAGES)
      for (const p of paragraphs(read(page))) {
        for (const m of p.matchAll(/\b(\w+) (?:managed )?kinds\b/g)) {
          const k = numberOf(m[1] ?? "");
          if (k !== undefined && k !== KINDS.length)
            problems.push(`${page}: "${m[0]}", the registry has ${KINDS.length}`);
        }
        for (const m of p.matchAll(/\b(\w+) CRDs\b/g)) {
          const k = numberOf(m[1] ?? "");
          if (k !== undefined && k !== crds) problems.push(`${page}: "${m[0]}", config/crd has ${crds}`);
        }
        if ((p.includes("config/samples") && !p.includes("config/samples-aws")) || /make dev/.test(p))
          for (const m of p.matchAll(/\b(\w+) objects\b/g)) {
            const k = numberOf(m[1] ?? "");
            if (k !== undefined && k < 100 && k !== samples)
              problems.push(`${page}: "${m[0]}", config/samples has ${samples}`);
          }
      }
    assert.deepEqual(problems, []);
  });

  it("the versions the pages state are the pinned ones", () => {
    const v = pins();
    const node = (v["NODE_VERSION"] ?? "").split(".")[0];
    const k8s = /^v(\d+\.\d+)/.exec(v["K8S_VERSION"] ?? "")?.[1];
    const go = /^\s*echo "go (\d+\.\d+)"/m.exec(read("hack/tools.sh"))?.[1];
    const problems: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const m of text.matchAll(/\bNode(?:\.js)? (\d+)\b(?![.,]\d)/g))
        if (m[1] !== node && !/>= ?$/.test(text.slice(0, m.index)))
          problems.push(`${page}: Node ${m[1]}, pinned ${node}`);
      for (const m of text.matchAll(/\b(?:tests run on|kube-apiserver) v?(1\.\d+)\b/g))
        if (m[1] !== k8s) problems.push(`${page}: Kubernetes ${m[1]}, pinned ${k8s}`);
      for (const m of text.matchAll(/\bmoto (\d+\.\d+\.\d+)/g))
        if (m[1] !== v["MOTO_VERSION"]) problems.push(`${page}: moto ${m[1]}, pinned ${v["MOTO_VERSION"]}`);
      for (const m of text.matchAll(/\bGo >= ?(\d+\.\d+)/g))
        if (m[1] !== go) problems.push(`${page}: Go >= ${m[1]}, hack/tools.sh builds with go ${go}`);
      for (const m of text.matchAll(/\bNode\.js >= ?(\d+\.\d+)/g))
        if (m[1] !== v["NODE_MIN"])
          problems.push(`${page}: Node.js >= ${m[1]}, NODE_MIN is ${v["NODE_MIN"]}`);
    }
    assert.deepEqual(problems, []);
  });
});

describe("the docs name the release the repository is", () => {
  it("the versions the pages check out, tag and deploy are the chart's, and the changelog has them", () => {
    const chart = parse(read("charts/kubeprovisioner/Chart.yaml")) as { version: string; appVersion: string };
    const pkg = JSON.parse(read("package.json")) as { version: string };
    assert.equal(pkg.version, chart.appVersion, "package.json and the chart's appVersion");
    assert.match(
      read("CHANGELOG.md"),
      new RegExp(`^## \\[${chart.appVersion.replace(/\./g, "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m"),
    );
    const problems: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const re of [
        /git checkout v(\d+\.\d+\.\d+)/g,
        /image\.tag=(\d+\.\d+\.\d+)/g,
        /\/kubeprovisioner:(\d+\.\d+\.\d+)/g,
        /newTag: (\d+\.\d+\.\d+)/g,
        /\bVERSION=(\d+\.\d+\.\d+)/g,
      ])
        for (const m of text.matchAll(re))
          if (m[1] !== chart.appVersion)
            problems.push(`${page}: ${m[0]}, the release is ${chart.appVersion}`);
      for (const m of text.matchAll(/\bCHART=(\d+\.\d+\.\d+)/g))
        if (m[1] !== chart.version) problems.push(`${page}: ${m[0]}, the chart is ${chart.version}`);
    }
    assert.deepEqual(problems, []);
  });
});

describe("docs/api.md's field tables say what the CRDs enforce", () => {
  it("a top-level spec field is immutable, and required, exactly when the table says so", () => {
    const problems: string[] = [];
    const api = read("docs/api.md");
    for (const kind of KINDS) {
      const crd = kind.crd();
      const name = crd.spec.names.kind;
      const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.["spec"];
      assert.ok(spec, name);
      const immutable = new Set<string>();
      for (const [field, prop] of Object.entries(spec.properties ?? {}))
        if (prop["x-kubernetes-validations"]?.some((r) => r.rule === "self == oldSelf")) immutable.add(field);
      for (const r of spec["x-kubernetes-validations"] ?? [])
        if (r.rule.includes("oldSelf") && r.fieldPath !== undefined) immutable.add(r.fieldPath.slice(1));
      const section = new RegExp(`^## ${name}\\n([\\s\\S]*?)^## `, "m").exec(api)?.[1] ?? "";
      const rows = section.split("\n").filter((l) => /^\| `[A-Za-z]+` +\|/.test(l));
      assert.ok(rows.length >= 5, `${name}: field table found`);
      for (const row of rows) {
        const cells = row
          .slice(1, -1)
          .split(/(?<!\\)\|/)
          .map((c) => c.trim());
        const field = (cells[0] ?? "").slice(1, -1);
        const mutable = cells.at(-1);
        if (!(field in (spec.properties ?? {}))) {
          problems.push(`${name}: api.md lists ${field}, the CRD has no spec.${field}`);
          continue;
        }
        if ((mutable === "no") !== immutable.has(field))
          problems.push(`${name}: api.md says ${field} is ${mutable === "no" ? "" : "not "}immutable`);
        const saysRequired = /\(required\)/.test(cells[1] ?? "");
        if (saysRequired !== (spec.required ?? []).includes(field))
          problems.push(`${name}: api.md says ${field} is ${saysRequired ? "" : "not "}required`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
