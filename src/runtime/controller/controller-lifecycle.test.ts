import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import type { KubeObject } from "../kube/object.ts";
import { Controller } from "./controller.ts";
import { CacheSyncTimeoutError, ControllerStartedError } from "./errors.ts";
import { TerminalError, type Result } from "./reconciler.ts";
import { obj, setup } from "./test-fixture.ts";
import { ManualInformer } from "./testing.ts";

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
