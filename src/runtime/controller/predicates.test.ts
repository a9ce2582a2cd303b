import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject, ObjectMeta } from "../kube/object.ts";
import {
  and,
  annotationChanged,
  custom,
  generationChanged,
  labelChanged,
  not,
  or,
  resourceVersionChanged,
} from "./predicates.ts";

function o(meta: Partial<ObjectMeta>): KubeObject {
  return { metadata: { name: "a", namespace: "ns", ...meta } };
}

describe("generationChanged", () => {
  const p = generationChanged();
  it("passes creates, including those of the initial list", () => {
    assert.equal(p.create(o({ generation: 1 }), true), true);
    assert.equal(p.create(o({ generation: 1 }), false), true);
  });
  it("passes a spec change and drops a status-only write", () => {
    assert.equal(
      p.update(o({ generation: 1, resourceVersion: "1" }), o({ generation: 2, resourceVersion: "2" })),
      true,
    );
    assert.equal(
      p.update(o({ generation: 2, resourceVersion: "2" }), o({ generation: 2, resourceVersion: "3" })),
      false,
    );
  });
  it("drops a resync, where old and new are the same object", () => {
    const same = o({ generation: 4, resourceVersion: "9" });
    assert.equal(p.update(same, same), false);
  });
});

describe("resourceVersionChanged", () => {
  const p = resourceVersionChanged();
  it("passes every real write and drops a resync", () => {
    assert.equal(p.update(o({ resourceVersion: "1" }), o({ resourceVersion: "2" })), true);
    const same = o({ resourceVersion: "2" });
    assert.equal(p.update(same, same), false);
  });
});

describe("annotationChanged and labelChanged", () => {
  it("detects an added, changed or removed annotation, and ignores other metadata", () => {
    const p = annotationChanged();
    assert.equal(p.update(o({}), o({ annotations: { x: "1" } })), true);
    assert.equal(p.update(o({ annotations: { x: "1" } }), o({ annotations: { x: "2" } })), true);
    assert.equal(p.update(o({ annotations: { x: "1" } }), o({})), true);
    assert.equal(
      p.update(
        o({ annotations: { x: "1" }, resourceVersion: "1" }),
        o({ annotations: { x: "1" }, resourceVersion: "2" }),
      ),
      false,
    );
    assert.equal(p.update(o({}), o({ annotations: {} })), false);
  });
  it("watches only the listed keys when given", () => {
    const p = annotationChanged(["watched"]);
    assert.equal(p.update(o({ annotations: { other: "1" } }), o({ annotations: { other: "2" } })), false);
    assert.equal(p.update(o({ annotations: { watched: "1" } }), o({ annotations: { watched: "2" } })), true);
  });
  it("does the same for labels", () => {
    const p = labelChanged();
    assert.equal(p.update(o({ labels: { a: "1" } }), o({ labels: { a: "1" } })), false);
    assert.equal(p.update(o({ labels: { a: "1" } }), o({ labels: { a: "2" } })), true);
  });
});

describe("custom and combinators", () => {
  const yes = custom({});
  const no = custom({ create: () => false, update: () => false });
  const x = o({});
  it("custom passes what it is not told to filter", () => {
    assert.equal(custom({ update: () => false }).create(x, false), true);
    assert.equal(custom({ update: () => false }).update(x, x), false);
  });
  it("and, or and not combine as boolean logic", () => {
    assert.equal(and(yes, no).create(x, false), false);
    assert.equal(and(yes, yes).update(x, x), true);
    assert.equal(and().create(x, false), true);
    assert.equal(or(no, yes).create(x, false), true);
    assert.equal(or(no, no).update(x, x), false);
    assert.equal(or().create(x, false), false);
    assert.equal(not(no).update(x, x), true);
    assert.equal(not(yes).create(x, true), false);
  });
  it("or(generationChanged, annotationChanged) passes either kind of change", () => {
    const p = or(generationChanged(), annotationChanged());
    assert.equal(p.update(o({ generation: 1 }), o({ generation: 1, annotations: { a: "b" } })), true);
    assert.equal(p.update(o({ generation: 1 }), o({ generation: 2 })), true);
    assert.equal(p.update(o({ generation: 1 }), o({ generation: 1, resourceVersion: "5" })), false);
  });
});
