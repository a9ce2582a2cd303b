/**
 * `--watch-namespace` end to end: the operator started with one namespace to watch manages the
 * objects there and never touches objects elsewhere (no finalizer, no status, no AWS resource).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FINALIZER } from "../../src/api/v1/index.ts";
import type { QueueObj } from "./reconciler-sqs-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const WATCHED = "watched";
const IGNORED = "ignored";

describe("--watch-namespace", () => {
  const env = new SqsEnv(WATCHED, [`--watch-namespace=${WATCHED}`]).hooks();

  it("manages objects in the watched namespace only", async () => {
    const ns = await env.cp.request("POST", "/api/v1/namespaces", { metadata: { name: IGNORED } });
    assert.equal(ns.status, 201, ns.text);
    const outside = await env.cp.request(
      "POST",
      `/apis/compute.cloud.com/v1/namespaces/${IGNORED}/sqsqueues`,
      {
        apiVersion: "compute.cloud.com/v1",
        kind: "SqsQueue",
        metadata: { name: "outside" },
        spec: { region: "us-east-1", queueName: "outside" },
      },
    );
    assert.equal(outside.status, 201, outside.text);
    await env.create("inside", { queueName: "inside" });
    const inside = await env.waitReady("inside");
    assert.ok(inside.metadata.finalizers?.includes(FINALIZER));
    assert.equal(await env.queueExists("inside"), true);

    // Five poll periods of the operator later, the object outside is still untouched.
    await env.waitPolls(5);
    const res = await env.cp.request(
      "GET",
      `/apis/compute.cloud.com/v1/namespaces/${IGNORED}/sqsqueues/outside`,
    );
    assert.equal(res.status, 200, res.text);
    const untouched = res.body as QueueObj;
    assert.equal(untouched.metadata.finalizers, undefined, "no finalizer");
    assert.equal(untouched.status, undefined, "no status");
    assert.equal(await env.queueExists("outside"), false, "no queue");
    assert.equal(env.reconcilesOf("outside", IGNORED), 0, "never reconciled");
    assert.ok(env.reconcilesOf("inside") > 0);
  });
});
