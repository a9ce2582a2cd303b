/**
 * The tag policy on the real API server and moto: `--default-tags` merged under spec.tags (the
 * spec wins) and drift-repaired like them, and `--ignore-tag-prefixes` keeping other tools' tags,
 * for a service that writes tags in increments (SQS TagQueue/UntagQueue) and one that replaces
 * the whole set (S3 PutBucketTagging), on one operator.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PutBucketTaggingCommand } from "@aws-sdk/client-s3";
import { TagQueueCommand, UntagQueueCommand } from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "tag-policy";
const sqs = new SqsEnv(NS, [
  "--default-tags=team=platform,env=prod",
  "--ignore-tag-prefixes=backup:,CostCenter",
]);
const s3 = new S3Env(NS);

/** The tags without the operator's ownership tags. */
const userTags = (tags: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(tags).filter(([k]) => !(Object.values(OWNERSHIP_TAGS) as string[]).includes(k)),
  );

describe("tag policy", () => {
  before(async () => {
    await sqs.start();
    s3.attachTo(sqs);
  });
  after(async () => {
    await s3.stop();
    await sqs.stop();
  });

  it("SQS: default tags go under spec.tags, are repaired, and ignored prefixes are never removed or overwritten", async () => {
    await sqs.create("orders", { tags: { env: "dev", app: "shop", "backup:plan": "weekly" } });
    await sqs.waitReady("orders");
    const created = (await sqs.queue("orders")).tags;
    assert.deepEqual(userTags(created), {
      app: "shop",
      "backup:plan": "weekly",
      env: "dev",
      team: "platform",
    });
    assert.equal(created[OWNERSHIP_TAGS.managedBy] !== undefined, true);

    // Another tool changes its own tag, adds one under an ignored prefix (any case), one that is
    // nobody's, and overwrites a default tag.
    const { url } = await sqs.queue("orders");
    await sqs.sqs().send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["team"] }));
    await sqs.sqs().send(
      new TagQueueCommand({
        QueueUrl: url,
        Tags: { "backup:plan": "daily", costcenter: "42", stray: "x", env: "test" },
      }),
    );
    await waitFor(
      "the operator to repair the queue's tags",
      async () => {
        const t = userTags((await sqs.queue("orders")).tags);
        return t.team === "platform" && t.env === "dev" && t.stray === undefined;
      },
      WAIT_MS,
      200,
    );
    assert.deepEqual(userTags((await sqs.queue("orders")).tags), {
      app: "shop",
      "backup:plan": "daily",
      costcenter: "42",
      env: "dev",
      team: "platform",
    });
    await sqs.waitEvent("orders", "Normal", "Updated");
  });

  it("S3: the whole-set writer keeps the ignored tags with their values while it repairs the rest", async () => {
    await s3.create("tag-policy-assets", { tags: { app: "web" } });
    await s3.waitReady("tag-policy-assets");
    assert.deepEqual(userTags(await s3.bucketTags("tag-policy-assets")), {
      app: "web",
      env: "prod",
      team: "platform",
    });

    const current = await s3.bucketTags("tag-policy-assets");
    const tampered = { ...current, team: "someone", "Backup:vault": "v1", stray: "x" };
    await s3.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "tag-policy-assets",
        Tagging: { TagSet: Object.entries(tampered).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
    await waitFor(
      "the operator to repair the bucket's tags",
      async () => {
        const t = await s3.bucketTags("tag-policy-assets");
        return t.team === "platform" && t.stray === undefined;
      },
      WAIT_MS,
      200,
    );
    assert.deepEqual(userTags(await s3.bucketTags("tag-policy-assets")), {
      app: "web",
      "Backup:vault": "v1",
      env: "prod",
      team: "platform",
    });
  });

  it("a converged object with default and ignored tags makes no mutating call and no Kubernetes write", async () => {
    await sqs.waitPolls(1);
    const sqsBefore = sqs.mutations();
    const s3Before = s3.mutations();
    const writes = await sqs.kubeWrites();
    await sqs.waitPolls(3);
    assert.deepEqual(sqs.mutations(), sqsBefore);
    assert.deepEqual(s3.mutations(), s3Before);
    assert.equal(await sqs.kubeWrites(), writes);
  });
});
