/**
 * Ownership rules for buckets, tried as a tenant holding namespaced rights (and write on status)
 * would try to seize another's bucket: cross-namespace adoption, claiming a bucket created after
 * the object lost its own, forged status, and adoption the cluster admin did not grant (none by
 * default; granted per namespace by --adoption-namespaces). In every case the victim's
 * bucket, its tags and its data survive, the attacker's object is refused with the stated reason,
 * and deleting the attacker's object changes nothing in AWS.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketTaggingCommand,
  GetObjectCommand,
  ListBucketsCommand,
  PutBucketTaggingCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { waitFor } from "../support/process.ts";
import { ready } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

describe("S3Bucket ownership: nothing can be taken from another object", () => {
  const env = new S3Env("team-a").hooks();

  /** Puts one object into `bucket` and returns a check that it is still there, unchanged. */
  async function withData(bucket: string): Promise<() => Promise<void>> {
    await env.s3().send(new PutObjectCommand({ Bucket: bucket, Key: "ledger.csv", Body: "a,b\n1,2\n" }));
    return async () => {
      const got = await env.s3().send(new GetObjectCommand({ Bucket: bucket, Key: "ledger.csv" }));
      assert.equal(await got.Body?.transformToString(), "a,b\n1,2\n", `the data in ${bucket} survives`);
    };
  }

  /** The mutating S3 calls the operator made since `before` (from {@link S3Env.mutations}). */
  const mutationsSince = (before: number[]): number[] => env.mutations().map((n, i) => n - (before[i] ?? 0));
  const none = (): number[] => env.kind.mutating.map(() => 0);

  /** Overwrites the status of object `name` in `ns` as a tenant with write on status could. */
  async function forgeStatus(ns: string, name: string, status: Record<string, unknown>): Promise<void> {
    const path = `/apis/compute.cloud.com/v1/namespaces/${ns}/s3buckets/${name}`;
    const cur = (await env.cp.request("GET", path)).body as { status?: Record<string, unknown> };
    const res = await env.cp.request("PUT", `${path}/status`, {
      ...cur,
      status: { ...cur.status, ...status },
    });
    assert.equal(res.status, 200, res.text);
  }

  it("refuses another namespace's bucket even with adoptExisting and forceDelete; deleting the attacker touches nothing", async () => {
    const victim = await env.create("data", { bucketName: "team-a-data" });
    await env.waitReady("data");
    const intact = await withData("team-a-data");
    const tagsBefore = await env.bucketTags("team-a-data");
    assert.equal(tagsBefore[OWNERSHIP_TAGS.uid], victim.metadata.uid);

    const teamB = await env.objectsIn("team-b");
    const before = env.mutations();
    await teamB.create("data", { bucketName: "team-a-data", adoptExisting: true, forceDelete: true });
    const refused = await teamB.waitReason("data", "OwnedByAnotherObject");
    assert.equal(ready(refused)?.status, "False");
    assert.match(ready(refused)?.message ?? "", /belongs to S3Bucket team-a\/data/);
    await teamB.waitEvent("data", "Warning", "OwnedByAnotherObject");

    await teamB.delete("data");
    await teamB.waitGone("data");
    assert.deepEqual(mutationsSince(before), none(), "no mutating S3 call for the attacker");
    await teamB.waitEvent("data", "Normal", "Released");
    assert.equal(await teamB.hasEvent("data", "Normal", "Deleted"), false, "no Deleted Event");
    assert.deepEqual(await env.bucketTags("team-a-data"), tagsBefore, "the victim's tags are unchanged");
    await intact();
    assert.equal(ready(await env.get("data"))?.status, "True", "the victim's object is still Ready");
  });

  it("takes a bucket whose ownership tags were stripped out of band for foreign, and leaves it be", async () => {
    await env.create("stripped", { bucketName: "team-a-stripped", tags: { app: "x" } });
    await env.waitReady("stripped");
    await env.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "team-a-stripped",
        Tagging: { TagSet: [{ Key: "owner", Value: "finance" }] },
      }),
    );
    const intact = await withData("team-a-stripped");
    const before = env.mutations();
    const refused = await env.waitReason("stripped", "NotOwned");
    assert.equal(ready(refused)?.status, "False");
    await env.patch("stripped", { spec: { forceDelete: true } });
    await env.delete("stripped");
    await env.waitGone("stripped");
    assert.deepEqual(mutationsSince(before), none());
    assert.deepEqual(await env.bucketTags("team-a-stripped"), { owner: "finance" });
    await intact();
  });

  it("does not claim a bucket someone creates after the object lost its own", async () => {
    await env.create("lost", { bucketName: "team-a-lost", onDeletedOutOfBand: "Report" });
    await env.waitReady("lost");
    // moto keeps a deleted bucket's tags for a new bucket of the same name; AWS does not.
    await env.s3().send(new DeleteBucketTaggingCommand({ Bucket: "team-a-lost" }));
    await env.s3().send(new DeleteBucketCommand({ Bucket: "team-a-lost" }));
    await env.waitReason("lost", "DeletedOutOfBand");

    // Someone else makes a bucket of that name in the account, by other means, and fills it.
    await env.s3().send(new CreateBucketCommand({ Bucket: "team-a-lost" }));
    const intact = await withData("team-a-lost");
    const before = env.mutations();
    const refused = await env.waitReason("lost", "NotOwned");
    assert.match(ready(refused)?.message ?? "", /not owned by this object/);
    assert.deepEqual(await env.bucketTags("team-a-lost"), {}, "never tagged");

    await env.patch("lost", { spec: { forceDelete: true } });
    await env.delete("lost");
    await env.waitGone("lost");
    assert.deepEqual(mutationsSince(before), none());
    assert.equal(await env.bucketExists("team-a-lost"), true);
    await intact();
  });

  it("trusts no forged status: a recorded token and request time do not make an older bucket its own", async () => {
    await env.s3().send(new CreateBucketCommand({ Bucket: "payroll" }));
    const intact = await withData("payroll");
    // The bucket must be older than the object by more than the tolerated clock skew (1 s, in
    // whole seconds): wait until S3's creation date says so.
    const made = (await env.s3().send(new ListBucketsCommand({ Prefix: "payroll" }))).Buckets?.[0]
      ?.CreationDate;
    await waitFor(
      "the bucket to be 3 s old",
      async () => Date.now() - (made?.getTime() ?? 0) > 3000,
      10_000,
      200,
    );
    const before = env.mutations();
    const attacker = await env.create("payroll", { bucketName: "payroll", forceDelete: true });
    await env.waitReason("payroll", "NotOwned");

    // Claim the create window: the current token, no bucket recorded, a request time long ago.
    await forgeStatus(env.ns, "payroll", {
      createToken: `${attacker.metadata.uid}-1`,
      createAttempt: 1,
      createRequestedAt: "2020-01-01T00:00:00Z",
    });
    await env.patch("payroll", { spec: { tags: { retry: "1" } } }); // a new generation: reconciled again
    const still = await env.waitUntil(
      "payroll",
      "NotOwned for the new generation",
      (o) => ready(o)?.reason === "NotOwned" && o?.status?.observedGeneration === o?.metadata.generation,
    );
    assert.equal(still?.status?.bucketArn, undefined);

    await env.delete("payroll");
    await env.waitGone("payroll");
    assert.deepEqual(mutationsSince(before), none());
    assert.deepEqual(await env.bucketTags("payroll"), {});
    await intact();
  });

  it("by default refuses, writing nothing, a bucket made outside the operator and one another namespace left; takes back its own", async () => {
    await env.s3().send(new CreateBucketCommand({ Bucket: "legacy-logs" }));
    const intact = await withData("legacy-logs");
    await env.create("kept", { bucketName: "team-a-kept", deletionPolicy: "Retain" });
    await env.waitReady("kept");
    await env.delete("kept");
    await env.waitGone("kept");
    const keptTags = await env.bucketTags("team-a-kept");
    const before = env.mutations();

    await env.create("legacy-logs", { bucketName: "legacy-logs", adoptExisting: true, forceDelete: true });
    const refused = await env.waitReason("legacy-logs", "AdoptionNotAllowed");
    assert.equal(ready(refused)?.status, "False");
    assert.match(
      ready(refused)?.message ?? "",
      /the bucket exists in AWS and was never managed by this operator; adopting it is a right the cluster admin grants: objects of namespace team-a that act with the operator's own AWS identity may not adopt; the cluster admin grants it with --adoption=enabled \(every namespace\) or --adoption-namespaces=team-a/,
    );
    await env.waitEvent("legacy-logs", "Warning", "AdoptionNotAllowed");
    const teamC = await env.objectsIn("team-c");
    await teamC.create("heir", { bucketName: "team-a-kept", adoptExisting: true });
    const other = await teamC.waitReason("heir", "AdoptionNotAllowed");
    assert.match(ready(other)?.message ?? "", /was left by S3Bucket team-a\/kept of another namespace/);
    await teamC.waitEvent("heir", "Warning", "AdoptionNotAllowed");
    assert.deepEqual(mutationsSince(before), none(), "nothing written to AWS");
    assert.deepEqual(await env.bucketTags("legacy-logs"), {});
    assert.deepEqual(await env.bucketTags("team-a-kept"), keptTags);

    // The namespace that left the bucket (deletionPolicy Retain) takes it back on adoptExisting alone.
    await env.create("back", { bucketName: "team-a-kept", adoptExisting: true });
    const back = await env.waitReady("back");
    await env.waitEvent("back", "Normal", "Adopted");
    assert.equal((await env.bucketTags("team-a-kept"))[OWNERSHIP_TAGS.uid], back.metadata.uid);

    for (const [objs, name] of [
      [teamC, "heir"],
      [env.objects, "legacy-logs"],
      [env.objects, "back"],
    ] as const) {
      await objs.delete(name);
      await objs.waitGone(name);
    }
    assert.equal(
      await env.bucketExists("team-a-kept"),
      false,
      "a bucket taken back is the object's to delete",
    );
    assert.deepEqual(await env.bucketTags("legacy-logs"), {});
    await intact();
  });

  it("with --adoption-namespaces adopts a bucket made outside the operator in the listed namespaces only", async () => {
    await env.op.stop();
    await env.startOperator(["--adoption-namespaces=team-g"]);
    try {
      for (const name of ["outside-g", "outside-h"])
        await env.s3().send(new CreateBucketCommand({ Bucket: name }));
      const granted = await env.objectsIn("team-g");
      const other = await env.objectsIn("team-h");
      await other.create("b", { bucketName: "outside-h", adoptExisting: true });
      await granted.create("b", { bucketName: "outside-g", adoptExisting: true });
      const adopted = await granted.waitReady("b");
      await granted.waitEvent("b", "Normal", "Adopted");
      assert.equal((await env.bucketTags("outside-g"))[OWNERSHIP_TAGS.uid], adopted.metadata.uid);
      const refused = await other.waitReason("b", "AdoptionNotAllowed");
      assert.match(ready(refused)?.message ?? "", /--adoption-namespaces=team-h/);
      assert.deepEqual(await env.bucketTags("outside-h"), {});

      for (const objs of [granted, other]) {
        await objs.delete("b");
        await objs.waitGone("b");
      }
      assert.equal(
        await env.bucketExists("outside-g"),
        false,
        "an adopted bucket is the adopter's to delete",
      );
      assert.equal(await env.bucketExists("outside-h"), true);
    } finally {
      await env.op.stop();
      await env.startOperator();
    }
  });
});
