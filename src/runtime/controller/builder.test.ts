import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import type { KubeObject, ResourceType } from "../kube/object.ts";
import { flushMicrotasks } from "../testing/fake-clock.ts";
import type { Runnable } from "../manager/runnable.ts";
import { newControllerManagedBy, type InformerProvider } from "./builder.ts";
import { generationChanged } from "./predicates.ts";
import type { Request } from "./reconciler.ts";
import { ManualInformer, RecordingQueue } from "./testing.ts";

const widgets: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const gadgets: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  namespaced: true,
};
const configs: ResourceType = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

function provider(): InformerProvider & { informers: Map<string, ManualInformer<KubeObject>> } {
  const informers = new Map<string, ManualInformer<KubeObject>>();
  return {
    informers,
    informerFor<T extends KubeObject>(r: ResourceType) {
      let inf = informers.get(r.plural);
      if (inf === undefined) {
        inf = new ManualInformer<KubeObject>();
        informers.set(r.plural, inf);
      }
      return inf as unknown as ManualInformer<T>;
    },
  };
}

describe("ControllerBuilder", () => {
  it("wires for, owns and watches, applies the event filter, and registers with the manager", async () => {
    const p = provider();
    const added: Runnable[] = [];
    const seen: Request[] = [];
    const queue = new RecordingQueue();
    const controller = newControllerManagedBy({
      informers: p,
      registry: new Registry(),
      manager: { add: (r) => added.push(r) },
    })
      .for(widgets)
      .owns(gadgets)
      .watches(configs, () => [{ namespace: "ns", name: "from-config" }])
      .withEventFilter(generationChanged())
      .withOptions({ maxConcurrentReconciles: 2, queue })
      .complete({
        reconcile: async (req) => {
          seen.push(req);
          return {};
        },
      });
    assert.equal(controller.name, "widget");
    assert.deepEqual(added, [controller]);

    const ac = new AbortController();
    const running = controller.start(ac.signal);
    await flushMicrotasks();
    const w = p.informers.get("widgets");
    const g = p.informers.get("gadgets");
    const c = p.informers.get("configmaps");
    assert.ok(w && g && c);
    w.add({ metadata: { name: "w1", namespace: "ns", generation: 1 } });
    g.add({
      metadata: {
        name: "g1",
        namespace: "ns",
        generation: 1,
        ownerReferences: [
          { apiVersion: "example.com/v1", kind: "Widget", name: "owner", uid: "u", controller: true },
        ],
      },
    });
    c.add({ metadata: { name: "cm", namespace: "ns" } });
    // Filtered out by generationChanged: same generation.
    w.update(
      { metadata: { name: "w2", namespace: "ns", generation: 1 } },
      { metadata: { name: "w2", namespace: "ns", generation: 1 } },
    );
    for (let i = 0; i < 50 && seen.length < 3; i++) await flushMicrotasks();
    ac.abort();
    await running;
    assert.deepEqual(seen.map((r) => r.name).sort(), ["from-config", "owner", "w1"]);
  });

  it("requires for() exactly once", () => {
    const p = provider();
    assert.throws(
      () =>
        newControllerManagedBy({ informers: p })
          .owns(gadgets)
          .complete({ reconcile: async () => ({}) }),
      /for\(\)/,
    );
    assert.throws(() => newControllerManagedBy({ informers: p }).for(widgets).for(gadgets), /already/);
  });

  it("uses the name given by named()", () => {
    const c = newControllerManagedBy({ informers: provider(), registry: new Registry() })
      .for(widgets)
      .named("widget-sync")
      .withOptions({ queue: new RecordingQueue() })
      .complete({ reconcile: async () => ({}) });
    assert.equal(c.name, "widget-sync");
  });
});
