import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SqsQueue } from "../../api/v1/index.ts";
import { ObjectStore } from "../../runtime/cache/store.ts";
import { SqsAction } from "./model.ts";
import {
  DEAD_LETTER_QUEUE_INDEX,
  deadLetterQueueIndex,
  REDRIVE_SOURCE_INDEX,
  redriveSourceIndex,
  referrers,
  sqsQueueKind,
} from "./index.ts";

const queue = (ns: string, name: string, dlq?: string): SqsQueue =>
  ({
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { namespace: ns, name },
    spec: {
      region: "us-east-1",
      queueName: name,
      ...(dlq !== undefined ? { deadLetterQueue: { queueRef: { name: dlq }, maxReceiveCount: 3 } } : {}),
    },
  }) as SqsQueue;

describe("dead-letter queue referrers", () => {
  it("finds through the cache index exactly the queues of the namespace that name the queue", () => {
    const store = new ObjectStore<SqsQueue>();
    store.addIndexer(DEAD_LETTER_QUEUE_INDEX, deadLetterQueueIndex);
    for (const q of [
      queue("a", "jobs", "jobs-dlq"),
      queue("a", "mail", "jobs-dlq"),
      queue("a", "other", "other-dlq"),
      queue("a", "jobs-dlq"),
      queue("b", "jobs", "jobs-dlq"),
    ]) {
      store.set(q);
    }
    const byIndex = (key: string) => store.byIndex(DEAD_LETTER_QUEUE_INDEX, key);
    assert.deepEqual(
      referrers(byIndex, queue("a", "jobs-dlq")).sort((x, y) => x.name.localeCompare(y.name)),
      [
        { namespace: "a", name: "jobs" },
        { namespace: "a", name: "mail" },
      ],
    );
    assert.deepEqual(referrers(byIndex, queue("b", "jobs-dlq")), [{ namespace: "b", name: "jobs" }]);
    assert.deepEqual(referrers(byIndex, queue("a", "jobs")), []);
  });
});

describe("redrive source referrers", () => {
  it("finds the queues whose redrive allow policy names the changed queue", () => {
    const store = new ObjectStore<SqsQueue>();
    store.addIndexer(REDRIVE_SOURCE_INDEX, redriveSourceIndex);
    const dlq = (ns: string, name: string, sources: string[]): SqsQueue => {
      const q = queue(ns, name);
      return {
        ...q,
        spec: {
          ...q.spec,
          redriveAllowPolicy: {
            redrivePermission: "byQueue",
            sourceQueueRefs: sources.map((s) => ({ name: s })),
          },
        },
      };
    };
    for (const q of [
      dlq("a", "dlq", ["jobs", "mail"]),
      dlq("a", "other-dlq", ["mail"]),
      dlq("b", "dlq", ["jobs"]),
    ])
      store.set(q);
    const byIndex = (key: string) => store.byIndex(REDRIVE_SOURCE_INDEX, key);
    assert.deepEqual(referrers(byIndex, queue("a", "jobs")), [{ namespace: "a", name: "dlq" }]);
    assert.deepEqual(
      referrers(byIndex, queue("a", "mail"))
        .map((r) => r.name)
        .sort(),
      ["dlq", "other-dlq"],
    );
    assert.deepEqual(referrers(byIndex, queue("a", "dlq")), []);
  });
});

describe("the SqsQueue kind's IAM table", () => {
  it("names every action a plan or a create lists", () => {
    const actions = new Set(sqsQueueKind.iam.map((a) => a.action));
    for (const action of Object.values(SqsAction)) assert.ok(actions.has(action), action);
  });
});
