/**
 * The chart with non-default values, and the values values.schema.json and the chart's own
 * checks refuse (with Helm's error, rendering nothing).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readFileSync } from "node:fs";
import path from "node:path";
import { BUDGET_NAMES, DEFAULT_RATE_BUDGETS } from "../../src/aws/budget-plan.ts";
import { at, CHART_DIR, find, helm, renderChart, templateArgs } from "./helm.ts";
import { container, envOf, FULL, MANAGER_RULES, triples } from "./chart-expect.ts";

describe("helm chart values", () => {
  describe("non-default values", () => {
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

    it("lets the pod start without the Secret when it is optional", async () => {
      const m = await renderChart({ "aws.existingSecret": "aws-creds", "aws.existingSecretOptional": true });
      for (const [name, key] of [
        ["AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"],
        ["AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"],
        ["AWS_SESSION_TOKEN", "AWS_SESSION_TOKEN"],
      ] as const) {
        assert.deepEqual(envOf(m, name)?.valueFrom, {
          secretKeyRef: { name: "aws-creds", key, optional: true },
        });
      }
    });

    it("leaves out the aggregated view and edit roles when asked", async () => {
      const m = await renderChart({ "rbac.aggregateToDefaultRoles": false });
      const roles = m.filter((x) => x.kind === "ClusterRole").map((x) => x.metadata.name);
      assert.deepEqual(roles.sort(), [`${FULL}-manager`, `${FULL}-metrics-reader`]);
    });

    it("creates the Grafana dashboard ConfigMap for the sidecar, in the namespace asked for", async () => {
      const m = await renderChart({
        "metrics.dashboard.enabled": true,
        "metrics.dashboard.namespace": "monitoring",
        "metrics.dashboard.annotations.grafana_folder": "Operators",
      });
      const cm = find(m, "ConfigMap", `${FULL}-dashboard`);
      assert.equal(cm.metadata.namespace, "monitoring");
      assert.equal(cm.metadata.labels?.grafana_dashboard, "1");
      assert.equal(cm.metadata.annotations?.grafana_folder, "Operators");
      const data = cm.data as Record<string, string>;
      assert.deepEqual(Object.keys(data), ["kubeprovisioner.json"]);
      const dashboard = JSON.parse(data["kubeprovisioner.json"] ?? "") as { uid: string; panels: unknown[] };
      assert.equal(dashboard.uid, "kubeprovisioner");
      assert.ok(dashboard.panels.length > 10);
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

    it("creates a ServiceMonitor that authenticates with a token Secret of its own scraper, never a file", async () => {
      const m = await renderChart({
        "metrics.serviceMonitor.enabled": true,
        "metrics.serviceMonitor.labels.release": "prom",
      });
      const sm = find(m, "ServiceMonitor");
      assert.equal(sm.metadata.labels?.release, "prom");
      const ep = at(sm, "spec", "endpoints", 0);
      assert.equal(at(ep, "scheme"), "https");
      assert.equal(at(ep, "port"), "https");
      // bearerTokenFile is deprecated and refused under arbitraryFSAccessThroughSMs.deny.
      assert.equal(at(ep, "bearerTokenFile"), undefined);
      const scraper = `${FULL}-metrics-scraper`;
      assert.deepEqual(at(ep, "authorization"), {
        type: "Bearer",
        credentials: { name: scraper, key: "token" },
      });
      assert.equal(at(ep, "tlsConfig", "insecureSkipVerify"), true);
      const secret = find(m, "Secret", scraper);
      assert.equal(at(secret, "type"), "kubernetes.io/service-account-token");
      assert.equal(secret.metadata.namespace, "kp-system");
      assert.equal(secret.metadata.annotations?.["kubernetes.io/service-account.name"], scraper);
      assert.equal(find(m, "ServiceAccount", scraper).metadata.namespace, "kp-system");
      const binding = find(m, "ClusterRoleBinding", scraper);
      assert.deepEqual(at(binding, "roleRef"), {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: `${FULL}-metrics-reader`,
      });
      assert.deepEqual(at(binding, "subjects"), [
        { kind: "ServiceAccount", name: scraper, namespace: "kp-system" },
      ]);

      // Plain HTTP metrics need no token: no scraper identity.
      const plain = await renderChart({ "metrics.serviceMonitor.enabled": true, "metrics.secure": false });
      assert.equal(at(find(plain, "ServiceMonitor"), "spec", "endpoints", 0, "authorization"), undefined);
      assert.equal(plain.filter((x) => x.metadata.name === scraper).length, 0);
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

    it("creates AwsAccounts, grants Secrets only in the external-ID namespaces, and passes --require-account", async () => {
      const plain = await renderChart();
      assert.ok(container(plain).args.includes("--require-account=false"));
      assert.equal(plain.filter((x) => x.kind === "AwsAccount").length, 0);
      assert.equal(plain.filter((x) => x.metadata.name === `${FULL}-external-ids`).length, 0);
      const m = await renderChart({ "controller.requireAccount": true }, [
        "--set",
        "awsAccounts.accounts.team-a.roleArn=arn:aws:iam::111122223333:role/tenant",
        "--set",
        "awsAccounts.accounts.team-a.allowedNamespaces.names={team-a}",
        "--set",
        "awsAccounts.externalIdSecretNamespaces={ids-1,ids-2}",
      ]);
      assert.ok(container(m).args.includes("--require-account=true"));
      const account = find(m, "AwsAccount", "team-a");
      assert.equal(account.metadata.namespace, undefined, "AwsAccounts are cluster-scoped");
      assert.deepEqual(at(account, "spec"), {
        roleArn: "arn:aws:iam::111122223333:role/tenant",
        allowedNamespaces: { names: ["team-a"] },
      });
      const roles = m.filter((x) => x.kind === "Role" && x.metadata.name === `${FULL}-external-ids`);
      assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ["ids-1", "ids-2"]);
      for (const r of roles) {
        assert.deepEqual(at(r, "rules"), [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
      }
      const bindings = m.filter(
        (x) => x.kind === "RoleBinding" && x.metadata.name === `${FULL}-external-ids`,
      );
      assert.equal(bindings.length, 2);
      const secretsAnywhere = m
        .filter((x) => x.kind === "ClusterRole")
        .flatMap((r) => (at(r, "rules") as { resources?: string[] }[] | undefined) ?? [])
        .filter((rule) => rule.resources?.includes("secrets"));
      assert.deepEqual(secretsAnywhere, [], "no ClusterRole grants Secrets");
    });

    it("grants the outputs Secrets only in outputs.secretNamespaces, separately from the external IDs, and passes the same list as a flag", async () => {
      const plain = await renderChart();
      assert.equal(plain.filter((x) => x.metadata.name === `${FULL}-output-secrets`).length, 0);
      assert.ok(!container(plain).args.some((a) => a.startsWith("--output-secret-namespaces")));
      const m = await renderChart({}, [
        "--set",
        "outputs.secretNamespaces={apps-1,apps-2}",
        "--set",
        "awsAccounts.externalIdSecretNamespaces={apps-1}",
      ]);
      assert.ok(container(m).args.includes("--output-secret-namespaces=apps-1,apps-2"));
      const roles = m.filter((x) => x.kind === "Role" && x.metadata.name === `${FULL}-output-secrets`);
      assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ["apps-1", "apps-2"]);
      for (const r of roles) {
        assert.deepEqual(at(r, "rules"), [
          {
            apiGroups: [""],
            resources: ["secrets"],
            verbs: ["get", "list", "watch", "create", "update", "delete"],
          },
        ]);
      }
      const bindings = m.filter(
        (x) => x.kind === "RoleBinding" && x.metadata.name === `${FULL}-output-secrets`,
      );
      assert.deepEqual(
        bindings.map((b) => at(b, "roleRef", "name")),
        [`${FULL}-output-secrets`, `${FULL}-output-secrets`],
      );
      const ids = m.filter((x) => x.kind === "Role" && x.metadata.name === `${FULL}-external-ids`);
      assert.deepEqual(at(ids[0], "rules"), [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
      const secretsAnywhere = m
        .filter((x) => x.kind === "ClusterRole")
        .flatMap((r) => (at(r, "rules") as { resources?: string[] }[] | undefined) ?? [])
        .filter((rule) => rule.resources?.includes("secrets"));
      assert.deepEqual(secretsAnywhere, [], "no ClusterRole grants Secrets");
    });

    it("passes controller settings as flags", async () => {
      const m = await renderChart({}, [
        "--set",
        "controller.watchNamespaces={team-a,team-b}",
        "--set",
        "controller.maxConcurrentReconciles=4",
        "--set",
        "controller.adoptionNamespaces={team-a,team-b}",
        "--set",
        "controller.defaultTags.team=platform",
        "--set-string",
        "controller.defaultTags.cost\\.center=42",
        "--set",
        "controller.ignoreTagPrefixes={backup:,CostCenter}",
        "--set",
        "controller.pollInterval=2m",
        "--set",
        "controller.pollBudgetShare=30%",
        "--set",
        "controller.logLevel=debug",
        "--set",
        "extraArgs={--leader-election-retry-period=3s}",
        "--set",
        "aws.rateBudgets.ec2\\.nonMutating=10/50",
        "--set",
        "aws.rateBudgets.s3=100/200",
        "--set",
        "aws.requestTimeout=20s",
        "--set",
        "aws.maxAttempts=5",
      ]);
      const args = container(m).args;
      for (const a of [
        "--watch-namespace=team-a,team-b",
        "--max-concurrent-reconciles=4",
        "--adoption=disabled",
        "--adoption-namespaces=team-a,team-b",
        "--default-tags=cost.center=42,team=platform",
        "--ignore-tag-prefixes=backup:,CostCenter",
        "--poll-interval=2m",
        "--poll-budget-share=30%",
        "--log-level=debug",
        "--leader-election-retry-period=3s",
        "--aws-rate-budgets=ec2.nonMutating=10/50,s3=100/200",
        "--aws-request-timeout=20s",
        "--aws-connect-timeout=3s",
        "--aws-max-attempts=5",
      ]) {
        assert.ok(args.includes(a), `${a} in ${args.join(" ")}`);
      }
    });

    it("grants adoption to no namespace by default", async () => {
      const args = container(await renderChart({})).args;
      assert.ok(args.includes("--adoption=disabled"), args.join(" "));
      assert.equal(args.filter((a) => a.startsWith("--adoption-namespaces")).length, 0, args.join(" "));
    });

    it("takes a rate budget for every budget the operator has, and values.yaml names each one's default", async () => {
      const m = await renderChart(
        {},
        BUDGET_NAMES.flatMap((n) => ["--set", `aws.rateBudgets.${n.replace(/\./g, "\\.")}=1/2`]),
      );
      const flag = container(m).args.find((a) => a.startsWith("--aws-rate-budgets="));
      assert.deepEqual(
        flag?.slice("--aws-rate-budgets=".length).split(",").sort(),
        BUDGET_NAMES.map((n) => `${n}=1/2`).sort(),
      );
      // The comment block right above `rateBudgets:`, as one line.
      const lines = readFileSync(path.join(CHART_DIR, "values.yaml"), "utf8").split("\n");
      const key = lines.findIndex((l) => l.startsWith("  rateBudgets:"));
      let first = key;
      while (lines[first - 1]?.trimStart().startsWith("#")) first--;
      const comment = lines
        .slice(first, key)
        .map((l) => l.replace(/^\s*#\s?(-- )?/, ""))
        .join(" ");
      for (const n of BUDGET_NAMES) {
        const { ratePerSecond, burst } = DEFAULT_RATE_BUDGETS[n];
        // EC2's budgets are named with the documented bucket, one token more than the default.
        const shown = n.startsWith("ec2.") ? `${ratePerSecond}/${burst + 1}` : `${ratePerSecond}/${burst}`;
        assert.match(comment, new RegExp(`\\b${n.replace(/\./g, "\\.")} ${shown.replace("/", "\\/")}\\b`), n);
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
        what: "a poll budget share that is no percentage",
        args: ["--set-string", "controller.pollBudgetShare=0.5"],
        error: /at '\/controller\/pollBudgetShare'/,
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
      {
        what: "alert rules without metrics",
        args: ["--set", "metrics.enabled=false", "--set", "metrics.prometheusRule.enabled=true"],
        error: /metrics.prometheusRule.enabled requires metrics.enabled=true/,
      },
      {
        what: "a dashboard without metrics",
        args: ["--set", "metrics.enabled=false", "--set", "metrics.dashboard.enabled=true"],
        error: /metrics.dashboard.enabled requires metrics.enabled=true/,
      },
      {
        what: "adoption enabled everywhere and granted per namespace at once",
        args: ["--set", "controller.adoption=enabled", "--set", "controller.adoptionNamespaces={team-a}"],
        error: /controller.adoption=enabled grants every namespace: set one of the two/,
      },
      {
        what: "the CRD settings of chart 0.2.0, whose CRDs are now in crds/",
        args: ["--set", "crds.install=false"],
        error: /additional properties 'crds' not allowed/,
      },
      {
        what: "an alert ratio above 1",
        args: ["--set-json", "metrics.prometheusRule.awsThrottleRatio=5"],
        error: /at '\/metrics\/prometheusRule\/awsThrottleRatio': maximum/,
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
