import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import type { KubeObject } from "../kube/object.ts";
import { Controller, type ControllerOptions } from "./controller.ts";
import { CacheSyncTimeoutError, ControllerStartedError } from "./errors.ts";
import {
  TerminalError,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "./reconciler.ts";
import { ManualInformer, RecordingQueue } from "./testing.ts";

type Fn = (req: Request, ctx: ReconcileContext) => Promise<Result>;

function obj(name: string, namespace = "ns"): KubeObject {
  return { metadata: { name, namespace, resourceVersion: "1", generation: 1 } };
}

/** A controller over a RecordingQueue and a synced ManualInformer, with an isolated registry. */
function setup(fn: Fn, extra: Partial<ControllerOptions> = {}) {
  const queue = new RecordingQueue();
  const registry = new Registry();
  const clock = new FakeClock();
  const informer = new ManualInformer<KubeObject>();
  const calls: Request[] = [];
  const reconciler: Reconciler = {
    reconcile: (req, ctx) => {
      calls.push(req);
      return fn(req, ctx);
    },
  };
  const controller = new Controller({ name: "widget", reconciler, queue, registry, clock, ...extra }).for(
    informer,
  );
  const ac = new AbortController();
  return { queue, registry, clock, informer, calls, controller, ac };
}

async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const data = await metric.get();
  const found = data.values.find(
    (v) =>
      Object.entries(labels).every(([k, val]) => v.labels[k] === val) && !("le" in v.labels && !labels["le"]),
  );
  return found?.value;
}

/** Runs the controller until `cond` holds, then stops it and waits for start() to settle. */
async function runUntil(s: ReturnType<typeof setup>, cond: () => boolean): Promise<void> {
  const running = s.controller.start(s.ac.signal);
  for (let i = 0; i < 200 && !cond(); i++) await flushMicrotasks();
  assert.ok(cond(), "condition not reached");
  s.ac.abort();
  await running;
}

