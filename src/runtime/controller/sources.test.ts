import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject, ObjectMeta, OwnerReference } from "../kube/object.ts";
import { silentLogger } from "../logging.ts";
import { custom, generationChanged } from "./predicates.ts";
import type { Request } from "./reconciler.ts";
import { controllerOwnerMapper, kindSource, mappedSource, ownerSource, type EventSource } from "./sources.ts";
import { ManualInformer } from "./testing.ts";

function o(meta: Partial<ObjectMeta>): KubeObject {
  return { metadata: { name: "child", namespace: "ns", ...meta } };
}

function ref(kind: string, name: string, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: "compute.cloud.com/v1", kind, name, uid: `uid-${name}`, controller: true, ...extra };
}

function attach(source: EventSource): Request[] {
  const got: Request[] = [];
  source.attach((r) => got.push(r), silentLogger);
  return got;
}

describe("kindSource", () => {
  it("enqueues the object's own key on add, update and delete", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(kindSource(inf));
    inf.add(o({ name: "a" }));
    inf.update(o({ name: "a", resourceVersion: "1" }), o({ name: "a", resourceVersion: "2" }));
    inf.remove(o({ name: "a" }));
    assert.ok(got.length >= 3);
    assert.ok(got.every((r) => r.namespace === "ns" && r.name === "a"));
  });

  it("gives cluster-scoped objects a key without namespace", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(kindSource(inf));
    inf.add({ metadata: { name: "node-1" } });
    assert.deepEqual(got, [{ name: "node-1" }]);
  });

  it("filters adds and updates through predicates but never deletes", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(
      kindSource(inf, { predicates: [generationChanged(), custom({ create: () => false })] }),
    );
    inf.add(o({ name: "a", generation: 1 }));
    inf.update(
      o({ name: "a", generation: 1, resourceVersion: "1" }),
      o({ name: "a", generation: 1, resourceVersion: "2" }),
    );
    assert.equal(got.length, 0);
    inf.remove(o({ name: "a", generation: 1 }));
    assert.deepEqual(got, [{ namespace: "ns", name: "a" }]);
  });

  it("enqueues anyway when a predicate throws", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(
      kindSource(inf, {
        predicates: [
          custom({
            create: () => {
              throw new Error("bug");
            },
          }),
        ],
      }),
    );
    inf.add(o({ name: "a" }));
    assert.deepEqual(got, [{ namespace: "ns", name: "a" }]);
  });

  it("replays the informer's existing objects to a handler attached late", () => {
    const inf = new ManualInformer<KubeObject>();
    inf.add(o({ name: "early" }));
    const got = attach(kindSource(inf));
    assert.deepEqual(got, [{ namespace: "ns", name: "early" }]);
  });
});

describe("owner mapping", () => {
  it("maps an object to its controller owner of the given kind, in its own namespace", () => {
    const map = controllerOwnerMapper({ kind: "Ec2Instance" });
    assert.deepEqual(map(o({ ownerReferences: [ref("Ec2Instance", "web")] })), [
      { namespace: "ns", name: "web" },
    ]);
  });

  it("ignores non-controller references and owners of other kinds or groups", () => {
    const map = controllerOwnerMapper({ kind: "Ec2Instance", group: "compute.cloud.com" });
    assert.deepEqual(map(o({ ownerReferences: [ref("Ec2Instance", "web", { controller: false })] })), []);
    assert.deepEqual(map(o({ ownerReferences: [ref("S3Bucket", "b")] })), []);
    assert.deepEqual(
      map(o({ ownerReferences: [ref("Ec2Instance", "web", { apiVersion: "other.io/v1" })] })),
      [],
    );
    assert.deepEqual(map(o({})), []);
  });

  it("picks the controller reference among several", () => {
    const map = controllerOwnerMapper({ kind: "Ec2Instance" });
    const refs = [ref("Ec2Instance", "not-me", { controller: false }), ref("Ec2Instance", "me")];
    assert.deepEqual(map(o({ ownerReferences: refs })), [{ namespace: "ns", name: "me" }]);
  });

  it("maps to a cluster-scoped owner without namespace, and never from a cluster-scoped object to a namespaced owner", () => {
    assert.deepEqual(
      controllerOwnerMapper({ kind: "Cluster", namespaced: false })(
        o({ ownerReferences: [ref("Cluster", "c1")] }),
      ),
      [{ name: "c1" }],
    );
    assert.deepEqual(
      controllerOwnerMapper({ kind: "Ec2Instance" })({
        metadata: { name: "x", ownerReferences: [ref("Ec2Instance", "web")] },
      }),
      [],
    );
  });

  it("ownerSource wakes both the old and the new owner when the owner changes", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(ownerSource(inf, "Ec2Instance"));
    inf.update(
      o({ ownerReferences: [ref("Ec2Instance", "old")] }),
      o({ ownerReferences: [ref("Ec2Instance", "new")] }),
    );
    assert.deepEqual(got, [
      { namespace: "ns", name: "old" },
      { namespace: "ns", name: "new" },
    ]);
  });

  it("ownerSource accepts a ResourceType", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(
      ownerSource(inf, {
        group: "compute.cloud.com",
        version: "v1",
        plural: "ec2instances",
        kind: "Ec2Instance",
        namespaced: true,
      }),
    );
    inf.remove(o({ ownerReferences: [ref("Ec2Instance", "web")] }));
    assert.deepEqual(got, [{ namespace: "ns", name: "web" }]);
  });
});

describe("mappedSource", () => {
  it("enqueues every request the map function returns", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(
      mappedSource(inf, (obj) => [
        { namespace: "a", name: obj.metadata.name ?? "" },
        { namespace: "b", name: "fixed" },
      ]),
    );
    inf.add(o({ name: "cm" }));
    assert.deepEqual(got, [
      { namespace: "a", name: "cm" },
      { namespace: "b", name: "fixed" },
    ]);
  });

  it("survives a throwing map function and enqueues nothing for that object", () => {
    const inf = new ManualInformer<KubeObject>();
    const got = attach(
      mappedSource(inf, (obj) => {
        if (obj.metadata.name === "bad") throw new Error("bug");
        return [{ name: "ok" }];
      }),
    );
    inf.add(o({ name: "bad" }));
    inf.add(o({ name: "good" }));
    assert.deepEqual(got, [{ name: "ok" }]);
  });
});
