import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { Registry } from "prom-client";
import type { KubeObject, ResourceType } from "../kube/object.ts";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { DEFAULT_RESYNC_PERIOD_MS, SharedInformer, type EventHandler } from "./shared-informer.ts";
import { FakeApi } from "./testing/fake-api.ts";

interface Widget extends KubeObject {
  spec: { size: number };
}

const WIDGETS: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

function widget(ns: string, name: string, size = 1): Widget {
  return { metadata: { namespace: ns, name, managedFields: [{ manager: "test" }] }, spec: { size } };
}

type Ev = string;

/**
 * Records every callback as a compact string, and checks the store already holds the change. The
 * informer catches what a handler throws, so a failed check is recorded as a `violation:` entry
 * among the events (which every test compares in full) instead of being thrown.
 */
function recorder(inf: SharedInformer<Widget>, events: Ev[]): EventHandler<Widget> {
  const check = (holds: boolean, what: string, obj: Widget): void => {
    if (!holds) events.push(`violation:${what}:${obj.metadata.name}`);
  };
  const cached = (obj: Widget): Readonly<Widget> | undefined =>
    inf.store.get(`${obj.metadata.namespace}/${obj.metadata.name}`);
  return {
    onAdd(obj, initial) {
      check(cached(obj) === obj, "store updated before onAdd", obj);
      events.push(`add:${obj.metadata.name}:${obj.spec.size}${initial ? ":initial" : ""}`);
    },
    onUpdate(old, obj) {
      if (old === obj) {
        events.push(`resync:${obj.metadata.name}`);
        return;
      }
      check(cached(obj) === obj, "store updated before onUpdate", obj);
      events.push(`update:${obj.metadata.name}:${old.spec.size}->${obj.spec.size}`);
    },
    onDelete(obj) {
      check(cached(obj) === undefined, "store updated before onDelete", obj);
      events.push(`delete:${obj.metadata.name}:${obj.spec.size}`);
    },
  };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await flushMicrotasks(2);
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe("SharedInformer", () => {
  let clock: FakeClock;
  let api: FakeApi<Widget>;
  let stop: AbortController;
  let running: Promise<void> | undefined;

  beforeEach(() => {
    clock = new FakeClock();
    api = new FakeApi<Widget>();
    stop = new AbortController();
    running = undefined;
  });
  afterEach(async () => {
    stop.abort();
    await running;
  });

  function start(
    opts: { pageSize?: number; resyncPeriodMs?: number; inactivityTimeoutMs?: number } = {},
  ): SharedInformer<Widget> {
    const inf = new SharedInformer<Widget>({
      resource: WIDGETS,
      listerWatcherFor: () => api,
      clock,
      registry: new Registry(),
      random: () => 0.5,
      ...opts,
    });
    return inf;
  }

  it("delivers the initial list as adds, strips managedFields, freezes objects, then syncs", async () => {
    api.create(widget("a", "w1"));
    api.create(widget("a", "w2"));
    const inf = start();
    const events: Ev[] = [];
    inf.addEventHandler(recorder(inf, events));
    assert.equal(inf.hasSynced(), false);
    running = inf.run(stop.signal);
    assert.equal(await inf.waitForCacheSync(), true);
    assert.deepEqual(events, ["add:w1:1:initial", "add:w2:1:initial"]);
    const cached = inf.store.get("a/w1");
    assert.ok(cached !== undefined);
    assert.equal(cached.metadata.managedFields, undefined);
    assert.equal(cached.apiVersion, "example.com/v1");
    assert.equal(cached.kind, "Widget");
    assert.ok(Object.isFrozen(cached.spec));
  });

  it("applies watch events to the store before the handlers, and drops duplicates", async () => {
    const inf = start();
    const events: Ev[] = [];
    inf.addEventHandler(recorder(inf, events));
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    const w = api.create(widget("a", "w1", 1));
    api.update({ ...w, spec: { size: 2 } });
    api.delete("a/w1");
    await until(() => events.length === 3, "three events");
    assert.deepEqual(events, ["add:w1:1", "update:w1:1->2", "delete:w1:2"]);
    assert.equal(api.watchCalls[0]?.allowWatchBookmarks, true);
    assert.equal(api.watchCalls[0]?.resourceVersion, "1");
  });

  it("pages the list and restarts it when the continue token expires", async () => {
    for (let i = 0; i < 5; i++) api.create(widget("a", `w${i}`));
    const inf = start({ pageSize: 2 });
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    assert.deepEqual(
      api.listCalls.map((c) => c.continue ?? "-"),
      ["-", "0:2", "0:4"],
    );
    assert.equal(inf.store.list().length, 5);
  });

  it("restarts a list whose continue token expired mid-way", async () => {
    for (let i = 0; i < 5; i++) api.create(widget("a", `w${i}`));
    const realList = api.list.bind(api);
    let pages = 0;
    api.list = async (opts) => {
      const page = await realList(opts);
      if (++pages === 1) {
        api.create(widget("a", "late"));
        api.compact();
      }
      return page;
    };
    const inf = start({ pageSize: 2 });
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    assert.deepEqual(
      api.listCalls.map((c) => c.continue ?? "-"),
      ["-", "0:2", "-", "1:2", "1:4"],
    );
    assert.equal(inf.store.list().length, 6);
  });

  for (const goneAs of ["event", "response"] as const) {
    it(`relists after 410 (${goneAs}) and reports changes made while disconnected`, async () => {
      const keep = api.create(widget("a", "keep", 1));
      const change = api.create(widget("a", "change", 1));
      api.create(widget("a", "gone", 7));
      const inf = start();
      const events: Ev[] = [];
      inf.addEventHandler(recorder(inf, events));
      running = inf.run(stop.signal);
      await inf.waitForCacheSync();
      await until(() => api.openWatches === 1, "watch");
      events.length = 0;
      const keptRef = inf.store.get("a/keep");

      // Disconnect, change things, and lose the history the watch would resume from.
      api.goneAs = goneAs;
      api.breakWatches();
      await until(() => api.openWatches === 0, "watch closed");
      api.update({ ...change, spec: { size: 2 } });
      api.delete("a/gone");
      api.create(widget("a", "new", 3));
      api.compact();
      const listsBefore = api.listCalls.length;
      await clock.advance(30_000); // past the reconnect backoff
      await until(() => events.length === 3, "relist events");

      assert.equal(api.listCalls.length, listsBefore + 1);
      assert.deepEqual(events.sort(), ["add:new:3", "delete:gone:7", "update:change:1->2"]);
      assert.equal(inf.store.get("a/keep"), keptRef, "unchanged object keeps its cached reference");
      assert.equal(keep.metadata.resourceVersion, inf.store.get("a/keep")?.metadata.resourceVersion);
    });
  }

  it("keeps watching when a handler throws, and still runs the other handlers", async () => {
    const inf = start();
    const events: Ev[] = [];
    inf.addEventHandler({
      onAdd() {
        throw new Error("handler bug");
      },
      onUpdate() {
        throw new Error("handler bug");
      },
    });
    inf.addEventHandler(recorder(inf, events));
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    const w = api.create(widget("a", "w1"));
    api.update({ ...w, spec: { size: 5 } });
    await until(() => events.length === 2, "events");
    assert.deepEqual(events, ["add:w1:1", "update:w1:1->5"]);
    assert.equal(api.watchCalls.length, 1, "the watch was not restarted");
  });

  it("resyncs every cached object as onUpdate(obj, obj) with no list or watch call", async () => {
    api.create(widget("a", "w1"));
    api.create(widget("a", "w2"));
    // A quiet watch outlives the jump in time (the real server sends bookmarks meanwhile).
    const inf = start({ inactivityTimeoutMs: DEFAULT_RESYNC_PERIOD_MS * 10 });
    const seen: [Readonly<Widget>, Readonly<Widget>][] = [];
    inf.addEventHandler({ onUpdate: (o, n) => seen.push([o, n]) });
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    const calls = api.listCalls.length + api.watchCalls.length;

    await clock.advance(DEFAULT_RESYNC_PERIOD_MS * 0.89);
    assert.equal(seen.length, 0, "no resync before the jittered period (±10%)");
    await clock.advance(DEFAULT_RESYNC_PERIOD_MS * 0.12);
    assert.equal(seen.length, 2);
    for (const [o, n] of seen) {
      assert.equal(o, n, "the same reference");
      assert.equal(n, inf.store.get(`a/${n.metadata.name}`));
    }
    assert.equal(api.listCalls.length + api.watchCalls.length, calls, "no request");
    await clock.advance(DEFAULT_RESYNC_PERIOD_MS * 1.1);
    assert.equal(seen.length, 4, "resync repeats");
  });

  it("disables resync with period 0", async () => {
    api.create(widget("a", "w1"));
    const inf = start({ resyncPeriodMs: 0 });
    let updates = 0;
    inf.addEventHandler({ onUpdate: () => updates++ });
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await clock.advance(DEFAULT_RESYNC_PERIOD_MS * 3);
    assert.equal(updates, 0);
  });

  it("replays cached objects to a late handler before returning, then streams changes", async () => {
    api.create(widget("a", "w1"));
    const inf = start();
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    const events: Ev[] = [];
    const reg = inf.addEventHandler(recorder(inf, events));
    assert.deepEqual(events, ["add:w1:1:initial"]);
    assert.equal(reg.hasSynced(), true);
    api.create(widget("a", "w2"));
    await until(() => events.length === 2, "event");
    reg.remove();
    api.create(widget("a", "w3"));
    await until(() => inf.store.get("a/w3") !== undefined, "w3 cached");
    assert.deepEqual(events, ["add:w1:1:initial", "add:w2:1"]);
  });

  it("reconnects at once from the last resourceVersion when the server ends a watch", async () => {
    const inf = start();
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    api.create(widget("a", "w1"));
    api.bookmark();
    await until(() => inf.store.get("a/w1") !== undefined, "w1");
    const rv = String(api.resourceVersion);
    api.closeWatches();
    await until(() => api.watchCalls.length === 2, "second watch");
    assert.equal(api.watchCalls[1]?.resourceVersion, rv);
    assert.equal(api.listCalls.length, 1, "no relist");
  });

  it("backs off after a broken watch, then resumes without losing events", async () => {
    const inf = start();
    const events: Ev[] = [];
    inf.addEventHandler(recorder(inf, events));
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    api.breakWatches();
    await until(() => api.openWatches === 0, "closed");
    api.create(widget("a", "during"));
    await clock.advance(700);
    assert.equal(api.watchCalls.length, 1, "still waiting (backoff starts at 800 ms)");
    await clock.advance(1000);
    await until(() => events.length === 1, "event after reconnect");
    assert.deepEqual(events, ["add:during:1"]);
    assert.equal(api.listCalls.length, 1);
  });

  it("aborts a silent watch after the inactivity timeout and reopens it", async () => {
    const inf = start({ inactivityTimeoutMs: 60_000 });
    running = inf.run(stop.signal);
    await inf.waitForCacheSync();
    await until(() => api.openWatches === 1, "watch");
    await clock.advance(30_000);
    api.bookmark(); // activity postpones the timeout
    await flushMicrotasks();
    await clock.advance(45_000);
    assert.equal(api.watchCalls.length, 1);
    await clock.advance(16_000);
    await until(() => api.openWatches === 0 || api.watchCalls.length === 2, "aborted");
    await clock.advance(30_000);
    await until(() => api.watchCalls.length === 2, "reopened");
    assert.equal(api.openWatches, 1);
  });

  it("retries a failed initial list with backoff and syncs afterwards", async () => {
    api.create(widget("a", "w1"));
    api.failNextLists(2);
    const inf = start();
    running = inf.run(stop.signal);
    await until(() => api.listCalls.length === 1, "first list");
    await clock.advance(1_200);
    await until(() => api.listCalls.length === 2, "second list");
    assert.equal(inf.hasSynced(), false);
    await clock.advance(2_400);
    assert.equal(await inf.waitForCacheSync(), true);
    assert.equal(api.listCalls.length, 3);
  });

  it("merges per-namespace reflectors into one store and relists each namespace on its own", async () => {
    const apis = new Map([
      ["a", new FakeApi<Widget>()],
      ["b", new FakeApi<Widget>()],
    ]);
    apis.get("a")?.create(widget("a", "x"));
    apis.get("b")?.create(widget("b", "y"));
    const inf = new SharedInformer<Widget>({
      resource: WIDGETS,
      namespaces: ["a", "b"],
      listerWatcherFor: (ns) => apis.get(ns ?? "") as FakeApi<Widget>,
      clock,
      registry: new Registry(),
    });
    const events: Ev[] = [];
    inf.addEventHandler(recorder(inf, events));
    running = inf.run(stop.signal);
    assert.equal(await inf.waitForCacheSync(), true);
    assert.deepEqual(inf.store.keys().sort(), ["a/x", "b/y"]);
    const a = apis.get("a") as FakeApi<Widget>;
    await until(() => a.openWatches === 1, "watch a");
    a.breakWatches();
    await until(() => a.openWatches === 0, "a closed");
    a.delete("a/x");
    a.compact();
    await clock.advance(30_000);
    await until(() => events.includes("delete:x:1"), "delete in a");
    assert.deepEqual(inf.store.keys(), ["b/y"], "namespace b untouched by a's relist");
    assert.deepEqual(
      events.filter((e) => e.startsWith("violation:")),
      [],
    );
  });

  it("reports not synced when stopped before the first list", async () => {
    api.failNextLists(100);
    const inf = start();
    running = inf.run(stop.signal);
    const waiting = inf.waitForCacheSync();
    stop.abort();
    assert.equal(await waiting, false);
    await running;
    await assert.rejects(inf.run(new AbortController().signal), /already started/);
  });
});
