/**
 * The S3Bucket reconciler end to end: the operator run from its sources (`node src/main.ts`, as
 * `make dev` runs it, where the other files run the bundle under `make test`) against a real
 * kube-apiserver and moto, every AWS call of the operator going through a counting proxy.
 * Lifecycle: create outside and inside us-east-1, a no-op second reconcile, tag and versioning
 * drift, out-of-band deletion (Recreate and Report), deletion blocked by objects, forceDelete,
 * and Retain.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { SOURCE_PROGRAM } from "../support/operator-program.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const EU = "eu-west-1";

describe("S3Bucket reconciler: lifecycle", () => {
  const env = new S3Env("s3-lifecycle", { operatorEntry: SOURCE_PROGRAM }).hooks();

  it("creates a versioned bucket outside us-east-1 and reports Ready with the status columns filled", async () => {
    await env.create("assets", { region: EU, versioning: true, tags: { env: "prod" } });
    const obj = await env.waitReady("assets");
    assert.equal(obj.status?.bucketArn, "arn:aws:s3:::assets");
    assert.equal(obj.status?.endpoint, `${env.proxy.endpoint}/assets`);
    assert.equal(obj.status?.region, EU);
    assert.equal(obj.status?.state, "Available");
    assert.equal(obj.status?.createAttempt, 1);
    const loc = await env.s3(EU).send(new GetBucketLocationCommand({ Bucket: "assets" }));
    assert.equal(loc.LocationConstraint, EU);
    const tags = await env.bucketTags("assets", EU);
    assert.equal(tags.env, "prod");
    assert.equal(tags[OWNERSHIP_TAGS.uid], obj.metadata.uid);
    assert.equal(tags[OWNERSHIP_TAGS.kind], "S3Bucket");
    assert.equal(await env.versioning("assets", EU), "Enabled");
    assert.equal(env.proxy.count("CreateBucket"), 1);
    const { stdout } = await env.cp.kubectl(["get", "s3b", "assets", "-n", env.ns, "--no-headers"]);
    assert.deepEqual(stdout.trim().split(/\s+/).slice(0, 5), [
      "assets",
      "assets",
      "Available",
      `${env.proxy.endpoint}/assets`,
      "True",
    ]);
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("assets", "Normal", "Created");
    await env.waitReconciles(1); // the writes of the create have settled
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetBucketTagging");
    const bumped = await env.patch("assets", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal((await env.get("assets"))?.metadata.resourceVersion, bumped.metadata.resourceVersion);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketTagging") > reads, "the no-op reconciles looked at the bucket");
  });

  it("polls a settled bucket with two S3 calls, tags and versioning, and no HeadBucket", async () => {
    await env.waitReconciles(1);
    const calls = env.proxy.calls.length;
    const reconciles = await env.reconciles();
    await env.waitReconciles(3); // poll rounds (--poll-interval=1s)
    const polled = env.proxy.calls.slice(calls).map((c) => c.operation);
    const rounds = (await env.reconciles()) - reconciles;
    assert.equal(polled.filter((op) => op === "HeadBucket").length, 0, polled.join(" "));
    assert.ok(
      polled.length <= 2 * rounds,
      `${polled.length} calls in ${rounds} reconciles: ${polled.join(" ")}`,
    );
    assert.ok(
      polled.includes("GetBucketTagging") && polled.includes("GetBucketVersioning"),
      polled.join(" "),
    );
  });

  it("repairs tag drift and versioning drift", async () => {
    const s3 = env.s3(EU);
    // An out-of-band tag edit that keeps the ownership tags (one that strips them makes the
    // bucket foreign: see ownership-s3.test.ts).
    const ownership = Object.entries(await env.bucketTags("assets", EU))
      .filter(([k]) => k.startsWith("compute.cloud.com/"))
      .map(([Key, Value]) => ({ Key, Value }));
    assert.equal(ownership.length, 5);
    await s3.send(
      new PutBucketTaggingCommand({
        Bucket: "assets",
        Tagging: {
          TagSet: [...ownership, { Key: "env", Value: "dev" }, { Key: "rogue", Value: "1" }],
        },
      }),
    );
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: "assets", VersioningConfiguration: { Status: "Suspended" } }),
    );
    const obj = await env.get("assets");
    await waitFor(
      "drift repaired",
      async () => {
        const tags = await env.bucketTags("assets", EU);
        return (
          tags.env === "prod" &&
          !("rogue" in tags) &&
          tags[OWNERSHIP_TAGS.uid] === obj?.metadata.uid &&
          (await env.versioning("assets", EU)) === "Enabled"
        );
      },
      WAIT_MS,
      200,
    );
    await env.waitEvent("assets", "Normal", "Updated");
  });

  it("applies spec changes: new tags, and versioning false suspends it", async () => {
    await env.patch("assets", { spec: { versioning: false, tags: { env: "prod", team: "a" } } });
    await waitFor(
      "spec applied",
      async () =>
        (await env.bucketTags("assets", EU)).team === "a" &&
        (await env.versioning("assets", EU)) === "Suspended",
      WAIT_MS,
      200,
    );
  });

  it("recreates a bucket deleted out of band, with a Warning Event", async () => {
    await env.waitReady("assets");
    await env.s3(EU).send(new DeleteBucketCommand({ Bucket: "assets" }));
    const obj = await env.waitUntil(
      "assets",
      "recreated",
      (o) => o?.status?.createAttempt === 2 && ready(o)?.status === "True",
    );
    await env.waitEvent("assets", "Warning", "DeletedOutOfBand");
    const tags = await env.bucketTags("assets", EU);
    assert.equal(tags[OWNERSHIP_TAGS.uid], obj?.metadata.uid);
    assert.equal(tags.team, "a");
    assert.equal(obj?.status?.bucketArn, "arn:aws:s3:::assets");
  });

  it("only reports an out-of-band deletion when onDeletedOutOfBand is Report (in us-east-1)", async () => {
    await env.create("reported", { onDeletedOutOfBand: "Report" });
    const obj = await env.waitReady("reported");
    assert.equal(obj.status?.region, "us-east-1");
    await env.s3().send(new DeleteBucketCommand({ Bucket: "reported" }));
    await env.waitReason("reported", "DeletedOutOfBand");
    await env.waitEvent("reported", "Warning", "DeletedOutOfBand");
    await env.waitReconciles(3); // several polls later it is still not recreated
    assert.equal(await env.bucketExists("reported"), false);
    assert.equal((await env.get("reported"))?.status?.createAttempt, 1);
    await env.delete("reported"); // nothing left in AWS: released at once
    await env.waitGone("reported");
  });

  it("keeps a non-empty bucket and its data, reporting BucketNotEmpty, until forceDelete is set", async () => {
    const s3 = env.s3(EU);
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: "assets", VersioningConfiguration: { Status: "Enabled" } }),
    );
    await env.patch("assets", { spec: { versioning: true } });
    // A reconcile that started before the patch may still act on the spec it read: the objects
    // are written once the operator has reconciled the patched spec, with versioning on.
    await env.waitReconcilesOf("assets", 2);
    assert.equal(await env.versioning("assets", EU), "Enabled");
    await s3.send(new PutObjectCommand({ Bucket: "assets", Key: "data.txt", Body: "v1" }));
    await s3.send(new PutObjectCommand({ Bucket: "assets", Key: "data.txt", Body: "precious" }));
    const written = await s3.send(new ListObjectVersionsCommand({ Bucket: "assets" }));
    assert.equal(written.Versions?.length, 2, "two versions of data.txt before the deletion");
    const deletes = env.proxy.count("DeleteBucket");
    await env.delete("assets");
    const blocked = await env.waitReason("assets", "BucketNotEmpty");
    assert.equal(ready(blocked)?.status, "False");
    assert.match(ready(blocked)?.message ?? "", /still holds 2 objects or object versions/);
    assert.ok(blocked.metadata.deletionTimestamp !== undefined);
    await env.waitEvent("assets", "Warning", "BucketNotEmpty");
    await env.waitReconciles(1); // looked at again after a backoff, still nothing deleted
    const body = await (
      await s3.send(new GetObjectCommand({ Bucket: "assets", Key: "data.txt" }))
    ).Body?.transformToString();
    assert.equal(body, "precious");
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: "assets" }));
    assert.equal(versions.Versions?.length, 2);
    assert.equal(env.proxy.count("DeleteObjects"), 0);
    assert.equal(env.proxy.count("DeleteBucket"), deletes);

    await env.patch("assets", { spec: { forceDelete: true } });
    await env.waitGone("assets");
    assert.equal(await env.bucketExists("assets", EU), false);
    assert.ok(env.proxy.count("DeleteObjects") >= 1);
  });

  it("deletes a bucket emptied by hand once it is empty, then releases the object", async () => {
    await env.create("scratch", { region: EU });
    await env.waitReady("scratch");
    await env.s3(EU).send(new PutObjectCommand({ Bucket: "scratch", Key: "k", Body: "x" }));
    await env.delete("scratch");
    await env.waitReason("scratch", "BucketNotEmpty");
    assert.equal(await env.bucketExists("scratch", EU), true);
    await env.s3(EU).send(new DeleteObjectCommand({ Bucket: "scratch", Key: "k" }));
    await env.waitGone("scratch", 60_000);
    assert.equal(await env.bucketExists("scratch", EU), false);
  });

  it("leaves the bucket in AWS with deletionPolicy Retain", async () => {
    await env.create("kept", { deletionPolicy: "Retain" });
    const obj = await env.waitReady("kept");
    const deletes = env.proxy.count("DeleteBucket");
    await env.delete("kept");
    await env.waitGone("kept");
    assert.equal(await env.bucketExists("kept"), true);
    assert.equal(env.proxy.count("DeleteBucket"), deletes);
    assert.equal((await env.bucketTags("kept"))[OWNERSHIP_TAGS.uid], obj.metadata.uid);
  });
});
