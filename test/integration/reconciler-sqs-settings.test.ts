/**
 * The SqsQueue settings beyond visibility and retention, against moto: delay, long polling,
 * message size, KMS encryption and the access policy are created with the queue, enforced and
 * never re-sent when equal (the policy compared as a JSON value); a dead-letter queue named by
 * reference waits, with DeadLetterQueueNotReady, until that queue is Ready, then the redrive
 * policy carries its ARN, at once and not at the next poll; a repair of another attribute leaves
 * the policy alone, managed or not (SetQueueAttributes changes only what it names); a dead-letter
 * queue of the other type is refused with a condition. The redrive allow policy of a dead-letter
 * queue lists its source queues (by reference and by ARN) as SQS documents the attribute, JSON
 * compared as a value, repaired and counted; a source by reference that is not Ready is waited
 * for (RedriveSourceNotReady), except the one that waits for this queue as its dead-letter queue,
 * and one of the other type is refused.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const policy = {
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "OnlyThisAccount",
      Effect: "Allow",
      Principal: { AWS: "arn:aws:iam::123456789012:root" },
      Action: ["sqs:SendMessage", "sqs:ReceiveMessage"],
      Resource: "*",
    },
  ],
};

describe("SqsQueue settings: dead-letter queue, encryption, delay, polling, size, policy", () => {
  const env = new SqsEnv("sqs-settings").hooks();

  it("waits for a dead-letter queue named by reference, then points the redrive policy at it", async () => {
    await env.create("orders", {
      queueName: "orders",
      deadLetterQueue: { queueRef: { name: "orders-dlq" }, maxReceiveCount: 5 },
    });
    const waiting = await env.waitReason("orders", "DeadLetterQueueNotReady");
    assert.equal(ready(waiting)?.status, "False");
    assert.match(ready(waiting)?.message ?? "", /orders-dlq does not exist/);
    assert.equal(
      await env.queueExists("orders"),
      false,
      "nothing is created before the dead-letter queue is",
    );

    await env.create("orders-dlq", { queueName: "orders-dlq", messageRetentionSeconds: 1209600 });
    const dlq = await env.waitReady("orders-dlq");
    await env.waitReady("orders");
    const q = await env.queue("orders");
    assert.deepEqual(JSON.parse(q.attributes.RedrivePolicy ?? "{}"), {
      deadLetterTargetArn: dlq.status?.queueArn,
      maxReceiveCount: 5,
    });
  });

  it("creates every attribute the spec sets and makes no write when nothing changed", async () => {
    await env.create("tuned", {
      queueName: "tuned",
      delaySeconds: 5,
      receiveWaitTimeSeconds: 20,
      maximumMessageSize: 4096,
      encryption: { kmsKeyId: "alias/queues", dataKeyReusePeriodSeconds: 600 },
      policy,
      writeOutputsTo: { configMapName: "tuned-queue" },
    });
    const obj = await env.waitReady("tuned");
    const q = await env.queue("tuned");
    assert.equal(q.attributes.DelaySeconds, "5");
    assert.equal(q.attributes.ReceiveMessageWaitTimeSeconds, "20");
    assert.equal(q.attributes.MaximumMessageSize, "4096");
    assert.equal(q.attributes.KmsMasterKeyId, "alias/queues");
    assert.equal(q.attributes.KmsDataKeyReusePeriodSeconds, "600");
    assert.deepEqual(JSON.parse(q.attributes.Policy ?? "{}"), policy);
    assert.deepEqual((await env.configMap("tuned-queue"))?.data, {
      QUEUE_NAME: "tuned",
      QUEUE_URL: q.url,
      QUEUE_ARN: obj.status?.queueArn,
      QUEUE_REGION: "us-east-1",
    });

    await env.waitEvent("tuned", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("tuned", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(3);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("repairs drift with an Updated Event, and leaves a policy that only changed its formatting", async () => {
    const { url } = await env.queue("tuned");
    const reordered = { Statement: policy.Statement, Version: policy.Version };
    await env.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { DelaySeconds: "0", Policy: JSON.stringify(reordered, null, 2) },
      }),
    );
    await waitFor(
      "DelaySeconds repaired",
      async () => (await env.queue("tuned")).attributes.DelaySeconds === "5",
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming DelaySeconds",
      async () =>
        (await env.events("tuned")).some(
          (e) => e.reason === "Updated" && /DelaySeconds 0 -> 5/.test(e.message),
        ),
      15_000,
      150,
    );
    // The DelaySeconds repair named only DelaySeconds, which leaves the policy as it is: it
    // still holds at the next polls, and is never written back.
    const sets = env.proxy.count("SetQueueAttributes");
    await env.waitPolls(2);
    const after = await env.queue("tuned");
    assert.deepEqual(JSON.parse(after.attributes.Policy ?? "{}"), reordered, "the policy kept");
    assert.equal(env.proxy.count("SetQueueAttributes"), sets, "no write at the next polls");
    const events = await env.events("tuned");
    assert.ok(
      !events.some((e) => e.reason === "Updated" && /Policy/.test(e.message)),
      "the policy was not re-sent",
    );
  });

  it("repairs another attribute of a queue whose policy the spec does not manage, and leaves that policy", async () => {
    await env.create("open", { queueName: "open" });
    await env.waitReady("open");
    const { url } = await env.queue("open");
    const foreign = { ...policy, Statement: [{ ...policy.Statement[0], Sid: "SetByHand" }] };
    await env.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { VisibilityTimeout: "99", Policy: JSON.stringify(foreign) },
      }),
    );
    await waitFor(
      "an Updated Event naming VisibilityTimeout",
      async () =>
        (await env.events("open")).some(
          (e) => e.reason === "Updated" && /VisibilityTimeout 99 -> 30/.test(e.message),
        ),
      WAIT_MS,
      150,
    );
    const q = await env.queue("open");
    assert.equal(q.attributes.VisibilityTimeout, "30");
    assert.deepEqual(JSON.parse(q.attributes.Policy ?? "{}"), foreign, "the policy set by hand is kept");
  });

  it("lets only its source queues use a dead-letter queue, neither waiting for the other", async () => {
    // The dead-letter queue names its source by reference, and the source names it as its
    // dead-letter queue: the source waits for the dead-letter queue, which lists the source by
    // the ARN it gets in the dead-letter queue's account.
    await env.create("work-dlq", {
      queueName: "work-dlq",
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueRefs: [{ name: "work" }],
        sourceQueueArns: ["arn:aws:sqs:us-east-1:123456789012:legacy"],
      },
    });
    await env.create("work", {
      queueName: "work",
      deadLetterQueue: { queueRef: { name: "work-dlq" }, maxReceiveCount: 2 },
    });
    const dlq = await env.waitReady("work-dlq");
    const work = await env.waitReady("work");
    const allow = JSON.parse((await env.queue("work-dlq")).attributes.RedriveAllowPolicy ?? "{}") as unknown;
    assert.deepEqual(allow, {
      redrivePermission: "byQueue",
      sourceQueueArns: [work.status?.queueArn, "arn:aws:sqs:us-east-1:123456789012:legacy"].sort(),
    });
    assert.deepEqual(JSON.parse((await env.queue("work")).attributes.RedrivePolicy ?? "{}"), {
      deadLetterTargetArn: dlq.status?.queueArn,
      maxReceiveCount: 2,
    });

    await env.waitEvent("work-dlq", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    await env.patch("work-dlq", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(3);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
  });

  it("repairs the redrive allow policy with an Updated Event, and applies a change to denyAll", async () => {
    const repairs = () =>
      env.op.metric("kubeprovisioner_drift_repairs_total", {
        kind: "SqsQueue",
        setting: "redriveAllowPolicy",
      });
    const before = await repairs();
    const { url } = await env.queue("work-dlq");
    const want = (await env.queue("work-dlq")).attributes.RedriveAllowPolicy ?? "";
    await env.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { RedriveAllowPolicy: JSON.stringify({ redrivePermission: "allowAll" }) },
      }),
    );
    await waitFor(
      "the redrive allow policy repaired",
      async () => (await env.queue("work-dlq")).attributes.RedriveAllowPolicy === want,
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming RedriveAllowPolicy",
      async () =>
        (await env.events("work-dlq")).some(
          (e) => e.reason === "Updated" && /RedriveAllowPolicy updated/.test(e.message),
        ),
      15_000,
      150,
    );
    assert.equal(await repairs(), before + 1);

    await env.patch("work-dlq", {
      spec: {
        redriveAllowPolicy: { redrivePermission: "denyAll", sourceQueueRefs: null, sourceQueueArns: null },
      },
    });
    await waitFor(
      "denyAll applied",
      async () =>
        (await env.queue("work-dlq")).attributes.RedriveAllowPolicy === '{"redrivePermission":"denyAll"}',
      WAIT_MS,
      200,
    );
  });

  it("refuses a source queue of the other type with a condition", async () => {
    await env.create("fifo-dlq", {
      queueName: "fifo-dlq.fifo",
      fifo: true,
      redriveAllowPolicy: { redrivePermission: "byQueue", sourceQueueRefs: [{ name: "work" }] },
    });
    const refused = await env.waitReason("fifo-dlq", "RedriveSourceMismatch");
    assert.match(
      ready(refused)?.message ?? "",
      /this is a FIFO queue but redriveAllowPolicy: the source queue work is a standard queue/,
    );
    await env.waitEvent("fifo-dlq", "Warning", "RedriveSourceMismatch");
    assert.equal(await env.queueExists("fifo-dlq.fifo"), false);
  });

  it("refuses a dead-letter queue of the other type with a condition", async () => {
    await env.create("jobs", {
      queueName: "jobs.fifo",
      fifo: true,
      deadLetterQueue: { queueRef: { name: "orders-dlq" }, maxReceiveCount: 3 },
    });
    const refused = await env.waitReason("jobs", "DeadLetterQueueMismatch");
    assert.match(
      ready(refused)?.message ?? "",
      /FIFO queue but its dead-letter queue orders-dlq is a standard queue/,
    );
    await env.waitEvent("jobs", "Warning", "DeadLetterQueueMismatch");
    assert.equal(await env.queueExists("jobs.fifo"), false);
  });
});

describe("SqsQueue dead-letter reference between polls", () => {
  // The steady poll is 10 minutes away: only the controller's watch on the queues it names can
  // bring a waiting queue forward. Its trigger is the dead-letter queue's status (ARN, Ready),
  // which leaves metadata.generation alone.
  const env = new SqsEnv("sqs-dlq-watch", ["--poll-interval=10m"]).hooks();

  it("picks up the dead-letter queue's ARN as soon as that queue is Ready", async () => {
    await env.create("jobs", {
      queueName: "jobs",
      deadLetterQueue: { queueRef: { name: "jobs-dlq" }, maxReceiveCount: 3 },
    });
    await env.waitReason("jobs", "DeadLetterQueueNotReady");
    await env.create("jobs-dlq", { queueName: "jobs-dlq" });
    const dlq = await env.waitReady("jobs-dlq");
    await env.waitReady("jobs");
    const q = await env.queue("jobs");
    assert.deepEqual(JSON.parse(q.attributes.RedrivePolicy ?? "{}"), {
      deadLetterTargetArn: dlq.status?.queueArn,
      maxReceiveCount: 3,
    });
  });

  it("waits for a redrive source queue, and takes its ARN as soon as that queue is Ready", async () => {
    await env.create("audit-dlq", {
      queueName: "audit-dlq",
      redriveAllowPolicy: { redrivePermission: "byQueue", sourceQueueRefs: [{ name: "audit" }] },
    });
    const missing = await env.waitReason("audit-dlq", "RedriveSourceNotReady");
    assert.match(ready(missing)?.message ?? "", /the source queue audit does not exist/);
    await env.waitEvent("audit-dlq", "Warning", "RedriveSourceNotReady");
    const waits = (await env.events("audit-dlq")).filter((e) => e.reason === "RedriveSourceNotReady");
    assert.equal(waits.length, 1, "one Event for the wait, not one per reconcile");
    assert.match(waits[0]?.message ?? "", /the source queue audit does not exist in namespace/);
    assert.equal(waits[0]?.count ?? 1, 1);
    assert.equal(await env.queueExists("audit-dlq"), false, "nothing is created before the source is Ready");
    await env.create("audit", { queueName: "audit" });
    const audit = await env.waitReady("audit");
    await env.waitReady("audit-dlq");
    assert.deepEqual(JSON.parse((await env.queue("audit-dlq")).attributes.RedriveAllowPolicy ?? "{}"), {
      redrivePermission: "byQueue",
      sourceQueueArns: [audit.status?.queueArn],
    });
  });
});
