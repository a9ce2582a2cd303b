/**
 * S3 event notifications to SQS against moto, wired by references only: a bucket whose
 * spec.notifications names an SqsQueue by queueRef waits (NotificationTargetNotReady) until that
 * queue is Ready and its spec.allowS3Notifications names the bucket, which puts the grant in the
 * queue's policy; then the notification is configured, and an object put into the bucket arrives
 * as a message in the queue (moto delivers S3 notifications to SQS). No-op at rest, drift of
 * either side repaired with an Updated Event, a destination S3 refuses reported on the bucket,
 * a conflicting policy Sid refused on the queue, a deleted queue waited for, and a setting
 * removed from the spec left alone.
 *
 * Where moto differs from AWS: AWS checks the destination when the configuration is put (it
 * sends a test message, and refuses the configuration when the queue's policy does not allow
 * the bucket); moto checks only the destination's region and delivers whatever the queue's
 * policy says. The grant is therefore asserted on the queue's policy itself.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { cond, ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "s3-notifications";
const sqs = new SqsEnv(NS);
const s3 = new S3Env(NS);

const uploads = {
  bucketName: "uploads",
  notifications: {
    queues: [
      {
        id: "incoming",
        events: ["s3:ObjectCreated:*"],
        filter: { prefix: "in/", suffix: ".csv" },
        queueRef: { name: "events" },
      },
    ],
  },
};

/**
 * "eventName key" of each S3 event record in the messages received from the queue at `url`,
 * until `until` holds; the test message S3 sends when the configuration is put has no records.
 */
async function receiveKeys(url: string, until: (keys: string[]) => boolean): Promise<string[]> {
  const keys: string[] = [];
  await waitFor(
    "notification messages",
    async () => {
      const out = await sqs
        .sqs()
        .send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const m of out.Messages ?? []) {
        const body = JSON.parse(m.Body ?? "{}") as {
          Records?: { eventName?: string; s3?: { bucket?: { name?: string }; object?: { key?: string } } }[];
        };
        for (const r of body.Records ?? []) {
          assert.equal(r.s3?.bucket?.name, "uploads");
          // S3 sends the key URL-encoded.
          keys.push(`${r.eventName ?? ""} ${decodeURIComponent(r.s3?.object?.key ?? "")}`);
        }
      }
      return until(keys);
    },
    WAIT_MS,
    100,
  );
  return keys;
}

