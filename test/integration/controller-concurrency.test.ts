/**
 * The controller on a real API server: four workers under a burst of updates never reconcile one
 * key twice at once, still run different keys in parallel, and end on the last written state.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { InformerFactory } from "../../src/runtime/cache/factory.ts";
import { Client } from "../../src/runtime/client/client.ts";
import { newControllerManagedBy } from "../../src/runtime/controller/builder.ts";
import type { Request } from "../../src/runtime/controller/reconciler.ts";
import { keyOf, type KubeObject, type ResourceType } from "../../src/runtime/kube/object.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { installTestCrd } from "../support/test-crd.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { inParallel } from "../support/pool.ts";

interface Gadget extends KubeObject {
  spec?: { size?: number };
}

const gadgets: ResourceType = {
  group: "ctrltest.example.com",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  namespaced: true,
};
const NS = "burst";
const OBJECTS = 16;
const UPDATES_PER_OBJECT = 20;

function installGadgetCrd(cp: ControlPlane): Promise<void> {
  return installTestCrd(cp, gadgets, {
    spec: { size: { type: "integer" } },
    status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  });
}

describe("controller on a real API server", () => {
  let cp: ControlPlane;
  let rest: RestClient;

  before(async () => {
    // The project's CRDs too: a control plane with them can be a shared one (envtest.ts).
    cp = await startControlPlane({ installCRDs: true });
    await installGadgetCrd(cp);
    const ns = await cp.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    assert.equal(ns.status, 201, ns.text);
    rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry: new Registry() });
  });

  after(async () => {
    await cp?.stop();
  });

  it("with 4 workers never runs one key twice at once under a burst of updates", async () => {
    const registry = new Registry();
    const factory = new InformerFactory({ rest, registry });
    const client = new Client({ rest, cache: factory });
    const objects = client.resource<Gadget>(gadgets);

    const finalSize = new Map<string, number>();
    const lastSeen = new Map<string, number>();
    const inFlight = new Set<string>();
    let overlaps = 0;
    let reconciles = 0;
    let maxParallel = 0;
    let settled: () => void = () => {};
    const allSettled = new Promise<void>((resolve) => (settled = resolve));
    const checkSettled = (): void => {
      if (finalSize.size === OBJECTS && [...finalSize].every(([k, v]) => lastSeen.get(k) === v)) settled();
    };

    const controller = newControllerManagedBy({ informers: factory, registry })
      .for(gadgets)
      .named("gadget-burst")
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete({
        async reconcile(req: Request) {
          const key = keyOf(req);
          if (inFlight.has(key)) overlaps++;
          inFlight.add(key);
          maxParallel = Math.max(maxParallel, inFlight.size);
          try {
            // Simulated work that yields to the event loop, so other workers and the informer run.
            await new Promise((r) => setTimeout(r, 2 + Math.random() * 3));
            const obj = objects.get(req);
            if (obj?.spec?.size !== undefined) lastSeen.set(key, obj.spec.size);
            reconciles++;
            checkSettled();
            return {};
          } finally {
            inFlight.delete(key);
          }
        },
      });

    const ac = new AbortController();
    const runningFactory = factory.start(ac.signal);
    const runningController = controller.start(ac.signal);
    try {
      const names = Array.from({ length: OBJECTS }, (_, i) => `g-${i}`);
      await inParallel(names, 8, async (name) => {
        await objects.create({ metadata: { name, namespace: NS }, spec: { size: 0 } });
      });
      // All objects are updated at once, so many keys are hot together; each object's own
      // updates are sent one after the other. Two patches of one object in flight together may
      // be applied in either order, and the last one sent would not be the state the server ends
      // on.
      await Promise.all(
        names.map(async (name) => {
          for (let size = 1; size <= UPDATES_PER_OBJECT; size++)
            await objects.patch({ namespace: NS, name }, { type: "merge", patch: { spec: { size } } });
        }),
      );
      for (const name of names) {
        const stored = await cp.request(
          "GET",
          `/apis/${gadgets.group}/${gadgets.version}/namespaces/${NS}/${gadgets.plural}/${name}`,
        );
        assert.equal(stored.status, 200, stored.text);
        assert.equal(
          (JSON.parse(stored.text) as Gadget).spec?.size,
          UPDATES_PER_OBJECT,
          `server state of ${name}`,
        );
        finalSize.set(`${NS}/${name}`, UPDATES_PER_OBJECT);
      }
      checkSettled();

      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not settled: ${JSON.stringify([...lastSeen])}`)), 60_000);
      });
      await Promise.race([allSettled, timeout]).finally(() => clearTimeout(timer));
    } finally {
      ac.abort();
      await Promise.all([runningController, runningFactory]);
    }

    const events = OBJECTS * (UPDATES_PER_OBJECT + 1);
    console.log(
      `controller burst: ${events} writes, ${reconciles} reconciles, ${overlaps} overlaps, max ${maxParallel} in parallel`,
    );
    assert.ok(reconciles > 0, "no reconcile ran");
    assert.equal(overlaps, 0, "one key was reconciled by two workers at once");
    assert.ok(maxParallel > 1, "the four workers never ran in parallel, so the test proves nothing");
    assert.ok(maxParallel <= 4, "more reconciles ran at once than there are workers");
    const total = await registry.getSingleMetric("controller_runtime_reconcile_total")?.get();
    const success = total?.values.find(
      (v) => v.labels["controller"] === "gadget-burst" && v.labels["result"] === "success",
    )?.value;
    assert.equal(success, reconciles, "reconcile_total{result=success} counts every reconcile");
  });
});
