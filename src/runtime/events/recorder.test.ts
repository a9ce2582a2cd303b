import { test } from "node:test";
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { ApiError } from "../kube/errors.ts";
import type { KubeRequester, RestRequest } from "../kube/rest.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { EventBroadcaster, type EventSubject } from "./recorder.ts";
import { metricValue } from "../testing/prometheus-text.ts";

interface StoredEvent {
  metadata: { name: string; namespace: string };
  involvedObject: Record<string, string>;
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host: string };
}

/** An in-memory core/v1 events endpoint. `failures` makes the next calls fail with 500. */
class FakeEvents implements KubeRequester {
  readonly events = new Map<string, StoredEvent>();
  readonly calls: RestRequest[] = [];
  failures = 0;
  failStatus = 500;
  async request<T>(req: RestRequest): Promise<T> {
    this.calls.push(req);
    await Promise.resolve();
    if (this.failures > 0) {
      this.failures--;
      throw new ApiError({ status: this.failStatus, reason: "Injected" });
    }
    if (req.method === "POST") {
      const ev = structuredClone(req.body) as StoredEvent;
      if (this.events.has(ev.metadata.name)) throw new ApiError({ status: 409, reason: "AlreadyExists" });
      this.events.set(ev.metadata.name, ev);
      return ev as T;
    }
    if (req.method === "PATCH") {
      const name = decodeURIComponent(req.path.split("/").at(-1) ?? "");
      const ev = this.events.get(name);
      if (ev === undefined) throw new ApiError({ status: 404, reason: "NotFound" });
      Object.assign(ev, req.body);
      return ev as T;
    }
    throw new Error(`unexpected ${req.method}`);
  }
  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }
}

const bucket: EventSubject = {
  apiVersion: "compute.cloud.com/v1",
  kind: "S3Bucket",
  metadata: { name: "logs", namespace: "team-a", uid: "uid-1", resourceVersion: "42" },
};

function setup(opts: { queueSize?: number } = {}) {
  const api = new FakeEvents();
  const clock = new FakeClock();
  const registry = new Registry();
  const b = new EventBroadcaster({ client: api, clock, registry, host: "node-1", ...opts });
  return { api, clock, registry, b, rec: b.recorderFor("s3bucket-controller") };
}

test("ten identical events become one Event with count 10", async () => {
  const { api, b, rec } = setup();
  for (let i = 0; i < 10; i++) rec.event(bucket, "Warning", "CreateFailed", "bucket name taken");
  await b.flush();
  assert.equal(api.events.size, 1);
  const [ev] = api.events.values();
  assert.equal(ev?.count, 10);
  assert.equal(api.count("POST"), 1);
  assert.equal(api.count("PATCH"), 9);
  assert.deepEqual(ev?.involvedObject, {
    apiVersion: "compute.cloud.com/v1",
    kind: "S3Bucket",
    name: "logs",
    namespace: "team-a",
    uid: "uid-1",
    resourceVersion: "42",
  });
  assert.equal(ev?.metadata.namespace, "team-a");
  assert.match(ev?.metadata.name ?? "", /^logs\.[0-9a-f]+$/);
  assert.deepEqual(ev?.source, { component: "s3bucket-controller", host: "node-1" });
  assert.equal(ev?.type, "Warning");
  assert.equal(ev?.reason, "CreateFailed");
});

test("events differing in type, reason, message or object are kept apart", async () => {
  const { api, b, rec } = setup();
  rec.event(bucket, "Normal", "Created", "created");
  rec.event(bucket, "Normal", "Created", "created again");
  rec.event(bucket, "Warning", "Created", "created");
  rec.event(
    { ...bucket, metadata: { ...bucket.metadata, name: "other", uid: "uid-2" } },
    "Normal",
    "Created",
    "created",
  );
  await b.flush();
  assert.equal(api.events.size, 4);
  assert.ok([...api.events.values()].every((e) => e.count === 1));
});