describe("S3Bucket notifications to an SqsQueue, by reference", () => {
  before(async () => {
    await sqs.start();
    s3.attachTo(sqs);
  });
  after(async () => {
    await s3.stop();
    await sqs.stop();
  });

  it("waits for the queue, then for the queue to allow the bucket, then configures the notification", async () => {
    await s3.create("uploads", uploads);
    const missing = await s3.waitReason("uploads", "NotificationTargetNotReady");
    assert.match(ready(missing)?.message ?? "", /the queue events does not exist/);
    assert.equal(await s3.bucketExists("uploads"), false, "nothing is created before the queue is ready");

    await sqs.create("events", { queueName: "events" });
    await sqs.waitReady("events");
    const notAllowed = await s3.waitUntil("uploads", "waiting for the grant", (o) =>
      /does not allow this bucket/.test(ready(o)?.message ?? ""),
    );
    assert.equal(ready(notAllowed)?.reason, "NotificationTargetNotReady");
    assert.match(
      ready(notAllowed)?.message ?? "",
      /add \{bucketRef: \{name: uploads\}\} to its spec.allowS3Notifications/,
    );

    await sqs.patch("events", { spec: { allowS3Notifications: [{ bucketRef: { name: "uploads" } }] } });
    await s3.waitReady("uploads");
    const queue = await sqs.get("events");
    const arn = queue?.status?.queueArn ?? "";
    const policy = JSON.parse((await sqs.queue("events")).attributes.Policy ?? "{}") as unknown;
    assert.deepEqual(policy, {
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "s3-notifications-uploads",
          Effect: "Allow",
          Principal: { Service: "s3.amazonaws.com" },
          Action: "sqs:SendMessage",
          Resource: arn,
          Condition: { ArnEquals: { "aws:SourceArn": "arn:aws:s3:::uploads" } },
        },
      ],
    });
    const config = await s3.s3().send(new GetBucketNotificationConfigurationCommand({ Bucket: "uploads" }));
    assert.equal(config.QueueConfigurations?.length, 1);
    const q = config.QueueConfigurations?.[0];
    assert.equal(q?.Id, "incoming");
    assert.equal(q?.QueueArn, arn);
    assert.deepEqual(q?.Events, ["s3:ObjectCreated:*"]);
    assert.deepEqual(q?.Filter?.Key?.FilterRules?.map((r) => [r.Name?.toLowerCase(), r.Value]).sort(), [
      ["prefix", "in/"],
      ["suffix", ".csv"],
    ]);
  });

  it("delivers a matching object's creation to the queue, and nothing for other keys", async () => {
    const { url } = await sqs.queue("events");
    const client = s3.s3();
    await client.send(new PutObjectCommand({ Bucket: "uploads", Key: "other/a.csv", Body: "x" }));
    await client.send(new PutObjectCommand({ Bucket: "uploads", Key: "in/a.txt", Body: "x" }));
    await client.send(new PutObjectCommand({ Bucket: "uploads", Key: "in/orders.csv", Body: "x" }));
    const keys = await receiveKeys(url, (k) => k.includes("ObjectCreated:Put in/orders.csv"));
    assert.deepEqual(keys, ["ObjectCreated:Put in/orders.csv"], "only the key matching prefix and suffix");
  });

  it("makes no Kubernetes write and no mutating AWS call on either side when nothing changed", async () => {
    await s3.waitEvent("uploads", "Normal", "Created");
    await s3.waitReconciles(1);
    const writes = await s3.kubeWrites();
    const mutations = [s3.mutations(), sqs.mutations()];
    const reads = s3.proxy.count("GetBucketNotificationConfiguration");
    await s3.patch("uploads", { metadata: { annotations: { "test/bump": "1" } } });
    await sqs.patch("events", { metadata: { annotations: { "test/bump": "1" } } });
    await s3.waitReconciles(2);
    await sqs.waitReconciles(2);
    assert.equal(await s3.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual([s3.mutations(), sqs.mutations()], mutations, "mutating AWS calls");
    assert.ok(
      s3.proxy.count("GetBucketNotificationConfiguration") > reads,
      "the notifications were read again",
    );
  });

  it("leaves EventBridge as it is while eventBridge is unset, and keeps it through a repair of the queues", async () => {
    const client = s3.s3();
    const config = async () =>
      client.send(new GetBucketNotificationConfigurationCommand({ Bucket: "uploads" }));
    const { QueueConfigurations } = await config();
    await client.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: "uploads",
        NotificationConfiguration: { QueueConfigurations, EventBridgeConfiguration: {} },
      }),
    );
    const puts = s3.proxy.count("PutBucketNotificationConfiguration");
    await s3.waitReconciles(2, "requeue_after");
    assert.equal(s3.proxy.count("PutBucketNotificationConfiguration"), puts, "EventBridge on is no drift");

    // The queue removed out of band: the repair writes it back, in the one document that also
    // carries EventBridge, which stays on.
    await client.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: "uploads",
        NotificationConfiguration: { EventBridgeConfiguration: {} },
      }),
    );
    await waitFor(
      "the queue repaired",
      async () => (await config()).QueueConfigurations?.length === 1,
      WAIT_MS,
      200,
    );
    assert.deepEqual((await config()).EventBridgeConfiguration, {}, "EventBridge kept on");
    assert.equal(s3.proxy.count("PutBucketNotificationConfiguration"), puts + 1);
  });

  it("repairs notifications removed out of band, and the queue's grant, each with an Updated Event", async () => {
    await s3
      .s3()
      .send(
        new PutBucketNotificationConfigurationCommand({ Bucket: "uploads", NotificationConfiguration: {} }),
      );
    const { url } = await sqs.queue("events");
    await sqs.sqs().send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { Policy: "" } }));
    await waitFor(
      "both repaired",
      async () => {
        const config = await s3
          .s3()
          .send(new GetBucketNotificationConfigurationCommand({ Bucket: "uploads" }));
        const policy = (await sqs.queue("events")).attributes.Policy ?? "";
        return config.QueueConfigurations?.length === 1 && policy.includes("s3-notifications-uploads");
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "Updated Events",
      async () =>
        (await s3.events("uploads")).some(
          (e) => e.reason === "Updated" && /notifications: 1 queue/.test(e.message),
        ) &&
        (await sqs.events("events")).some((e) => e.reason === "Updated" && /Policy updated/.test(e.message)),
      15_000,
      150,
    );
  });

  it("reports a destination S3 refuses on the bucket", async () => {
    await s3.create("elsewhere", {
      bucketName: "elsewhere",
      notifications: {
        queues: [
          {
            id: "west",
            events: ["s3:ObjectRemoved:*"],
            queueArn: "arn:aws:sqs:us-west-2:123456789012:west",
          },
        ],
      },
    });
    const refused = await s3.waitUntil(
      "elsewhere",
      "Synced=False",
      (o) => cond(o, "Synced")?.status === "False",
    );
    assert.equal(cond(refused, "Synced")?.reason, "InvalidArgument");
    assert.match(cond(refused, "Synced")?.message ?? "", /region/);
    await s3.waitEvent("elsewhere", "Warning", "InvalidArgument");
    await s3.delete("elsewhere");
    await s3.waitGone("elsewhere");
  });

  it("refuses a queue by reference in another region, or a FIFO one", async () => {
    await sqs.create("west", {
      queueName: "west",
      region: "us-west-2",
      allowS3Notifications: [{ bucketRef: { name: "far" } }],
    });
    await sqs.create("ordered", { queueName: "ordered.fifo", fifo: true });
    const target = (queue: string) => ({
      bucketName: `far-${queue}`,
      notifications: { queues: [{ id: "n", events: ["s3:ObjectCreated:*"], queueRef: { name: queue } }] },
    });
    await s3.create("far", target("west"));
    await s3.create("fifo", target("ordered"));
    const far = await s3.waitReason("far", "NotificationTargetMismatch");
    assert.match(ready(far)?.message ?? "", /the queue west is in us-west-2, not in us-east-1/);
    const fifo = await s3.waitReason("fifo", "NotificationTargetMismatch");
    assert.match(ready(fifo)?.message ?? "", /the queue ordered is a FIFO queue/);
    for (const name of ["far", "fifo"]) {
      await s3.delete(name);
      await s3.waitGone(name);
    }
  });

  it("refuses a queue policy that uses the grant's Sid itself", async () => {
    await sqs.create("clash", {
      queueName: "clash",
      allowS3Notifications: [{ bucketRef: { name: "uploads" } }],
      policy: {
        Version: "2012-10-17",
        Statement: [
          { Sid: "s3-notifications-uploads", Effect: "Deny", Principal: "*", Action: "sqs:*", Resource: "*" },
        ],
      },
    });
    const refused = await sqs.waitUntil(
      "clash",
      "Synced=False",
      (o) => cond(o, "Synced")?.reason === "PolicyStatementConflict",
    );
    assert.match(
      cond(refused, "Synced")?.message ?? "",
      /Sid s3-notifications-uploads, which allowS3Notifications manages/,
    );
    assert.equal(await sqs.queueExists("clash"), false);
  });

  it("waits again when the queue is deleted", async () => {
    await sqs.delete("events");
    await sqs.waitGone("events");
    // While the queue is being deleted the bucket already waits for it, with the same reason and
    // a message about its readiness; once it is gone, the message says so.
    const waiting = await s3.waitUntil(
      "uploads",
      "NotificationTargetNotReady: the queue does not exist",
      (o) =>
        ready(o)?.reason === "NotificationTargetNotReady" && /does not exist/.test(ready(o)?.message ?? ""),
    );
    assert.match(ready(waiting)?.message ?? "", /the queue events does not exist/);
  });

  it("leaves the notifications alone once the spec no longer sets them", async () => {
    await s3.patch("uploads", { spec: { notifications: null } });
    await s3.waitReady("uploads");
    const [reads, puts] = [
      s3.proxy.count("GetBucketNotificationConfiguration"),
      s3.proxy.count("PutBucketNotificationConfiguration"),
    ];
    await s3.waitReconciles(3, "requeue_after");
    assert.equal(s3.proxy.count("PutBucketNotificationConfiguration"), puts);
    assert.equal(s3.proxy.count("GetBucketNotificationConfiguration"), reads, "not read any more");
    const config = await s3.s3().send(new GetBucketNotificationConfigurationCommand({ Bucket: "uploads" }));
    assert.equal(config.QueueConfigurations?.length, 1, "left as it was");
  });
});
