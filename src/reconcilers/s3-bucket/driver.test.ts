import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { S3Client } from "@aws-sdk/client-s3";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { AwsError, type AwsErrorKind } from "../../aws/errors.ts";
import { fromS3TagSet, type TagMap } from "../../aws/ownership.ts";
import { silentLogger } from "../../runtime/logging.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { DeletionBlockedError, InvalidSpecError, type DriverContext } from "../common/driver.ts";
import type { VersionRef } from "./bucket-api.ts";
import type { S3BucketObject } from "./bucket.ts";
import { BucketAppearedError, S3BucketDriver } from "./driver.ts";
import { bucketObject } from "./testing/objects.ts";

interface FakeBucket {
  region: string;
  tags: TagMap | undefined;
  versioning: "Enabled" | "Suspended" | undefined;
  versions: VersionRef[];
  otherAccount?: boolean;
  /** When S3 says it was created. @default the fake clock's time when CreateBucket made it, else NOW */
  created?: Date;
}

/** The fake clock's time. */
const NOW = Date.parse("2026-03-01T10:00:00Z");

function awsError(kind: AwsErrorKind, code: string, httpStatus: number): AwsError {
  return new AwsError({ kind, code, service: "s3", operation: "fake", message: code, httpStatus });
}

/** An in-memory S3 for the driver's logic: every call is logged by command name. */
class FakeS3 {
  readonly buckets = new Map<string, FakeBucket>();
  readonly calls: { op: string; input: Record<string, unknown> }[] = [];
  readonly config = new S3Client({
    region: "us-east-1",
    endpoint: "http://s3.test:4566",
    forcePathStyle: true,
  }).config;

  mutations(): string[] {
    return this.calls.map((c) => c.op).filter((op) => !/^(Head|Get|List)/.test(op));
  }

  #get(name: string): FakeBucket {
    const b = this.buckets.get(name);
    if (b === undefined) throw awsError("not-found", "NoSuchBucket", 404);
    return b;
  }

  async send(cmd: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
    const op = cmd.constructor.name.replace(/Command$/, "");
    const input = cmd.input;
    this.calls.push({ op, input });
    const name = String(input.Bucket);
    switch (op) {
      case "HeadBucket": {
        const b = this.buckets.get(name);
        if (b === undefined) throw awsError("not-found", "NotFound", 404);
        if (b.otherAccount) throw awsError("terminal", "HTTP403", 403);
        return { BucketRegion: b.region };
      }
      case "GetBucketTagging": {
        const b = this.#get(name);
        if (b.tags === undefined) throw awsError("not-found", "NoSuchTagSet", 404);
        return { TagSet: Object.entries(b.tags).map(([Key, Value]) => ({ Key, Value })) };
      }
      case "PutBucketTagging":
        this.#get(name).tags = fromS3TagSet(
          (input.Tagging as { TagSet: { Key: string; Value: string }[] }).TagSet,
        );
        return {};
      case "GetBucketVersioning":
        return { Status: this.#get(name).versioning };
      case "PutBucketVersioning":
        this.#get(name).versioning = (
          input.VersioningConfiguration as { Status: "Enabled" | "Suspended" }
        ).Status;
        return {};
      case "CreateBucket": {
        const b = this.buckets.get(name);
        if (b?.otherAccount) throw awsError("terminal", "BucketAlreadyExists", 409);
        if (b !== undefined) throw awsError("conflict", "BucketAlreadyOwnedByYou", 409);
        const cfg = input.CreateBucketConfiguration as { LocationConstraint?: string } | undefined;
        this.buckets.set(name, {
          region: cfg?.LocationConstraint ?? "us-east-1",
          tags: undefined,
          versioning: undefined,
          versions: [],
          created: new Date(NOW),
        });
        return {};
      }
      case "ListBuckets": {
        const prefix = String(input.Prefix ?? "");
        return {
          Buckets: [...this.buckets.entries()]
            .filter(([n]) => n.startsWith(prefix))
            .map(([Name, b]) => ({ Name, CreationDate: b.created ?? new Date(NOW) })),
        };
      }
      case "ListObjectVersions": {
        const b = this.#get(name);
        const max = Number(input.MaxKeys);
        return {
          Versions: b.versions.slice(0, max).map((v) => ({ Key: v.Key, VersionId: v.VersionId })),
          IsTruncated: b.versions.length > max,
        };
      }
      case "DeleteObjects": {
        const b = this.#get(name);
        const gone = (input.Delete as { Objects: VersionRef[] }).Objects;
        b.versions = b.versions.filter(
          (v) => !gone.some((g) => g.Key === v.Key && g.VersionId === v.VersionId),
        );
        return {};
      }
      case "DeleteBucket": {
        const b = this.#get(name);
        if (b.versions.length > 0) throw awsError("conflict", "BucketNotEmpty", 409);
        this.buckets.delete(name);
        return {};
      }
      default:
        throw new Error(`fake S3 does not implement ${op}`);
    }
  }
}