describe("Controller result rules", () => {
  it("forgets the key and calls done after a successful reconcile", async () => {
    const s = setup(async () => ({}));
    s.informer.add(obj("a"));
    await runUntil(s, () => s.queue.ops.includes("done ns/a"));
    assert.deepEqual(s.calls, [{ namespace: "ns", name: "a" }]);
    assert.deepEqual(
      s.queue.ops.filter((o) => !o.startsWith("add ")),
      ["forget ns/a", "done ns/a"],
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "success",
      }),
      1,
    );
  });

  it("forgets then adds after the delay when the result asks for requeueAfter", async () => {
    const s = setup(async () => ({ requeueAfter: 1500 }));
    s.informer.add(obj("a"));
    await runUntil(s, () => s.queue.ops.includes("done ns/a"));
    assert.deepEqual(
      s.queue.ops.filter((o) => !o.startsWith("add ")),
      ["forget ns/a", "addAfter ns/a 1500", "done ns/a"],
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "requeue_after",
      }),
      1,
    );
  });

  it("treats a zero, negative or non-finite requeueAfter, and an undefined result, as plain success", async () => {
    const results: unknown[] = [
      { requeueAfter: 0 },
      { requeueAfter: -5 },
      { requeueAfter: Number.NaN },
      undefined,
    ];
    let i = 0;
    const s = setup(async () => results[i++] as Result);
    for (const n of ["a", "b", "c", "d"]) s.informer.add(obj(n));
    await runUntil(s, () => s.queue.ops.includes("done ns/d"));
    assert.equal(s.queue.ops.filter((o) => o.startsWith("addAfter")).length, 0);
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "success",
      }),
      4,
    );
  });

  it("adds the key rate-limited, without forgetting it, when the reconcile throws", async () => {
    const s = setup(async () => {
      throw new Error("AWS said no");
    });
    s.informer.add(obj("a"));
    await runUntil(s, () => s.queue.ops.includes("done ns/a"));
    assert.deepEqual(
      s.queue.ops.filter((o) => !o.startsWith("add ")),
      ["addRateLimited ns/a", "done ns/a"],
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_errors_total", { controller: "widget" }),
      1,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "error",
      }),
      1,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_terminal_reconcile_errors_total", {
        controller: "widget",
      }),
      0,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_panics_total", { controller: "widget" }),
      0,
    );
  });

  it("does not retry a TerminalError, direct or wrapped, and counts it", async () => {
    const s = setup(async (req) => {
      if (req.name === "a") throw new TerminalError("bad spec");
      throw new Error("while validating", { cause: new TerminalError("bad spec") });
    });
    s.informer.add(obj("a"));
    s.informer.add(obj("b"));
    await runUntil(s, () => s.queue.ops.includes("done ns/b"));
    assert.equal(
      s.queue.ops.filter((o) => o.startsWith("addRateLimited") || o.startsWith("forget")).length,
      0,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_terminal_reconcile_errors_total", {
        controller: "widget",
      }),
      2,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_errors_total", { controller: "widget" }),
      2,
    );
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "error",
      }),
      2,
    );
  });

  it("counts a programming error as a panic and retries it", async () => {
    const s = setup(async () => {
      const missing = undefined as unknown as { spec: { size: number } };
      return { requeueAfter: missing.spec.size };
    });
    s.informer.add(obj("a"));
    await runUntil(s, () => s.queue.ops.includes("done ns/a"));
    assert.ok(s.queue.ops.includes("addRateLimited ns/a"));
    assert.equal(
      await metricValue(s.registry, "controller_runtime_reconcile_panics_total", { controller: "widget" }),
      1,
    );
  });

  it("calls done and keeps working when the queue itself throws while applying a result", async () => {
    const s = setup(async (req) => {
      if (req.name === "a") throw new Error("fail");
      return {};
    });
    s.queue.failOn.addRateLimited = new Error("queue broken");
    s.informer.add(obj("a"));
    s.informer.add(obj("b"));
    await runUntil(s, () => s.queue.ops.includes("done ns/b"));
    assert.ok(s.queue.ops.includes("done ns/a"), "done was skipped for the key whose result handling threw");
    assert.deepEqual(
      s.calls.map((c) => c.name),
      ["a", "b"],
    );
  });

  it("calls done when the reconciler throws synchronously instead of rejecting", async () => {
    const s = setup((() => {
      throw new Error("sync throw");
    }) as Fn);
    s.informer.add(obj("a"));
    await runUntil(s, () => s.queue.ops.includes("done ns/a"));
    assert.ok(s.queue.ops.includes("addRateLimited ns/a"));
  });
});

describe("Controller metrics", () => {
  it("initialises every series to its starting value at construction", async () => {
    const s = setup(async () => ({}), { maxConcurrentReconciles: 3 });
    for (const result of ["success", "error", "requeue", "requeue_after"]) {
      assert.equal(
        await metricValue(s.registry, "controller_runtime_reconcile_total", { controller: "widget", result }),
        0,
        result,
      );
    }
    for (const name of [
      "controller_runtime_reconcile_errors_total",
      "controller_runtime_terminal_reconcile_errors_total",
      "controller_runtime_reconcile_panics_total",
      "controller_runtime_active_workers",
    ]) {
      assert.equal(await metricValue(s.registry, name, { controller: "widget" }), 0, name);
    }
    assert.equal(
      await metricValue(s.registry, "controller_runtime_max_concurrent_reconciles", { controller: "widget" }),
      3,
    );
    const text = await s.registry.metrics();
    assert.match(text, /controller_runtime_reconcile_time_seconds_count\{controller="widget"\} 0/);
    assert.match(text, /controller_runtime_reconcile_time_seconds_bucket\{le="60",controller="widget"\} 0/);
  });

  it("observes the reconcile duration measured on the injected clock", async () => {
    const s = setup(async () => {
      await s.clock.sleep(250);
      return {};
    });
    s.informer.add(obj("a"));
    const running = s.controller.start(s.ac.signal);
    await flushMicrotasks();
    await s.clock.advance(250);
    await flushMicrotasks();
    s.ac.abort();
    await running;
    const text = await s.registry.metrics();
    assert.match(text, /controller_runtime_reconcile_time_seconds_sum\{controller="widget"\} 0\.25/);
    assert.match(text, /controller_runtime_reconcile_time_seconds_bucket\{le="0\.2",controller="widget"\} 0/);
    assert.match(
      text,
      /controller_runtime_reconcile_time_seconds_bucket\{le="0\.25",controller="widget"\} 1/,
    );
  });

  it("reports active workers while reconciles run", async () => {
    const release: (() => void)[] = [];
    const s = setup(() => new Promise<Result>((resolve) => release.push(() => resolve({}))), {
      maxConcurrentReconciles: 3,
    });
    for (const n of ["a", "b", "c", "d"]) s.informer.add(obj(n));
    const running = s.controller.start(s.ac.signal);
    for (let i = 0; i < 20 && release.length < 3; i++) await flushMicrotasks();
    assert.equal(release.length, 3, "three workers run three reconciles at once");
    assert.equal(s.controller.activeReconciles, 3);
    assert.equal(
      await metricValue(s.registry, "controller_runtime_active_workers", { controller: "widget" }),
      3,
    );
    s.ac.abort();
    for (const r of release.splice(0)) r();
    await running;
    assert.equal(
      await metricValue(s.registry, "controller_runtime_active_workers", { controller: "widget" }),
      0,
    );
    assert.deepEqual(
      s.calls.map((c) => c.name),
      ["a", "b", "c"],
      "the key still queued at stop is not reconciled",
    );
  });
});

