/**
 * The REST client against a real kube-apiserver: CRUD and patch types, metav1.Status errors,
 * request metrics, watch streaming and 410, RBAC denial, and credentials that rotate.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { KubeConfigConnection } from "../../src/runtime/kube/connection.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import {
  ApiError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  TransportError,
} from "../../src/runtime/kube/errors.ts";
import type { KubeObject } from "../../src/runtime/kube/object.ts";
import { RestClient, type WatchEvent } from "../../src/runtime/kube/rest.ts";
import { registrySum } from "../../src/runtime/testing/prometheus-text.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { waitFor, within } from "../support/process.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const NS = "rest";
const CM = `/api/v1/namespaces/${NS}/configmaps`;

async function requestCount(registry: Registry, labels: Record<string, string>): Promise<number> {
  return registrySum(registry, "rest_client_requests_total", labels);
}

/** The username the API server sees for `client`. */
async function whoami(client: RestClient): Promise<string> {
  const r = await client.request<{ status: { userInfo: { username: string } } }>({
    method: "POST",
    path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  return r.status.userInfo.username;
}

describe("RestClient on a real API server", () => {
  let cp: ControlPlane;
  let registry: Registry;
  let rest: RestClient;

  before(async () => {
    // Without the watch cache, watches are served by etcd, which the API server compacts every
    // second here: an old resourceVersion then reliably gets 410.
    cp = await startControlPlane({
      apiServerFlags: ["--watch-cache=false", "--etcd-compaction-interval=1s"],
    });
    registry = new Registry();
    rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry });
    await rest.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: NS } } });
  });
  after(async () => {
    await cp?.stop();
  });

  it("creates, reads, updates, patches and deletes, with typed errors", async () => {
    const created = await rest.request<ConfigMap>({
      method: "POST",
      path: CM,
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "crud" }, data: { a: "1" } },
    });
    assert.equal(created.metadata.name, "crud");
    assert.ok(created.metadata.resourceVersion);

    const dup = await rest
      .request({ method: "POST", path: CM, body: { metadata: { name: "crud" } } })
      .catch((e: unknown) => e);
    assert.ok(isAlreadyExists(dup), String(dup));
    assert.ok(!isConflict(dup));

    const got = await rest.request<ConfigMap>({ method: "GET", path: `${CM}/crud` });
    assert.deepEqual(got.data, { a: "1" });

    const updated = await rest.request<ConfigMap>({
      method: "PUT",
      path: `${CM}/crud`,
      body: { ...got, data: { a: "2" } },
    });
    assert.deepEqual(updated.data, { a: "2" });
    const stale = await rest
      .request({ method: "PUT", path: `${CM}/crud`, body: { ...got, data: { a: "3" } } })
      .catch((e: unknown) => e);
    assert.ok(isConflict(stale), String(stale));
    assert.equal((stale as ApiError).reason, "Conflict");

    const merged = await rest.request<ConfigMap>({
      method: "PATCH",
      path: `${CM}/crud`,
      body: { data: { b: "merge" } },
      contentType: "application/merge-patch+json",
    });
    assert.deepEqual(merged.data, { a: "2", b: "merge" });
    const jsonPatched = await rest.request<ConfigMap>({
      method: "PATCH",
      path: `${CM}/crud`,
      body: [{ op: "replace", path: "/data/a", value: "json" }],
      contentType: "application/json-patch+json",
    });
    assert.equal(jsonPatched.data?.a, "json");
    const applied = await rest.request<ConfigMap>({
      method: "PATCH",
      path: `${CM}/applied`,
      query: { fieldManager: "rest-test", force: true },
      body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  c: ssa\n",
      contentType: "application/apply-patch+yaml",
    });
    assert.deepEqual(applied.data, { c: "ssa" });

    const invalid = await rest
      .request({ method: "POST", path: CM, body: { metadata: { name: "Not_A_Valid_Name" } } })
      .catch((e: unknown) => e);
    assert.ok(isInvalid(invalid), String(invalid));

    await rest.request({ method: "DELETE", path: `${CM}/crud` });
    const missing = await rest.request({ method: "GET", path: `${CM}/crud` }).catch((e: unknown) => e);
    assert.ok(missing instanceof ApiError);
    assert.ok(isNotFound(missing));
    assert.equal(missing.reason, "NotFound");
    assert.match(missing.message, /configmaps "crud" not found/);
  });

  it("counts every request by code, method and host", async () => {
    const host = new URL(cp.server).host;
    const before404 = await requestCount(registry, { code: "404", method: "GET", host });
    const before200 = await requestCount(registry, { code: "200", method: "GET", host });
    await rest.request({ method: "GET", path: `${CM}/nope` }).catch(() => undefined);
    await rest.request({ method: "GET", path: CM });
    await rest.request({ method: "GET", path: CM, query: { limit: 1 } });
    assert.equal((await requestCount(registry, { code: "404", method: "GET", host })) - before404, 1);
    assert.equal((await requestCount(registry, { code: "200", method: "GET", host })) - before200, 2);
    const hist = await registry.getSingleMetric("rest_client_request_duration_seconds")?.get();
    assert.ok(
      (hist?.values ?? []).some(
        (v) => v.labels.verb === "GET" && v.labels.host === host && (v as { value: number }).value > 0,
      ),
    );
  });

  it("reuses one keep-alive connection for sequential requests", async () => {
    const connection = new KubeConfigConnection(cp.kubeConfig());
    const client = new RestClient({ connection, registry: new Registry() });
    const { agent } = await connection.settings();
    const sockets = new Set<unknown>();
    agent.on("free", (socket: unknown) => sockets.add(socket));
    for (let i = 0; i < 20; i++) await client.request({ method: "GET", path: CM, query: { limit: 1 } });
    assert.equal(sockets.size, 1, "one TLS connection served all twenty requests");
    connection.destroy();
  });

  it("counts a request that got no response as <error> and throws TransportError", async () => {
    const reg = new Registry();
    const kc = KubeConfig.fromDocument({
      clusters: [
        { name: "dead", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } },
      ],
      users: [{ name: "u", user: {} }],
      contexts: [{ name: "dead", context: { cluster: "dead", user: "u" } }],
      "current-context": "dead",
    });
    const deadRest = RestClient.fromKubeConfig(kc, { registry: reg });
    const err = await deadRest.request({ method: "GET", path: "/api" }).catch((e: unknown) => e);
    assert.ok(err instanceof TransportError, String(err));
    assert.equal(err.failure, "connect");
    assert.equal(await requestCount(reg, { code: "<error>", method: "GET" }), 1);
  });

  it("streams watch events until aborted", async () => {
    const list = await rest.request<{ metadata: { resourceVersion: string } }>({ method: "GET", path: CM });
    const ac = new AbortController();
    const events: WatchEvent<ConfigMap>[] = [];
    const consumed = (async () => {
      for await (const ev of rest.watch<ConfigMap>(
        CM,
        { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
        ac.signal,
      )) {
        if (ev.type !== "BOOKMARK") events.push(ev);
        if (events.length === 3) ac.abort();
      }
    })();
    await rest.request({ method: "POST", path: CM, body: { metadata: { name: "w" }, data: { v: "1" } } });
    await rest.request({
      method: "PATCH",
      path: `${CM}/w`,
      body: { data: { v: "2" } },
      contentType: "application/merge-patch+json",
    });
    await rest.request({ method: "DELETE", path: `${CM}/w` });
    await within("the watch to end", consumed); // ends without throwing once aborted
    assert.deepEqual(
      events.map((e) => `${e.type}:${e.object.data?.v}`),
      ["ADDED:1", "MODIFIED:2", "DELETED:2"],
    );
  });

  it("reports an expired resourceVersion as 410 Gone, for watches and continue tokens", async () => {
    for (let i = 0; i < 3; i++)
      await rest.request({ method: "POST", path: CM, body: { metadata: { name: `page-${i}` } } });
    const first = await rest.request<{ metadata: { continue?: string } }>({
      method: "GET",
      path: CM,
      query: { limit: 1 },
    });
    assert.ok(first.metadata.continue);
    // Once etcd has compacted past resourceVersion 1, a watch from it is refused.
    await waitFor(
      "a watch from resourceVersion 1 to be refused",
      async () => {
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), 2_000);
        try {
          for await (const ev of rest.watch<KubeObject>(CM, { resourceVersion: "1" }, ac.signal)) {
            if (ev.type === "ERROR") return isGone(ApiError.fromStatus(ev.object as never));
          }
          return false;
        } catch (e) {
          return isGone(e);
        } finally {
          clearTimeout(timer);
        }
      },
      20_000,
    );
    // Writes move the revision on, and the next compaction passes the list's revision too.
    await waitFor(
      "the continue token to expire",
      async () => {
        await rest.request({
          method: "PATCH",
          path: `${CM}/page-0`,
          body: { data: { t: String(Date.now()) } },
          contentType: "application/merge-patch+json",
        });
        const err = await rest
          .request({ method: "GET", path: CM, query: { limit: 1, continue: first.metadata.continue } })
          .catch((e: unknown) => e);
        return isGone(err);
      },
      20_000,
      500,
    );
  });

  it("surfaces RBAC denial as Forbidden", async () => {
    const saRest = RestClient.fromKubeConfig(await cp.tokenKubeConfig(NS, "nobody"), {
      registry: new Registry(),
    });
    const err = await saRest.request({ method: "GET", path: CM }).catch((e: unknown) => e);
    assert.ok(isForbidden(err), String(err));
  });

  it("picks up rotated credentials from an exec plugin", async () => {
    const tokenFile = path.join(cp.dir, "rotating-token");
    writeFileSync(tokenFile, await cp.serviceAccountToken(NS, "first"));
    const plugin = [
      "const fs = require('node:fs');",
      `const token = fs.readFileSync(${JSON.stringify(tokenFile)}, 'utf8').trim();`,
      "const exp = new Date(Date.now() + 300).toISOString();",
      "process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token, expirationTimestamp: exp } }));",
    ].join("\n");
    const admin = cp.kubeConfig();
    const kc = KubeConfig.fromDocument({
      clusters: admin.document.clusters ?? [],
      users: [
        {
          name: "exec",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: process.execPath,
              args: ["-e", plugin],
              interactiveMode: "Never",
            },
          },
        },
      ],
      contexts: [
        { name: "exec", context: { cluster: admin.document.clusters?.[0]?.name ?? "", user: "exec" } },
      ],
      "current-context": "exec",
    });
    const execRest = RestClient.fromKubeConfig(kc, { registry: new Registry(), credentialRefreshMs: 100 });
    assert.equal(await whoami(execRest), `system:serviceaccount:${NS}:first`);
    writeFileSync(tokenFile, await cp.serviceAccountToken(NS, "second"));
    await waitFor(
      "the rotated identity",
      async () => (await whoami(execRest)) === `system:serviceaccount:${NS}:second`,
      10_000,
    );
  });
  it("uses the in-cluster ServiceAccount and picks up a rotated token file", async () => {
    const sa = mkdtempSync(path.join(cp.dir, "serviceaccount-"));
    const ca = cp.kubeConfig().cluster["certificate-authority-data"] ?? "";
    writeFileSync(path.join(sa, "ca.crt"), Buffer.from(ca, "base64"));
    writeFileSync(path.join(sa, "namespace"), NS);
    writeFileSync(path.join(sa, "token"), await cp.serviceAccountToken(NS, "pod-first"));
    const server = new URL(cp.server);
    const kc = KubeConfig.inCluster(
      { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
      sa,
    );
    assert.equal(kc.namespace, NS);
    const inCluster = RestClient.fromKubeConfig(kc, { registry: new Registry(), credentialRefreshMs: 100 });
    assert.equal(await whoami(inCluster), `system:serviceaccount:${NS}:pod-first`);
    writeFileSync(path.join(sa, "token"), await cp.serviceAccountToken(NS, "pod-second"));
    await waitFor(
      "the rotated token file",
      async () => (await whoami(inCluster)) === `system:serviceaccount:${NS}:pod-second`,
      10_000,
    );
  });

  it("impersonates the user and groups the kubeconfig names", async () => {
    const admin = cp.kubeConfig().document;
    const kc = KubeConfig.fromDocument({
      ...admin,
      users: (admin.users ?? []).map((u) => ({
        ...u,
        user: { ...u.user, as: "jane", "as-groups": ["auditors", "devs"] },
      })),
    });
    const client = RestClient.fromKubeConfig(kc, { registry: new Registry() });
    const r = await client.request<{ status: { userInfo: { username: string; groups?: string[] } } }>({
      method: "POST",
      path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    assert.equal(r.status.userInfo.username, "jane");
    assert.deepEqual(
      (r.status.userInfo.groups ?? []).filter((g) => g !== "system:authenticated"),
      ["auditors", "devs"],
    );
  });
});
