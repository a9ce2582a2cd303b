import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { S3Client } from "@aws-sdk/client-s3";
import type { AwsClientSource } from "../../aws/clients.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { InvalidSpecError } from "../common/driver.ts";
import { context, contextFor } from "../common/testing/context.ts";
import type { VersionRef } from "./bucket-api.ts";
import type { S3BucketObject } from "./model.ts";
import { BucketAppearedError, S3BucketDriver } from "./driver.ts";
import { FORCE_DELETE_HELD_TAG } from "./force-delete.ts";
import { FakeS3 } from "./testing/fake-s3.ts";
import { bucketObject } from "./testing/objects.ts";

/** The fake clock's time. */
const NOW = Date.parse("2026-03-01T10:00:00Z");

const ctx = context();
const deleting = context({ deleting: true });

function bucketObj(
  over: Partial<S3BucketObject["spec"]> = {},
  status?: S3BucketObject["status"],
): S3BucketObject {
  return bucketObject(over, status, { generation: 1 });
}

const OURS = { [OWNERSHIP_TAGS.uid]: "uid-1" };
const versions = (n: number): VersionRef[] =>
  Array.from({ length: n }, (_, i) => ({ Key: `k${i}`, VersionId: "null" }));

describe("S3BucketDriver", () => {
  let s3: FakeS3;
  let driver: S3BucketDriver;
  beforeEach(() => {
    s3 = new FakeS3(NOW);
    driver = new S3BucketDriver({
      aws: { client: (() => s3 as unknown as S3Client) as AwsClientSource["client"] },
      clock: new FakeClock(NOW),
      maxDeleteBatchesPerPass: 2,
    });
  });
  /** A deletion pass as the flow makes it: observe, then delete what was observed. */
  const remove = async (obj: S3BucketObject) =>
    driver.delete(obj, await driver.observe(obj, deleting), deleting);

  describe("observe", () => {
    it("reports a missing bucket as absent", async () => {
      assert.deepEqual(await driver.observe(bucketObj(), ctx), { exists: false });
    });

    it("reads tags, versioning and the endpoint of an existing bucket and judges it by its UID tag", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: { ...OURS, a: "1" },
        versioning: "Enabled",
        versions: [],
      });
      const obs = await driver.observe(bucketObj(), ctx);
      assert.ok(obs.exists);
      assert.equal(obs.ownership, "owned");
      assert.deepEqual(obs.resource, {
        name: "assets-1",
        region: "eu-west-1",
        tags: { ...OURS, a: "1" },
        versioning: "Enabled",
        endpoint: "http://s3.test:4566/assets-1",
        settings: {},
      });
    });

    it("reports to an observe-only object the tags and versioning of a bucket it does not own", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: { a: "1" },
        versioning: undefined,
        versions: [],
      });
      const obj = bucketObj({ managementPolicy: "ObserveOnly" });
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      assert.equal(obs.ownership, "foreign");
      assert.deepEqual(driver.observed(obs.resource), {
        tags: { a: "1" },
        status: { observedVersioning: "Disabled" },
      });
      s3.buckets.set("assets-1", { region: "eu-west-1", tags: {}, versioning: "Suspended", versions: [] });
      const again = await driver.observe(obj, ctx);
      assert.ok(again.exists);
      assert.deepEqual(driver.observed(again.resource).status, { observedVersioning: "Suspended" });
      assert.deepEqual(driver.observedFields, ["observedVersioning"]);
    });

    it("takes an untagged bucket as its own only when it was created inside its current create's window", async () => {
      const intent = {
        createToken: "uid-1-1",
        createAttempt: 1,
        createRequestedAt: new Date(NOW - 2_000).toISOString(),
      };
      const created = (at: number): void => {
        s3.buckets.set("assets-1", {
          region: "eu-west-1",
          tags: undefined,
          versioning: undefined,
          versions: [],
          created: new Date(at),
        });
      };
      const born = { creationTimestamp: new Date(NOW - 60_000).toISOString() };
      const judged = async (status: S3BucketObject["status"]): Promise<string | undefined> => {
        const obj = bucketObj({}, status);
        obj.metadata = { ...obj.metadata, ...born };
        // The flow's facts about the object, as the flow derives them from its status.
        const seen = await driver.observe(obj, contextFor(obj, "bucketArn"));
        return seen.exists ? seen.ownership : undefined;
      };
      created(NOW - 1_000);
      assert.equal(await judged(undefined), "foreign", "no create was ever recorded");
      assert.equal(await judged(intent), "owned", "a crash between CreateBucket and the tag write");
      assert.equal(
        await judged({ ...intent, bucketArn: "arn:aws:s3:::assets-1" }),
        "foreign",
        "seen tagged before",
      );
      created(NOW - 3_600_000);
      assert.equal(await judged(intent), "foreign", "it existed before the object");
      const forged = { ...intent, createRequestedAt: new Date(NOW - 7_200_000).toISOString() };
      assert.equal(
        await judged(forged),
        "foreign",
        "a recorded time before the object existed does not widen the window",
      );
      assert.equal(s3.mutations().length, 0);
    });

    it("fails terminally on a name owned by another account and on a bucket in another region", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {},
        versioning: undefined,
        versions: [],
        otherAccount: true,
      });
      await assert.rejects(
        driver.observe(bucketObj(), ctx),
        (err: unknown) => err instanceof InvalidSpecError && err.reason === "BucketAlreadyExists",
      );
      s3.buckets.set("assets-1", { region: "ap-south-1", tags: {}, versioning: undefined, versions: [] });
      await assert.rejects(
        driver.observe(bucketObj(), ctx),
        (err: unknown) =>
          err instanceof InvalidSpecError &&
          err.reason === "BucketInOtherRegion" &&
          /exists in ap-south-1/.test(err.message),
      );
    });
  });

  describe("create", () => {
    it("creates in the region with a LocationConstraint, then tags it and enables versioning when asked", async () => {
      const res = await driver.create(bucketObj({ versioning: true, tags: { a: "1" } }), "uid-1-1", ctx);
      assert.deepEqual(s3.mutations(), ["CreateBucket", "PutBucketTagging", "PutBucketVersioning"]);
      assert.deepEqual(s3.calls[0]?.input.CreateBucketConfiguration, { LocationConstraint: "eu-west-1" });
      const stored = s3.buckets.get("assets-1");
      assert.equal(stored?.region, "eu-west-1");
      assert.equal(stored?.tags?.[OWNERSHIP_TAGS.uid], "uid-1");
      assert.equal(stored?.versioning, "Enabled");
      assert.deepEqual(res.tags, stored?.tags);
      assert.equal(res.versioning, "Enabled");
    });

    it("sends no LocationConstraint in us-east-1 and no versioning call when versioning is off", async () => {
      await driver.create(bucketObj({ region: "us-east-1" }), "uid-1-1", ctx);
      assert.equal(s3.calls[0]?.input.CreateBucketConfiguration, undefined);
      assert.deepEqual(s3.mutations(), ["CreateBucket", "PutBucketTagging"]);
    });

    it("never tags a bucket that appeared before its create, even when S3 says this account owns it", async () => {
      for (const tags of [undefined, { [OWNERSHIP_TAGS.uid]: "uid-2" }]) {
        s3.buckets.set("assets-1", { region: "eu-west-1", tags, versioning: undefined, versions: [] });
        await assert.rejects(driver.create(bucketObj(), "uid-1-1", ctx), BucketAppearedError);
        assert.deepEqual(s3.buckets.get("assets-1")?.tags, tags, "left as it was");
      }
      assert.deepEqual(s3.mutations(), ["CreateBucket", "CreateBucket"]);
    });

    it("reports a name taken by another account as BucketAlreadyExists", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {},
        versioning: undefined,
        versions: [],
        otherAccount: true,
      });
      await assert.rejects(
        driver.create(bucketObj(), "uid-1-1", ctx),
        (err: unknown) =>
          err instanceof InvalidSpecError &&
          err.reason === "BucketAlreadyExists" &&
          /choose another bucketName/.test(err.message),
      );
    });

    it("refuses too many tags before creating anything", async () => {
      const tags = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
      await assert.rejects(driver.create(bucketObj({ tags }), "uid-1-1", ctx), InvalidSpecError);
      assert.deepEqual(s3.calls, []);
    });
  });

  describe("update", () => {
    it("makes no call at all when tags and versioning match", async () => {
      await driver.create(bucketObj({ tags: { a: "1" } }), "uid-1-1", ctx);
      s3.calls.length = 0;
      const obs = await driver.observe(bucketObj({ tags: { a: "1" } }), ctx);
      assert.ok(obs.exists);
      const changes = await driver.update(bucketObj({ tags: { a: "1" } }), obs, ctx);
      assert.deepEqual(changes, []);
      assert.deepEqual(s3.mutations(), []);
    });

    it("writes the full desired tag set over drift and suspends versioning turned off", async () => {
      await driver.create(bucketObj({ versioning: true, tags: { a: "1" } }), "uid-1-1", ctx);
      const b = s3.buckets.get("assets-1");
      assert.ok(b?.tags);
      b.tags = { ...b.tags, a: "changed", stray: "x" };
      const obj = bucketObj({ versioning: false, tags: { a: "1" } });
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      s3.calls.length = 0;
      const changes = await driver.update(obj, obs, ctx);
      assert.deepEqual(changes, [
        { setting: "tags", description: "tags: set a; removed stray" },
        { setting: "versioning", description: "versioning: Enabled -> Suspended" },
      ]);
      assert.deepEqual(driver.driftSettings, [
        "tags",
        "versioning",
        "objectOwnership",
        "encryption",
        "publicAccessBlock",
        "policy",
        "lifecycleRules",
        "notifications",
        "replication",
        "logging",
        "objectLock",
        "cors",
        "website",
      ]);
      assert.deepEqual(s3.mutations(), ["PutBucketTagging", "PutBucketVersioning"]);
      assert.equal(b.tags.a, "1");
      assert.equal(b.tags.stray, undefined);
      assert.equal(b.versioning, "Suspended");
      const after = await driver.observe(obj, ctx);
      assert.equal(after.exists && after.resource.versioning, "Suspended");
    });
  });

  describe("status and readiness", () => {
    it("describe an existing bucket as Available and ready", async () => {
      const res = await driver.create(bucketObj(), "uid-1-1", ctx);
      const { status, readiness } = driver.describe(res);
      assert.deepEqual(status, {
        bucketArn: "arn:aws:s3:::assets-1",
        endpoint: "http://s3.test:4566/assets-1",
        region: "eu-west-1",
        state: "Available",
      });
      assert.deepEqual(readiness, {
        ready: true,
        pending: false,
        reason: "Available",
        message: "bucket assets-1 exists in eu-west-1",
      });
    });
  });

  describe("delete", () => {
    it("deletes an empty bucket of its own", async () => {
      s3.buckets.set("assets-1", { region: "eu-west-1", tags: OURS, versioning: undefined, versions: [] });
      assert.deepEqual(await remove(bucketObj()), { done: true });
      assert.equal(s3.buckets.has("assets-1"), false);
    });

    it("is done at once when the bucket is gone", async () => {
      assert.deepEqual(await remove(bucketObj()), { done: true });
      assert.deepEqual(s3.mutations(), []);
    });

    it("never touches a bucket it does not own", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: { [OWNERSHIP_TAGS.uid]: "uid-2" },
        versioning: undefined,
        versions: versions(1),
      });
      s3.buckets.set("other", { region: "eu-west-1", tags: undefined, versioning: undefined, versions: [] });
      assert.deepEqual(await remove(bucketObj()), {
        done: true,
        leftInPlace: "bucket assets-1 is not owned by this object and was left in place",
      });
      assert.deepEqual(await remove(bucketObj({ bucketName: "other" })), {
        done: true,
        leftInPlace: "bucket other is not owned by this object and was left in place",
      });
      assert.deepEqual(s3.mutations(), []);
    });

    it("blocks on a non-empty bucket without forceDelete and deletes no object", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: OURS,
        versioning: undefined,
        versions: versions(3),
      });
      const outcome = await remove(bucketObj());
      assert.ok(!outcome.done && outcome.blocked === true, JSON.stringify(outcome));
      assert.equal(outcome.reason, "BucketNotEmpty");
      assert.match(outcome.message, /still holds 3 objects/);
      assert.deepEqual(s3.mutations(), []);
      assert.equal(s3.buckets.get("assets-1")?.versions.length, 3);
    });

    it("with forceDelete empties a large bucket in bounded passes of 1000-version batches, then deletes it", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: OURS,
        versioning: "Enabled",
        versions: versions(2500),
      });
      const obj = bucketObj({ forceDelete: true });
      const first = await remove(obj);
      assert.equal(first.done, false);
      assert.equal(!first.done && first.blocked !== true && first.state, "Emptying");
      assert.equal(s3.buckets.get("assets-1")?.versions.length, 500);
      const sizes = s3.calls
        .filter((c) => c.op === "DeleteObjects")
        .map((c) => (c.input.Delete as { Objects: unknown[] }).Objects.length);
      assert.deepEqual(sizes, [1000, 1000]);
      assert.deepEqual(await remove(obj), { done: true });
      assert.equal(s3.buckets.has("assets-1"), false);
    });

    it("holds forceDelete on a bucket adopted while it was set, until it is set again after the adoption", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: { team: "finance" },
        versioning: undefined,
        versions: versions(2),
      });
      // Adopted with forceDelete already true (generation 1): the same tag write records the hold.
      const forced = bucketObject({ forceDelete: true, adoptExisting: true }, undefined, { generation: 1 });
      const adoption = await driver.observe(forced, ctx);
      assert.ok(adoption.exists && adoption.ownership === "foreign");
      await driver.update(forced, adoption, ctx);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], "1");
      assert.equal(s3.buckets.get("assets-1")?.tags?.[OWNERSHIP_TAGS.uid], "uid-1");
      assert.deepEqual(s3.mutations(), ["PutBucketTagging"], "one write adopts and holds");

      // A later generation that keeps forceDelete true keeps the hold: the deletion does not empty.
      const later = bucketObject({ forceDelete: true, adoptExisting: true, tags: { a: "1" } }, undefined, {
        generation: 2,
      });
      const seen = await driver.observe(later, ctx);
      assert.ok(seen.exists && seen.ownership === "owned");
      await driver.update(later, seen, ctx);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], "1");
      s3.calls.length = 0;
      const held = await remove(later);
      assert.ok(!held.done && held.blocked === true, JSON.stringify(held));
      assert.equal(held.reason, "BucketNotEmpty");
      assert.match(
        held.message,
        /still holds 2 objects.*already true when this object adopted bucket assets-1 \(generation 1\)/,
      );
      assert.match(
        held.message,
        /set spec\.forceDelete to false, wait until the operator has removed the compute\.cloud\.com\/force-delete-held tag/,
      );
      assert.deepEqual(s3.mutations(), [], "nothing deleted");

      // forceDelete seen false (here during the deletion) releases the hold; set true again, it empties.
      const off = bucketObject({ forceDelete: false, adoptExisting: true }, undefined, { generation: 3 });
      const blocked = await remove(off);
      assert.ok(!blocked.done && blocked.blocked === true);
      assert.match(blocked.message, /set spec\.forceDelete to true/);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], undefined);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[OWNERSHIP_TAGS.uid], "uid-1", "still ours");
      assert.equal(s3.buckets.get("assets-1")?.versions.length, 2);
      const on = bucketObject({ forceDelete: true, adoptExisting: true }, undefined, { generation: 4 });
      assert.deepEqual(await remove(on), { done: true });
      assert.equal(s3.buckets.has("assets-1"), false);
    });

    it("adopting without forceDelete holds nothing, and a steady reconcile with forceDelete false drops a hold", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {},
        versioning: undefined,
        versions: versions(1),
      });
      const plain = bucketObject({ adoptExisting: true }, undefined, { generation: 1 });
      const adoption = await driver.observe(plain, ctx);
      assert.ok(adoption.exists);
      await driver.update(plain, adoption, ctx);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], undefined);
      // forceDelete set in a later generation counts at once.
      assert.deepEqual(
        (await remove(bucketObject({ forceDelete: true }, undefined, { generation: 2 }))).done,
        true,
      );

      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {
          ...ownershipTags({ uid: "uid-1", namespace: "team", name: "assets", kind: "S3Bucket" }),
          [FORCE_DELETE_HELD_TAG]: "1",
        },
        versioning: undefined,
        versions: [],
      });
      const obj = bucketObj();
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      const changes = await driver.update(obj, obs, ctx);
      assert.deepEqual(changes, [{ setting: "tags", description: `tags: removed ${FORCE_DELETE_HELD_TAG}` }]);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], undefined);
    });

    it("refuses an adoption whose hold does not fit under the tag limit, before writing", async () => {
      s3.buckets.set("assets-1", { region: "eu-west-1", tags: {}, versioning: undefined, versions: [] });
      const tags = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`k${i}`, "v"]));
      const obj = bucketObject({ forceDelete: true, adoptExisting: true, tags }, undefined, {
        generation: 1,
      });
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      s3.calls.length = 0;
      await assert.rejects(
        driver.update(obj, obs, ctx),
        /force-delete-held tag: remove one key from spec\.tags/,
      );
      assert.deepEqual(s3.mutations(), []);
    });

    it("releases a bucket it cannot read unless it recorded it as its own", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {},
        versioning: undefined,
        versions: [],
        otherAccount: true,
      });
      assert.deepEqual(await remove(bucketObj({}, { createToken: "uid-1-1" })), {
        done: true,
        leftInPlace: "bucket assets-1 is not accessible to the operator and was left in place",
      });
      const outcome = await remove(bucketObj({}, { bucketArn: "arn:aws:s3:::assets-1" }));
      assert.ok(!outcome.done && outcome.blocked === true, JSON.stringify(outcome));
      assert.equal(outcome.reason, "BucketAccessDenied");
      assert.deepEqual(s3.mutations(), []);
    });
  });
});
