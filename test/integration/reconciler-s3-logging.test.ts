/**
 * S3Bucket server access logging against moto, wired by references only: a bucket whose
 * spec.logging names another S3Bucket by targetBucketRef waits (LoggingTargetNotReady) until
 * that bucket is Ready and its spec.allowLoggingFrom names it, which puts the
 * logging.s3.amazonaws.com grant into the target's policy; then logging is configured. moto, like
 * AWS, refuses PutBucketLogging when the target's policy lacks the grant, so the order is
 * checked by moto itself. No-op at rest, drift repaired with an Updated Event, a conflicting
 * policy Sid refused, and a setting removed from the spec left alone.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GetBucketLoggingCommand, GetBucketPolicyCommand, PutBucketLoggingCommand } from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

describe("S3Bucket logging into another bucket, by reference", () => {
  const env = new S3Env("s3-logging").hooks();

  it("waits for the target to allow the bucket, then logs into it", async () => {
    await env.create("logs", { bucketName: "logs" });
    await env.waitReady("logs");
    await env.create("site", {
      bucketName: "site",
      logging: { targetBucketRef: { name: "logs" }, targetPrefix: "site/" },
    });
    const waiting = await env.waitReason("site", "LoggingTargetNotReady");
    assert.match(
      ready(waiting)?.message ?? "",
      /add \{bucketRef: \{name: site\}\} to its spec.allowLoggingFrom/,
    );
    assert.equal(await env.bucketExists("site"), false, "nothing is created before the target allows it");

    await env.patch("logs", { spec: { allowLoggingFrom: [{ bucketRef: { name: "site" } }] } });
    await env.waitReady("site");
    const policy = await env.s3().send(new GetBucketPolicyCommand({ Bucket: "logs" }));
    assert.deepEqual(JSON.parse(policy.Policy ?? "{}"), {
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "s3-logging-site",
          Effect: "Allow",
          Principal: { Service: "logging.s3.amazonaws.com" },
          Action: "s3:PutObject",
          Resource: "arn:aws:s3:::logs/*",
          Condition: { ArnLike: { "aws:SourceArn": "arn:aws:s3:::site" } },
        },
      ],
    });
    const logging = await env.s3().send(new GetBucketLoggingCommand({ Bucket: "site" }));
    assert.deepEqual(
      [logging.LoggingEnabled?.TargetBucket, logging.LoggingEnabled?.TargetPrefix],
      ["logs", "site/"],
    );
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await env.waitEvent("site", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = [env.proxy.count("GetBucketLogging"), env.proxy.count("GetBucketPolicy")];
    await env.patch("site", { metadata: { annotations: { "test/bump": "1" } } });
    await env.patch("logs", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketLogging") > (reads[0] ?? 0), "logging read again");
    assert.ok(env.proxy.count("GetBucketPolicy") > (reads[1] ?? 0), "the target's policy read again");
  });

  it("repairs logging turned off out of band, with an Updated Event", async () => {
    await env.s3().send(new PutBucketLoggingCommand({ Bucket: "site", BucketLoggingStatus: {} }));
    await waitFor(
      "logging back",
      async () =>
        (await env.s3().send(new GetBucketLoggingCommand({ Bucket: "site" }))).LoggingEnabled
          ?.TargetBucket === "logs",
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming logging",
      async () =>
        (await env.events("site")).some(
          (e) => e.reason === "Updated" && /logging: logs\/site\//.test(e.message),
        ),
      15_000,
      150,
    );
  });

  it("refuses a target policy that uses the grant's Sid itself", async () => {
    await env.create("clash", {
      bucketName: "clash",
      allowLoggingFrom: [{ bucketRef: { name: "site" } }],
      policy: {
        Version: "2012-10-17",
        Statement: [
          { Sid: "s3-logging-site", Effect: "Deny", Principal: "*", Action: "s3:*", Resource: "*" },
        ],
      },
    });
    const refused = await env.waitUntil(
      "clash",
      "Synced=False",
      (o) => cond(o, "Synced")?.reason === "PolicyStatementConflict",
    );
    assert.match(
      cond(refused, "Synced")?.message ?? "",
      /Sid s3-logging-site, which allowLoggingFrom manages/,
    );
    assert.equal(await env.bucketExists("clash"), false);
    await env.delete("clash");
    await env.waitGone("clash");
  });

  it("leaves logging alone once the spec no longer sets it", async () => {
    await env.patch("site", { spec: { logging: null } });
    await env.waitUntil(
      "site",
      "generation reconciled",
      (o) => o?.status?.observedGeneration === o?.metadata.generation,
    );
    const [reads, puts] = [env.proxy.count("GetBucketLogging"), env.proxy.count("PutBucketLogging")];
    await env.waitReconciles(3, "requeue_after");
    assert.equal(env.proxy.count("PutBucketLogging"), puts);
    assert.equal(env.proxy.count("GetBucketLogging"), reads, "not read any more");
    const logging = await env.s3().send(new GetBucketLoggingCommand({ Bucket: "site" }));
    assert.equal(logging.LoggingEnabled?.TargetBucket, "logs", "left as it was");
  });
});
