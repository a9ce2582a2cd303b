/**
 * S3Bucket objectLock against moto: Object Lock goes with CreateBucket, its default retention is
 * written once, never re-sent at rest, repaired on drift with an Updated Event naming it, left
 * alone (not even read) once the spec drops it; a forced deletion of a bucket whose versions are
 * locked deletes nothing that is locked and waits with BucketObjectsLocked.
 *
 * moto honours x-amz-bypass-governance-retention as S3 does, so a GOVERNANCE-locked version
 * that survives forceDelete shows the operator never sent it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GetObjectLockConfigurationCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
} from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const locked = (bucket: string) => ({
  bucketName: bucket,
  versioning: true,
  objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
});

describe("S3Bucket objectLock", () => {
  const env = new S3Env("s3-object-lock").hooks();

  const lockConfig = async (bucket: string) =>
    (await env.s3().send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration;

  it("creates the bucket with Object Lock on and its default retention", async () => {
    await env.create("ledger", locked("ledger"));
    await env.waitReady("ledger");
    const cfg = await lockConfig("ledger");
    assert.equal(cfg?.ObjectLockEnabled, "Enabled");
    assert.equal(cfg?.Rule?.DefaultRetention?.Mode, "GOVERNANCE");
    assert.equal(cfg?.Rule?.DefaultRetention?.Days, 1);
    assert.equal(await env.versioning("ledger"), "Enabled");
    assert.equal(env.proxy.count("PutObjectLockConfiguration"), 1);
  });

  it("makes no Kubernetes write and no mutating AWS call at rest", async () => {
    await env.waitEvent("ledger", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetObjectLockConfiguration");
    await env.patch("ledger", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetObjectLockConfiguration") > reads, "the retention was read again");
  });

  it("repairs drift of the default retention with an Updated Event naming objectLock", async () => {
    await env.s3().send(
      new PutObjectLockConfigurationCommand({
        Bucket: "ledger",
        ObjectLockConfiguration: {
          ObjectLockEnabled: "Enabled",
          Rule: { DefaultRetention: { Mode: "GOVERNANCE", Days: 9 } },
        },
      }),
    );
    await waitFor(
      "retention repaired",
      async () => (await lockConfig("ledger"))?.Rule?.DefaultRetention?.Days === 1,
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming objectLock",
      async () =>
        (await env.events("ledger")).some(
          (e) =>
            e.reason === "Updated" &&
            /objectLock: defaultRetention GOVERNANCE 9 days -> GOVERNANCE 1 day/.test(e.message ?? ""),
        ),
      15_000,
      150,
    );
  });

  it("applies a change of the default retention", async () => {
    await env.patch("ledger", { spec: { objectLock: { defaultRetention: { days: null, years: 1 } } } });
    await waitFor(
      "one year",
      async () => {
        const d = (await lockConfig("ledger"))?.Rule?.DefaultRetention;
        return d?.Years === 1 && (d.Days ?? 0) === 0;
      },
      WAIT_MS,
      200,
    );
  });

  it("neither reads nor touches the retention once the spec drops it", async () => {
    await env.patch("ledger", { spec: { objectLock: { defaultRetention: null } } });
    await waitFor(
      "the spec without defaultRetention observed",
      async () => {
        const obj = await env.get("ledger");
        return obj?.status?.observedGeneration === obj?.metadata.generation;
      },
      WAIT_MS,
      200,
    );
    await env.waitReconciles(1);
    await env.s3().send(
      new PutObjectLockConfigurationCommand({
        Bucket: "ledger",
        ObjectLockConfiguration: {
          ObjectLockEnabled: "Enabled",
          Rule: { DefaultRetention: { Mode: "GOVERNANCE", Days: 3 } },
        },
      }),
    );
    const [reads, puts] = [
      env.proxy.count("GetObjectLockConfiguration"),
      env.proxy.count("PutObjectLockConfiguration"),
    ];
    await env.waitReconciles(3, "requeue_after");
    assert.equal(env.proxy.count("GetObjectLockConfiguration"), reads);
    assert.equal(env.proxy.count("PutObjectLockConfiguration"), puts);
    assert.equal((await lockConfig("ledger"))?.Rule?.DefaultRetention?.Days, 3);
  });

  it("never forces the deletion of locked versions: it waits with BucketObjectsLocked", async () => {
    await env.create("archive", { ...locked("archive"), forceDelete: true });
    await env.waitReady("archive");
    const s3 = env.s3();
    // Locked by the default retention (GOVERNANCE, 1 day).
    await s3.send(
      new PutObjectCommand({ Bucket: "archive", Key: "a.txt", Body: "kept", ChecksumAlgorithm: "CRC32" }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: "archive", Key: "b.txt", Body: "kept", ChecksumAlgorithm: "CRC32" }),
    );
    await env.delete("archive");
    const blocked = await env.waitReason("archive", "BucketObjectsLocked");
    const ready = blocked.status?.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "False");
    assert.match(ready?.message ?? "", /refused to delete 2 object versions of bucket archive: Object Lock/);
    assert.match(ready?.message ?? "", /never bypasses it/);
    await env.waitEvent("archive", "Warning", "BucketObjectsLocked");
    assert.ok(env.proxy.count("DeleteObjects") >= 1, "forceDelete tried");
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: "archive" }));
    assert.deepEqual(versions.Versions?.map((v) => v.Key).sort(), ["a.txt", "b.txt"]);
    assert.equal(await env.bucketExists("archive"), true);
    // Released without deleting anything once the object says to retain the bucket.
    await env.patch("archive", { spec: { deletionPolicy: "Retain" } });
    await env.waitGone("archive", 60_000);
    assert.equal(await env.bucketExists("archive"), true);
  });
});
