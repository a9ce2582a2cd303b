/**
 * Readiness follows the cache: an informer for a kind whose CRD is not installed yet cannot
 * list, so /readyz fails (and no controller starts) until the CRD appears and the cache syncs.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { S3BucketResource } from "../../src/api/v1/s3-bucket.ts";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { Manager } from "../../src/runtime/manager/manager.ts";
import type { Runnable } from "../../src/runtime/manager/runnable.ts";
import { ProbeServer } from "../../src/runtime/metrics/server.ts";
import { registrySum } from "../../src/runtime/testing/prometheus-text.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { waitFor, within } from "../support/process.ts";

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}

describe("readiness of a manager", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  it("fails /readyz and holds controllers back until the caches have synced", async () => {
    const registry = new Registry();
    const rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry });
    const informers = new InformerFactory({ rest, registry, backoff: { initialMs: 100, maxMs: 400 } });
    informers.informerFor(S3BucketResource);
    const mgr = new Manager({ registry, gracefulShutdownTimeoutMs: 5_000 });
    const probes = new ProbeServer({
      address: { host: "127.0.0.1", port: 0 },
      healthz: mgr.healthz,
      readyz: mgr.readyz,
    });
    mgr.addServer(probes);
    mgr.add(informers);
    let syncedWhenStarted: boolean | undefined;
    const controller: Runnable = {
      name: "controller",
      needLeaderElection: true,
      async start(signal) {
        syncedWhenStarted = informers.hasSynced();
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      },
    };
    mgr.add(controller);
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      await waitFor(
        "probe server",
        async () => (await get(probes.boundAddress().port, "/healthz")).status === 200,
        10_000,
      );
      const port = probes.boundAddress().port;
      // The list of s3buckets fails with 404 while the CRD is missing: never ready, after each of
      // several failed lists (the reflector retries them with backoff).
      const notFound = (): Promise<number> =>
        registrySum(registry, "rest_client_requests_total", { code: "404" });
      for (let i = 0; i < 4; i++) {
        const failed = await notFound();
        await waitFor("another failed list", async () => (await notFound()) > failed, 10_000, 20);
        const r = await get(port, "/readyz");
        assert.equal(r.status, 500);
        assert.match(r.text, /\[-\]informer-sync failed/);
      }
      assert.equal(syncedWhenStarted, undefined, "no controller before the caches sync");
      assert.equal((await get(port, "/healthz")).status, 200, "live while not ready");

      await cp.installCRDs();
      await waitFor("ready", async () => (await get(port, "/readyz")).status === 200, 20_000);
      await within("the controllers to start", mgr.elected());
      assert.equal(syncedWhenStarted, true);
      assert.equal(
        (await get(port, "/readyz?verbose")).text,
        "[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n",
      );
    } finally {
      stop.abort();
      await within("the manager to stop", running);
    }
  });
});
