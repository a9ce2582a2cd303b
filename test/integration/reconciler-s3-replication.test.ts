/**
 * S3Bucket replication against moto, to a destination named by reference: the source waits
 * while the destination bucket does not set versioning (ReplicationDestinationNotVersioned) or
 * does not exist (ReplicationDestinationNotReady), then gets its configuration with the
 * destination's ARN; no-op at rest, drift repaired with an Updated Event, and a configuration the
 * spec no longer sets left alone.
 *
 * Where moto differs from AWS: moto's GetBucketReplication reports every rule with an empty
 * prefix filter and delete marker replication Disabled, whatever was put, so a rule with a
 * prefix or deleteMarkerReplication: true would look drifted on every poll there (AWS reports
 * them as put). These tests use rules without either.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DeleteBucketReplicationCommand, GetBucketReplicationCommand } from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const ROLE = "arn:aws:iam::123456789012:role/s3-replication";

const replicated = (destination: string) => ({
  versioning: true,
  replication: {
    roleArn: ROLE,
    rules: [
      {
        id: "everything",
        priority: 1,
        destination: { bucketRef: { name: destination }, storageClass: "STANDARD_IA" },
      },
    ],
  },
});

describe("S3Bucket replication to a bucket by reference", () => {
  const env = new S3Env("s3-replication").hooks();

  it("waits for the destination's versioning, then replicates to its ARN", async () => {
    await env.create("replica", { bucketName: "replica" });
    await env.waitReady("replica");
    await env.create("primary", { bucketName: "primary", ...replicated("replica") });
    const waiting = await env.waitReason("primary", "ReplicationDestinationNotVersioned");
    assert.equal(ready(waiting)?.status, "False");
    assert.match(
      ready(waiting)?.message ?? "",
      /the destination bucket replica does not set versioning: true/,
    );
    assert.equal(
      await env.bucketExists("primary"),
      false,
      "nothing is created before the destination is ready",
    );

    await env.patch("replica", { spec: { versioning: true } });
    await env.waitReady("primary");
    assert.equal(await env.versioning("replica"), "Enabled");
    assert.equal(await env.versioning("primary"), "Enabled");
    const r = await env.s3().send(new GetBucketReplicationCommand({ Bucket: "primary" }));
    assert.equal(r.ReplicationConfiguration?.Role, ROLE);
    const rule = r.ReplicationConfiguration?.Rules?.[0];
    assert.equal(r.ReplicationConfiguration?.Rules?.length, 1);
    assert.equal(rule?.ID, "everything");
    assert.equal(rule?.Priority, 1);
    assert.equal(rule?.Status, "Enabled");
    assert.equal(rule?.Destination?.Bucket, "arn:aws:s3:::replica");
    assert.equal(rule?.Destination?.StorageClass, "STANDARD_IA");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("primary", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetBucketReplication");
    await env.patch("primary", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketReplication") > reads, "the replication was read again");
  });

  it("repairs a replication configuration deleted out of band, with an Updated Event", async () => {
    await env.s3().send(new DeleteBucketReplicationCommand({ Bucket: "primary" }));
    await waitFor(
      "replication back",
      async () => {
        try {
          const r = await env.s3().send(new GetBucketReplicationCommand({ Bucket: "primary" }));
          return r.ReplicationConfiguration?.Rules?.[0]?.Destination?.Bucket === "arn:aws:s3:::replica";
        } catch {
          return false;
        }
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming replication",
      async () =>
        (await env.events("primary")).some(
          (e) => e.reason === "Updated" && /replication: 1 rule/.test(e.message),
        ),
      15_000,
      150,
    );
  });

  it("waits for a destination that does not exist", async () => {
    await env.create("orphan", { bucketName: "orphan", ...replicated("nowhere") });
    const waiting = await env.waitReason("orphan", "ReplicationDestinationNotReady");
    assert.match(ready(waiting)?.message ?? "", /the bucket nowhere does not exist/);
    await env.delete("orphan");
    await env.waitGone("orphan");
  });

  it("leaves the replication alone once the spec no longer sets it", async () => {
    await env.patch("primary", { spec: { replication: null } });
    await env.waitUntil(
      "primary",
      "generation reconciled",
      (o) => o?.status?.observedGeneration === o?.metadata.generation,
    );
    const [reads, puts] = [env.proxy.count("GetBucketReplication"), env.proxy.count("PutBucketReplication")];
    await env.waitReconciles(3, "requeue_after");
    assert.equal(env.proxy.count("PutBucketReplication"), puts);
    assert.equal(env.proxy.count("GetBucketReplication"), reads, "not read any more");
    const r = await env.s3().send(new GetBucketReplicationCommand({ Bucket: "primary" }));
    assert.equal(r.ReplicationConfiguration?.Rules?.length, 1, "left as it was");
  });
});
