/**
 * The SqsQueue reconciler and queues it did not create: a foreign queue is refused (NotOwned,
 * terminal, no hot loop) until the object asks to adopt it; a crash between CreateQueue and the
 * status write leaves exactly one queue; a queue retained by an earlier object of the same name
 * is not silently taken over by a new one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CreateQueueCommand, ListQueuesCommand } from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { cond } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";
import { within } from "../support/process.ts";

describe("SqsQueue reconciler: ownership and crashes", () => {
  // The install grants this namespace adoption (none by default), so a foreign queue is adopted on request.
  const env = new SqsEnv("sqs-ownership", ["--adoption-namespaces=sqs-ownership"]).hooks();

  it("refuses a foreign queue as NotOwned without retrying, then adopts it when asked", async () => {
    await env.sqs().send(
      new CreateQueueCommand({
        QueueName: "legacy",
        Attributes: { VisibilityTimeout: "10" },
        tags: { team: "x" },
      }),
    );
    await env.create("legacy", {});
    const refused = await env.waitUntil("legacy", "NotOwned", (o) => cond(o, "Ready")?.reason === "NotOwned");
    assert.equal(cond(refused, "Ready")?.status, "False");
    assert.equal(cond(refused, "Synced")?.reason, "NotOwned");
    await env.waitEvent("legacy", "Warning", "NotOwned", 10_000);

    // A terminal error: over five poll periods the key is not retried and nothing is written.
    await env.waitPolls(1); // the metronome is running before anything is counted
    const [r0, w0, e0] = [env.reconcilesOf("legacy"), await env.kubeWrites(), await env.retriedErrors()];
    const mutations = env.mutations();
    await env.waitPolls(5);
    const extra = env.reconcilesOf("legacy") - r0;
    // At most the re-reconciles the operator's own writes (finalizer, status) cause; a hot loop
    // would reconcile hundreds of times.
    assert.ok(extra <= 2, `reconciled ${extra} more times`);
    assert.equal(await env.retriedErrors(), e0, "no error was retried with backoff");
    assert.equal(await env.kubeWrites(), w0, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations);
    const untouched = await env.queue("legacy");
    assert.deepEqual(untouched.tags, { team: "x" });
    assert.equal(untouched.attributes.VisibilityTimeout, "10");

    assert.equal(
      (await env.patchResponse("legacy", { spec: { adoptExisting: true, tags: { env: "prod" } } })).status,
      200,
    );
    const adopted = await env.waitUntil("legacy", "adopted", (o) => cond(o, "Ready")?.status === "True");
    const q = await env.queue("legacy");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], adopted?.metadata.uid);
    assert.equal(q.tags.env, "prod");
    assert.equal("team" in q.tags, false, "tags are authoritative after adoption");
    assert.equal(q.attributes.VisibilityTimeout, "30");
    await env.waitEvent("legacy", "Normal", "Adopted"); // Events are written asynchronously, after the status

    // Adopted means managed: deleting the object deletes the queue.
    await env.delete("legacy");
    await env.waitGone("legacy");
    await assert.rejects(env.queue("legacy"), { name: "QueueDoesNotExist" });
  });

  it("leaves exactly one queue after a crash between CreateQueue and the status write", async () => {
    const creates = env.proxy.count("CreateQueue");
    const crashed = env.op;
    env.proxy.onResponse("CreateQueue", () => {
      crashed.kill();
      return "drop";
    });
    await env.create("crashy", {});
    await within("the killed operator to exit", crashed.process.exited);
    const orphan = await env.get("crashy");
    assert.equal(
      orphan?.status?.createToken,
      `${orphan?.metadata.uid}-1`,
      "token recorded before the create",
    );
    assert.equal(orphan?.status?.queueUrl, undefined, "the create was never recorded");
    assert.equal((await env.queue("crashy")).tags[OWNERSHIP_TAGS.uid], orphan?.metadata.uid);

    await env.startOperator();
    const obj = await env.waitUntil(
      "crashy",
      "Ready after restart",
      (o) => cond(o, "Ready")?.status === "True",
    );
    assert.equal(env.proxy.count("CreateQueue"), creates + 1, "no second CreateQueue");
    const listed = await env.sqs().send(new ListQueuesCommand({ QueueNamePrefix: "crashy" }));
    assert.equal(listed.QueueUrls?.length, 1);
    assert.equal(obj?.status?.queueUrl, (await env.queue("crashy")).url);
    assert.equal(obj?.status?.createAttempt, 1);
  });

  it("does not hand a queue retained by a deleted object to a new object of the same name", async () => {
    await env.create("reused", {});
    const first = await env.waitUntil("reused", "Ready", (o) => cond(o, "Ready")?.status === "True");
    assert.equal((await env.patchResponse("reused", { spec: { deletionPolicy: "Retain" } })).status, 200);
    await env.delete("reused");
    await env.waitGone("reused");
    await env.create("reused", {});
    const second = await env.waitUntil("reused", "NotOwned", (o) => cond(o, "Ready")?.reason === "NotOwned");
    assert.notEqual(second?.metadata.uid, first?.metadata.uid);
    assert.equal((await env.queue("reused")).tags[OWNERSHIP_TAGS.uid], first?.metadata.uid);

    // Deleting the object that never owned the queue releases it: a Normal Released Event, the
    // object goes, the queue stays with its owner's tags.
    await env.delete("reused");
    await env.waitEvent("reused", "Normal", "Released");
    await env.waitGone("reused");
    const released = (await env.events("reused")).find((e) => e.reason === "Released");
    assert.equal(released?.message, "the queue in AWS is not owned by this object and was left in place");
    assert.equal((await env.queue("reused")).tags[OWNERSHIP_TAGS.uid], first?.metadata.uid);
  });
});
