/**
 * The cached client on a real API server: finalizers survive concurrent writers (real 409s),
 * status writes go through the subresource without bumping the generation, each patch kind does
 * what it says, deletes with finalizers wait, and cache reads catch up with writes.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import { Client } from "../../src/runtime/client/client.ts";
import type { ResourceClient, RestLike } from "../../src/runtime/client/resource-client.ts";
import { ignoreNotFound } from "../../src/runtime/client/not-found.ts";
import { isConflict, isInvalid, isNotFound } from "../../src/runtime/kube/errors.ts";
import type { KubeObject, ResourceType } from "../../src/runtime/kube/object.ts";
import type { RestRequest } from "../../src/runtime/kube/rest.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { installTestCrd } from "../support/test-crd.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { within } from "../support/process.ts";

interface Thing extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observedGeneration?: number };
}

const things: ResourceType = {
  group: "clienttest.example.com",
  version: "v1",
  plural: "things",
  kind: "Thing",
  namespaced: true,
};
const NS = "client";
const F = "clienttest.example.com/cleanup";

function installThingCrd(cp: ControlPlane): Promise<void> {
  return installTestCrd(cp, things, {
    spec: { size: { type: "integer" }, color: { type: "string" } },
    status: {
      type: "object",
      properties: { phase: { type: "string" }, observedGeneration: { type: "integer" } },
    },
  });
}

/** Counts the 409 conflicts the API server answers, passing everything through. */
class ConflictCounter implements RestLike {
  conflicts = 0;
  readonly #inner: RestLike;
  constructor(inner: RestLike) {
    this.#inner = inner;
  }
  async request<R>(req: RestRequest): Promise<R> {
    try {
      return await this.#inner.request<R>(req);
    } catch (err) {
      if (isConflict(err)) this.conflicts++;
      throw err;
    }
  }
}

