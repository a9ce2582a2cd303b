/**
 * S3Bucket spec.notifications.eventBridge against the test AWS: true turns the bucket's
 * EventBridge delivery on at creation (GetBucketNotificationConfiguration answers the empty
 * EventBridgeConfiguration element AWS documents), nothing is written at rest, and a change out
 * of band is put back either way (true and an explicit false), counted under the setting
 * `notifications` with an Updated Event. End to end: an object put into such a bucket reaches an
 * SQS queue through the EventBridge rule docs/aws.md#a-bucket-that-publishes-to-eventbridge
 * gives, as an "Object Created" event with the fields the S3 user guide documents.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import {
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import {
  documentedBucketPattern,
  documentedQueuePolicy,
  ruleToQueue,
} from "../support/change-event-rules.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

describe("S3Bucket notifications.eventBridge", () => {
  const env = new S3Env("s3-eventbridge").hooks();
  const eventBridgeOn = async (bucket: string): Promise<boolean> => {
    const config = await env.s3().send(new GetBucketNotificationConfigurationCommand({ Bucket: bucket }));
    return config.EventBridgeConfiguration !== undefined;
  };
  const putOutOfBand = (bucket: string, eventBridge: boolean) =>
    env.s3().send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: eventBridge ? { EventBridgeConfiguration: {} } : {},
      }),
    );
  const repairs = () =>
    env.op.metric("kubeprovisioner_drift_repairs_total", { kind: "S3Bucket", setting: "notifications" });
  const updated = (bucket: string, text: RegExp) =>
    waitFor(
      `an Updated Event on ${bucket} matching ${String(text)}`,
      async () => (await env.events(bucket)).some((e) => e.reason === "Updated" && text.test(e.message)),
      15_000,
      150,
    );

  it("turns EventBridge on at creation", async () => {
    await env.create("published", { bucketName: "published", notifications: { eventBridge: true } });
    await env.waitReady("published");
    const config = await env
      .s3()
      .send(new GetBucketNotificationConfigurationCommand({ Bucket: "published" }));
    assert.deepEqual(config.EventBridgeConfiguration, {});
    assert.equal(config.QueueConfigurations, undefined);
  });

  it("makes no Kubernetes write and no mutating AWS call at rest", async () => {
    await env.waitEvent("published", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetBucketNotificationConfiguration");
    await env.patch("published", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(
      env.proxy.count("GetBucketNotificationConfiguration") > reads,
      "the configuration was read again",
    );
  });

  it("turns EventBridge back on when it is turned off out of band", async () => {
    const before = await repairs();
    const puts = env.proxy.count("PutBucketNotificationConfiguration");
    await putOutOfBand("published", false);
    await waitFor("EventBridge on again", () => eventBridgeOn("published"), WAIT_MS, 200);
    assert.equal(env.proxy.count("PutBucketNotificationConfiguration"), puts + 1);
    await updated("published", /notifications: 0 queues, EventBridge on/);
    assert.equal(await repairs(), before + 1);
  });

  it("turns EventBridge off when the spec says false and it is turned on out of band", async () => {
    await env.create("quiet", { bucketName: "quiet", notifications: { eventBridge: false } });
    await env.waitReady("quiet");
    assert.equal(await eventBridgeOn("quiet"), false);
    await env.waitReconciles(1);
    const before = await repairs();
    await putOutOfBand("quiet", true);
    await updated("quiet", /notifications: 0 queues, EventBridge off/);
    assert.equal(await eventBridgeOn("quiet"), false);
    assert.equal(await repairs(), before + 1);
  });

  it("turns EventBridge off when the spec changes to false", async () => {
    await env.patch("published", { spec: { notifications: { eventBridge: false } } });
    await waitFor("EventBridge off", async () => !(await eventBridgeOn("published")), WAIT_MS, 200);
  });
});

describe("S3Bucket events through EventBridge to an SQS queue", () => {
  const env = new S3Env("s3-eventbridge-delivery").hooks();
  const sqs = new SqsEnv("s3-eventbridge-delivery");
  before(() => {
    sqs.attachTo(env);
  });

  it("delivers an object's creation in the bucket the rule names, as an Object Created event", async () => {
    await env.create("uploads", { bucketName: "eb-uploads", notifications: { eventBridge: true } });
    await env.create("other", { bucketName: "eb-other", notifications: { eventBridge: true } });
    await env.waitReady("uploads");
    await env.waitReady("other");

    const client = sqs.sqs();
    const url = (await client.send(new CreateQueueCommand({ QueueName: "object-events" }))).QueueUrl ?? "";
    const arn =
      (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] })))
        .Attributes?.QueueArn ?? "";
    await client.send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: { Policy: JSON.stringify(documentedQueuePolicy(arn)) },
      }),
    );
    await ruleToQueue(env.moto.endpoint, {
      name: "uploads-created",
      pattern: documentedBucketPattern("eb-uploads"),
      queueArn: arn,
    });

    await env.s3().send(new PutObjectCommand({ Bucket: "eb-other", Key: "reports/q1.csv", Body: "a,b\n" }));
    const put = await env
      .s3()
      .send(new PutObjectCommand({ Bucket: "eb-uploads", Key: "reports/q1.csv", Body: "a,b\n" }));

    const events: Record<string, unknown>[] = [];
    await waitFor(
      "the Object Created event",
      async () => {
        const out = await client.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        for (const m of out.Messages ?? [])
          events.push(JSON.parse(m.Body ?? "{}") as Record<string, unknown>);
        return events.length > 0;
      },
      WAIT_MS,
      100,
    );
    assert.equal(events.length, 1, "one event, of the bucket the rule names only");
    const [event] = events as [
      {
        version: string;
        id: string;
        "detail-type": string;
        source: string;
        account: string;
        time: string;
        region: string;
        resources: string[];
        detail: {
          bucket: { name: string };
          object: { key: string; size: number; etag: string };
          reason: string;
        };
      },
    ];
    assert.deepEqual(
      [event.version, event["detail-type"], event.source, event.account, event.region, event.resources],
      ["0", "Object Created", "aws.s3", "123456789012", "us-east-1", ["arn:aws:s3:::eb-uploads"]],
    );
    assert.match(event.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(event.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(event.detail.bucket.name, "eb-uploads");
    assert.deepEqual(
      [event.detail.object.key, event.detail.object.size, event.detail.object.etag],
      ["reports/q1.csv", 4, (put.ETag ?? "").replaceAll('"', "")],
    );
    assert.equal(event.detail.reason, "PutObject");
  });
});