const ctx: DriverContext = { logger: silentLogger, signal: new AbortController().signal };

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
    s3 = new FakeS3();
    driver = new S3BucketDriver({
      aws: { s3: () => s3 as unknown as S3Client },
      clock: new FakeClock(NOW),
      maxDeleteBatchesPerPass: 2,
    });
  });

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
        const seen = await driver.observe(obj, ctx);
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

  describe("sync", () => {
    it("makes no call at all when tags and versioning match", async () => {
      await driver.create(bucketObj({ tags: { a: "1" } }), "uid-1-1", ctx);
      s3.calls.length = 0;
      const obs = await driver.observe(bucketObj({ tags: { a: "1" } }), ctx);
      assert.ok(obs.exists);
      const { changes } = await driver.sync(bucketObj({ tags: { a: "1" } }), obs.resource, ctx);
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
      const { changes, resource } = await driver.sync(obj, obs.resource, ctx);
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
      ]);
      assert.deepEqual(s3.mutations(), ["PutBucketTagging", "PutBucketVersioning"]);
      assert.equal(b.tags.a, "1");
      assert.equal(b.tags.stray, undefined);
      assert.equal(b.versioning, "Suspended");
      assert.equal(resource.versioning, "Suspended");
    });
  });

  describe("status and readiness", () => {
    it("describe an existing bucket as Available and ready", async () => {
      const res = await driver.create(bucketObj(), "uid-1-1", ctx);
      assert.deepEqual(driver.status(bucketObj(), res), {
        bucketArn: "arn:aws:s3:::assets-1",
        endpoint: "http://s3.test:4566/assets-1",
        region: "eu-west-1",
        state: "Available",
      });
      assert.deepEqual(driver.readiness(res), {
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
      assert.deepEqual(await driver.delete(bucketObj(), ctx), { done: true });
      assert.equal(s3.buckets.has("assets-1"), false);
    });

    it("is done at once when the bucket is gone", async () => {
      assert.deepEqual(await driver.delete(bucketObj(), ctx), { done: true });
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
      assert.deepEqual(await driver.delete(bucketObj(), ctx), {
        done: true,
        leftInPlace: "bucket assets-1 is not owned by this object and was left in place",
      });
      assert.deepEqual(await driver.delete(bucketObj({ bucketName: "other" }), ctx), {
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
      await assert.rejects(
        driver.delete(bucketObj(), ctx),
        (err: unknown) =>
          err instanceof DeletionBlockedError &&
          err.reason === "BucketNotEmpty" &&
          /still holds 3 objects/.test(err.message),
      );
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
      const first = await driver.delete(obj, ctx);
      assert.equal(first.done, false);
      assert.equal(!first.done && first.state, "Emptying");
      assert.equal(s3.buckets.get("assets-1")?.versions.length, 500);
      const sizes = s3.calls
        .filter((c) => c.op === "DeleteObjects")
        .map((c) => (c.input.Delete as { Objects: unknown[] }).Objects.length);
      assert.deepEqual(sizes, [1000, 1000]);
      assert.deepEqual(await driver.delete(obj, ctx), { done: true });
      assert.equal(s3.buckets.has("assets-1"), false);
    });

    it("releases a bucket it cannot read unless it recorded it as its own", async () => {
      s3.buckets.set("assets-1", {
        region: "eu-west-1",
        tags: {},
        versioning: undefined,
        versions: [],
        otherAccount: true,
      });
      assert.deepEqual(await driver.delete(bucketObj({}, { createToken: "uid-1-1" }), ctx), {
        done: true,
        leftInPlace: "bucket assets-1 is not accessible to the operator and was left in place",
      });
      await assert.rejects(
        driver.delete(bucketObj({}, { bucketArn: "arn:aws:s3:::assets-1" }), ctx),
        (err: unknown) => err instanceof DeletionBlockedError && err.reason === "BucketAccessDenied",
      );
      assert.deepEqual(s3.mutations(), []);
    });
  });
});
