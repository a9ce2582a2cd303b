/**
 * Relists on a real kube-apiserver whose history really expires: the watch cache is off and
 * etcd is compacted every second, so an old resourceVersion or continue token gets 410 Gone.
 * A TCP proxy between the informer and the API server cuts the informer off while objects
 * change.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import { restListerWatcher, type ListerWatcher } from "../../src/runtime/cache/lister-watcher.ts";
import { ApiError, isGone } from "../../src/runtime/kube/errors.ts";
import type { KubeObject, ResourceType } from "../../src/runtime/kube/object.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { registrySum } from "../../src/runtime/testing/prometheus-text.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { waitFor, within, WAIT_MS } from "../support/process.ts";
import { CuttableProxy } from "../support/tcp-proxy.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

describe("relist after 410 Gone on a real API server", () => {
  let cp: ControlPlane;
  let admin: RestClient;

  before(async () => {
    cp = await startControlPlane({
      apiServerFlags: ["--watch-cache=false", "--etcd-compaction-interval=1s"],
    });
    admin = RestClient.fromKubeConfig(cp.kubeConfig(), { registry: new Registry() });
  });
  after(async () => {
    await cp?.stop();
  });

  const cm = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;

  /** Waits until etcd history at `resourceVersion` is compacted away (a watch from it is refused). */
  async function waitUntilExpired(path: string, resourceVersion: string): Promise<void> {
    await waitFor(
      `resourceVersion ${resourceVersion} to expire`,
      async () => {
        // Writes elsewhere move the revision on so that the next compaction passes it.
        await admin.request({
          method: "PATCH",
          path: "/api/v1/namespaces/default",
          body: { metadata: { labels: { tick: String(Date.now()) } } },
          contentType: "application/merge-patch+json",
        });
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), 1_000);
        try {
          for await (const ev of admin.watch<KubeObject>(path, { resourceVersion }, ac.signal)) {
            if (ev.type === "ERROR") return isGone(ApiError.fromStatus(ev.object as never));
          }
          return false;
        } catch (e) {
          return isGone(e);
        } finally {
          clearTimeout(timer);
        }
      },
      WAIT_MS,
      300,
    );
  }

  it("relists and reports the deletions that happened while disconnected", async () => {
    const ns = "expire";
    await admin.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: ns } } });
    for (const name of ["keep", "change", "gone"]) {
      await admin.request({
        method: "POST",
        path: cm(ns),
        body: { metadata: { name }, data: { v: "1", name } },
      });
    }
    const proxy = new CuttableProxy(new URL(cp.server));
    await proxy.listen();
    const adminDoc = cp.kubeConfig().document;
    const kc = KubeConfig.fromDocument({
      ...adminDoc,
      clusters: (adminDoc.clusters ?? []).map((c) => ({
        ...c,
        cluster: { ...c.cluster, server: `https://127.0.0.1:${proxy.port}` },
      })),
    });
    const registry = new Registry();
    const factory = new InformerFactory({
      rest: RestClient.fromKubeConfig(kc, { registry }),
      registry,
      namespaces: [ns],
      backoff: { initialMs: 100, maxMs: 500 },
    });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const events: string[] = [];
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      assert.equal(await within("the cache to sync", factory.waitForCacheSync()), true);
      const { promise: threeEvents, resolve } = Promise.withResolvers<void>();
      const record = (e: string): void => {
        events.push(e);
        if (events.length === 3) resolve();
      };
      inf.addEventHandler({
        onAdd: (o, initial) => {
          if (!initial) record(`add:${o.metadata.name}:${o.data?.v}`);
        },
        onUpdate: (o, n) => record(`update:${n.metadata.name}:${o.data?.v}->${n.data?.v}`),
        onDelete: (o) => record(`delete:${o.metadata.name}:${o.data?.v}:${o.data?.name}`),
      });
      const keepRef = inf.store.get(`${ns}/keep`);
      const knownRv = inf.store.get(`${ns}/gone`)?.metadata.resourceVersion ?? "";

      await proxy.cut();
      await admin.request({
        method: "PATCH",
        path: `${cm(ns)}/change`,
        body: { data: { v: "2" } },
        contentType: "application/merge-patch+json",
      });
      await admin.request({ method: "DELETE", path: `${cm(ns)}/gone` });
      await admin.request({
        method: "POST",
        path: cm(ns),
        body: { metadata: { name: "new" }, data: { v: "3" } },
      });
      await waitUntilExpired(cm(ns), knownRv);
      assert.deepEqual(events, [], "nothing reaches the informer while it is cut off");
      await proxy.listen();

      await within("three events", threeEvents);
      assert.deepEqual(events.sort(), ["add:new:3", "delete:gone:1:gone", "update:change:1->2"]);
      assert.equal(inf.store.get(`${ns}/gone`), undefined);
      assert.equal(inf.store.get(`${ns}/keep`), keepRef, "an unchanged object is not re-delivered");
      assert.ok(
        (await registrySum(registry, "reflector_watch_ends_total", { reason: "gone" })) >= 1,
        "the watch got 410",
      );
      assert.equal(await registrySum(registry, "reflector_lists_total"), 2, "one relist");
    } finally {
      stop.abort();
      await within("the informer to stop", running);
      await proxy.cut();
    }
  });

  it("restarts a paged list whose continue token expired", async () => {
    const ns = "continue";
    await admin.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: ns } } });
    for (let i = 0; i < 10; i++)
      await admin.request({ method: "POST", path: cm(ns), body: { metadata: { name: `cm-${i}` } } });
    const registry = new Registry();
    const rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry });
    const pages: string[] = [];
    let stalled = false;
    const factory = new InformerFactory({
      rest,
      registry,
      namespaces: [ns],
      pageSize: 4,
      // The real list and watch, with a pause after the very first page until its
      // resourceVersion has been compacted away.
      listerWatcherFor: (resource, namespace): ListerWatcher<KubeObject> => {
        const real = restListerWatcher<KubeObject>(rest, resource, namespace);
        return {
          description: real.description,
          watch: (o, s) => real.watch(o, s),
          async list(o, s) {
            pages.push(o.continue === undefined ? "first" : "next");
            const page = await real.list(o, s);
            if (!stalled) {
              stalled = true;
              await waitUntilExpired(cm(ns), page.metadata.resourceVersion ?? "");
            }
            return page;
          },
        };
      },
    });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      assert.equal(await within("the cache to sync", factory.waitForCacheSync()), true);
      assert.deepEqual(pages, ["first", "next", "first", "next", "next"]);
      assert.equal(inf.store.list(ns).length, 10);
      assert.equal(await registrySum(registry, "reflector_list_requests_total"), 5);
      assert.equal(await registrySum(registry, "rest_client_requests_total", { code: "410" }), 1);
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });
});
