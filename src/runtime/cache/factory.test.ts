import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import type { KubeObject, ResourceType } from "../kube/object.ts";
import { KubeConfig } from "../kube/kubeconfig.ts";
import { RestClient } from "../kube/rest.ts";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { InformerFactory, type InformerFactoryOptions } from "./factory.ts";
import type { ListerWatcher } from "./lister-watcher.ts";
import { CONTROLLER_UID_INDEX, controllerUidIndex } from "./store.ts";
import { FakeApi } from "./testing/fake-api.ts";

const A: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "alphas",
  kind: "Alpha",
  namespaced: true,
};
const B: ResourceType = { group: "", version: "v1", plural: "betas", kind: "Beta", namespaced: true };

/** A RestClient that must never be used: the fakes answer every list and watch. */
const unusedRest = RestClient.fromKubeConfig(
  KubeConfig.fromDocument({
    clusters: [{ name: "x", cluster: { server: "https://127.0.0.1:1" } }],
    contexts: [{ name: "x", context: { cluster: "x", user: "x" } }],
    "current-context": "x",
  }),
);

function setup(
  labelSelectorFor?: (r: ResourceType) => string | undefined,
  indexersFor?: InformerFactoryOptions["indexersFor"],
): {
  factory: InformerFactory;
  apis: Map<string, FakeApi<KubeObject>>;
  clock: FakeClock;
  selectors: Map<string, string | undefined>;
} {
  const apis = new Map<string, FakeApi<KubeObject>>();
  const selectors = new Map<string, string | undefined>();
  const clock = new FakeClock();
  const factory = new InformerFactory({
    rest: unusedRest,
    clock,
    registry: new Registry(),
    ...(labelSelectorFor !== undefined ? { labelSelectorFor } : {}),
    ...(indexersFor !== undefined ? { indexersFor } : {}),
    listerWatcherFor: (r, _ns, labelSelector): ListerWatcher<KubeObject> => {
      selectors.set(r.plural, labelSelector);
      let api = apis.get(r.plural);
      if (api === undefined) apis.set(r.plural, (api = new FakeApi<KubeObject>()));
      return api;
    },
  });
  return { factory, apis, clock, selectors };
}

describe("InformerFactory", () => {
  it("hands out one informer per resource", () => {
    const { factory } = setup();
    assert.equal(factory.informerFor(A), factory.informerFor({ ...A }));
    assert.notEqual(factory.informerFor(A), factory.informerFor(B));
    assert.equal(factory.informers().length, 2);
  });

  it("gives each informer the label selector chosen for its resource", async () => {
    const { factory, selectors } = setup((r) => (r.plural === "betas" ? "app=x" : undefined));
    factory.informerFor(A);
    factory.informerFor(B);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    assert.equal(await factory.waitForCacheSync(), true);
    assert.deepEqual(Object.fromEntries(selectors), { alphas: undefined, betas: "app=x" });
    stop.abort();
    await running;
  });

  it("watches a resource in the namespaces chosen for it, every other one in the factory's", async () => {
    const seen = new Map<string, (string | undefined)[]>();
    const factory = new InformerFactory({
      rest: unusedRest,
      clock: new FakeClock(),
      registry: new Registry(),
      namespaces: ["team-a"],
      namespacesFor: (r) => (r.plural === "betas" ? ["apps-1", "apps-2"] : undefined),
      listerWatcherFor: (r, ns): ListerWatcher<KubeObject> => {
        seen.set(r.plural, [...(seen.get(r.plural) ?? []), ns]);
        return new FakeApi<KubeObject>();
      },
    });
    factory.informerFor(A);
    factory.informerFor(B);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    assert.equal(await factory.waitForCacheSync(), true);
    assert.deepEqual(seen.get("alphas"), ["team-a"]);
    assert.deepEqual([...(seen.get("betas") ?? [])].sort(), ["apps-1", "apps-2"]);
    stop.abort();
    await running;
  });

  it("adds the indexes chosen for a resource when its informer is created", async () => {
    const { factory, apis } = setup(undefined, (r) =>
      r.plural === "alphas" ? { [CONTROLLER_UID_INDEX]: controllerUidIndex } : undefined,
    );
    const a = factory.informerFor(A);
    assert.throws(() => factory.informerFor(B).store.byIndex(CONTROLLER_UID_INDEX, "u"), /no index/);
    const owned = (name: string, uid: string, controller: boolean): KubeObject => ({
      metadata: {
        namespace: "ns",
        name,
        resourceVersion: "1",
        ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid, controller }],
      },
    });
    const api = new FakeApi<KubeObject>();
    for (const o of [owned("a", "u1", true), owned("b", "u1", false), owned("c", "u2", true)]) api.create(o);
    apis.set("alphas", api);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    assert.equal(await factory.waitForCacheSync(), true);
    assert.deepEqual(
      a.store.byIndex(CONTROLLER_UID_INDEX, "u1").map((o) => o.metadata.name),
      ["a"],
      "only the controller reference counts",
    );
    stop.abort();
    await running;
  });

  it("starts informers requested before and after start, and syncs them all", async () => {
    const { factory, apis } = setup();
    const a = factory.informerFor(A);
    const stop = new AbortController();
    const synced = factory.waitForCacheSync();
    assert.equal(factory.hasSynced(), false, "not before start");
    const running = factory.start(stop.signal);
    assert.equal(await synced, true);
    assert.ok(a.hasSynced());

    const b = factory.informerFor(B);
    assert.equal(factory.hasSynced(), false, "a new informer is not synced yet");
    assert.equal(await factory.waitForCacheSync(), true);
    assert.ok(b.hasSynced());
    assert.equal(apis.get("betas")?.listCalls.length, 1);

    let stopped = false;
    void running.then(() => (stopped = true));
    await flushMicrotasks();
    assert.equal(stopped, false, "runs until the signal aborts");
    stop.abort();
    await running;
    assert.equal(await factory.waitForCacheSync(), true);
    await assert.rejects(factory.start(new AbortController().signal), /already started/);
  });

  it("reports false when the wait is aborted or the factory stops before syncing", async () => {
    const { factory, apis } = setup();
    factory.informerFor(A);
    const failing = new FakeApi<KubeObject>();
    failing.failNextLists(1_000);
    apis.set("alphas", failing);
    const waitAbort = new AbortController();
    const aborted = factory.waitForCacheSync(waitAbort.signal);
    waitAbort.abort();
    assert.equal(await aborted, false);

    const stop = new AbortController();
    const running = factory.start(stop.signal);
    const pending = factory.waitForCacheSync();
    await flushMicrotasks();
    stop.abort();
    assert.equal(await pending, false);
    await running;
  });
});
