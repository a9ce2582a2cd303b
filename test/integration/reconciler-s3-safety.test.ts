/**
 * The S3Bucket reconciler where it must be careful: a crash between CreateBucket and the status
 * write, buckets it does not own (NotOwned, then adopted on request), adopted buckets that
 * forceDelete empties only when set after the adoption, and terminal errors that must not
 * hot-loop. The operator runs as a child process against a real kube-apiserver and
 * moto behind a counting proxy that can swallow a response.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateBucketCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutBucketTaggingCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, within, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { FORCE_DELETE_HELD_TAG as HELD } from "../../src/reconcilers/s3-bucket/force-delete.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const EU = "eu-west-1";

describe("S3Bucket reconciler: crash safety, ownership and terminal errors", () => {
  // The install grants this namespace adoption (none by default), so a foreign bucket is adopted on request.
  const env = new S3Env("s3-safety", { operatorArgs: ["--adoption-namespaces=s3-safety"] }).hooks();

  it("after a crash between CreateBucket and the status write, the restarted operator takes up the one bucket", async () => {
    let killed = false;
    env.proxy.onResponse("CreateBucket", () => {
      env.op.kill();
      killed = true;
      return "drop";
    });
    await env.create("crashy", { region: EU, tags: { app: "x" } });
    await waitFor("CreateBucket answered in moto", async () => killed, WAIT_MS);
    await within("the killed operator to exit", env.op.process.exited);
    const intent = await env.get("crashy");
    assert.match(intent?.status?.createToken ?? "", new RegExp(`^${intent?.metadata.uid}-1$`));
    assert.equal(intent?.status?.bucketArn, undefined, "the create was never recorded");
    assert.equal(await env.bucketExists("crashy", EU), true, "the bucket was created in AWS");
    assert.deepEqual(await env.bucketTags("crashy", EU), {}, "and never tagged");

    await env.startOperator();
    const obj = await env.waitReady("crashy");
    assert.equal(obj.status?.bucketArn, "arn:aws:s3:::crashy");
    assert.equal(obj.status?.createAttempt, 1);
    const buckets = (await env.s3().send(new ListBucketsCommand({}))).Buckets ?? [];
    assert.equal(buckets.filter((b) => b.Name === "crashy").length, 1);
    assert.equal(env.proxy.count("CreateBucket"), 1, "no second create after the restart");
    const tags = await env.bucketTags("crashy", EU);
    assert.equal(tags[OWNERSHIP_TAGS.uid], obj.metadata.uid);
    assert.equal(tags.app, "x");
  });

  it("a terminal error (bucket in another region) is reported once and does not hot-loop", async () => {
    await env.s3("ap-south-1").send(
      new CreateBucketCommand({
        Bucket: "elsewhere",
        CreateBucketConfiguration: { LocationConstraint: "ap-south-1" },
      }),
    );
    await env.create("elsewhere", { region: EU });
    const failed = await env.waitReason("elsewhere", "BucketInOtherRegion");
    assert.equal(ready(failed)?.status, "False");
    assert.match(ready(failed)?.message ?? "", /exists in ap-south-1, not in spec\.region eu-west-1/);
    await env.waitEvent("elsewhere", "Warning", "BucketInOtherRegion");
    const errors = await env.reconciles("error");
    const terminal = await env.controllerMetric("controller_runtime_terminal_reconcile_errors_total");
    assert.ok(terminal >= 1, "the failure was counted as terminal");
    const retried = await env.retriedErrors();
    // "crashy" polls every second: five of its polls span about five seconds.
    await env.waitReconciles(5, "requeue_after");
    // At most the re-reconciles its own writes (finalizer, status) cause; no retries. A hot loop
    // would fail hundreds of times in this window.
    assert.ok((await env.reconciles("error")) - errors <= 2, "errors over ~5 s");
    assert.ok(
      (await env.controllerMetric("controller_runtime_terminal_reconcile_errors_total")) - terminal <= 2,
    );
    assert.equal(await env.retriedErrors(), retried, "no error was retried with backoff");
    assert.equal(env.proxy.count("CreateBucket"), 1, "nothing was created");
    assert.deepEqual(
      await env.bucketTags("elsewhere", "ap-south-1"),
      {},
      "the foreign bucket was not touched",
    );
    await env.delete("elsewhere");
    await env.waitGone("elsewhere");
    assert.equal(await env.bucketExists("elsewhere", "ap-south-1"), true);
  });

  it("reports NotOwned for a bucket it did not create, adopts it only when asked, then manages it", async () => {
    await env.s3().send(new CreateBucketCommand({ Bucket: "legacy" }));
    await env.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "legacy",
        Tagging: { TagSet: [{ Key: "owner", Value: "ops" }] },
      }),
    );
    const tagWrites = env.proxy.count("PutBucketTagging");
    await env.create("legacy", { tags: { team: "data" } });
    const refused = await env.waitReason("legacy", "NotOwned");
    assert.equal(ready(refused)?.status, "False");
    await env.waitEvent("legacy", "Warning", "NotOwned");
    assert.deepEqual(await env.bucketTags("legacy"), { owner: "ops" }, "not touched");
    assert.equal(env.proxy.count("PutBucketTagging"), tagWrites);

    await env.patch("legacy", { spec: { adoptExisting: true } });
    const adopted = await env.waitReady("legacy");
    await env.waitEvent("legacy", "Normal", "Adopted");
    const tags = await env.bucketTags("legacy");
    assert.equal(tags[OWNERSHIP_TAGS.uid], adopted.metadata.uid);
    assert.equal(tags.team, "data");
    assert.equal(tags.owner, undefined, "tags are authoritative once adopted");
    assert.equal(env.proxy.count("CreateBucket"), 1, "adoption creates nothing");

    await env.delete("legacy");
    await env.waitGone("legacy");
    assert.equal(await env.bucketExists("legacy"), false, "an adopted bucket is deleted like an own one");
  });

  it("never adopts a bucket another object owns unless asked", async () => {
    await env.create("kept", { bucketName: "shared-name", deletionPolicy: "Retain" });
    const first = await env.waitReady("kept");
    await env.delete("kept");
    await env.waitGone("kept");
    await env.create("successor", { bucketName: "shared-name" });
    await env.waitReason("successor", "NotOwned");
    assert.equal((await env.bucketTags("shared-name"))[OWNERSHIP_TAGS.uid], first.metadata.uid);
    await env.delete("successor");
    await env.waitGone("successor");
    assert.equal(await env.bucketExists("shared-name"), true, "a foreign bucket is never deleted");
  });

  /** Puts `n` objects into `bucket` from outside the operator. */
  async function fill(bucket: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++)
      await env.s3().send(new PutObjectCommand({ Bucket: bucket, Key: `ledger-${i}.csv`, Body: "a,b\n" }));
  }
  const keysIn = async (bucket: string): Promise<number> =>
    (await env.s3().send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount ?? 0;

  it("never empties a bucket adopted with forceDelete already set, until forceDelete is set again after the adoption", async () => {
    await env.s3().send(new CreateBucketCommand({ Bucket: "inherited" }));
    await fill("inherited", 2);
    await env.create("inherited", { adoptExisting: true, forceDelete: true });
    const adopted = await env.waitReady("inherited");
    await env.waitEvent("inherited", "Normal", "Adopted");
    const tags = await env.bucketTags("inherited");
    assert.equal(tags[OWNERSHIP_TAGS.uid], adopted.metadata.uid);
    assert.equal(tags[HELD], String(adopted.metadata.generation), "the hold names the adoption's generation");

    // A later generation that leaves forceDelete true keeps the hold.
    await env.patch("inherited", { spec: { tags: { team: "data" } } });
    await env.waitUntil("inherited", "reconciled at generation 2", (o) => ready(o)?.observedGeneration === 2);
    assert.equal((await env.bucketTags("inherited"))[HELD], "1");

    const deletes = env.proxy.count("DeleteObjects") + env.proxy.count("DeleteObject");
    const bucketDeletes = env.proxy.count("DeleteBucket");
    await env.delete("inherited");
    const waiting = await env.waitReason("inherited", "BucketNotEmpty");
    assert.equal(ready(waiting)?.status, "False");
    assert.match(
      ready(waiting)?.message ?? "",
      /still holds 2 objects .*spec\.forceDelete was already true when this object adopted bucket inherited \(generation 1\)/,
    );
    await env.waitEvent("inherited", "Warning", "BucketNotEmpty");
    assert.equal(await keysIn("inherited"), 2, "the objects survive");
    assert.equal(
      env.proxy.count("DeleteObjects") + env.proxy.count("DeleteObject"),
      deletes,
      "no object deleted",
    );
    assert.equal(env.proxy.count("DeleteBucket"), bucketDeletes, "no DeleteBucket");

    // forceDelete off (the operator drops the hold), then on again: now it counts.
    await env.patch("inherited", { spec: { forceDelete: false } });
    await waitFor(
      "the hold to be removed",
      async () => (await env.bucketTags("inherited"))[HELD] === undefined,
      WAIT_MS,
      200,
    );
    assert.equal(await keysIn("inherited"), 2);
    await env.patch("inherited", { spec: { forceDelete: true } });
    await env.waitGone("inherited");
    assert.equal(await env.bucketExists("inherited"), false, "emptied and deleted");
  });

  it("empties an adopted bucket when forceDelete is set in a generation after the adoption", async () => {
    await env.s3().send(new CreateBucketCommand({ Bucket: "inherited-later" }));
    await fill("inherited-later", 3);
    await env.create("inherited-later", { adoptExisting: true });
    await env.waitReady("inherited-later");
    assert.equal((await env.bucketTags("inherited-later"))[HELD], undefined, "no hold without forceDelete");
    await env.patch("inherited-later", { spec: { forceDelete: true } });
    await env.waitUntil(
      "inherited-later",
      "reconciled at generation 2",
      (o) => ready(o)?.observedGeneration === 2,
    );
    assert.equal((await env.bucketTags("inherited-later"))[HELD], undefined);
    await env.delete("inherited-later");
    await env.waitGone("inherited-later");
    assert.equal(await env.bucketExists("inherited-later"), false, "emptied and deleted");
  });
});