test("event() returns before any request and never throws", async () => {
  const { api, b, rec } = setup();
  rec.event(bucket, "Normal", "Created", "x");
  assert.equal(api.calls.length, 0, "nothing is sent inside the caller's stack");
  const broken = { apiVersion: "v1", kind: "Thing", metadata: {} } as EventSubject;
  assert.doesNotThrow(() => rec.event(broken, "Normal", "Odd", "no name, no namespace"));
  assert.doesNotThrow(() => rec.event(null as unknown as EventSubject, "Normal", "Null", "null object"));
  await b.flush();
  assert.equal(api.events.size, 2);
  assert.ok([...api.events.values()].some((e) => e.metadata.namespace === "default"));
});

test("a burst of 25 events per object is written, the rest is dropped until the bucket refills", async () => {
  const { api, b, clock, rec, registry } = setup();
  for (let i = 0; i < 30; i++) rec.event(bucket, "Normal", "Step", `step ${i}`);
  await b.flush();
  assert.equal(api.events.size, 25);
  assert.equal(
    metricValue(await registry.metrics(), "kubeprovisioner_events_dropped_total", { reason: "rate_limited" }),
    5,
  );
  await clock.advance(300_000);
  rec.event(bucket, "Normal", "Step", "after refill");
  rec.event(bucket, "Normal", "Step", "still limited");
  await b.flush();
  assert.equal(api.events.size, 26);
  const other = { ...bucket, metadata: { ...bucket.metadata, name: "b2", uid: "uid-9" } };
  rec.event(other, "Normal", "Step", "another object has its own bucket");
  await b.flush();
  assert.equal(api.events.size, 27);
});

test("a repeat after the aggregation window starts a new Event; an expired Event is re-created", async () => {
  const { api, b, clock, rec } = setup();
  rec.event(bucket, "Normal", "Synced", "in sync");
  await b.flush();
  await clock.advance(600_001);
  rec.event(bucket, "Normal", "Synced", "in sync");
  await b.flush();
  assert.equal(api.events.size, 2);
  // The server garbage-collects Events; the next repeat's PATCH gets 404 and creates anew.
  api.events.clear();
  rec.event(bucket, "Normal", "Synced", "in sync");
  await b.flush();
  assert.equal(api.events.size, 1);
  assert.equal([...api.events.values()][0]?.count, 1);
});

test("server errors are retried with backoff; client errors are not", async () => {
  const { api, b, clock, rec } = setup();
  api.failures = 2;
  rec.event(bucket, "Normal", "Created", "x");
  await clock.advance(1_000);
  await clock.advance(2_000);
  await b.flush();
  assert.equal(api.events.size, 1);
  assert.equal(api.count("POST"), 3);

  api.failStatus = 403;
  api.failures = 1;
  rec.event(bucket, "Normal", "Forbidden", "y");
  await b.flush();
  assert.equal(api.count("POST"), 4, "a 403 is not retried");
  assert.equal(api.events.size, 1);
});

test("a full queue drops new events instead of growing", async () => {
  const { api, b, rec, registry } = setup({ queueSize: 3 });
  for (let i = 0; i < 5; i++) rec.event(bucket, "Normal", "R", `m${i}`);
  await b.flush();
  assert.equal(api.events.size, 3);
  assert.equal(
    metricValue(await registry.metrics(), "kubeprovisioner_events_dropped_total", { reason: "queue_full" }),
    2,
  );
});

test("stopping writes what is queued, then refuses new events", async () => {
  const { api, b, rec } = setup();
  const stop = new AbortController();
  const running = b.start(stop.signal);
  rec.event(bucket, "Normal", "Created", "before stop");
  stop.abort();
  await running;
  assert.equal(api.events.size, 1);
  rec.event(bucket, "Normal", "Created", "after stop");
  await b.flush();
  assert.equal(api.events.size, 1);
});

test("long reasons and messages are truncated", async () => {
  const { api, b, rec } = setup();
  rec.event(bucket, "Normal", "R".repeat(300), "m".repeat(5000));
  await b.flush();
  const [ev] = api.events.values();
  assert.equal(ev?.reason.length, 128);
  assert.equal(ev?.message.length, 1024);
});
