/**
 * The chart, offline: `helm lint`, and what `helm template` renders with the default values.
 * helm-values.test.ts covers non-default and refused values.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { repoRoot } from "../support/process.ts";
import { at, CHART_DIR, find, helm, renderChart, type Manifest } from "./helm.ts";
import {
  aggregateTo,
  container,
  EDIT_RULES,
  envOf,
  expand,
  FULL,
  CRDS,
  MANAGER_RULES,
  METRICS_AUTH_RULES,
  triples,
  VIEW_RULES,
} from "./chart-expect.ts";

describe("helm chart, rendered offline", () => {
  it("passes helm lint --strict", async () => {
    const res = await helm(["lint", "--strict", CHART_DIR]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  describe("with default values", async () => {
    const m = await renderChart();

    it("renders exactly the expected objects", () => {
      const kinds = m.map((x) => `${x.kind}/${x.metadata.name}`).sort();
      assert.deepEqual(kinds, [
        `ClusterRole/${FULL}-edit`,
        `ClusterRole/${FULL}-manager`,
        `ClusterRole/${FULL}-metrics-reader`,
        `ClusterRole/${FULL}-view`,
        `ClusterRoleBinding/${FULL}-manager`,
        `Deployment/${FULL}`,
        `PodDisruptionBudget/${FULL}`,
        `Role/${FULL}-leader-election`,
        `RoleBinding/${FULL}-leader-election`,
        `Service/${FULL}-metrics`,
        `ServiceAccount/${FULL}`,
      ]);
      for (const x of m.filter((o) => !["ClusterRole", "ClusterRoleBinding"].includes(o.kind))) {
        assert.equal(x.metadata.namespace, "kp-system", `${x.kind} is in the release namespace`);
      }
    });

    it("runs two replicas with leader election in the release namespace", () => {
      const d = find(m, "Deployment");
      assert.equal(at(d, "spec", "replicas"), 2);
      const args = container(m).args;
      for (const a of [
        "--leader-elect=true",
        "--leader-election-id=c56fc483.cloud.com",
        "--leader-election-namespace=kp-system",
        "--metrics-bind-address=:8443",
        "--metrics-secure=true",
        "--health-probe-bind-address=:8081",
        "--log-level=info",
      ]) {
        assert.ok(args.includes(a), `args contain ${a}: ${args.join(" ")}`);
      }
      assert.equal(at(d, "spec", "template", "spec", "serviceAccountName"), FULL);
      assert.equal(at(d, "spec", "strategy", "rollingUpdate", "maxUnavailable"), 0);
    });

    it("probes /healthz and /readyz on port 8081", () => {
      const c = container(m);
      assert.equal(at(c, "livenessProbe", "httpGet", "path"), "/healthz");
      assert.equal(at(c, "readinessProbe", "httpGet", "path"), "/readyz");
      assert.equal(at(c, "livenessProbe", "httpGet", "port"), "health");
      const health = (c.ports as { name: string; containerPort: number }[]).find((p) => p.name === "health");
      assert.equal(health?.containerPort, 8081);
      const https = (c.ports as { name: string; containerPort: number }[]).find((p) => p.name === "https");
      assert.equal(https?.containerPort, 8443);
    });

    it("sets requests and limits", () => {
      const c = container(m);
      assert.deepEqual(at(c, "resources"), {
        requests: { cpu: "50m", memory: "128Mi" },
        limits: { cpu: "500m", memory: "512Mi" },
      });
    });

    it("runs restricted: non-root 65532, no privilege escalation, no capabilities, RuntimeDefault seccomp, read-only root with /tmp as emptyDir", () => {
      const spec = at(find(m, "Deployment"), "spec", "template", "spec");
      assert.equal(at(spec, "securityContext", "runAsNonRoot"), true);
      assert.equal(at(spec, "securityContext", "runAsUser"), 65532);
      assert.equal(at(spec, "securityContext", "seccompProfile", "type"), "RuntimeDefault");
      const c = container(m);
      assert.equal(at(c, "securityContext", "allowPrivilegeEscalation"), false);
      assert.equal(at(c, "securityContext", "readOnlyRootFilesystem"), true);
      assert.deepEqual(at(c, "securityContext", "capabilities", "drop"), ["ALL"]);
      assert.deepEqual(at(c, "volumeMounts"), [{ name: "tmp", mountPath: "/tmp" }]);
      assert.deepEqual(at(spec, "volumes", 0, "emptyDir"), { sizeLimit: "16Mi" });
    });

    it("spreads replicas softly over nodes and zones", () => {
      const spec = at(find(m, "Deployment"), "spec", "template", "spec");
      const preferred = at(
        spec,
        "affinity",
        "podAntiAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution",
        0,
        "podAffinityTerm",
        "topologyKey",
      );
      assert.equal(preferred, "kubernetes.io/hostname");
      assert.equal(
        at(spec, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
        undefined,
      );
      const spread = at(spec, "topologySpreadConstraints") as {
        topologyKey: string;
        whenUnsatisfiable: string;
      }[];
      assert.deepEqual(
        spread.map((s) => [s.topologyKey, s.whenUnsatisfiable]),
        [
          ["topology.kubernetes.io/zone", "ScheduleAnyway"],
          ["kubernetes.io/hostname", "ScheduleAnyway"],
        ],
      );
    });

    it("takes no AWS keys and sets no region or endpoint by default", () => {
      for (const name of [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_ENDPOINT_URL",
      ]) {
        assert.equal(envOf(m, name), undefined, name);
      }
      assert.equal(find(m, "ServiceAccount").metadata.annotations, undefined);
    });

    it("exposes metrics on an https Service port 8443", () => {
      const svc = find(m, "Service");
      assert.deepEqual(at(svc, "spec", "ports"), [
        { name: "https", port: 8443, targetPort: "https", protocol: "TCP" },
      ]);
      assert.deepEqual(
        at(svc, "spec", "selector"),
        at(find(m, "Deployment"), "spec", "selector", "matchLabels"),
      );
    });

    it("keeps one pod available during voluntary disruptions", () => {
      const pdb = find(m, "PodDisruptionBudget");
      assert.equal(at(pdb, "spec", "minAvailable"), 1);
      assert.deepEqual(
        at(pdb, "spec", "selector", "matchLabels"),
        at(find(m, "Deployment"), "spec", "selector", "matchLabels"),
      );
    });

    it("grants exactly the operator's API calls cluster-wide, and leases only in the release namespace", () => {
      assert.deepEqual(
        triples(find(m, "ClusterRole", `${FULL}-manager`)),
        [...MANAGER_RULES, ...METRICS_AUTH_RULES].sort(),
      );
      const role = find(m, "Role");
      assert.equal(role.metadata.namespace, "kp-system");
      assert.deepEqual(triples(role), expand("coordination.k8s.io", ["leases"], ["create", "get", "update"]));
      const subject = { kind: "ServiceAccount", name: FULL, namespace: "kp-system" };
      assert.deepEqual(at(find(m, "ClusterRoleBinding"), "subjects"), [subject]);
      assert.deepEqual(at(find(m, "RoleBinding"), "subjects"), [subject]);
      assert.deepEqual(at(find(m, "ClusterRoleBinding"), "roleRef", "name"), `${FULL}-manager`);
      assert.deepEqual(at(find(m, "ClusterRole", `${FULL}-metrics-reader`), "rules"), [
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
      ]);
    });

    it("aggregates reading the kinds into view, edit and admin, and managing them into edit and admin", () => {
      const view = find(m, "ClusterRole", `${FULL}-view`);
      const edit = find(m, "ClusterRole", `${FULL}-edit`);
      assert.deepEqual(triples(view), [...VIEW_RULES].sort());
      assert.deepEqual(triples(edit), [...EDIT_RULES].sort());
      for (const role of ["view", "edit", "admin"] as const) {
        assert.equal(view.metadata.labels?.[aggregateTo(role)], "true", `view aggregates to ${role}`);
      }
      assert.equal(edit.metadata.labels?.[aggregateTo("view")], undefined, "edit does not reach view");
      assert.equal(edit.metadata.labels?.[aggregateTo("edit")], "true");
      assert.equal(edit.metadata.labels?.[aggregateTo("admin")], "true");
      for (const t of [...triples(view), ...triples(edit)]) {
        const [, resource, verb] = t.split("|");
        if (resource?.endsWith("/status")) assert.equal(verb, "get", `no write on status: ${t}`);
      }
    });

    it("renders no dashboard and no alert rules unless asked", () => {
      assert.equal(m.filter((x) => x.kind === "ConfigMap" || x.kind === "PrometheusRule").length, 0);
    });

    it("keeps the CRDs of config/crd in crds/, unchanged, and out of the templates", async () => {
      const crdDir = path.join(repoRoot, "config/crd");
      const sources = readdirSync(crdDir)
        .filter((f) => f.startsWith("compute.cloud.com_") && f.endsWith(".yaml"))
        .map((f) => parse(readFileSync(path.join(crdDir, f), "utf8")) as Manifest);
      assert.equal(sources.length, CRDS.length);
      assert.equal(m.filter((x) => x.kind === "CustomResourceDefinition").length, 0, "no CRD is a template");
      const withCrds = await renderChart({}, ["--include-crds"]);
      for (const src of sources) {
        const crd = find(withCrds, "CustomResourceDefinition", src.metadata.name);
        assert.deepEqual(crd, src, `${src.metadata.name} is config/crd's, as it is`);
      }
    });
  });
});
