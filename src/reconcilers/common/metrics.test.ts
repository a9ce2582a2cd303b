import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import type { Condition } from "../../api/v1/index.ts";
import { CacheNotSyncedError } from "../../runtime/client/errors.ts";
import type { ManagedObject } from "./driver.ts";
import { countDriftedPaths, countManagedResources, MANAGED_METRIC_NAMES } from "./metrics.ts";
import { widgetObject, widgetResource } from "./testing/widget.ts";

const resource = widgetResource;

function obj(name: string, ready?: Condition["status"], synced?: Condition["status"]): ManagedObject {
  const conditions: Condition[] = [];
  const at = "2026-01-01T00:00:00Z";
  if (ready)
    conditions.push({ type: "Ready", status: ready, reason: "R", message: "", lastTransitionTime: at });
  if (synced)
    conditions.push({ type: "Synced", status: synced, reason: "S", message: "", lastTransitionTime: at });
  return widgetObject({
    metadata: { namespace: "ns", name },
    ...(conditions.length > 0 ? { status: { conditions } } : {}),
  });
}

async function series(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric(MANAGED_METRIC_NAMES.resources);
  assert.ok(metric);
  const out: Record<string, number> = {};
  for (const v of (await metric.get()).values) {
    out[`${v.labels.kind}/${v.labels.ready}/${v.labels.synced}`] = v.value;
  }
  return out;
}

describe("kubeprovisioner_managed_resources", () => {
  it("counts cached objects per kind and condition status when scraped, zeros included", async () => {
    const registry = new Registry();
    let widgets = [obj("a", "True", "True"), obj("b", "True", "True"), obj("c", "False", "True"), obj("d")];
    countManagedResources(registry, resource.kind, () => widgets);
    countManagedResources(registry, "Gadget", () => [obj("g", "False", "False")]);

    const first = await series(registry);
    assert.equal(Object.keys(first).length, 18, "3 x 3 status pairs for each of 2 kinds");
    assert.equal(first["Widget/True/True"], 2);
    assert.equal(first["Widget/False/True"], 1);
    assert.equal(first["Widget/Unknown/Unknown"], 1, "missing conditions count as Unknown");
    assert.equal(first["Widget/True/False"], 0);
    assert.equal(first["Gadget/False/False"], 1);

    widgets = [obj("a", "False", "False")];
    const second = await series(registry);
    assert.equal(second["Widget/True/True"], 0, "the count follows the cache, not a running tally");
    assert.equal(second["Widget/False/False"], 1);
  });

  it("leaves out a kind whose cache has not synced", async () => {
    const registry = new Registry();
    countManagedResources(registry, "Widget", () => {
      throw new CacheNotSyncedError(resource);
    });
    countManagedResources(registry, "Gadget", () => []);
    const got = await series(registry);
    assert.deepEqual(new Set(Object.keys(got).map((k) => k.split("/")[0])), new Set(["Gadget"]));
  });

  it("exports no label per object", async () => {
    const registry = new Registry();
    countManagedResources(registry, "Widget", () => [obj("a", "True", "True"), obj("b", "True", "True")]);
    const text = await registry.metrics();
    assert.doesNotMatch(text, /name=|namespace=/);
    assert.match(text, /kubeprovisioner_managed_resources\{kind="Widget",ready="True",synced="True"\} 2/);
  });
});

describe("kubeprovisioner_drifted_paths", () => {
  it("sums the reported drift entries of each kind's cached objects when scraped", async () => {
    const registry = new Registry();
    const since = "2026-01-01T00:00:00Z";
    const drifted = (name: string, paths: string[]): ManagedObject =>
      widgetObject({
        metadata: { namespace: "ns", name },
        status: { drift: paths.map((path) => ({ path, since })) },
      });
    let widgets = [
      drifted("a", ["spec.versioning", "spec.tags.team"]),
      drifted("b", ["spec.cors"]),
      obj("c"),
    ];
    countDriftedPaths(registry, "Widget", () => widgets);
    countDriftedPaths(registry, "Gadget", () => []);
    countDriftedPaths(registry, "Unsynced", () => {
      throw new CacheNotSyncedError(resource);
    });
    const values = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      for (const v of (await registry.getSingleMetric(MANAGED_METRIC_NAMES.driftedPaths)?.get())?.values ??
        [])
        out[String(v.labels.kind)] = v.value;
      return out;
    };
    assert.deepEqual(await values(), { Widget: 3, Gadget: 0 });
    widgets = [obj("a")];
    assert.deepEqual(await values(), { Widget: 0, Gadget: 0 });
  });
});
