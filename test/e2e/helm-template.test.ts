/**
 * The chart, offline: `helm lint`, what `helm template` renders with default and non-default
 * values, and what values.schema.json and the chart's own checks refuse.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { repoRoot } from "../support/process.ts";
import { at, CHART_DIR, find, helm, renderChart, templateArgs, type Manifest } from "./helm.ts";

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; nonResourceURLs?: string[] };
type Container = {
  name: string;
  args: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  [k: string]: unknown;
};

const FULL = "kp-kubeprovisioner";

function container(m: readonly Manifest[]): Container {
  const c = at(find(m, "Deployment"), "spec", "template", "spec", "containers", 0) as Container | undefined;
  assert.ok(c, "the Deployment has a container");
  return c;
}

function envOf(
  m: readonly Manifest[],
  name: string,
): { name: string; value?: string; valueFrom?: unknown } | undefined {
  return (container(m).env ?? []).find((e) => e.name === name);
}

/** (group, resource, verb) triples of a role, sorted, for exact comparison. */
function triples(role: Manifest): string[] {
  const out: string[] = [];
  for (const r of (role.rules as Rule[] | undefined) ?? []) {
    for (const g of r.apiGroups ?? ["<none>"])
      for (const res of r.resources ?? r.nonResourceURLs ?? [])
        for (const v of r.verbs) out.push(`${g}|${res}|${v}`);
  }
  return out.sort();
}

function expand(group: string, resources: string[], verbs: string[]): string[] {
  return resources.flatMap((r) => verbs.map((v) => `${group}|${r}|${v}`));
}

