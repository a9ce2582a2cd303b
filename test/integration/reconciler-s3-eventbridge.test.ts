/**
 * S3Bucket spec.notifications.eventBridge against the test AWS: true turns the bucket's
 * EventBridge delivery on at creation (GetBucketNotificationConfiguration answers the empty
 * EventBridgeConfiguration element AWS documents), nothing is written at rest, and a change out
 * of band is put back either way (true and an explicit false), counted under the setting
 * `notifications` with an Updated Event.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
} from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

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