describe("Controller lifecycle", () => {
  it("starts no reconcile before every source has synced", async () => {
    const s = setup(async () => ({}));
    const late = new ManualInformer<KubeObject>({ synced: false });
    s.controller.owns(late, "Widget");
    s.informer.add(obj("a"));
    const running = s.controller.start(s.ac.signal);
    await flushMicrotasks();
    assert.equal(s.calls.length, 0);
    assert.equal(s.queue.len(), 1, "events are queued while waiting");
    late.markSynced();
    for (let i = 0; i < 20 && s.calls.length === 0; i++) await flushMicrotasks();
    assert.equal(s.calls.length, 1);
    s.ac.abort();
    await running;
  });

  it("rejects with CacheSyncTimeoutError when a cache does not sync in time", async () => {
    const s = setup(async () => ({}), { cacheSyncTimeout: 5000 });
    s.controller.owns(new ManualInformer<KubeObject>({ synced: false }), "Widget");
    const running = s.controller.start(s.ac.signal);
    await s.clock.advance(4999);
    let settled = false;
    void running.then(
      () => (settled = true),
      () => (settled = true),
    );
    await flushMicrotasks();
    assert.equal(settled, false);
    await s.clock.advance(1);
    await assert.rejects(running, CacheSyncTimeoutError);
    assert.equal(s.calls.length, 0);
  });

  it("resolves without starting workers when stopped while waiting for sync", async () => {
    const s = setup(async () => ({}));
    s.controller.owns(new ManualInformer<KubeObject>({ synced: false }), "Widget");
    s.informer.add(obj("a"));
    const running = s.controller.start(s.ac.signal);
    await flushMicrotasks();
    s.ac.abort();
    await running;
    assert.equal(s.calls.length, 0);
  });

  it("lets an in-flight reconcile finish before start resolves", async () => {
    let release: (() => void) | undefined;
    let finished = false;
    const s = setup(
      () =>
        new Promise<Result>((resolve) => {
          release = () => {
            finished = true;
            resolve({});
          };
        }),
    );
    s.informer.add(obj("a"));
    const running = s.controller.start(s.ac.signal);
    for (let i = 0; i < 20 && release === undefined; i++) await flushMicrotasks();
    s.ac.abort();
    let resolved = false;
    void running.then(() => (resolved = true));
    await flushMicrotasks();
    assert.equal(resolved, false, "start resolved while a reconcile was still running");
    release?.();
    await running;
    assert.ok(finished);
    assert.ok(s.queue.ops.includes("done ns/a"));
  });

  it("aborts the reconcile signal and resolves when the graceful timeout expires", async () => {
    let seen: AbortSignal | undefined;
    const s = setup(
      (_req, ctx) => {
        seen = ctx.signal;
        return new Promise<Result>(() => {});
      },
      { gracefulShutdownTimeout: 10_000 },
    );
    s.informer.add(obj("a"));
    const running = s.controller.start(s.ac.signal);
    for (let i = 0; i < 20 && seen === undefined; i++) await flushMicrotasks();
    assert.ok(seen);
    s.ac.abort();
    await s.clock.advance(9_999);
    assert.equal(seen.aborted, false, "the reconcile is not cut short as soon as stop begins");
    await s.clock.advance(1);
    await running;
    assert.equal(seen.aborted, true);
  });

  it("registers its handlers on start and removes them once stopped", async () => {
    const s = setup(async () => ({}));
    assert.equal(s.informer.handlers.length, 0, "no handler before start: a non-leader queues nothing");
    const running = s.controller.start(s.ac.signal);
    await flushMicrotasks();
    assert.equal(s.informer.handlers.length, 1);
    s.ac.abort();
    await running;
    assert.equal(s.informer.handlers.length, 0);
  });

  it("refuses to start twice or to take a source after start", async () => {
    const s = setup(async () => ({}));
    s.ac.abort();
    await s.controller.start(s.ac.signal);
    await assert.rejects(s.controller.start(s.ac.signal), ControllerStartedError);
    assert.throws(() => s.controller.for(new ManualInformer<KubeObject>()), ControllerStartedError);
  });

  it("rejects a non-positive worker count", () => {
    assert.throws(() => setup(async () => ({}), { maxConcurrentReconciles: 0 }), TypeError);
  });

  it("is a leader-only runnable named after the controller", () => {
    const s = setup(async () => ({}));
    assert.equal(s.controller.needLeaderElection, true);
    assert.equal(s.controller.name, "widget");
  });
});

