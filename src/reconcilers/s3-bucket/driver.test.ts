import assert from "node:assert/strict";
import { S3_BUCKET_TRAITS } from "./traits.ts";
import { beforeEach, describe, it } from "node:test";
import type { S3Client } from "@aws-sdk/client-s3";
import type { AwsClientSource } from "../../aws/clients.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { applicableGroups, applyChangeSet, type Change } from "../common/changes.ts";
import { InvalidSpecError, type DriverContext } from "../common/driver.ts";
import { actionOfCall } from "../common/iam.ts";
import { context, contextFor } from "../common/testing/context.ts";
import type { VersionRef } from "./bucket-api.ts";
import type { S3BucketObject } from "./model.ts";
import { BucketAppearedError, S3BucketDriver } from "./driver.ts";
import { FORCE_DELETE_HELD_TAG } from "./force-delete.ts";
import { S3_BUCKET_IAM } from "./iam.ts";
import { FakeS3, type FakeBucket } from "./testing/fake-s3.ts";
import { resolveReferences } from "./references.ts";
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
const HELD_PATH = `tags[${JSON.stringify(FORCE_DELETE_HELD_TAG)}]`;

/** The IAM action of each S3 call, as the kind's IAM table names it. */
const actionsOf = (ops: readonly string[]): string[] =>
  ops.map((op) => actionOfCall(S3_BUCKET_IAM, "s3", op));

