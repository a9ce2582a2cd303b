/**
 * Ownership rules for queues: another namespace cannot take over (or, by deleting its object,
 * delete) a queue an object still owns, a queue made outside the operator is adopted only in a
 * namespace the install grants adoption, and two objects adopting one queue do not take it from
 * each other on every poll: the first one adopts it, the second is refused for good.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { ready } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

describe("SqsQueue ownership: nothing can be taken from another object", () => {
  // The install grants adoption to team-a only (none by default).
  const env = new SqsEnv("team-a", ["--adoption-namespaces=team-a"]).hooks();

  it("refuses another namespace's queue even with adoptExisting; deleting the attacker keeps the queue", async () => {
    const victim = await env.create("jobs", { queueName: "team-a-jobs", tags: { team: "a" } });
    await env.waitReady("jobs");
    const before = env.mutations();
    const teamB = await env.objectsIn("team-b");
    await teamB.create("jobs", { queueName: "team-a-jobs", adoptExisting: true, tags: { team: "b" } });
    const refused = await teamB.waitReason("jobs", "OwnedByAnotherObject");
    assert.match(ready(refused)?.message ?? "", /belongs to SqsQueue team-a\/jobs/);
    await teamB.waitEvent("jobs", "Warning", "OwnedByAnotherObject");

    await teamB.delete("jobs");
    await teamB.waitGone("jobs");
    assert.deepEqual(env.mutations(), before, "no mutating SQS call for the attacker");
    await teamB.waitEvent("jobs", "Normal", "Released");
    assert.equal(await teamB.hasEvent("jobs", "Normal", "Deleted"), false, "no Deleted Event");
    const q = await env.queue("team-a-jobs");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], victim.metadata.uid);
    assert.equal(q.tags[OWNERSHIP_TAGS.namespace], "team-a");
    assert.equal(q.tags.team, "a");
  });

  it("adopts a queue made outside the operator only in a namespace the install grants, writing nothing elsewhere", async () => {
    await env.sqs().send(new CreateQueueCommand({ QueueName: "billing", tags: { owner: "billing" } }));
    const before = env.mutations();
    const teamD = await env.objectsIn("team-d");
    await teamD.create("billing", { queueName: "billing", adoptExisting: true, tags: { team: "d" } });
    const refused = await teamD.waitReason("billing", "AdoptionNotAllowed");
    assert.equal(ready(refused)?.status, "False");
    assert.match(
      ready(refused)?.message ?? "",
      /the queue exists in AWS and was never managed by this operator; .*namespace team-d .*--adoption=enabled \(every namespace\) or --adoption-namespaces=team-d/,
    );
    await teamD.waitEvent("billing", "Warning", "AdoptionNotAllowed");
    assert.deepEqual(env.mutations(), before, "no mutating SQS call for the refused object");
    assert.deepEqual((await env.queue("billing")).tags, { owner: "billing" });

    await env.create("billing", { queueName: "billing", adoptExisting: true });
    const adopted = await env.waitReady("billing");
    await env.waitEvent("billing", "Normal", "Adopted");
    assert.equal((await env.queue("billing")).tags[OWNERSHIP_TAGS.uid], adopted.metadata.uid);

    await teamD.delete("billing");
    await teamD.waitGone("billing");
    assert.equal(await env.queueExists("billing"), true, "deleting the refused object keeps the queue");
    await env.delete("billing");
    await env.waitGone("billing");
    assert.equal(await env.queueExists("billing"), false);
  });

  it("lets only the first of two adopting objects take a queue, and ends there", async () => {
    await env.sqs().send(new CreateQueueCommand({ QueueName: "shared", tags: { owner: "ops" } }));
    await env.create("first", { queueName: "shared", adoptExisting: true });
    const first = await env.waitReady("first");
    await env.waitEvent("first", "Normal", "Adopted");
    await env.create("second", { queueName: "shared", adoptExisting: true });
    const refused = await env.waitReason("second", "OwnedByAnotherObject");
    assert.match(ready(refused)?.message ?? "", /belongs to SqsQueue team-a\/first/);

    // Several poll rounds (1 s each) of both objects: no tag write, no second adoption.
    const tagWrites = env.proxy.count("TagQueue") + env.proxy.count("UntagQueue");
    await env.waitReconciles(6, "requeue_after");
    assert.equal(env.proxy.count("TagQueue") + env.proxy.count("UntagQueue"), tagWrites, "no tag ping-pong");
    assert.equal((await env.events("first")).filter((e) => e.reason === "Adopted").length, 1);
    assert.equal((await env.events("second")).filter((e) => e.reason === "Adopted").length, 0);
    assert.equal((await env.queue("shared")).tags[OWNERSHIP_TAGS.uid], first.metadata.uid);

    await env.delete("second");
    await env.waitGone("second");
    assert.equal(await env.queueExists("shared"), true, "deleting the refused object keeps the queue");
    await env.delete("first");
    await env.waitGone("first");
    assert.equal(await env.queueExists("shared"), false, "the adopter deletes what it adopted");
  });
});
