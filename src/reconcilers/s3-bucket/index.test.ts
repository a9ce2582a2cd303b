import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { S3Bucket } from "../../api/v1/index.ts";
import { ObjectStore } from "../../runtime/cache/store.ts";
import { referrers } from "../common/references.ts";
import {
  LOGGING_PEER_INDEX,
  loggingPeerIndex,
  NOTIFICATION_QUEUE_INDEX,
  notificationQueueIndex,
  REPLICATION_DESTINATION_INDEX,
  replicationDestinationIndex,
} from "./index.ts";

const bucket = (ns: string, name: string, spec: Partial<S3Bucket["spec"]> = {}): S3Bucket =>
  ({
    apiVersion: "compute.cloud.com/v1",
    kind: "S3Bucket",
    metadata: { namespace: ns, name },
    spec: { bucketName: name, region: "us-east-1", ...spec },
  }) as S3Bucket;
const other = (ns: string, name: string) => ({ metadata: { namespace: ns, name } });

describe("S3Bucket reference indexes", () => {
  const store = new ObjectStore<S3Bucket>();
  store.addIndexer(NOTIFICATION_QUEUE_INDEX, notificationQueueIndex);
  store.addIndexer(REPLICATION_DESTINATION_INDEX, replicationDestinationIndex);
  store.addIndexer(LOGGING_PEER_INDEX, loggingPeerIndex);
  const toQueue = (queue: string) =>
    ({ queues: [{ id: "n", events: ["s3:ObjectCreated:*"], queueRef: { name: queue } }] }) as never;
  for (const b of [
    bucket("a", "uploads", { notifications: toQueue("events") }),
    bucket("a", "arn-only", {
      notifications: {
        queues: [
          { id: "n", events: ["s3:ObjectCreated:*"], queueArn: "arn:aws:sqs:us-east-1:123456789012:events" },
        ],
      } as never,
    }),
    bucket("b", "uploads", { notifications: toQueue("events") }),
    bucket("a", "primary", {
      versioning: true,
      replication: {
        roleArn: "arn:aws:iam::123456789012:role/r",
        rules: [
          {
            id: "x",
            priority: 1,
            enabled: true,
            deleteMarkerReplication: false,
            destination: { bucketRef: { name: "replica" } },
          },
        ],
      },
    }),
    bucket("a", "site", { logging: { targetBucketRef: { name: "logs" }, targetPrefix: "" } }),
    bucket("a", "logs", { allowLoggingFrom: [{ bucketRef: { name: "site" } }] }),
  ]) {
    store.set(b);
  }

  it("finds the buckets whose notifications name a queue, in its namespace only", () => {
    const byIndex = (key: string) => store.byIndex(NOTIFICATION_QUEUE_INDEX, key);
    assert.deepEqual(referrers(byIndex, other("a", "events")), [{ namespace: "a", name: "uploads" }]);
    assert.deepEqual(referrers(byIndex, other("b", "events")), [{ namespace: "b", name: "uploads" }]);
    assert.deepEqual(referrers(byIndex, other("a", "arn-only")), []);
  });

  it("finds the buckets that replicate to a bucket", () => {
    const byIndex = (key: string) => store.byIndex(REPLICATION_DESTINATION_INDEX, key);
    assert.deepEqual(referrers(byIndex, other("a", "replica")), [{ namespace: "a", name: "primary" }]);
    assert.deepEqual(referrers(byIndex, other("a", "primary")), []);
  });

  it("links a logging source and its target both ways", () => {
    const byIndex = (key: string) => store.byIndex(LOGGING_PEER_INDEX, key);
    assert.deepEqual(referrers(byIndex, other("a", "logs")), [{ namespace: "a", name: "site" }]);
    assert.deepEqual(referrers(byIndex, other("a", "site")), [{ namespace: "a", name: "logs" }]);
  });
});
