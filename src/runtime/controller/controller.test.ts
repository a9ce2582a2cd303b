import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import type { KubeObject } from "../kube/object.ts";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import { Controller } from "./controller.ts";
import { newControllerQueue } from "./queue.ts";
import { TerminalError, type Reconciler, type Result } from "./reconciler.ts";
import { ManualInformer } from "./testing.ts";
import { metricValue, registryValue } from "../testing/prometheus-text.ts";
import { obj, runUntil, setup, type Fn } from "./test-fixture.ts";

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
      await registryValue(s.registry, "controller_runtime_reconcile_total", {
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
      await registryValue(s.registry, "controller_runtime_reconcile_total", {
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
      await registryValue(s.registry, "controller_runtime_reconcile_total", {
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
      await registryValue(s.registry, "controller_runtime_reconcile_errors_total", { controller: "widget" }),
      1,
    );
    assert.equal(
      await registryValue(s.registry, "controller_runtime_reconcile_total", {
        controller: "widget",
        result: "error",
      }),
      1,
    );
    assert.equal(
      await registryValue(s.registry, "controller_runtime_terminal_reconcile_errors_total", {
        controller: "widget",
      }),
      0,
    );
    assert.equal(
      await registryValue(s.registry, "controller_runtime_reconcile_panics_total", { controller: "widget" }),
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
      await registryValue(s.registry, "controller_runtime_terminal_reconcile_errors_total", {
        controller: "widget",
      }),
      2,
    );
    assert.equal(
      await registryValue(s.registry, "controller_runtime_reconcile_errors_total", { controller: "widget" }),
      2,
    );
    assert.equal(
      await registryValue(s.registry, "controller_runtime_reconcile_total", {
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
      await registryValue(s.registry, "controller_runtime_reconcile_panics_total", { controller: "widget" }),
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
        await registryValue(s.registry, "controller_runtime_reconcile_total", {
          controller: "widget",
          result,
        }),
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
      assert.equal(await registryValue(s.registry, name, { controller: "widget" }), 0, name);
    }
    assert.equal(
      await registryValue(s.registry, "controller_runtime_max_concurrent_reconciles", {
        controller: "widget",
      }),
      3,
    );
    const text = await s.registry.metrics();
    assert.equal(
      metricValue(text, "controller_runtime_reconcile_time_seconds_count", { controller: "widget" }),
      0,
    );
    assert.equal(
      metricValue(text, "controller_runtime_reconcile_time_seconds_bucket", {
        le: "60",
        controller: "widget",
      }),
      0,
    );
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
    assert.equal(
      metricValue(text, "controller_runtime_reconcile_time_seconds_sum", { controller: "widget" }),
      0.25,
    );
    assert.equal(
      metricValue(text, "controller_runtime_reconcile_time_seconds_bucket", {
        le: "0.2",
        controller: "widget",
      }),
      0,
    );
    assert.equal(
      metricValue(text, "controller_runtime_reconcile_time_seconds_bucket", {
        le: "0.25",
        controller: "widget",
      }),
      1,
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
      await registryValue(s.registry, "controller_runtime_active_workers", { controller: "widget" }),
      3,
    );
    s.ac.abort();
    for (const r of release.splice(0)) r();
    await running;
    assert.equal(
      await registryValue(s.registry, "controller_runtime_active_workers", { controller: "widget" }),
      0,
    );
    assert.deepEqual(
      s.calls.map((c) => c.name),
      ["a", "b", "c"],
      "the key still queued at stop is not reconciled",
    );
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

describe("Controller reconcile causes", () => {
  /** A controller over a real delaying queue on a fake clock; `results` answers reconciles in turn. */
  function polling(results: (Result | Error | (() => Promise<Result>))[]) {
    const clock = new FakeClock();
    const registry = new Registry();
    const informer = new ManualInformer<KubeObject>();
    const causes: (string | undefined)[] = [];
    const queuedPolls: string[] = [];
    let i = 0;
    const reconciler: Reconciler = {
      pollQueued: (req) => queuedPolls.push(`${req.namespace ?? ""}/${req.name}`),
      reconcile: async (_req, ctx) => {
        causes.push(ctx.cause);
        const next = results[i++] ?? {};
        if (next instanceof Error) throw next;
        return typeof next === "function" ? await next() : next;
      },
    };
    const queue = newControllerQueue({ name: "widget", clock, registry });
    const controller = new Controller({ name: "widget", reconciler, queue, registry, clock }).for(informer);
    const ac = new AbortController();
    const running = controller.start(ac.signal);
    const settle = async (): Promise<void> => {
      for (let n = 0; n < 5; n++) await flushMicrotasks();
    };
    const stop = async (): Promise<void> => {
      ac.abort();
      await running;
    };
    return { clock, informer, causes, queuedPolls, settle, stop };
  }

  it("tells a reconcile it is a poll only when it comes back for the poll its last one asked for", async () => {
    const poll: Result = { requeueAfter: 1000, poll: true };
    const p = polling([poll, poll, { requeueAfter: 1000 }, poll]);
    p.informer.add(obj("a"));
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    assert.deepEqual(p.causes, ["work", "poll", "poll", "work"], "a requeue that is not a poll is work");
    await p.stop();
  });

  it("makes the next reconcile work when an event enqueues the key before its poll comes back", async () => {
    const poll: Result = { requeueAfter: 1000, poll: true };
    const p = polling([poll, poll, poll]);
    p.informer.add(obj("a"));
    await p.settle();
    p.informer.update(obj("a"), obj("a"));
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    assert.deepEqual(p.causes, ["work", "work", "poll"]);
    await p.stop();
  });

  it("makes the next reconcile work when an event arrives while the poll is being reconciled", async () => {
    let release!: () => void;
    const held = (): Promise<Result> =>
      new Promise((resolve) => (release = () => resolve({ requeueAfter: 1000, poll: true })));
    const p = polling([{ requeueAfter: 1000, poll: true }, held, { requeueAfter: 1000, poll: true }]);
    p.informer.add(obj("a"));
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    p.informer.update(obj("a"), obj("a"));
    release();
    await p.settle();
    assert.deepEqual(p.causes, ["work", "poll", "work"]);
    await p.stop();
  });

  it("tells the reconciles of the initial list they are polls, unless something else enqueued the key", async () => {
    const p = polling([{}, {}, {}]);
    p.informer.add(obj("a"), true);
    p.informer.add(obj("b"));
    p.informer.add(obj("c"), true);
    p.informer.update(obj("c"), obj("c"));
    await p.settle();
    assert.deepEqual(p.causes, ["poll", "work", "work"]);
    await p.stop();
  });

  it("tells the reconciler of each key the initial list enqueues as a poll, when it is enqueued", async () => {
    const p = polling([{}, {}, {}]);
    p.informer.add(obj("a"), true);
    p.informer.add(obj("b"));
    p.informer.add(obj("c"), true);
    assert.deepEqual(p.queuedPolls, ["ns/a", "ns/c"], "before any reconcile");
    await p.settle();
    await p.stop();
  });

  it("retries a failed poll as work", async () => {
    const p = polling([{ requeueAfter: 1000, poll: true }, new Error("boom"), {}]);
    p.informer.add(obj("a"));
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    await p.clock.advance(1000);
    await p.settle();
    assert.deepEqual(p.causes, ["work", "poll", "work"]);
    await p.stop();
  });
});