describe("Controller logging", () => {
  it("gives each reconcile a child logger with controller, namespace, name and a fresh reconcileId", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        cb();
      },
    });
    const logger = pino({ level: "info" }, sink);
    const s = setup(
      async (_req, ctx) => {
        ctx.logger.info({ reconcileIdSeen: ctx.reconcileId }, "inside");
        return {};
      },
      { logger },
    );
    s.informer.add(obj("a"));
    s.informer.add(obj("b", "other"));
    await runUntil(s, () => s.queue.ops.includes("done other/b"));
    await flushMicrotasks();
    const inside = lines.filter((l) => l["msg"] === "inside");
    assert.equal(inside.length, 2);
    assert.deepEqual(
      inside.map((l) => [l["controller"], l["namespace"], l["name"]]),
      [
        ["widget", "ns", "a"],
        ["widget", "other", "b"],
      ],
    );
    for (const l of inside) {
      assert.equal(typeof l["reconcileId"], "string");
      assert.equal(l["reconcileId"], l["reconcileIdSeen"]);
    }
    assert.notEqual(inside[0]?.["reconcileId"], inside[1]?.["reconcileId"]);
  });
});

describe("Controller with its default rate-limiting queue", () => {
  it("retries failures with per-key backoff, polls on requeueAfter, and drops terminal errors", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const informer = new ManualInformer<KubeObject>();
    const runs: Record<string, number[]> = { flaky: [], poll: [], bad: [] };
    const controller = new Controller({
      name: "default-queue",
      registry,
      clock,
      reconciler: {
        async reconcile(req) {
          const list = runs[req.name];
          list?.push(clock.now());
          if (req.name === "flaky" && (list?.length ?? 0) <= 3) throw new Error("transient");
          if (req.name === "poll") return { requeueAfter: 60_000 };
          if (req.name === "bad") throw new TerminalError("invalid spec");
          return {};
        },
      },
    }).for(informer);
    for (const n of ["flaky", "poll", "bad"]) informer.add(obj(n));
    const ac = new AbortController();
    const running = controller.start(ac.signal);
    const t0 = clock.now();
    await flushMicrotasks();
    await clock.advance(200_000);
    ac.abort();
    await running;
    const rel = (name: string): number[] => (runs[name] ?? []).map((t) => t - t0);
    // Failures back off 5, 10, 20 ms; the fourth run succeeds and nothing follows.
    assert.deepEqual(rel("flaky"), [0, 5, 15, 35]);
    // A successful poll comes back every 60 s, with no backoff added.
    assert.deepEqual(rel("poll"), [0, 60_000, 120_000, 180_000]);
    assert.deepEqual(rel("bad"), [0], "a terminal error was retried");
  });
});