const KINDS = ["ec2instances", "s3buckets", "sqsqueues"];
const MANAGER_RULES = [
  ...expand("compute.cloud.com", KINDS, ["get", "list", "watch", "patch"]),
  ...expand(
    "compute.cloud.com",
    KINDS.map((k) => `${k}/status`),
    ["update"],
  ),
  ...expand("", ["events"], ["create", "patch"]),
];
const METRICS_AUTH_RULES = [
  ...expand("authentication.k8s.io", ["tokenreviews"], ["create"]),
  ...expand("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
];

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
        `ClusterRole/${FULL}-manager`,
        `ClusterRole/${FULL}-metrics-reader`,
        `ClusterRoleBinding/${FULL}-manager`,
        "CustomResourceDefinition/ec2instances.compute.cloud.com",
        "CustomResourceDefinition/s3buckets.compute.cloud.com",
        "CustomResourceDefinition/sqsqueues.compute.cloud.com",
        `Deployment/${FULL}`,
        `PodDisruptionBudget/${FULL}`,
        `Role/${FULL}-leader-election`,
        `RoleBinding/${FULL}-leader-election`,
        `Service/${FULL}-metrics`,
        `ServiceAccount/${FULL}`,
      ]);
      for (const x of m.filter(
        (o) => !["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"].includes(o.kind),
      )) {
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

    it("renders the CRDs of config/crd unchanged, annotated to survive helm uninstall", () => {
      const crdDir = path.join(repoRoot, "config/crd");
      const sources = readdirSync(crdDir)
        .filter((f) => f.startsWith("compute.cloud.com_") && f.endsWith(".yaml"))
        .map((f) => parse(readFileSync(path.join(crdDir, f), "utf8")) as Manifest);
      assert.equal(sources.length, 3);
      for (const src of sources) {
        const crd = find(m, "CustomResourceDefinition", src.metadata.name);
        assert.deepEqual(crd.spec, src.spec, `${src.metadata.name} spec equals config/crd`);
        assert.equal(crd.metadata.annotations?.["helm.sh/resource-policy"], "keep");
        assert.equal(crd.metadata.labels?.["app.kubernetes.io/instance"], "kp");
      }
    });
  });

  describe("with non-default values", () => {
    it("reads static keys from an existing Secret, with region and endpoint", async () => {
      const m = await renderChart({
        "aws.existingSecret": "aws-creds",
        "aws.region": "eu-west-1",
        "aws.endpoint": "http://moto.test:5000",
      });
      assert.deepEqual(envOf(m, "AWS_ACCESS_KEY_ID")?.valueFrom, {
        secretKeyRef: { name: "aws-creds", key: "AWS_ACCESS_KEY_ID" },
      });
      assert.deepEqual(envOf(m, "AWS_SECRET_ACCESS_KEY")?.valueFrom, {
        secretKeyRef: { name: "aws-creds", key: "AWS_SECRET_ACCESS_KEY" },
      });
      assert.deepEqual(envOf(m, "AWS_SESSION_TOKEN")?.valueFrom, {
        secretKeyRef: { name: "aws-creds", key: "AWS_SESSION_TOKEN", optional: true },
      });
      assert.equal(envOf(m, "AWS_REGION")?.value, "eu-west-1");
      assert.equal(envOf(m, "AWS_ENDPOINT_URL")?.value, "http://moto.test:5000");
    });

    it("annotates the ServiceAccount for IRSA and keeps user annotations", async () => {
      const arn = "arn:aws:iam::123456789012:role/kubeprovisioner";
      const m = await renderChart({ "aws.roleArn": arn, "serviceAccount.annotations.team": "platform" });
      assert.deepEqual(find(m, "ServiceAccount").metadata.annotations, {
        "eks.amazonaws.com/role-arn": arn,
        team: "platform",
      });
      assert.equal(envOf(m, "AWS_ACCESS_KEY_ID"), undefined);
    });

    it("skips the CRDs, or installs them without the keep annotation", async () => {
      const none = await renderChart({ "crds.install": false });
      assert.equal(none.filter((x) => x.kind === "CustomResourceDefinition").length, 0);
      const unkept = await renderChart({ "crds.keep": false });
      const crds = unkept.filter((x) => x.kind === "CustomResourceDefinition");
      assert.equal(crds.length, 3);
      for (const c of crds) assert.equal(c.metadata.annotations?.["helm.sh/resource-policy"], undefined);
    });

    it("serves plain-HTTP metrics without the TokenReview and SubjectAccessReview rules", async () => {
      const m = await renderChart({
        "metrics.secure": false,
        "metrics.port": 8080,
        "metrics.service.port": 8080,
      });
      assert.ok(container(m).args.includes("--metrics-secure=false"));
      assert.ok(container(m).args.includes("--metrics-bind-address=:8080"));
      assert.deepEqual(at(find(m, "Service"), "spec", "ports"), [
        { name: "http", port: 8080, targetPort: "http", protocol: "TCP" },
      ]);
      assert.deepEqual(triples(find(m, "ClusterRole", `${FULL}-manager`)), [...MANAGER_RULES].sort());
    });

    it("disables metrics entirely", async () => {
      const m = await renderChart({ "metrics.enabled": false });
      assert.ok(container(m).args.includes("--metrics-bind-address=0"));
      assert.equal(m.filter((x) => x.kind === "Service").length, 0);
      assert.equal(m.filter((x) => x.metadata.name.endsWith("-metrics-reader")).length, 0);
    });

    it("mounts a provided metrics certificate", async () => {
      const m = await renderChart({ "metrics.certSecret": "metrics-tls" });
      assert.ok(container(m).args.includes("--metrics-cert-dir=/etc/kubeprovisioner/metrics-certs"));
      const vols = at(find(m, "Deployment"), "spec", "template", "spec", "volumes") as {
        name: string;
        secret?: { secretName: string };
      }[];
      assert.equal(vols.find((v) => v.name === "metrics-certs")?.secret?.secretName, "metrics-tls");
    });

    it("creates a ServiceMonitor that authenticates with the Prometheus token", async () => {
      const m = await renderChart({
        "metrics.serviceMonitor.enabled": true,
        "metrics.serviceMonitor.labels.release": "prom",
      });
      const sm = find(m, "ServiceMonitor");
      assert.equal(sm.metadata.labels?.release, "prom");
      const ep = at(sm, "spec", "endpoints", 0);
      assert.equal(at(ep, "scheme"), "https");
      assert.equal(at(ep, "port"), "https");
      assert.equal(at(ep, "bearerTokenFile"), "/var/run/secrets/kubernetes.io/serviceaccount/token");
      assert.equal(at(ep, "tlsConfig", "insecureSkipVerify"), true);
    });

    it("creates a NetworkPolicy that admits only metrics scrapes", async () => {
      const m = await renderChart({ "networkPolicy.enabled": true });
      const np = find(m, "NetworkPolicy");
      assert.deepEqual(at(np, "spec", "policyTypes"), ["Ingress"]);
      assert.deepEqual(at(np, "spec", "ingress", 0, "ports"), [{ port: "https", protocol: "TCP" }]);
      assert.deepEqual(at(np, "spec", "ingress", 0, "from"), [
        { namespaceSelector: { matchLabels: { metrics: "enabled" } } },
      ]);
    });

    it("passes controller settings as flags", async () => {
      const m = await renderChart({}, [
        "--set",
        "controller.watchNamespaces={team-a,team-b}",
        "--set",
        "controller.maxConcurrentReconciles=4",
        "--set",
        "controller.pollInterval=2m",
        "--set",
        "controller.logLevel=debug",
        "--set",
        "extraArgs={--leader-election-retry-period=3s}",
      ]);
      const args = container(m).args;
      for (const a of [
        "--watch-namespace=team-a,team-b",
        "--max-concurrent-reconciles=4",
        "--poll-interval=2m",
        "--log-level=debug",
        "--leader-election-retry-period=3s",
      ]) {
        assert.ok(args.includes(a), `${a} in ${args.join(" ")}`);
      }
    });

    it("pins the image by digest", async () => {
      const digest = `sha256:${"a".repeat(64)}`;
      const m = await renderChart({
        "image.repository": "registry.example.com/kp",
        "image.tag": "1.2.3",
        "image.digest": digest,
      });
      assert.equal(at(container(m), "image"), `registry.example.com/kp:1.2.3@${digest}`);
    });

    it("runs one replica without leader election, PDB or lease Role", async () => {
      const m = await renderChart({ replicaCount: 1, "leaderElection.enabled": false });
      assert.ok(container(m).args.includes("--leader-elect=false"));
      assert.ok(!container(m).args.some((a) => a.startsWith("--leader-election-namespace")));
      assert.equal(
        m.filter((x) => ["Role", "RoleBinding", "PodDisruptionBudget"].includes(x.kind)).length,
        0,
      );
    });

    it("requires anti-affinity when asked, or none", async () => {
      const hard = await renderChart({ podAntiAffinity: "hard" });
      const spec = at(find(hard, "Deployment"), "spec", "template", "spec");
      assert.equal(
        at(
          spec,
          "affinity",
          "podAntiAffinity",
          "requiredDuringSchedulingIgnoredDuringExecution",
          0,
          "topologyKey",
        ),
        "kubernetes.io/hostname",
      );
      const none = await renderChart({ podAntiAffinity: "none" });
      assert.equal(at(find(none, "Deployment"), "spec", "template", "spec", "affinity"), undefined);
    });

    it("names everything after fullnameOverride", async () => {
      const m = await renderChart({ fullnameOverride: "prov" });
      assert.equal(find(m, "Deployment").metadata.name, "prov");
      assert.equal(find(m, "ClusterRole", "prov-manager").kind, "ClusterRole");
      assert.equal(at(find(m, "Deployment"), "spec", "template", "spec", "serviceAccountName"), "prov");
    });
  });

  describe("refuses bad values", () => {
    const cases: { what: string; args: string[]; error: RegExp }[] = [
      {
        what: "a wrong type",
        args: ["--set", "replicaCount=two"],
        error: /at '\/replicaCount': got string, want integer/,
      },
      {
        what: "an unknown top-level key",
        args: ["--set", "replicas=3"],
        error: /additional properties 'replicas' not allowed/,
      },
      {
        what: "AWS keys in values",
        args: ["--set", "aws.accessKeyId=AKIAEXAMPLE"],
        error: /at '\/aws': additional properties 'accessKeyId' not allowed/,
      },
      {
        what: "a log level outside the enum",
        args: ["--set", "controller.logLevel=loud"],
        error: /at '\/controller\/logLevel': value must be one of/,
      },
      {
        what: "an anti-affinity mode outside the enum",
        args: ["--set", "podAntiAffinity=maybe"],
        error: /at '\/podAntiAffinity': value must be one of 'soft', 'hard', 'none'/,
      },
      {
        what: "a duration without a unit",
        args: ["--set-string", "leaderElection.leaseDuration=15"],
        error: /at '\/leaderElection\/leaseDuration'/,
      },
      {
        what: "a bad pull policy",
        args: ["--set", "image.pullPolicy=Sometimes"],
        error: /at '\/image\/pullPolicy': value must be one of/,
      },
      { what: "a region that is not one", args: ["--set", "aws.region=Europe"], error: /at '\/aws\/region'/ },
      {
        what: "a port out of range",
        args: ["--set", "metrics.port=70000"],
        error: /at '\/metrics\/port': maximum: got 70,?000, want 65,?535/,
      },
      {
        what: "both a Secret and IRSA",
        args: ["--set", "aws.existingSecret=s", "--set", "aws.roleArn=arn:aws:iam::123456789012:role/r"],
        error: /mutually exclusive/,
      },
      {
        what: "several replicas without leader election",
        args: ["--set", "leaderElection.enabled=false"],
        error: /replicaCount > 1 requires leaderElection.enabled=true/,
      },
      {
        what: "a ServiceMonitor without metrics",
        args: ["--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true"],
        error: /requires metrics.enabled=true/,
      },
    ];
    for (const c of cases) {
      it(`rejects ${c.what} with helm's error`, async () => {
        const res = await helm(templateArgs({}, c.args));
        assert.notEqual(res.code, 0, `helm accepted ${c.args.join(" ")}`);
        assert.equal(res.stdout, "", "nothing is rendered");
        assert.match(res.stderr, c.error);
      });
    }
  });
});
