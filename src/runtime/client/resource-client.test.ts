import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApiError } from "../kube/errors.ts";
import { keyOf, type KubeObject, type ResourceType } from "../kube/object.ts";
import type { RestRequest } from "../kube/rest.ts";
import { Client } from "./client.ts";
import { CacheNotSyncedError, InvalidObjectError } from "./errors.ts";
import { ignoreNotFound } from "./not-found.ts";
import type { CachedInformerLike, CacheProvider, RestLike } from "./resource-client.ts";

interface Widget extends KubeObject {
  spec?: { size?: number };
  status?: { phase?: string };
}

const widgets: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const clusters: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "clusters",
  kind: "Cluster",
  namespaced: false,
};

/** Records requests and answers each with the next queued response (an object or an error). */
class ScriptedRest implements RestLike {
  readonly requests: RestRequest[] = [];
  readonly responses: unknown[] = [];
  request<R>(req: RestRequest): Promise<R> {
    this.requests.push(req);
    const next = this.responses.shift();
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve((next ?? { metadata: {} }) as R);
  }
}

/** A cache of fixed objects; `synced` can be flipped. */
function cacheOf(objects: KubeObject[], state = { synced: true }): CacheProvider {
  const byKey = new Map(objects.map((o) => [keyOf(o), o]));
  return {
    informerFor<T extends KubeObject>(): CachedInformerLike<T> {
      return {
        hasSynced: () => state.synced,
        store: {
          get: (key) => byKey.get(key) as T | undefined,
          list: (ns) =>
            [...byKey.values()].filter((o) => ns === undefined || o.metadata.namespace === ns) as T[],
          byIndex: () => [],
        },
      };
    },
  };
}

function setup(objects: KubeObject[] = [], state = { synced: true }) {
  const rest = new ScriptedRest();
  const client = new Client({ rest, cache: cacheOf(objects, state) });
  return { rest, client, widgets: client.resource<Widget>(widgets) };
}

const w = (name: string, extra: Partial<Widget["metadata"]> = {}): Widget => ({
  metadata: { name, namespace: "ns", ...extra },
});

describe("ResourceClient cache reads", () => {
  it("returns the cached object, or undefined when the cache has none", () => {
    const s = setup([w("a", { resourceVersion: "3" })]);
    assert.equal(s.widgets.get({ namespace: "ns", name: "a" })?.metadata.resourceVersion, "3");
    assert.equal(s.widgets.get("ns/a")?.metadata.name, "a");
    assert.equal(s.widgets.get({ namespace: "ns", name: "missing" }), undefined);
    assert.equal(s.rest.requests.length, 0, "cache reads make no request");
  });

  it("refuses to read an unsynced cache", () => {
    const s = setup([w("a")], { synced: false });
    assert.throws(() => s.widgets.get({ namespace: "ns", name: "a" }), CacheNotSyncedError);
    assert.throws(() => s.widgets.list(), CacheNotSyncedError);
  });

  it("lists by namespace and labels", () => {
    const s = setup([
      w("a", { labels: { team: "x" } }),
      w("b", { labels: { team: "y" } }),
      { metadata: { name: "c", namespace: "other" } },
    ]);
    assert.deepEqual(
      s.widgets.list({ namespace: "ns" }).map((o) => o.metadata.name),
      ["a", "b"],
    );
    assert.deepEqual(
      s.widgets.list({ labels: { team: "y" } }).map((o) => o.metadata.name),
      ["b"],
    );
  });

  it("hands out one resource client per resource", () => {
    const s = setup();
    assert.equal(s.client.resource(widgets), s.client.resource(widgets));
  });
});

