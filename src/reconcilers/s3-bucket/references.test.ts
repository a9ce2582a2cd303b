import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SqsQueue } from "../../api/v1/index.ts";
import { DependencyNotReadyError, InvalidSpecError } from "../common/driver.ts";
import { resolveReferences } from "./references.ts";
import { bucketObject } from "./testing/objects.ts";

const ARN = "arn:aws:sqs:eu-west-1:123456789012:events";

/** The SqsQueue `team/events`: standard, in eu-west-1, letting `assets` notify it, Ready and Synced. */
function queue(over: Partial<SqsQueue["spec"]> = {}, ready = true): SqsQueue {
  const condition = (type: string) => ({
    type,
    status: ready ? "True" : "False",
    reason: ready ? "Available" : "Creating",
    message: "",
    lastTransitionTime: "2026-01-01T00:00:00Z",
    observedGeneration: 1,
  });
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { namespace: "team", name: "events", generation: 1 },
    spec: {
      queueName: "events",
      region: "eu-west-1",
      fifo: false,
      allowS3Notifications: [{ bucketRef: { name: "assets" } }],
      ...over,
    } as SqsQueue["spec"],
    status: { queueArn: ARN, observedGeneration: 1, conditions: [condition("Ready"), condition("Synced")] },
  } as SqsQueue;
}

const notifying = bucketObject({
  notifications: { queues: [{ id: "n", events: ["s3:ObjectCreated:*"], queueRef: { name: "events" } }] },
} as never);

describe("S3Bucket references", () => {
  it("resolves a notification queueRef to the ARN of a Ready queue that allows the bucket, from the cache", () => {
    const seen: unknown[] = [];
    const resolved = resolveReferences(notifying, {
      queues: (ref) => {
        seen.push(ref);
        return queue();
      },
    });
    assert.deepEqual(seen, [{ namespace: "team", name: "events" }]);
    assert.deepEqual([...(resolved.queueArns ?? [])], [["events", ARN]]);
    assert.deepEqual([...(resolved.bucketArns ?? [])], []);
  });

  it("waits for a queue that is missing, not Ready or not allowing the bucket, or whose controller is not run", () => {
    const reasonOf = (lookups: Parameters<typeof resolveReferences>[1]): string => {
      try {
        resolveReferences(notifying, lookups);
      } catch (err) {
        assert.ok(err instanceof DependencyNotReadyError);
        return err.reason;
      }
      return assert.fail("resolved");
    };
    assert.equal(reasonOf({}), "NotificationTargetNotReady");
    assert.equal(reasonOf({ queues: () => queue({}, false) }), "NotificationTargetNotReady");
    assert.equal(
      reasonOf({ queues: () => queue({ allowS3Notifications: [] }) }),
      "NotificationTargetNotReady",
    );
    assert.equal(reasonOf({ queues: () => queue(), queuesRun: false }), "ReferencedKindNotRunning");
  });

  it("refuses a queue that can never serve: another region or a FIFO queue", () => {
    assert.throws(() => resolveReferences(notifying, { queues: () => queue({ region: "us-east-1" }) }), {
      name: InvalidSpecError.name,
      reason: "NotificationTargetMismatch",
    });
    assert.throws(() => resolveReferences(notifying, { queues: () => queue({ fifo: true }) }), {
      name: InvalidSpecError.name,
      reason: "NotificationTargetMismatch",
    });
  });

  it("resolves nothing for a bucket that names no other object", () => {
    assert.deepEqual(resolveReferences(bucketObject(), {}), { queueArns: new Map(), bucketArns: new Map() });
  });
});
