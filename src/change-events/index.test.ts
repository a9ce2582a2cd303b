import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import type { AwsAccount } from "../api/v1/index.ts";
import type { AwsClientSource } from "../aws/clients.ts";
import { parseQueueAddress } from "../aws/queue-address.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import { s3BucketChangeEvents } from "../reconcilers/s3-bucket/change-events.ts";
import type { Client } from "../runtime/client/index.ts";
import type { InformerProvider } from "../runtime/controller/index.ts";
import type { Request } from "../runtime/controller/reconciler.ts";
import type { ResourceType } from "../runtime/kube/object.ts";
import { silentLogger } from "../runtime/logging.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { ChangeEvents } from "./index.ts";
import type { ChangeEventNaming } from "./naming.ts";
import { cloudTrailEvent } from "./testing/events.ts";

const OWN = "123456789012";
const BUCKETS: ResourceType = {
  group: "compute.cloud.com",
  version: "v1",
  plural: "s3buckets",
  kind: "S3Bucket",
  namespaced: true,
};
const NAMESPACES = "namespaces";

function bucket(name: string, bucketName: string): ManagedObject {
  return {
    metadata: { namespace: "ns", name },
    spec: { bucketName, region: "us-east-1" },
    status: { accountId: OWN },
  } as unknown as ManagedObject;
}

/** A cache with buckets and one namespace, and no AwsAccounts. */
function cache(objects: ManagedObject[]): Client {
  const resource = (type: ResourceType) => {
    const items: readonly unknown[] =
      type.plural === BUCKETS.plural
        ? objects
        : type.plural === NAMESPACES
          ? [{ metadata: { name: "ns" } }]
          : [];
    return {
      list: () => items,
      get: (key: string | { name: string }) =>
        items.find((o) => (o as ManagedObject).metadata.name === (typeof key === "string" ? key : key.name)),
      byIndex: (_index: string, value: string) =>
        objects.filter((o) => s3BucketChangeEvents.namesOf(o as never).includes(value)),
    };
  };
  return { resource } as unknown as Client;
}

const informers = {
  informerFor: () => ({
    addEventHandler: () => ({ remove() {} }),
    hasSynced: () => true,
    waitForCacheSync: () => Promise.resolve(true),
  }),
} as unknown as InformerProvider;

/** An SQS client whose ReceiveMessage fails once `failing` is set; other calls answer empty. */
function sqs(state: { failing: boolean; receives: number }): AwsClientSource {
  const client = {
    send: async (cmd: { constructor: { name: string } }) => {
      if (cmd.constructor.name === "ReceiveMessageCommand") {
        state.receives++;
        if (state.failing) throw new Error("AWS.SimpleQueueService.NonExistentQueue");
        await new Promise((r) => setTimeout(r, 5));
        return { Messages: [] };
      }
      if (cmd.constructor.name === "GetCallerIdentityCommand")
        return { Arn: `arn:aws:sts::${OWN}:assumed-role/kp/session-1` };
      return {};
    },
  };
  return { client: () => client } as unknown as AwsClientSource;
}

function hub(
  objects: ManagedObject[],
  state: { failing: boolean; receives: number },
  clock: FakeClock,
): ChangeEvents {
  return new ChangeEvents({
    kinds: [{ resource: BUCKETS, changeEvents: s3BucketChangeEvents as unknown as ChangeEventNaming }],
    client: cache(objects),
    informers,
    queue: parseQueueAddress(`https://sqs.us-east-1.amazonaws.com/${OWN}/events`),
    aws: sqs(state),
    accountClients: (_a: Readonly<AwsAccount>) => sqs(state),
    pollIntervalWithEventsMs: 3_600_000,
    pollIntervalMs: 60_000,
    region: "us-east-1",
    recorder: { event: () => undefined },
    pod: undefined,
    registry: new Registry(),
    logger: silentLogger,
    clock,
    receivers: 1,
  });
}

const put = (bucketName: string, caller?: { userAgent?: string; sessionName?: string; roleName?: string }) =>
  JSON.stringify(
    cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "PutBucketTagging",
      requestParameters: { bucketName },
      account: OWN,
      region: "us-east-1",
      ...(caller !== undefined ? { caller } : {}),
    }),
  );

describe("ChangeEvents", () => {
  it("enqueues the owner of an event's resource as a hint, and asks for a retry while no controller listens", () => {
    const events = hub([bucket("b", "bucket-b")], { failing: false, receives: 0 }, new FakeClock());
    const queue = "q";
    assert.deepEqual(events.handle(queue, put("bucket-b")), { outcome: "retry" });
    const got: Request[] = [];
    events.source(BUCKETS).attach((r) => got.push(r));
    assert.deepEqual(events.handle(queue, put("bucket-b")), { outcome: "enqueued" });
    assert.deepEqual(got, [{ namespace: "ns", name: "b" }]);
    const hint = events.takeHint(BUCKETS, "ns/b");
    assert.deepEqual(
      { caller: hint?.caller, eventName: hint?.eventName },
      { caller: `arn:aws:sts::${OWN}:assumed-role/Admin/someone@example.com`, eventName: "PutBucketTagging" },
      "the reconcile it causes observes afresh, and knows who made the change",
    );
    assert.equal(events.takeHint(BUCKETS, "ns/b"), undefined, "once");
    assert.deepEqual(events.handle(queue, put("nobody")), { outcome: "dropped", reason: "unowned" });
    assert.deepEqual(events.handle(queue, "{"), { outcome: "dropped", reason: "malformed" });
    assert.deepEqual(events.handle(queue, put("bucket-b", { userAgent: "aws-sdk-js/3 kubeprovisioner" })), {
      outcome: "dropped",
      reason: "own_call",
    });
    assert.equal(got.length, 1);
  });

  it("stretches polls while the queue is read, and falls back at once, spread over one poll interval", async () => {
    const clock = new FakeClock();
    const state = { failing: false, receives: 0 };
    const objects = Array.from({ length: 10 }, (_, i) => bucket(`b${i}`, `bucket-${i}`));
    const events = hub(objects, state, clock);
    const got: Request[] = [];
    events.source(BUCKETS).attach((r) => got.push(r));
    const first = objects[0] as ManagedObject;
    assert.equal(events.pollIntervalMs(first, 60_000), 60_000, "not read yet");
    const ac = new AbortController();
    const running = events.start(ac.signal);
    await waitUntil(() => state.receives > 0);
    assert.equal(events.pollIntervalMs(first, 60_000), 3_600_000);
    state.failing = true;
    await waitUntil(() => events.pollIntervalMs(first, 60_000) === 60_000);
    const atOnce = got.length;
    assert.ok(atOnce >= 1 && atOnce < 10, `a first slice at once, not all: ${atOnce}`);
    await clock.advance(60_000);
    assert.equal(got.length, 10, "every object within one poll interval");
    ac.abort();
    await running;
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), "condition reached");
}
