/**
 * A failure of the operator's access against a real API server and moto, with the proxy in
 * front of moto refusing a call as AWS does when IAM denies it (moto itself evaluates no IAM
 * policy): the object reports AWS's code and what to grant, is tried again on the access backoff
 * (from `--poll-interval`, 1 s here), and becomes Ready once the call is allowed, with no change
 * to the object.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

/** The operations the proxy answers with AccessDenied, as long as they are listed. */
const refused = new Set<string>();

const env = new S3Env("access-retry", {
  proxy: { gate: (operation) => (refused.has(operation) ? "deny" : "forward") },
}).hooks();

describe("a failure of the operator's access", () => {
  it("is tried again on the access backoff and heals once IAM allows the call, with no change to the object", async () => {
    refused.add("CreateBucket");
    const created = await env.create("granted-later");
    const failed = await env.waitReason("granted-later", "AccessDenied");
    const message = ready(failed)?.message ?? "";
    assert.match(message, /^CreateBucket: S3 CreateBucket failed with AccessDenied: /);
    assert.match(
      message,
      /the operator's IAM role needs s3:CreateBucket: config\/iam\/policy\.json allows it/,
    );
    assert.match(message, /tried again after 1s, then at doubling intervals up to 1h0m0s/);
    // The Warning Event is written after the status, so it may be listed a moment later.
    await env.waitEvent("granted-later", "Warning", "AccessDenied", WAIT_MS);

    const denials = () => env.proxy.calls.filter((c) => c.operation === "CreateBucket" && c.status === 403);
    await waitFor("CreateBucket tried again", async () => denials().length >= 2, WAIT_MS, 100);
    const [first, second] = denials();
    assert.ok(first !== undefined && second !== undefined);
    assert.ok(
      second.at - first.at >= 750,
      `tried again after ${second.at - first.at} ms: not on the access backoff (one 1 s poll period first)`,
    );

    refused.delete("CreateBucket"); // the role now allows s3:CreateBucket
    const healed = await env.waitReady("granted-later");
    assert.equal(healed.metadata.generation, created.metadata.generation, "the object was not changed");
    assert.equal(await env.bucketExists("granted-later"), true);
  });
});
