import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApiError, isNotFound } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { FinalizerConflictError } from "./errors.ts";
import { addFinalizer, hasFinalizer, removeFinalizer, type FinalizerTarget } from "./finalizers.ts";
import type { Patch } from "./patch.ts";

/**
 * One stored object with the API server's merge-patch precondition rule: a patch carrying a
 * resourceVersion other than the stored one fails with 409. `interfere(n)` makes another writer
 * bump the object (adding its own finalizer) just before each of the next `n` patches.
 */
class OneObjectServer implements FinalizerTarget<KubeObject> {
  readonly kind = "Widget";
  obj: KubeObject | undefined;
  patches: Patch[] = [];
  gets = 0;
  #interfere = 0;
  #rv = 1;

  constructor(finalizers: string[] | undefined) {
    this.obj = {
      metadata: { name: "a", namespace: "ns", resourceVersion: "1", ...(finalizers ? { finalizers } : {}) },
    };
  }

  interfere(n: number): void {
    this.#interfere = n;
  }

  snapshot(): KubeObject | undefined {
    return this.obj === undefined ? undefined : structuredClone(this.obj);
  }

  async getLive(): Promise<KubeObject | undefined> {
    this.gets++;
    return this.snapshot();
  }

  async patch(_ref: unknown, patch: Patch): Promise<KubeObject> {
    this.patches.push(patch);
    if (this.#interfere > 0 && this.obj !== undefined) {
      this.#interfere--;
      this.obj.metadata.finalizers = [...(this.obj.metadata.finalizers ?? []), `other/${this.#rv}`];
      this.obj.metadata.resourceVersion = String(++this.#rv);
    }
    if (this.obj === undefined) throw new ApiError({ status: 404, reason: "NotFound" });
    assert.equal(patch.type, "merge");
    const meta = (patch.type === "merge" ? patch.patch["metadata"] : undefined) as {
      resourceVersion?: string;
      finalizers?: string[];
    };
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== this.obj.metadata.resourceVersion) {
      throw new ApiError({ status: 409, reason: "Conflict", message: "the object has been modified" });
    }
    if (meta.finalizers !== undefined) this.obj.metadata.finalizers = meta.finalizers;
    this.obj.metadata.resourceVersion = String(++this.#rv);
    return structuredClone(this.obj);
  }
}

const F = "compute.cloud.com/finalizer";

describe("addFinalizer", () => {
  it("makes no request when the object already carries the finalizer", async () => {
    const server = new OneObjectServer([F]);
    const given = server.snapshot();
    assert.ok(given);
    const out = await addFinalizer(server, given, F);
    assert.equal(out, given);
    assert.equal(server.patches.length + server.gets, 0);
  });

  it("writes the whole list with the resourceVersion it was computed from", async () => {
    const server = new OneObjectServer(["keep/me"]);
    const given = server.snapshot();
    assert.ok(given);
    const out = await addFinalizer(server, given, F);
    assert.deepEqual(server.patches, [
      { type: "merge", patch: { metadata: { resourceVersion: "1", finalizers: ["keep/me", F] } } },
    ]);
    assert.deepEqual(out.metadata.finalizers, ["keep/me", F]);
  });

  it("re-reads from the server after a conflict and keeps the other writer's finalizer", async () => {
    const server = new OneObjectServer(undefined);
    const stale = server.snapshot();
    assert.ok(stale);
    server.interfere(2);
    const out = await addFinalizer(server, stale, F);
    assert.equal(server.patches.length, 3);
    assert.equal(server.gets, 2, "each conflict re-reads from the server");
    assert.deepEqual(out.metadata.finalizers, ["other/1", "other/2", F]);
    assert.deepEqual(server.obj?.metadata.finalizers, ["other/1", "other/2", F]);
  });

  it("gives up after the configured attempts with FinalizerConflictError carrying the last 409", async () => {
    const server = new OneObjectServer(undefined);
    server.interfere(100);
    const err = await addFinalizer(server, { namespace: "ns", name: "a" }, F, { attempts: 3 }).then(
      () => assert.fail("expected a rejection"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof FinalizerConflictError);
    assert.equal(err.attempts, 3);
    assert.ok(err.cause instanceof ApiError && err.cause.status === 409);
    assert.equal(server.patches.length, 3);
    assert.equal(server.obj?.metadata.finalizers?.includes(F), false);
  });

  it("reads the object first when given only a key", async () => {
    const server = new OneObjectServer(undefined);
    await addFinalizer(server, { namespace: "ns", name: "a" }, F);
    assert.equal(server.gets, 1);
    assert.deepEqual(server.obj?.metadata.finalizers, [F]);
  });

  it("rejects with a NotFound ApiError when the object does not exist", async () => {
    const server = new OneObjectServer(undefined);
    server.obj = undefined;
    await assert.rejects(addFinalizer(server, "ns/a", F), (e: unknown) => isNotFound(e));
  });
});

describe("removeFinalizer", () => {
  it("removes every occurrence and leaves the others", async () => {
    const server = new OneObjectServer([F, "keep/me", F]);
    const out = await removeFinalizer(server, server.snapshot() ?? "ns/a", F);
    assert.deepEqual(out?.metadata.finalizers, ["keep/me"]);
  });

  it("makes no request when the finalizer is absent", async () => {
    const server = new OneObjectServer(["keep/me"]);
    const given = server.snapshot();
    assert.ok(given);
    assert.equal(await removeFinalizer(server, given, F), given);
    assert.equal(server.patches.length, 0);
  });

  it("survives conflicts like addFinalizer", async () => {
    const server = new OneObjectServer([F]);
    const stale = server.snapshot();
    assert.ok(stale);
    server.interfere(3);
    const out = await removeFinalizer(server, stale, F);
    assert.deepEqual(out?.metadata.finalizers, ["other/1", "other/2", "other/3"]);
    assert.equal(hasFinalizer(server.obj ?? { metadata: {} }, F), false);
  });

  it("resolves to undefined when the object is already gone", async () => {
    const server = new OneObjectServer([F]);
    const stale = server.snapshot();
    assert.ok(stale);
    server.obj = undefined;
    assert.equal(await removeFinalizer(server, stale, F), undefined);
    assert.equal(await removeFinalizer(server, "ns/a", F), undefined);
  });
});
