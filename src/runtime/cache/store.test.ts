import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../kube/object.ts";
import { deepFreeze, LAST_APPLIED_ANNOTATION, prepareForCache } from "./freeze.ts";
import { NAMESPACE_INDEX, ObjectStore } from "./store.ts";

interface Widget extends KubeObject {
  spec: { owner?: string; tags: string[] };
}

function widget(ns: string | undefined, name: string, tags: string[] = [], owner?: string): Widget {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { ...(ns !== undefined ? { namespace: ns } : {}), name, resourceVersion: "1" },
    spec: { tags, ...(owner !== undefined ? { owner } : {}) },
  };
}

describe("ObjectStore", () => {
  it("keys objects by namespace/name, and cluster-scoped ones by name", () => {
    const s = new ObjectStore<Widget>();
    s.set(prepareForCache(widget("a", "x")));
    s.set(prepareForCache(widget(undefined, "global")));
    assert.deepEqual(s.keys().sort(), ["a/x", "global"]);
    assert.equal(s.get("a/x")?.metadata.name, "x");
    assert.equal(s.get("global")?.metadata.name, "global");
    assert.equal(s.get("b/x"), undefined);
  });

  it("lists by namespace through the default namespace index", () => {
    const s = new ObjectStore<Widget>();
    for (const [ns, n] of [
      ["a", "1"],
      ["a", "2"],
      ["b", "3"],
    ] as const)
      s.set(prepareForCache(widget(ns, n)));
    assert.deepEqual(
      s
        .list("a")
        .map((o) => o.metadata.name)
        .sort(),
      ["1", "2"],
    );
    assert.deepEqual(
      s.list("b").map((o) => o.metadata.name),
      ["3"],
    );
    assert.deepEqual(s.list("c"), []);
    assert.equal(s.list().length, 3);
    assert.deepEqual(
      s.byIndex(NAMESPACE_INDEX, "b").map((o) => o.metadata.name),
      ["3"],
    );
  });

  it("keeps custom indexes in step with updates and deletes", () => {
    const s = new ObjectStore<Widget>();
    s.addIndexer("tag", (o) => o.spec.tags);
    s.set(prepareForCache(widget("a", "1", ["red", "blue"])));
    s.set(prepareForCache(widget("a", "2", ["red"])));
    assert.deepEqual(
      s
        .byIndex("tag", "red")
        .map((o) => o.metadata.name)
        .sort(),
      ["1", "2"],
    );
    assert.deepEqual(
      s.byIndex("tag", "blue").map((o) => o.metadata.name),
      ["1"],
    );

    s.set(prepareForCache(widget("a", "1", ["green"])));
    assert.deepEqual(
      s.byIndex("tag", "red").map((o) => o.metadata.name),
      ["2"],
    );
    assert.deepEqual(s.byIndex("tag", "blue"), []);
    assert.deepEqual(
      s.byIndex("tag", "green").map((o) => o.metadata.name),
      ["1"],
    );

    assert.equal(s.delete("a/2")?.metadata.name, "2");
    assert.deepEqual(s.byIndex("tag", "red"), []);
    assert.equal(s.delete("a/2"), undefined);
    assert.equal(s.size, 1);
  });

  it("computes an index added later for the objects already stored", () => {
    const s = new ObjectStore<Widget>();
    s.set(prepareForCache(widget("a", "1", [], "alice")));
    s.set(prepareForCache(widget("a", "2", [], "bob")));
    s.addIndexer("owner", (o) => (o.spec.owner ? [o.spec.owner] : []));
    assert.deepEqual(
      s.byIndex("owner", "bob").map((o) => o.metadata.name),
      ["2"],
    );
  });

  it("rejects an unknown index and a duplicate index name", () => {
    const s = new ObjectStore<Widget>();
    assert.throws(() => s.byIndex("nope", "x"), /no index named "nope"/);
    assert.throws(() => s.addIndexer(NAMESPACE_INDEX, () => []), /already exists/);
  });

  it("survives an index function that throws, leaving that object out of the index", () => {
    const s = new ObjectStore<Widget>();
    s.addIndexer("first-tag", (o) => {
      if (o.spec.tags.length === 0) throw new Error("no tags");
      return [o.spec.tags[0] ?? ""];
    });
    s.set(prepareForCache(widget("a", "1")));
    s.set(prepareForCache(widget("a", "2", ["x"])));
    assert.equal(s.get("a/1")?.metadata.name, "1");
    assert.deepEqual(
      s.byIndex("first-tag", "x").map((o) => o.metadata.name),
      ["2"],
    );
  });

  it("returns snapshots that later writes do not change", () => {
    const s = new ObjectStore<Widget>();
    s.set(prepareForCache(widget("a", "1")));
    const before = s.list("a");
    s.set(prepareForCache(widget("a", "2")));
    assert.equal(before.length, 1);
    assert.equal(s.list("a").length, 2);
  });
});

describe("prepareForCache", () => {
  it("strips managedFields and deep-freezes the object", () => {
    const obj: Widget = {
      ...widget("a", "1", ["red"]),
      metadata: {
        namespace: "a",
        name: "1",
        labels: { app: "x" },
        managedFields: [{ manager: "kubectl", operation: "Apply" }],
      },
    };
    const cached = prepareForCache(obj);
    assert.equal("managedFields" in cached.metadata, false);
    assert.ok(Object.isFrozen(cached));
    assert.ok(Object.isFrozen(cached.metadata));
    assert.ok(Object.isFrozen(cached.metadata.labels));
    assert.ok(Object.isFrozen(cached.spec.tags));
    assert.throws(() => {
      (cached.spec.tags as string[]).push("blue");
    }, TypeError);
    assert.throws(() => {
      (cached.metadata.labels as Record<string, string>).app = "y";
    }, TypeError);
  });

  it("drops kubectl's last-applied copy of the object and keeps every other annotation", () => {
    const applied = (annotations: Record<string, string>): Widget => ({
      ...widget("a", "1"),
      metadata: { namespace: "a", name: "1", annotations },
    });
    const copy = JSON.stringify(widget("a", "1"));
    const kept = prepareForCache(applied({ [LAST_APPLIED_ANNOTATION]: copy, team: "x" }));
    assert.deepEqual(kept.metadata.annotations, { team: "x" });
    const only = prepareForCache(applied({ [LAST_APPLIED_ANNOTATION]: copy }));
    assert.equal("annotations" in only.metadata, false);
    const frozen = deepFreeze(applied({ [LAST_APPLIED_ANNOTATION]: copy }));
    assert.equal(prepareForCache(frozen).metadata.annotations, undefined);
    assert.equal(frozen.metadata.annotations?.[LAST_APPLIED_ANNOTATION], copy, "a frozen input is copied");
  });

  it("copies a frozen object instead of failing to strip it", () => {
    const obj = deepFreeze<Widget>({ ...widget("a", "1"), metadata: { name: "1", managedFields: [{}] } });
    const cached = prepareForCache(obj);
    assert.notEqual(cached, obj);
    assert.equal(cached.metadata.managedFields, undefined);
    assert.ok(Array.isArray(obj.metadata.managedFields));
    assert.ok(Object.isFrozen(cached.metadata));
  });

  it("lets a structuredClone of a cached object be changed", () => {
    const cached = prepareForCache(widget("a", "1", ["red"]));
    const copy = structuredClone(cached) as Widget;
    copy.spec.tags.push("blue");
    assert.deepEqual(copy.spec.tags, ["red", "blue"]);
    assert.deepEqual(cached.spec.tags, ["red"]);
  });
});