describe("ResourceClient writes", () => {
  it("creates with POST to the collection, filling apiVersion, kind and the field manager", async () => {
    const s = setup();
    s.rest.responses.push(w("a", { uid: "u1" }));
    const out = await s.widgets.create({ metadata: { name: "a", namespace: "ns" }, spec: { size: 1 } });
    assert.equal(out.metadata.uid, "u1", "returns the server's object");
    const req = s.rest.requests[0];
    assert.equal(req?.method, "POST");
    assert.equal(req?.path, "/apis/example.com/v1/namespaces/ns/widgets");
    assert.deepEqual(req?.query, { fieldManager: "kubeprovisioner" });
    assert.deepEqual(req?.body, {
      metadata: { name: "a", namespace: "ns" },
      spec: { size: 1 },
      apiVersion: "example.com/v1",
      kind: "Widget",
    });
  });

  it("rejects objects that cannot address a URL before sending anything", async () => {
    const s = setup();
    await assert.rejects(s.widgets.create({ metadata: { name: "a" } }), InvalidObjectError);
    await assert.rejects(s.widgets.create({ metadata: { namespace: "ns" } }), InvalidObjectError);
    await assert.rejects(s.widgets.update(w("a")), /resourceVersion required/);
    await assert.rejects(s.widgets.patch("a", { type: "merge", patch: {} }), /namespace required/);
    assert.equal(s.rest.requests.length, 0);
  });

  it("addresses cluster-scoped kinds without a namespace", async () => {
    const s = setup();
    await s.client.resource(clusters).create({ metadata: { name: "c1", namespace: "ignored" } });
    assert.equal(s.rest.requests[0]?.path, "/apis/example.com/v1/clusters");
  });

  it("updates with PUT, and the status through the /status subresource", async () => {
    const s = setup();
    await s.widgets.update(w("a", { resourceVersion: "7" }), { dryRun: true });
    await s.widgets.updateStatus({ ...w("a", { resourceVersion: "8" }), status: { phase: "Ready" } });
    assert.deepEqual(
      s.rest.requests.map((r) => [r.method, r.path]),
      [
        ["PUT", "/apis/example.com/v1/namespaces/ns/widgets/a"],
        ["PUT", "/apis/example.com/v1/namespaces/ns/widgets/a/status"],
      ],
    );
    assert.deepEqual(s.rest.requests[0]?.query, { fieldManager: "kubeprovisioner", dryRun: "All" });
  });

  it("sends each patch kind with its content type", async () => {
    const s = setup();
    await s.widgets.patch({ namespace: "ns", name: "a" }, { type: "merge", patch: { spec: { size: 2 } } });
    await s.widgets.patch("ns/a", { type: "json", ops: [{ op: "replace", path: "/spec/size", value: 3 }] });
    await s.widgets.patchStatus(
      w("a"),
      { type: "apply", object: { status: { phase: "Ready" } } },
      { fieldManager: "other" },
    );
    const [merge, json, apply] = s.rest.requests;
    assert.equal(merge?.contentType, "application/merge-patch+json");
    assert.deepEqual(merge?.body, { spec: { size: 2 } });
    assert.equal(json?.contentType, "application/json-patch+json");
    assert.deepEqual(json?.body, [{ op: "replace", path: "/spec/size", value: 3 }]);
    assert.equal(apply?.contentType, "application/apply-patch+yaml");
    assert.equal(apply?.path, "/apis/example.com/v1/namespaces/ns/widgets/a/status");
    assert.deepEqual(apply?.query, { fieldManager: "other", force: true });
    assert.deepEqual(apply?.body, {
      status: { phase: "Ready" },
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a", namespace: "ns" },
    });
  });

  it("lets a server-side apply opt out of force", async () => {
    const s = setup();
    await s.widgets.patch("ns/a", { type: "apply", object: { spec: {} }, force: false });
    assert.equal(s.rest.requests[0]?.query?.["force"], false);
  });

  it("deletes with DeleteOptions and tells a finished delete from one waiting on finalizers", async () => {
    const s = setup();
    s.rest.responses.push({ kind: "Status", apiVersion: "v1", status: "Success" });
    s.rest.responses.push(w("b", { deletionTimestamp: "2024-01-01T00:00:00Z", finalizers: ["x/y"] }));
    s.rest.responses.push(w("c", { deletionTimestamp: "2024-01-01T00:00:00Z" }));
    const gone = await s.widgets.delete("ns/a", {
      propagationPolicy: "Foreground",
      preconditions: { uid: "u1" },
    });
    const pending = await s.widgets.delete("ns/b");
    const returnedGone = await s.widgets.delete("ns/c");
    assert.deepEqual(gone, { deleted: true, object: undefined });
    assert.equal(pending.deleted, false);
    assert.equal(pending.object?.metadata.name, "b");
    assert.equal(returnedGone.deleted, true);
    assert.deepEqual(s.rest.requests[0]?.body, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Foreground",
      preconditions: { uid: "u1" },
    });
    assert.equal(s.rest.requests[0]?.method, "DELETE");
  });

  it("reads live from the server, with 404 as undefined", async () => {
    const s = setup();
    s.rest.responses.push(w("a", { resourceVersion: "9" }));
    s.rest.responses.push(new ApiError({ status: 404, reason: "NotFound" }));
    s.rest.responses.push(new ApiError({ status: 500, reason: "InternalError" }));
    assert.equal((await s.widgets.getLive("ns/a"))?.metadata.resourceVersion, "9");
    assert.equal(await s.widgets.getLive("ns/gone"), undefined);
    await assert.rejects(s.widgets.getLive("ns/x"), ApiError);
    assert.equal(s.rest.requests[0]?.method, "GET");
  });
});

describe("ignoreNotFound", () => {
  it("turns a 404 into undefined and passes everything else through", async () => {
    assert.equal(
      await ignoreNotFound(Promise.reject(new ApiError({ status: 404, reason: "NotFound" }))),
      undefined,
    );
    assert.equal(await ignoreNotFound(Promise.resolve(5)), 5);
    await assert.rejects(
      ignoreNotFound(Promise.reject(new ApiError({ status: 409, reason: "Conflict" }))),
      ApiError,
    );
  });
});
