/**
 * The shared informer cache against a real kube-apiserver (default flags, watch cache on):
 * paged lists, resync without requests, handlers that throw, namespace-scoped watches, a custom
 * resource, and a watch that survives an API server restart.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import type { EventHandler } from "../../src/runtime/cache/shared-informer.ts";
import type { KubeObject, ResourceType } from "../../src/runtime/kube/object.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { registrySum } from "../../src/runtime/testing/prometheus-text.ts";
import { installTestCrd } from "../support/test-crd.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { inParallel } from "../support/pool.ts";
import { waitFor, within } from "../support/process.ts";

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
const WIDGETS: ResourceType = {
  group: "cache.example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

/** Resolves once `n` calls of the returned tick function have happened. */
function counter(n: number): { tick: () => void; reached: Promise<void>; count: () => number } {
  let c = 0;
  const { promise, resolve } = Promise.withResolvers<void>();
  return {
    tick: () => {
      if (++c === n) resolve();
    },
    reached: promise,
    count: () => c,
  };
}

describe("informer cache on a real API server", () => {
  let cp: ControlPlane;
  let admin: RestClient;

  const cm = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
  async function namespace(name: string): Promise<void> {
    await admin.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name } } });
  }
  async function createConfigMaps(ns: string, count: number, concurrency = 25): Promise<void> {
    const indexes = Array.from({ length: count }, (_, i) => i);
    await inParallel(indexes, concurrency, async (i) => {
      await admin.request({
        method: "POST",
        path: cm(ns),
        body: { metadata: { name: `cm-${String(i).padStart(4, "0")}` }, data: { i: String(i) } },
      });
    });
  }
  function factoryFor(
    registry: Registry,
    opts: {
      namespaces?: string[];
      pageSize?: number;
      resyncPeriodMs?: number;
      labelSelectorFor?: (r: ResourceType) => string | undefined;
    } = {},
  ): InformerFactory {
    return new InformerFactory({
      rest: RestClient.fromKubeConfig(cp.kubeConfig(), { registry }),
      registry,
      backoff: { initialMs: 100, maxMs: 1_000 },
      ...opts,
    });
  }

  before(async () => {
    // Its own: a test restarts kube-apiserver.
    cp = await startControlPlane({ private: true });
    admin = RestClient.fromKubeConfig(cp.kubeConfig(), { registry: new Registry() });
  });
  after(async () => {
    await cp?.stop();
  });

  it("lists 1,000 objects in pages of 100", async () => {
    await namespace("paging");
    await createConfigMaps("paging", 1_000);
    const registry = new Registry();
    const factory = factoryFor(registry, { namespaces: ["paging"], pageSize: 100 });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const adds = counter(1_000);
    let initialAdds = 0;
    inf.addEventHandler({
      onAdd: (_o, initial) => {
        if (initial) initialAdds++;
        adds.tick();
      },
    });
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      assert.equal(await within("the cache to sync", factory.waitForCacheSync()), true);
      assert.equal(inf.store.list("paging").length, 1_000);
      assert.equal(initialAdds, 1_000);
      assert.equal(
        await registrySum(registry, "reflector_list_requests_total", { resource: "configmaps" }),
        10,
      );
      assert.equal(await registrySum(registry, "reflector_lists_total", { resource: "configmaps" }), 1);
      // The REST client saw the same ten list requests (plus at most the watch).
      const gets = await registrySum(registry, "rest_client_requests_total", { method: "GET", code: "200" });
      assert.ok(gets === 10 || gets === 11, `GET requests: ${gets}`);
      const one = inf.store.get("paging/cm-0042");
      assert.equal(one?.data?.i, "42");
      assert.equal(one?.metadata.managedFields, undefined, "managedFields stripped");
      assert.ok(Object.isFrozen(one?.data));
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("resyncs cached objects as update(obj, obj) without any API request", async () => {
    await namespace("resync");
    await createConfigMaps("resync", 5);
    const registry = new Registry();
    const factory = factoryFor(registry, { namespaces: ["resync"], resyncPeriodMs: 300 });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const firstRound = counter(5);
    const fourRounds = counter(20);
    let sameReference = 0;
    inf.addEventHandler({
      onUpdate(o, n) {
        if (o === n && n === inf.store.get(`${n.metadata.namespace}/${n.metadata.name}`)) sameReference++;
        firstRound.tick();
        fourRounds.tick();
      },
    });
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      await waitFor(
        "the watch",
        async () => (await registrySum(registry, "rest_client_requests_total", { method: "GET" })) === 2,
        10_000,
        20,
      );
      await within("firstRound", firstRound.reached);
      const requestsBefore = await registrySum(registry, "rest_client_requests_total");
      await within("fourRounds", fourRounds.reached);
      assert.equal(
        await registrySum(registry, "rest_client_requests_total"),
        requestsBefore,
        "no request during resyncs",
      );
      assert.equal(
        sameReference,
        fourRounds.count(),
        "every resync hands the cached object as both arguments",
      );
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("reopens watches the server closes at timeoutSeconds, from the last resourceVersion, losing nothing", async () => {
    await namespace("timeouts");
    const registry = new Registry();
    const factory = new InformerFactory({
      rest: RestClient.fromKubeConfig(cp.kubeConfig(), { registry }),
      registry,
      namespaces: ["timeouts"],
      watchTimeoutMs: 1_000,
    });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const seen: string[] = [];
    inf.addEventHandler({ onAdd: (o) => seen.push(o.metadata.name ?? "") });
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      const names: string[] = [];
      // Writes spread over several server-side watch timeouts.
      for (let i = 0; i < 3; i++) {
        const closed = await registrySum(registry, "reflector_watch_ends_total", { reason: "closed" });
        names.push(`t-${i}`);
        await admin.request({ method: "POST", path: cm("timeouts"), body: { metadata: { name: `t-${i}` } } });
        await waitFor(
          "the next server-side watch timeout",
          async () =>
            (await registrySum(registry, "reflector_watch_ends_total", { reason: "closed" })) > closed,
          10_000,
          50,
        );
      }
      await waitFor("every add", async () => seen.length === 3, 10_000, 20);
      assert.deepEqual(seen, names, "each object delivered exactly once");
      assert.equal(await registrySum(registry, "reflector_lists_total"), 1, "no relist");
      assert.ok((await registrySum(registry, "reflector_watches_total")) >= 4);
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("keeps the watch when a handler throws", async () => {
    await namespace("throwing");
    const registry = new Registry();
    const factory = factoryFor(registry, { namespaces: ["throwing"] });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    inf.addEventHandler({
      onAdd: () => {
        throw new Error("handler bug");
      },
      onUpdate: () => {
        throw new Error("handler bug");
      },
    });
    const seen: string[] = [];
    const four = counter(4);
    inf.addEventHandler({
      onAdd: (o) => {
        seen.push(`add:${o.metadata.name}`);
        four.tick();
      },
      onUpdate: (_o, n) => {
        seen.push(`update:${n.metadata.name}:${n.data?.v}`);
        four.tick();
      },
    });
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      for (const name of ["a", "b", "c"])
        await admin.request({ method: "POST", path: cm("throwing"), body: { metadata: { name } } });
      await admin.request({
        method: "PATCH",
        path: `${cm("throwing")}/b`,
        body: { data: { v: "2" } },
        contentType: "application/merge-patch+json",
      });
      await within("four", four.reached);
      assert.deepEqual(seen, ["add:a", "add:b", "add:c", "update:b:2"]);
      assert.equal(await registrySum(registry, "reflector_watches_total"), 1, "the watch was never reopened");
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("watches only the given namespaces, merged into one store", async () => {
    for (const ns of ["ns-a", "ns-b", "ns-c"]) {
      await namespace(ns);
      await admin.request({ method: "POST", path: cm(ns), body: { metadata: { name: `in-${ns}` } } });
    }
    const registry = new Registry();
    const factory = factoryFor(registry, { namespaces: ["ns-a", "ns-b"] });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      assert.deepEqual(inf.store.keys().sort(), ["ns-a/in-ns-a", "ns-b/in-ns-b"]);
      const added = counter(1);
      inf.addEventHandler({ onAdd: (o) => o.metadata.name === "late" && added.tick() });
      await admin.request({ method: "POST", path: cm("ns-c"), body: { metadata: { name: "ignored" } } });
      await admin.request({ method: "POST", path: cm("ns-b"), body: { metadata: { name: "late" } } });
      await within("added", added.reached);
      assert.equal(inf.store.get("ns-c/ignored"), undefined);
      assert.equal(inf.store.list("ns-b").length, 2);
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("caches only the objects its label selector matches; one that stops matching is deleted", async () => {
    await namespace("selected");
    const labelled = { "example.com/cached": "yes" };
    for (const [name, labels] of [
      ["wanted", labelled],
      ["other", { "example.com/cached": "no" }],
      ["plain", undefined],
    ] as const) {
      await admin.request({ method: "POST", path: cm("selected"), body: { metadata: { name, labels } } });
    }
    const registry = new Registry();
    const factory = factoryFor(registry, {
      namespaces: ["selected"],
      labelSelectorFor: (r) => (r.plural === "configmaps" ? "example.com/cached=yes" : undefined),
    });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      assert.deepEqual(inf.store.keys(), ["selected/wanted"]);
      const added = counter(1);
      const deleted = counter(1);
      inf.addEventHandler({
        onAdd: (o) => o.metadata.name === "late" && added.tick(),
        onDelete: (o) => o.metadata.name === "wanted" && deleted.tick(),
      });
      await admin.request({ method: "POST", path: cm("selected"), body: { metadata: { name: "ignored" } } });
      await admin.request({
        method: "POST",
        path: cm("selected"),
        body: { metadata: { name: "late", labels: labelled } },
      });
      await within("the labelled ConfigMap added", added.reached);
      assert.equal(inf.store.get("selected/ignored"), undefined, "an unlabelled ConfigMap is not cached");
      await admin.request({
        method: "PATCH",
        path: `${cm("selected")}/wanted`,
        body: { metadata: { labels: { "example.com/cached": null } } },
        contentType: "application/merge-patch+json",
      });
      await within("the unlabelled ConfigMap deleted from the cache", deleted.reached);
      assert.deepEqual(inf.store.keys(), ["selected/late"]);
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  it("caches a custom resource of a CRD created here", async () => {
    await installTestCrd(cp, WIDGETS, { spec: { size: { type: "integer" } } });
    await namespace("widgets");
    const path = "/apis/cache.example.com/v1/namespaces/widgets/widgets";
    await admin.request({
      method: "POST",
      path,
      body: {
        apiVersion: "cache.example.com/v1",
        kind: "Widget",
        metadata: { name: "w1" },
        spec: { size: 1 },
      },
    });
    const registry = new Registry();
    const factory = factoryFor(registry);
    const inf = factory.informerFor<KubeObject & { spec: { size: number } }>(WIDGETS);
    const events: string[] = [];
    const three = counter(3);
    const handler: EventHandler<KubeObject & { spec: { size: number } }> = {
      onAdd: (o) => {
        events.push(`add:${o.metadata.name}:${o.spec.size}`);
        three.tick();
      },
      onUpdate: (o, n) => {
        events.push(`update:${o.spec.size}->${n.spec.size}`);
        three.tick();
      },
      onDelete: (o) => {
        events.push(`delete:${o.metadata.name}:${o.spec.size}`);
        three.tick();
      },
    };
    inf.addEventHandler(handler);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      await admin.request({
        method: "PATCH",
        path: `${path}/w1`,
        body: { spec: { size: 2 } },
        contentType: "application/merge-patch+json",
      });
      await admin.request({ method: "DELETE", path: `${path}/w1` });
      await within("three", three.reached);
      assert.deepEqual(events, ["add:w1:1", "update:1->2", "delete:w1:2"]);
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });

  // Last: it restarts the API server.
  it("keeps watching across a kube-apiserver restart, without spurious events", async () => {
    await namespace("restart");
    await admin.request({
      method: "POST",
      path: cm("restart"),
      body: { metadata: { name: "before" }, data: { v: "1" } },
    });
    const registry = new Registry();
    const factory = factoryFor(registry, { namespaces: ["restart"] });
    const inf = factory.informerFor<ConfigMap>(CONFIGMAPS);
    const events: string[] = [];
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    try {
      await within("the cache to sync", factory.waitForCacheSync());
      const afterRestart = counter(2);
      inf.addEventHandler({
        onAdd: (o, initial) => {
          if (initial) return;
          events.push(`add:${o.metadata.name}`);
          afterRestart.tick();
        },
        onUpdate: (o, n) => {
          events.push(`update:${n.metadata.name}:${o.data?.v}->${n.data?.v}`);
          afterRestart.tick();
        },
        onDelete: (o) => events.push(`delete:${o.metadata.name}`),
      });
      await cp.stopApiServer();
      await cp.startApiServer();
      await admin.request({ method: "POST", path: cm("restart"), body: { metadata: { name: "after" } } });
      await admin.request({
        method: "PATCH",
        path: `${cm("restart")}/before`,
        body: { data: { v: "2" } },
        contentType: "application/merge-patch+json",
      });
      await within("afterRestart", afterRestart.reached);
      assert.deepEqual(events, ["add:after", "update:before:1->2"]);
      assert.deepEqual(inf.store.keys().sort(), ["restart/after", "restart/before"]);
      assert.ok((await registrySum(registry, "reflector_watches_total")) >= 2, "the watch was reopened");
    } finally {
      stop.abort();
      await within("the informer to stop", running);
    }
  });
});
