import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { Counter, Registry } from "prom-client";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { metricValue } from "../testing/prometheus-text.ts";
import type { KubeRequester, RestRequest } from "../kube/rest.ts";
import { DelegatingAuth } from "./auth.ts";
import { HealthChecks, ping } from "./health.ts";
import { generateSelfSignedCertificate } from "./self-signed.ts";
import { MetricsServer, ProbeServer } from "./server.ts";

const local = { host: "127.0.0.1", port: 0 };

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers });
  return { status: res.status, text: await res.text() };
}

function getTls(
  port: number,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; peer: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", ca, headers, agent: false }, (res) => {
      let text = "";
      const peer = new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw);
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text, peer }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("probes answer ok, list checks with ?verbose, fail with 500 and withhold reasons", async () => {
  const healthz = new HealthChecks();
  const readyz = new HealthChecks();
  healthz.add("ping", ping);
  let synced = false;
  readyz.add("ping", ping);
  readyz.add("informer-sync", () => {
    if (!synced) throw new Error("secret detail");
  });
  const srv = new ProbeServer({ address: local, healthz, readyz });
  await srv.listen();
  const base = `http://127.0.0.1:${srv.boundAddress().port}`;
  try {
    assert.deepEqual(await get(`${base}/healthz`), { status: 200, text: "ok" });
    assert.deepEqual(await get(`${base}/healthz?verbose`), {
      status: 200,
      text: "[+]ping ok\nhealthz check passed\n",
    });
    const notReady = await get(`${base}/readyz`);
    assert.equal(notReady.status, 500);
    assert.equal(
      notReady.text,
      "[+]ping ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n",
    );
    assert.doesNotMatch(notReady.text, /secret/);
    assert.equal((await get(`${base}/readyz?exclude=informer-sync`)).status, 200);
    assert.equal((await get(`${base}/readyz/informer-sync`)).status, 500);
    assert.deepEqual(await get(`${base}/readyz/ping`), { status: 200, text: "ok" });
    assert.equal((await get(`${base}/readyz/nope`)).status, 404);
    assert.equal((await get(`${base}/metrics`)).status, 404);
    synced = true;
    assert.deepEqual(await get(`${base}/readyz`), { status: 200, text: "ok" });
  } finally {
    await srv.close();
  }
});

test("a slow check fails instead of hanging the probe", async () => {
  const clock = new FakeClock();
  const checks = new HealthChecks(50, clock);
  checks.add("slow", () => new Promise(() => {}));
  let done = false;
  const running = checks.run().finally(() => (done = true));
  await clock.advance(49);
  await flushMicrotasks();
  assert.equal(done, false, "still waiting before the limit");
  await clock.advance(1);
  const [r] = await running;
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /timed out/);
  assert.throws(() => checks.add("slow", ping), /already/);
  assert.throws(() => checks.add("Bad Name", ping), /invalid/);
});

test("insecure metrics serve the registry in Prometheus text format to anyone", async () => {
  const registry = new Registry();
  new Counter({ name: "test_things_total", help: "things", registers: [registry] }).inc(3);
  const srv = new MetricsServer({ address: local, registry });
  await srv.listen();
  try {
    const res = await get(`http://127.0.0.1:${srv.boundAddress().port}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(metricValue(res.text, "test_things_total"), 3);
    assert.equal((await get(`http://127.0.0.1:${srv.boundAddress().port}/other`)).status, 404);
  } finally {
    await srv.close();
  }
});

test("a port already in use fails listen with the address in the message", async () => {
  const a = new MetricsServer({ address: local, registry: new Registry() });
  await a.listen();
  const b = new MetricsServer({
    address: { host: "127.0.0.1", port: a.boundAddress().port },
    registry: new Registry(),
  });
  try {
    await assert.rejects(b.listen(), /metrics: cannot listen on 127\.0\.0\.1:\d+/);
  } finally {
    await a.close();
  }
});

class AllowOne implements KubeRequester {
  async request<T>(req: RestRequest): Promise<T> {
    const body = req.body as { kind: string; spec: { token?: string; user?: string } };
    if (body.kind === "TokenReview") {
      const ok = body.spec.token === "reader" || body.spec.token === "stranger";
      return { status: { authenticated: ok, ...(ok ? { user: { username: body.spec.token } } : {}) } } as T;
    }
    return { status: { allowed: body.spec.user === "reader" } } as T;
  }
}

test("secure metrics: TLS, 401 without a token, 403 without RBAC, 200 for a reader; certificate files are reloaded", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "metrics-cert-"));
  const first = await generateSelfSignedCertificate({ hosts: ["127.0.0.1"] });
  writeFileSync(path.join(dir, "tls.crt"), first.cert);
  writeFileSync(path.join(dir, "tls.key"), first.key);
  const clock = new FakeClock();
  const registry = new Registry();
  new Counter({ name: "test_secure_total", help: "x", registers: [registry] }).inc();
  const auth = new DelegatingAuth({ client: new AllowOne(), clock });
  const srv = new MetricsServer({
    address: local,
    registry,
    clock,
    secure: { auth, certDir: dir, certReloadIntervalMs: 10_000 },
  });
  await srv.listen();
  const port = srv.boundAddress().port;
  try {
    const anon = await getTls(port, first.cert);
    assert.equal(anon.status, 401);
    assert.equal((await getTls(port, first.cert, { Authorization: "Bearer bogus" })).status, 401);
    assert.equal((await getTls(port, first.cert, { Authorization: "Bearer stranger" })).status, 403);
    const ok = await getTls(port, first.cert, { Authorization: "Bearer reader" });
    assert.equal(ok.status, 200);
    assert.equal(metricValue(ok.text, "test_secure_total"), 1);
    assert.equal(ok.peer.fingerprint256, new X509Certificate(first.cert).fingerprint256);

    const second = await generateSelfSignedCertificate({
      hosts: ["127.0.0.1"],
      commonName: "rotated-certificate",
    });
    writeFileSync(path.join(dir, "tls.crt"), second.cert);
    writeFileSync(path.join(dir, "tls.key"), second.key);
    await clock.advance(10_000);
    let served = "";
    for (let i = 0; i < 200 && served !== new X509Certificate(second.cert).fingerprint256; i++) {
      await flushMicrotasks();
      served = await getTls(port, second.cert, { Authorization: "Bearer reader" }).then(
        (r) => r.peer.fingerprint256,
        () => "",
      );
    }
    assert.equal(served, new X509Certificate(second.cert).fingerprint256);
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without certificate files a self-signed certificate is served", async () => {
  const srv = new MetricsServer({
    address: local,
    registry: new Registry(),
    secure: { auth: new DelegatingAuth({ client: new AllowOne() }), hosts: ["127.0.0.1"] },
  });
  await srv.listen();
  try {
    const peer = await new Promise<X509Certificate>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: srv.boundAddress().port,
          path: "/metrics",
          rejectUnauthorized: false,
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw));
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.equal(peer.checkIP("127.0.0.1"), "127.0.0.1");
    assert.equal(peer.verify(peer.publicKey), true, "self-signed");
  } finally {
    await srv.close();
  }
});
