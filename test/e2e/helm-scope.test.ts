/**
 * The chart's scope values, offline: which kinds run (`controllers.<kind>.enabled`, passed as
 * `--controllers` and followed by the RBAC) and where the RBAC applies (`installScope`: one
 * ClusterRole, or Roles in the watched namespaces with only cluster-scoped rules left cluster-wide).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { KINDS as REGISTRY } from "../../src/kinds.ts";
import { valueKeyOf } from "../../src/gen/rbac.ts";
import { at, CHART_DIR, find, helm, renderChart, templateArgs, type Manifest } from "./helm.ts";
import {
  CLUSTER_RULES,
  container,
  expand,
  EVENT_RULES,
  FULL,
  MANAGER_RULES,
  METRICS_AUTH_RULES,
  NAMESPACED_RULES,
  triples,
} from "./chart-expect.ts";

const argsOf = (m: readonly Manifest[]): string[] => container(m).args;
const managerRole = (m: readonly Manifest[]): Manifest => find(m, "ClusterRole", `${FULL}-manager`);

describe("helm chart: which kinds run", () => {
  it("values.yaml has a switch for every kind of the registry, and no other", () => {
    const values = parse(readFileSync(path.join(CHART_DIR, "values.yaml"), "utf8")) as {
      controllers: Record<string, { enabled: boolean }>;
    };
    assert.deepEqual(Object.keys(values.controllers), REGISTRY.map(valueKeyOf));
    for (const v of Object.values(values.controllers)) assert.equal(v.enabled, true);
  });

  it("passes no --controllers while every kind runs", async () => {
    const m = await renderChart();
    assert.ok(!argsOf(m).some((a) => a.startsWith("--controllers")), argsOf(m).join(" "));
  });

  it("passes the kinds that run as --controllers, and grants a disabled kind nothing", async () => {
    const m = await renderChart({ "controllers.ec2Instance.enabled": false });
    assert.ok(argsOf(m).includes("--controllers=s3bucket,sqsqueue"), argsOf(m).join(" "));
    const granted = triples(managerRole(m));
    assert.deepEqual(
      granted.filter((t) => t.includes("|ec2instances")),
      [],
      "no rule names ec2instances",
    );
    assert.deepEqual(
      granted,
      [...MANAGER_RULES.filter((t) => !t.includes("|ec2instances")), ...METRICS_AUTH_RULES].sort(),
    );
  });

  it("keeps list and watch of a disabled kind that a running kind's objects name, and nothing else of it", async () => {
    // An S3Bucket's notifications name SqsQueues: the bucket controller reads them from its cache.
    const m = await renderChart({
      "controllers.sqsQueue.enabled": false,
      "controllers.ec2Instance.enabled": false,
    });
    assert.ok(argsOf(m).includes("--controllers=s3bucket"));
    const granted = triples(managerRole(m));
    assert.deepEqual(
      granted.filter((t) => t.includes("|sqsqueues")),
      expand("compute.cloud.com", ["sqsqueues"], ["list", "watch"]).sort(),
    );
    assert.deepEqual(
      granted.filter((t) => t.includes("|ec2instances")),
      [],
    );
    assert.ok(granted.includes("compute.cloud.com|s3buckets/status|update"));
    assert.ok(granted.includes("|configmaps|create"), "the bucket's outputs ConfigMap");
  });

  it("refuses a release in which no kind runs", async () => {
    const res = await helm(
      templateArgs({
        "controllers.ec2Instance.enabled": false,
        "controllers.s3Bucket.enabled": false,
        "controllers.sqsQueue.enabled": false,
      }),
    );
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /controllers: every kind is disabled/);
  });

  it("refuses a switch that is not a boolean, or a kind it does not know", async () => {
    const wrong = await helm(templateArgs({ "controllers.ec2Instance.enabled": "no" }));
    assert.match(wrong.stderr, /at '\/controllers\/ec2Instance\/enabled': got string, want boolean/);
    const unknown = await helm(templateArgs({ "controllers.rdsInstance.enabled": false }));
    assert.match(unknown.stderr, /at '\/controllers': additional properties 'rdsInstance' not allowed/);
  });
});

describe("helm chart: installScope", () => {
  it("cluster (the default): one ClusterRole grants everything, and no Role grants the kinds", async () => {
    const m = await renderChart({}, ["--set", "controller.watchNamespaces={team-a}"]);
    assert.ok(argsOf(m).includes("--watch-namespace=team-a"));
    assert.deepEqual(triples(managerRole(m)), [...MANAGER_RULES, ...METRICS_AUTH_RULES].sort());
    assert.deepEqual(
      m.filter((x) => x.kind === "Role").map((x) => x.metadata.name),
      [`${FULL}-leader-election`],
    );
  });

  it("namespace: the kinds, ConfigMaps and Events in a Role of each watched namespace; only cluster-scoped rules in the ClusterRole", async () => {
    const m = await renderChart({ installScope: "namespace" }, [
      "--set",
      "controller.watchNamespaces={team-a,team-b}",
    ]);
    assert.ok(argsOf(m).includes("--watch-namespace=team-a,team-b"));
    assert.deepEqual(triples(managerRole(m)), [...CLUSTER_RULES, ...METRICS_AUTH_RULES].sort());
    for (const t of triples(managerRole(m)))
      assert.match(t, /^compute\.cloud\.com\|awsaccounts|^\|namespaces\||^authentication|^authorization/, t);

    const roles = m.filter((x) => x.kind === "Role" && x.metadata.name === `${FULL}-manager`);
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ["team-a", "team-b"]);
    for (const r of roles) assert.deepEqual(triples(r), [...NAMESPACED_RULES].sort());
    const bindings = m.filter((x) => x.kind === "RoleBinding" && x.metadata.name === `${FULL}-manager`);
    assert.deepEqual(bindings.map((b) => b.metadata.namespace).sort(), ["team-a", "team-b"]);
    for (const b of bindings) {
      assert.deepEqual(at(b, "roleRef"), {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: `${FULL}-manager`,
      });
      assert.deepEqual(at(b, "subjects"), [{ kind: "ServiceAccount", name: FULL, namespace: "kp-system" }]);
    }

    // Events about the operator's Pod (release namespace) and about AwsAccounts (default).
    const events = m.filter((x) => x.kind === "Role" && x.metadata.name === `${FULL}-events`);
    assert.deepEqual(events.map((r) => r.metadata.namespace).sort(), ["default", "kp-system"]);
    for (const r of events) assert.deepEqual(triples(r), [...EVENT_RULES].sort());
  });

  it("namespace without watchNamespaces watches the release namespace, which then needs no Events-only Role", async () => {
    const m = await renderChart({ installScope: "namespace" });
    assert.ok(argsOf(m).includes("--watch-namespace=kp-system"));
    const roles = m.filter((x) => x.kind === "Role").map((x) => `${x.metadata.namespace}/${x.metadata.name}`);
    assert.deepEqual(roles.sort(), [
      `default/${FULL}-events`,
      `kp-system/${FULL}-leader-election`,
      `kp-system/${FULL}-manager`,
    ]);
  });

  it("namespace follows the kind switches in the Roles too", async () => {
    const m = await renderChart({ installScope: "namespace", "controllers.ec2Instance.enabled": false });
    const role = find(m, "Role", `${FULL}-manager`);
    assert.deepEqual(triples(role), NAMESPACED_RULES.filter((t) => !t.includes("|ec2instances")).sort());
  });

  it("refuses outputs Secrets in a namespace a namespaced install does not watch", async () => {
    const res = await helm(
      templateArgs({ installScope: "namespace" }, ["--set", "outputs.secretNamespaces={elsewhere}"]),
    );
    assert.notEqual(res.code, 0);
    assert.match(
      res.stderr,
      /outputs.secretNamespaces names elsewhere, which installScope=namespace does not watch/,
    );
  });

  it("refuses a scope it does not know", async () => {
    const res = await helm(templateArgs({ installScope: "tenant" }));
    assert.match(res.stderr, /at '\/installScope': value must be one of 'cluster', 'namespace'/);
  });
});
