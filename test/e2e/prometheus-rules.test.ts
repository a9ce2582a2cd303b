/**
 * The chart's PrometheusRule, rendered by helm and judged by Prometheus' own promtool (built by
 * `make tools`): `promtool check rules` parses every expression and template, `promtool test
 * rules` runs the unit tests in prometheus-rules/tests.yaml (each alert fires on the series it is
 * meant for, at the right time, with the expected labels and text, and stays quiet otherwise).
 * The Grafana dashboard's queries go through the same PromQL parser, as recording rules.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { stringify } from "yaml";
import { KNOWN_CODES } from "../../src/aws/error-codes.ts";
import { toolPath } from "../support/tools.ts";
import { FULL } from "./chart-expect.ts";
import { dashboardQueries, metricNames } from "./dashboard.ts";
import { at, find, renderChart, type Manifest } from "./helm.ts";

const TESTS = path.join(import.meta.dirname, "prometheus-rules", "tests.yaml");

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}

function promtool(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(toolPath("promtool"), args, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") {
        reject(err);
        return;
      }
      resolve({ code: typeof err?.code === "number" ? err.code : 0, output: `${stdout}${stderr}` });
    });
  });
}

function rulesOf(m: readonly Manifest[]): Rule[] {
  const groups = at(find(m, "PrometheusRule"), "spec", "groups") as { rules: Rule[] }[];
  return groups.flatMap((g) => g.rules);
}

const work = mkdtempSync(path.join(os.tmpdir(), "kp-rules-"));
after(() => rmSync(work, { recursive: true, force: true }));

describe("PrometheusRule (metrics.prometheusRule.enabled)", () => {
  it("is not rendered by default", async () => {
    const m = await renderChart();
    assert.equal(m.filter((x) => x.kind === "PrometheusRule").length, 0);
  });

  it("passes promtool check rules and the promtool unit tests", async () => {
    const m = await renderChart({ "metrics.prometheusRule.enabled": true });
    const rule = find(m, "PrometheusRule", FULL);
    const rules = path.join(work, "rules.yaml");
    // A PrometheusRule's spec is a Prometheus rule file.
    writeFileSync(rules, stringify(rule.spec));
    copyFileSync(TESTS, path.join(work, "tests.yaml"));

    const check = await promtool(["check", "rules", rules]);
    assert.equal(check.code, 0, check.output);
    assert.match(check.output, /SUCCESS: 6 rules found/);

    const test = await promtool(["test", "rules", path.join(work, "tests.yaml")]);
    assert.equal(test.code, 0, test.output);
    assert.match(test.output, /SUCCESS/);
  });

  it("has the six alerts, each scoped to this release's metrics", async () => {
    const rules = rulesOf(await renderChart({ "metrics.prometheusRule.enabled": true }));
    assert.deepEqual(
      rules.map((r) => r.alert),
      [
        "KubeprovisionerResourcesNotReady",
        "KubeprovisionerReconcileErrors",
        "KubeprovisionerAwsThrottled",
        "KubeprovisionerNoLeader",
        "KubeprovisionerWorkqueueGrowing",
        "KubeprovisionerRestarting",
      ],
    );
    for (const r of rules) {
      const selectors = r.expr.match(/\{[^}]*\}/g) ?? [];
      assert.ok(selectors.length > 0, r.alert);
      for (const s of selectors) {
        assert.ok(s.includes(`namespace="kp-system",job="${FULL}-metrics"`), `${r.alert}: ${s}`);
      }
    }
  });

  it("counts exactly the AWS codes the operator classifies as throttling, as the dashboard does", async () => {
    const m = await renderChart({
      "metrics.prometheusRule.enabled": true,
      "metrics.dashboard.enabled": true,
    });
    const expr = rulesOf(m).find((r) => r.alert === "KubeprovisionerAwsThrottled")?.expr ?? "";
    const source = /code=~"([^"]+)"/.exec(expr)?.[1];
    assert.ok(source, expr);
    const re = new RegExp(`^(?:${source})$`); // PromQL regular expressions are anchored
    for (const [code, kind] of KNOWN_CODES) {
      assert.equal(re.test(code), kind === "throttled", `${code} (${kind})`);
    }
    const dashboard = (find(m, "ConfigMap").data as Record<string, string>)["kubeprovisioner.json"] ?? "";
    const inDashboard = [...dashboard.matchAll(/code=~\\"([^\\]+)\\"/g)].map((x) => x[1]);
    assert.ok(inDashboard.length >= 2, "the dashboard shows throttling");
    for (const d of inDashboard) assert.equal(d, source);
  });

  it("takes extra labels for rules and alerts, the thresholds, and drops the leader alert without leader election", async () => {
    const m = await renderChart(
      {
        "metrics.prometheusRule.enabled": true,
        "metrics.prometheusRule.labels.release": "prom",
        "metrics.prometheusRule.alertLabels.team": "platform",
        "metrics.prometheusRule.notReadyFor": "1h",
        "leaderElection.enabled": false,
        replicaCount: 1,
      },
      // --set makes 0.2 a string; the schema wants a number.
      ["--set-json", "metrics.prometheusRule.awsThrottleRatio=0.2"],
    );
    const pr = find(m, "PrometheusRule");
    assert.equal(pr.metadata.labels?.release, "prom");
    const rules = rulesOf(m);
    assert.ok(!rules.some((r) => r.alert === "KubeprovisionerNoLeader"));
    for (const r of rules) assert.equal(r.labels?.team, "platform", r.alert);
    assert.equal(rules.find((r) => r.alert === "KubeprovisionerResourcesNotReady")?.for, "1h");
    assert.match(rules.find((r) => r.alert === "KubeprovisionerAwsThrottled")?.expr ?? "", /> 0\.2\s*$/);
  });
});

describe("Grafana dashboard queries (metrics.dashboard.enabled)", () => {
  it("every query of the Grafana dashboard is valid PromQL", async () => {
    const m = await renderChart({ "metrics.dashboard.enabled": true });
    const json = (find(m, "ConfigMap").data as Record<string, string>)["kubeprovisioner.json"] ?? "";
    const queries = dashboardQueries(json).filter((q) => !q.startsWith("label_values("));
    assert.ok(queries.length > 30, `${queries.length} queries`);
    // Grafana's variables, as Grafana would substitute them.
    const promql = queries.map((q) =>
      q.replaceAll("$__rate_interval", "2m").replaceAll("$namespace", "kp-system").replaceAll("$job", ".+"),
    );
    const file = path.join(work, "dashboard-rules.yaml");
    writeFileSync(
      file,
      stringify({
        groups: [
          { name: "dashboard", rules: promql.map((expr, i) => ({ record: `dashboard:query${i}`, expr })) },
        ],
      }),
    );
    const check = await promtool(["check", "rules", file]);
    assert.equal(check.code, 0, check.output);
    assert.match(check.output, new RegExp(`SUCCESS: ${promql.length} rules found`));
  });

  it("reads metric names out of PromQL, leaving functions, labels, grouping and ranges aside", () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (le, service) (rate(aws_api_request_duration_seconds_bucket{code=~"a|b"}[5m]))) / on (service) group_left sum(up) and bool x_total offset 5m',
      ),
      ["aws_api_request_duration_seconds_bucket", "up", "x_total"],
    );
    assert.deepEqual(
      metricNames('label_values(controller_runtime_reconcile_total{namespace=~"$namespace"}, job)'),
      ["controller_runtime_reconcile_total"],
    );
  });
});
