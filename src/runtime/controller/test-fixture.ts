/**
 * Shared set-up of the controller unit tests: a controller over a RecordingQueue and a synced
 * ManualInformer, with an isolated registry and a fake clock.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import type { KubeObject } from "../kube/object.ts";
import { Controller, type ControllerOptions } from "./controller.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "./reconciler.ts";
import { ManualInformer, RecordingQueue } from "./testing.ts";

export type Fn = (req: Request, ctx: ReconcileContext) => Promise<Result>;

export function obj(name: string, namespace = "ns"): KubeObject {
  return { metadata: { name, namespace, resourceVersion: "1", generation: 1 } };
}

export function setup(fn: Fn, extra: Partial<ControllerOptions> = {}) {
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

/** Runs the controller until `cond` holds, then stops it and waits for start() to settle. */
export async function runUntil(s: ReturnType<typeof setup>, cond: () => boolean): Promise<void> {
  const running = s.controller.start(s.ac.signal);
  for (let i = 0; i < 200 && !cond(); i++) await flushMicrotasks();
  assert.ok(cond(), "condition not reached");
  s.ac.abort();
  await running;
}