/** The actions a change set's apply calls: each apply group's distinct actions, in set order. */
const plannedActions = (changes: readonly Change[]): string[] =>
  [...applicableGroups(changes).values()].flatMap((group) => [...new Set(group.flatMap((c) => c.actions))]);
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
  /** The spec's references, resolved as the flow resolves them (no other object in the cache). */
  const refsOf = (obj: S3BucketObject) => resolveReferences(obj, {});
  /** A create as the flow makes it, with the references resolved. */
  const create = (obj: S3BucketObject) => driver.create(obj, "uid-1-1", ctx, refsOf(obj));
  /** A deletion pass as the flow makes it: observe, then delete what was observed. */
  const remove = async (obj: S3BucketObject) =>
    driver.delete(obj, await driver.observe(obj, deleting), deleting);
  /** A reconcile of an existing bucket as the flow makes it: observe, plan, apply the plan. */
  const reconcile = async (obj: S3BucketObject, c: DriverContext = ctx) => {
    const obs = await driver.observe(obj, c);
    assert.ok(obs.exists);
    const set = await driver.plan(obj, obs, c, refsOf(obj));
    return { obs, changes: set.changes, applied: await applyChangeSet(set, c) };
  };

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
      assert.deepEqual(S3_BUCKET_TRAITS.observedFields, ["observedVersioning"]);
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
      const res = await create(bucketObj({ versioning: true, tags: { a: "1" } }));
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
      await create(bucketObj({ region: "us-east-1" }));
      assert.equal(s3.calls[0]?.input.CreateBucketConfiguration, undefined);
      assert.deepEqual(s3.mutations(), ["CreateBucket", "PutBucketTagging"]);
    });

    it("never tags a bucket that appeared before its create, even when S3 says this account owns it", async () => {
      for (const tags of [undefined, { [OWNERSHIP_TAGS.uid]: "uid-2" }]) {
        s3.buckets.set("assets-1", { region: "eu-west-1", tags, versioning: undefined, versions: [] });
        await assert.rejects(create(bucketObj()), BucketAppearedError);
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
        create(bucketObj()),
        (err: unknown) =>
          err instanceof InvalidSpecError &&
          err.reason === "BucketAlreadyExists" &&
          /choose another bucketName/.test(err.message),
      );
    });

    it("refuses too many tags before creating anything", async () => {
      const tags = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
      await assert.rejects(create(bucketObj({ tags })), InvalidSpecError);
      assert.deepEqual(s3.calls, []);
    });
  });

  describe("plan", () => {
    it("plans nothing, and so makes no call at all, when tags and versioning match", async () => {
      await create(bucketObj({ tags: { a: "1" } }));
      s3.calls.length = 0;
      const { changes } = await reconcile(bucketObj({ tags: { a: "1" } }));
      assert.deepEqual(changes, []);
      assert.deepEqual(s3.mutations(), []);
    });

    it("plans each tag and versioning as the spec writes them, and applies the tags in one write of the full set", async () => {
      await create(bucketObj({ versioning: true, tags: { a: "1" } }));
      const b = s3.buckets.get("assets-1");
      assert.ok(b?.tags);
      b.tags = { ...b.tags, a: "changed", stray: "x" };
      const obj = bucketObj({ versioning: false, tags: { a: "1" } });
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      s3.calls.length = 0;
      const set = await driver.plan(obj, obs, ctx, refsOf(obj));
      assert.deepEqual(s3.calls, [], "planning reads nothing more and writes nothing");
      assert.deepEqual(set.changes, [
        {
          path: "spec.tags.a",
          key: "a",
          setting: "tags",
          observed: "changed",
          desired: "1",
          actions: ["s3:PutBucketTagging"],
          disruption: "none",
          description: "tags: set a",
          group: "tags",
        },
        {
          path: "spec.tags.stray",
          key: "stray",
          setting: "tags",
          observed: "x",
          desired: undefined,
          actions: ["s3:PutBucketTagging"],
          disruption: "none",
          description: "tags: removed stray",
          group: "tags",
        },
        {
          path: "spec.versioning",
          setting: "versioning",
          observed: true,
          desired: false,
          actions: ["s3:PutBucketVersioning"],
          disruption: "none",
          description: "versioning: Enabled -> Suspended",
          group: "versioning",
        },
      ]);
      assert.deepEqual(S3_BUCKET_TRAITS.driftSettings, [
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
      await applyChangeSet(set, ctx);
      assert.deepEqual(s3.mutations(), ["PutBucketTagging", "PutBucketVersioning"]);
      assert.equal(b.tags.a, "1");
      assert.equal(b.tags.stray, undefined);
      assert.equal(b.versioning, "Suspended");
      const after = await reconcile(obj);
      assert.equal(after.obs.resource.versioning, "Suspended");
      assert.deepEqual(after.changes, [], "the second plan of an unchanged bucket is empty");
    });

    it("writes exactly the tag changes it is given, keeping the others as the bucket has them", async () => {
      await create(bucketObj({ tags: { a: "1" } }));
      const b = s3.buckets.get("assets-1");
      assert.ok(b?.tags);
      b.tags = { ...b.tags, a: "changed", stray: "x" };
      const obj = bucketObj({ tags: { a: "1" } });
      const obs = await driver.observe(obj, ctx);
      assert.ok(obs.exists);
      const set = await driver.plan(obj, obs, ctx, refsOf(obj));
      await applyChangeSet(set, ctx, (c) => c.key === "stray");
      assert.equal(b.tags.stray, undefined);
      assert.equal(b.tags.a, "changed", "a change left out is not written");
    });

    it("names the actions create calls, in order, and create calls exactly those", async () => {
      assert.deepEqual(driver.createActions(bucketObj()), ["s3:CreateBucket", "s3:PutBucketTagging"]);
      const obj = bucketObj({
        versioning: true,
        objectOwnership: "BucketOwnerEnforced",
        encryption: { algorithm: "AES256", bucketKeyEnabled: false },
        lifecycleRules: [],
        cors: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }],
      });
      assert.deepEqual(driver.createActions(obj), [
        "s3:CreateBucket",
        "s3:PutBucketTagging",
        "s3:PutBucketVersioning",
        "s3:PutEncryptionConfiguration",
        "s3:PutLifecycleConfiguration",
        "s3:PutBucketCORS",
      ]);
      await create(obj);
      assert.deepEqual(actionsOf(s3.mutations()), driver.createActions(obj));
    });
  });

  describe("plan fidelity: applying a plan makes exactly the calls it lists, and the next plan is empty", () => {
    const POLICY = {
      Version: "2012-10-17",
      Statement: [{ Effect: "Deny", Principal: "*", Action: "s3:*", Resource: "arn:aws:s3:::assets-1/*" }],
    };
    const QUEUE = "arn:aws:sqs:eu-west-1:123456789012:q";
    type Spec = Partial<S3BucketObject["spec"]>;
    const scenarios: {
      name: string;
      created: Spec;
      spec?: Spec;
      outOfBand?: (b: FakeBucket) => void;
      paths: string[];
    }[] = [
      {
        name: "a tag edited",
        created: { tags: { a: "1" } },
        spec: { tags: { a: "2", b: "3" } },
        paths: ["spec.tags.a", "spec.tags.b"],
      },
      {
        name: "a tag added out of band",
        created: {},
        outOfBand: (b) => void (b.tags = { ...b.tags, stray: "x" }),
        paths: ["spec.tags.stray"],
      },
      { name: "versioning enabled", created: {}, spec: { versioning: true }, paths: ["spec.versioning"] },
      {
        name: "versioning suspended out of band",
        created: { versioning: true },
        outOfBand: (b) => void (b.versioning = "Suspended"),
        paths: ["spec.versioning"],
      },
      {
        name: "encryption edited",
        created: { encryption: { algorithm: "AES256", bucketKeyEnabled: false } },
        spec: { encryption: { algorithm: "aws:kms", kmsKeyId: "alias/k", bucketKeyEnabled: true } },
        paths: ["spec.encryption"],
      },
      {
        name: "Block Public Access turned off out of band",
        created: {
          publicAccessBlock: {
            blockPublicAcls: true,
            ignorePublicAcls: true,
            blockPublicPolicy: true,
            restrictPublicBuckets: true,
          },
        },
        outOfBand: (b) => void delete b.settings?.GetPublicAccessBlock,
        paths: ["spec.publicAccessBlock"],
      },
      {
        name: "the policy edited",
        created: { policy: POLICY as never },
        spec: { policy: { ...POLICY, Statement: [] } as never },
        paths: ["spec.policy"],
      },
      {
        name: "lifecycle rules added, changed and removed",
        created: {
          lifecycleRules: [
            { id: "a", enabled: true, expirationDays: 1 },
            { id: "b", enabled: true, expirationDays: 2 },
          ],
        },
        spec: {
          lifecycleRules: [
            { id: "b", enabled: true, expirationDays: 3 },
            { id: "c", enabled: true, expirationDays: 4 },
          ],
        },
        paths: ["spec.lifecycleRules[id=a]", "spec.lifecycleRules[id=b]", "spec.lifecycleRules[id=c]"],
      },
      {
        name: "every lifecycle rule removed by an empty list",
        created: { lifecycleRules: [{ id: "a", enabled: true, expirationDays: 1 }] },
        spec: { lifecycleRules: [] },
        paths: ["spec.lifecycleRules[id=a]"],
      },
      {
        name: "notifications and EventBridge",
        created: {
          notifications: { queues: [{ id: "q", events: ["s3:ObjectCreated:*"], queueArn: QUEUE }] } as never,
        },
        spec: { notifications: { queues: [], eventBridge: true } as never },
        paths: ["spec.notifications"],
      },
      {
        name: "replication deleted out of band",
        created: {
          versioning: true,
          replication: {
            roleArn: "arn:aws:iam::123456789012:role/r",
            rules: [
              {
                id: "r",
                priority: 1,
                enabled: true,
                deleteMarkerReplication: false,
                destination: { bucketArn: "arn:aws:s3:::replica" },
              },
            ],
          } as never,
        },
        outOfBand: (b) => void delete b.settings?.GetBucketReplication,
        paths: ["spec.replication"],
      },
      {
        name: "logging to another prefix",
        created: { logging: { targetBucket: "logs-1", targetPrefix: "a/" } },
        spec: { logging: { targetBucket: "logs-1", targetPrefix: "b/" } },
        paths: ["spec.logging"],
      },
      {
        name: "the default retention of Object Lock",
        created: {
          versioning: true,
          objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 9 } },
        },
        spec: {
          versioning: true,
          objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
        },
        paths: ["spec.objectLock.defaultRetention"],
      },
      {
        name: "CORS rules removed by an empty list",
        created: { cors: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }] },
        spec: { cors: [] },
        paths: ["spec.cors"],
      },
      {
        name: "a routing rule added to the website out of band",
        created: { website: { indexDocument: "index.html" } },
        outOfBand: (b) => {
          const doc = b.settings?.GetBucketWebsite;
          if (doc !== undefined) doc.RoutingRules = [{ Redirect: { HostName: "x" } }];
        },
        paths: ["spec.website"],
      },
      {
        name: "Object Ownership edited, with a tag",
        created: { objectOwnership: "ObjectWriter" },
        spec: { objectOwnership: "BucketOwnerEnforced", tags: { a: "1" } },
        paths: ["spec.tags.a", "spec.objectOwnership"],
      },
    ];
    for (const sc of scenarios) {
      it(sc.name, async () => {
        await create(bucketObj(sc.created));
        const b = s3.buckets.get("assets-1");
        assert.ok(b);
        sc.outOfBand?.(b);
        s3.calls.length = 0;
        const { changes } = await reconcile(bucketObj(sc.spec ?? sc.created));
        assert.deepEqual(
          changes.map((c) => c.path),
          sc.paths,
        );
        assert.ok(changes.every((c) => c.disruption === "none"));
        assert.deepEqual(actionsOf(s3.mutations()), plannedActions(changes));
        s3.calls.length = 0;
        assert.deepEqual((await reconcile(bucketObj(sc.spec ?? sc.created))).changes, []);
        assert.deepEqual(s3.mutations(), []);
      });
    }

    it("adopting a bucket: its ownership tags (and the hold of forceDelete) in one write", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: { team: "x" },
        versioning: undefined,
        versions: [],
      });
      const obj = bucketObj({ adoptExisting: true, forceDelete: true, tags: { team: "x" } });
      const { obs, changes } = await reconcile(obj);
      assert.equal(obs.ownership, "foreign");
      assert.ok(
        changes.length > 0 && changes.every((c) => c.ownership === true && c.path.startsWith("tags")),
      );
      assert.ok(changes.some((c) => c.path === HELD_PATH && c.desired === "1"));
      assert.deepEqual(actionsOf(s3.mutations()), plannedActions(changes));
      assert.deepEqual(s3.mutations(), ["PutBucketTagging"]);
      assert.deepEqual((await reconcile(obj)).changes, []);
    });
  });

  describe("status and readiness", () => {
    it("describe an existing bucket as Available and ready", async () => {
      const res = await create(bucketObj());
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
      // The flow may apply the ownership changes alone: the hold is one of them.
      const set = await driver.plan(forced, adoption, ctx, refsOf(forced));
      assert.ok(set.changes.some((c) => c.path === HELD_PATH && c.ownership === true));
      await applyChangeSet(set, ctx, (c) => c.ownership === true);
      assert.equal(s3.buckets.get("assets-1")?.tags?.[FORCE_DELETE_HELD_TAG], "1");
      assert.equal(s3.buckets.get("assets-1")?.tags?.[OWNERSHIP_TAGS.uid], "uid-1");
      assert.deepEqual(s3.mutations(), ["PutBucketTagging"], "one write adopts and holds");

      // A later generation that keeps forceDelete true keeps the hold: the deletion does not empty.
      const later = bucketObject({ forceDelete: true, adoptExisting: true, tags: { a: "1" } }, undefined, {
        generation: 2,
      });
      const seen = await driver.observe(later, ctx);
      assert.ok(seen.exists && seen.ownership === "owned");
      await applyChangeSet(await driver.plan(later, seen, ctx, refsOf(later)), ctx);
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
      await applyChangeSet(await driver.plan(plain, adoption, ctx, refsOf(plain)), ctx);
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
      const { applied } = await reconcile(bucketObj());
      assert.deepEqual(
        applied.map((c) => [c.path, c.observed, c.desired, c.ownership, c.description]),
        [[HELD_PATH, "1", undefined, true, `tags: removed ${FORCE_DELETE_HELD_TAG}`]],
      );
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
        driver.plan(obj, obs, ctx, refsOf(obj)),
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
