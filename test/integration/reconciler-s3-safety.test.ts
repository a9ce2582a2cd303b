/**
 * The S3Bucket reconciler where it must be careful: a crash between CreateBucket and the status
 * write, buckets it does not own (NotOwned, then adopted on request), and terminal errors that
 * must not hot-loop. The operator runs as a child process against a real kube-apiserver and
 * moto behind a counting proxy that can swallow a response.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CreateBucketCommand, ListBucketsCommand, PutBucketTaggingCommand } from "@aws-sdk/client-s3";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, within, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const EU = "eu-west-1";

describe("S3Bucket reconciler: crash safety, ownership and terminal errors", () => {
  const env = new S3Env("s3-safety").hooks();

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
});
