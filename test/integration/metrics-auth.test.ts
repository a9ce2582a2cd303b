/**
 * The operator's /metrics endpoint, served by a real operator process running as its
 * own ServiceAccount with the generated RBAC (config/rbac), checked by the real API server's
 * TokenReview and SubjectAccessReview.
 */
import assert from "node:assert/strict";
import { request } from "node:https";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { freePort, repoRoot, waitFor, WAIT_MS } from "../support/process.ts";
import { metricSum, metricValue } from "../../src/runtime/testing/prometheus-text.ts";
import { startOperator, type OperatorProcess as Operator } from "../support/operator.ts";
import { ensureNamespace, httpStatus } from "./manager-fixture.ts";

const OPERATOR_NS = "kubeprovisioner-system";

interface Scrape {
  status: number;
  text: string;
  peer: X509Certificate;
}

function scrape(port: number, token?: string): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/metrics",
        rejectUnauthorized: false, // self-signed; the certificate is checked below
        agent: false,
        headers: token !== undefined ? { Authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        const peer = new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw);
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, peer }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("secure /metrics", () => {
  let cp: ControlPlane;
  let op: Operator;
  let metricsPort: number;

  before(async () => {
    // The operator registers controllers for the three kinds: their caches sync only once the CRDs exist.
    cp = await startControlPlane({ installCRDs: true });
    await ensureNamespace(cp, OPERATOR_NS);
    const rbac = path.join(repoRoot, "config/rbac");
    for (const f of [
      "serviceaccount.yaml",
      "manager-clusterrole.yaml",
      "leader-election-role.yaml",
      "metrics-reader-clusterrole.yaml",
    ]) {
      await cp.kubectl(["apply", "-f", path.join(rbac, f)]);
    }
    const operatorKc = await cp.tokenKubeConfig(OPERATOR_NS, "kubeprovisioner");
    metricsPort = await freePort();
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: "metrics-operator",
      waitReady: false,
      args: [
        `--kubeconfig=${cp.writeKubeConfig(operatorKc, "operator")}`,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        "--leader-elect",
        `--leader-election-namespace=${OPERATOR_NS}`,
      ],
    });
    await waitFor("operator ready", async () => (await httpStatus(op.probePort, "/readyz")) === 200, WAIT_MS);
  });
  after(async () => {
    await op?.process.stop();
    await cp?.stop();
  });

  it("serves TLS with a self-signed certificate for the loopback address", async () => {
    const res = await scrape(metricsPort);
    assert.equal(res.peer.checkIP("127.0.0.1"), "127.0.0.1");
    assert.ok(res.peer.verify(res.peer.publicKey));
  });

  it("refuses anonymous requests and unknown tokens with 401", async () => {
    assert.equal((await scrape(metricsPort)).status, 401);
    assert.equal((await scrape(metricsPort, "not-a-token")).status, 401);
  });

  it("refuses a ServiceAccount token without RBAC with 403", async () => {
    const token = await cp.serviceAccountToken("default", "no-rbac");
    const res = await scrape(metricsPort, token);
    assert.equal(res.status, 403);
    assert.match(res.text, /system:serviceaccount:default:no-rbac/);
  });

  it("accepts a ServiceAccount bound to the metrics-reader ClusterRole", async () => {
    await ensureNamespace(cp, "monitoring");
    const token = await cp.serviceAccountToken("monitoring", "prometheus");
    const binding = await cp.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "prometheus-kubeprovisioner-metrics" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "kubeprovisioner-metrics-reader",
      },
      subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" }],
    });
    assert.equal(binding.status, 201, binding.text);
    const res = await scrape(metricsPort, token);
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /^leader_election_master_status\{name="c56fc483\.cloud\.com"\} 1$/m);
    assert.ok(metricValue(res.text, "process_cpu_user_seconds_total") !== undefined);
    assert.ok(
      metricSum(res.text, "rest_client_requests_total") > 0,
      "the operator's own API requests are counted",
    );
  });

  it("/healthz lists its checks", async () => {
    const res = await fetch(`http://127.0.0.1:${op.probePort}/healthz?verbose`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "[+]ping ok\n[+]leader-election ok\nhealthz check passed\n");
  });
});

describe("insecure /metrics", () => {
  let cp: ControlPlane;
  let op: Operator;

  before(async () => {
    // The operator registers controllers for the three kinds: their caches sync only once the CRDs exist.
    cp = await startControlPlane({ installCRDs: true });
  });
  after(async () => {
    await op?.process.stop();
    await cp?.stop();
  });

  it("serves plain HTTP without authentication when --metrics-secure=false", async () => {
    const port = await freePort();
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: "insecure-operator",
      waitReady: false,
      args: [`--metrics-bind-address=127.0.0.1:${port}`, "--metrics-secure=false"],
    });
    await waitFor("metrics served", async () => (await httpStatus(port, "/metrics")) === 200, WAIT_MS);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.ok((metricValue(text, "nodejs_heap_size_used_bytes") ?? 0) > 0);
  });
});