/** Waits until `cond` holds, re-checking on a short timer; for cache catch-up after a write. */
async function eventually(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("cached client on a real API server", () => {
  let cp: ControlPlane;
  let rest: RestClient;
  let counter: ConflictCounter;
  let factory: InformerFactory;
  let objects: ResourceClient<Thing>;
  const ac = new AbortController();
  let running: Promise<void>;

  before(async () => {
    // The project's CRDs too: a control plane with them can be a shared one (envtest.ts).
    cp = await startControlPlane({ installCRDs: true });
    await installThingCrd(cp);
    const ns = await cp.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    assert.equal(ns.status, 201, ns.text);
    rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry: new Registry() });
    counter = new ConflictCounter(rest);
    factory = new InformerFactory({ rest, registry: new Registry() });
    objects = new Client({ rest: counter, cache: factory }).resource<Thing>(things);
    factory.informerFor(things);
    running = factory.start(ac.signal);
    assert.ok(await within("the cache to sync", factory.waitForCacheSync(ac.signal)));
  });

  after(async () => {
    ac.abort();
    await within("the informers to stop", running);
    await cp?.stop();
  });

  it("adds finalizers from a stale copy under a concurrent writer without losing anyone's change", async () => {
    const created = await objects.create({ metadata: { name: "fin", namespace: NS }, spec: { size: 1 } });
    const before = counter.conflicts;
    // A second client and a plain writer keep moving the object while we add our finalizer from
    // the now stale `created`.
    const other = new Client({ rest: counter, cache: factory }).resource<Thing>(things);
    let writes = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        await rest.request({
          method: "PATCH",
          path: `/apis/${things.group}/v1/namespaces/${NS}/things/fin`,
          body: { metadata: { annotations: { [`writer-${writes}`]: "x" } } },
          contentType: "application/merge-patch+json",
        });
        writes++;
      }
    })();
    await rest.request({
      method: "PATCH",
      path: `/apis/${things.group}/v1/namespaces/${NS}/things/fin`,
      body: { metadata: { labels: { moved: "yes" } } },
      contentType: "application/merge-patch+json",
    });
    const [mine, theirs] = await Promise.all([
      objects.addFinalizer(created, F, { attempts: 50 }),
      other.addFinalizer(created, "other.example.com/hold", { attempts: 50 }),
    ]);
    stop = true;
    await writer;

    assert.ok(counter.conflicts > before, "the stale writes did not meet a single 409");
    assert.ok(mine.metadata.finalizers?.includes(F));
    assert.ok(theirs.metadata.finalizers?.includes("other.example.com/hold"));
    const live = await objects.getLive({ namespace: NS, name: "fin" });
    assert.deepEqual([...(live?.metadata.finalizers ?? [])].sort(), [F, "other.example.com/hold"].sort());
    assert.equal(live?.metadata.labels?.["moved"], "yes", "the concurrent label write was lost");
    assert.ok(writes > 0);
    console.log(`finalizers: ${counter.conflicts - before} conflicts survived, ${writes} concurrent writes`);

    // Removing from the copy our add returned, now stale, keeps the other controller's finalizer.
    const conflictsBeforeRemove = counter.conflicts;
    await rest.request({
      method: "PATCH",
      path: `/apis/${things.group}/v1/namespaces/${NS}/things/fin`,
      body: { metadata: { labels: { moved: "again" } } },
      contentType: "application/merge-patch+json",
    });
    const removed = await objects.removeFinalizer(mine, F, { attempts: 50 });
    assert.ok(counter.conflicts > conflictsBeforeRemove, "the stale removal did not meet a 409");
    assert.deepEqual(removed?.metadata.finalizers, ["other.example.com/hold"]);
    assert.equal(removed?.metadata.labels?.["moved"], "again");
  });

  it("deletes an object with a finalizer only once the last finalizer is removed", async () => {
    const created = await objects.create({
      metadata: { name: "del", namespace: NS, finalizers: [F] },
      spec: { size: 1 },
    });
    const res = await objects.delete(created, { propagationPolicy: "Background" });
    assert.equal(res.deleted, false);
    assert.ok(res.object?.metadata.deletionTimestamp, "the pending object carries a deletionTimestamp");
    await assert.rejects(objects.addFinalizer(res.object ?? created, "late.example.com/x"), (e: unknown) =>
      isInvalid(e),
    );
    await objects.removeFinalizer({ namespace: NS, name: "del" }, F);
    assert.equal(await objects.getLive({ namespace: NS, name: "del" }), undefined);
    assert.equal(
      await objects.removeFinalizer({ namespace: NS, name: "del" }, F),
      undefined,
      "removing from a gone object is a no-op",
    );
    assert.equal(await ignoreNotFound(objects.delete({ namespace: NS, name: "del" })), undefined);
  });

  it("writes status through the subresource without bumping the generation", async () => {
    const created = await objects.create({ metadata: { name: "st", namespace: NS }, spec: { size: 1 } });
    assert.equal(created.metadata.generation, 1);
    const withStatus = await objects.updateStatus({
      ...created,
      status: { phase: "Ready", observedGeneration: 1 },
      spec: { size: 99 },
    });
    assert.equal(withStatus.metadata.generation, 1, "a status write bumped the generation");
    assert.equal(withStatus.status?.phase, "Ready");
    assert.equal(withStatus.spec?.size, 1, "the status subresource changed the spec");

    const patched = await objects.patchStatus(withStatus, {
      type: "merge",
      patch: { status: { phase: "Degraded" } },
    });
    assert.equal(patched.metadata.generation, 1);
    assert.equal(patched.status?.phase, "Degraded");

    const specChanged = await objects.update({ ...patched, spec: { size: 2 }, status: { phase: "Ignored" } });
    assert.equal(specChanged.metadata.generation, 2, "a spec write bumps the generation");
    assert.equal(specChanged.status?.phase, "Degraded", "the main resource changed the status");

    await assert.rejects(objects.updateStatus({ ...created, status: { phase: "Stale" } }), (e: unknown) =>
      isConflict(e),
    );
  });

  it("applies each patch kind as the API server defines it", async () => {
    await objects.create({ metadata: { name: "p", namespace: NS }, spec: { size: 1, color: "red" } });
    const merged = await objects.patch(
      { namespace: NS, name: "p" },
      { type: "merge", patch: { spec: { size: 2 } } },
    );
    assert.deepEqual(merged.spec, { size: 2, color: "red" });

    const json = await objects.patch(
      { namespace: NS, name: "p" },
      { type: "json", ops: [{ op: "replace", path: "/spec/color", value: "blue" }] },
    );
    assert.equal(json.spec?.color, "blue");
    // A failed `test` op rejects the whole patch, as 422 Invalid (not 409, unlike a stale
    // resourceVersion; hence the finalizer helpers use a merge patch with a resourceVersion).
    await assert.rejects(
      objects.patch(
        { namespace: NS, name: "p" },
        {
          type: "json",
          ops: [
            { op: "test", path: "/spec/color", value: "green" },
            { op: "remove", path: "/spec/color" },
          ],
        },
      ),
      (e: unknown) => isInvalid(e),
    );
    assert.equal((await objects.getLive({ namespace: NS, name: "p" }))?.spec?.color, "blue");

    const applied = await objects.patch(
      { namespace: NS, name: "p" },
      { type: "apply", object: { spec: { size: 5 } } },
    );
    assert.equal(applied.spec?.size, 5);
    const managers = await rest.request<Thing>({
      method: "GET",
      path: `/apis/${things.group}/v1/namespaces/${NS}/things/p`,
    });
    const managed = (managers.metadata.managedFields ?? []) as { manager?: string; operation?: string }[];
    assert.ok(
      managed.some((m) => m.manager === "kubeprovisioner" && m.operation === "Apply"),
      JSON.stringify(managed),
    );

    // A resourceVersion in a merge patch is a precondition.
    await assert.rejects(
      objects.patch(
        { namespace: NS, name: "p" },
        { type: "merge", patch: { metadata: { resourceVersion: "1" }, spec: { size: 6 } } },
      ),
      (e: unknown) => isConflict(e),
    );
  });

  it("reads the cache: missing objects are undefined, and writes show up once the watch delivers them", async () => {
    assert.equal(objects.get({ namespace: NS, name: "not-there" }), undefined);
    const created = await objects.create({
      metadata: { name: "cached", namespace: NS, labels: { app: "x" } },
      spec: { size: 3 },
    });
    await eventually(
      "the created object in the cache",
      () => objects.get(created)?.metadata.resourceVersion === created.metadata.resourceVersion,
    );
    assert.ok(Object.isFrozen(objects.get(created)), "cached objects are frozen");
    assert.deepEqual(
      objects.list({ namespace: NS, labels: { app: "x" } }).map((o) => o.metadata.name),
      ["cached"],
    );
    await objects.delete(created);
    await eventually("the deletion in the cache", () => objects.get(created) === undefined);
    await assert.rejects(objects.delete(created), (e: unknown) => isNotFound(e));
  });
});
