import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { S3Client } from "@aws-sdk/client-s3";
import { AwsError } from "../../aws/errors.ts";
import { BucketApi } from "./bucket-api.ts";

/** A client whose every call answers with `answer` (thrown when it is an Error or AwsError-like). */
function clientAnswering(answer: unknown): { client: S3Client; inputs: unknown[] } {
  const inputs: unknown[] = [];
  const client = {
    send: async (cmd: { input: unknown }) => {
      inputs.push(cmd.input);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as S3Client;
  return { client, inputs };
}

/**
 * What the SDK throws for a HeadBucket error (no body): `NotFound` for 404, else `Unknown` with
 * the status, and the response (headers included) as a non-enumerable `$response`.
 */
function sdkError(status: number, headers: Record<string, string> = {}): Error {
  const err = Object.assign(new Error("UnknownError"), {
    name: status === 404 ? "NotFound" : "Unknown",
    $fault: status >= 500 ? "server" : "client",
    $metadata: { httpStatusCode: status },
  });
  Object.defineProperty(err, "$response", { value: { statusCode: status, headers }, enumerable: false });
  return err;
}

const api = (client: S3Client, region = "eu-west-1") => new BucketApi({ client, bucket: "b", region });

describe("BucketApi.head", () => {
  it("tells a missing bucket, a present one with its region, and one of another account apart", async () => {
    assert.deepEqual(await api(clientAnswering(sdkError(404)).client).head(), { kind: "absent" });
    assert.deepEqual(await api(clientAnswering({ BucketRegion: "eu-west-1" }).client).head(), {
      kind: "present",
      region: "eu-west-1",
    });
    assert.deepEqual(
      await api(clientAnswering(sdkError(403, { "x-amz-bucket-region": "eu-west-1" })).client).head(),
      { kind: "forbidden" },
    );
  });

  it("reads the bucket's region from AWS's redirect", async () => {
    const { client } = clientAnswering(sdkError(301, { "x-amz-bucket-region": "ap-south-1" }));
    assert.deepEqual(await api(client).head(), { kind: "elsewhere", region: "ap-south-1" });
  });

  it("throws other failures as classified AwsErrors", async () => {
    const { client } = clientAnswering(sdkError(503));
    await assert.rejects(
      api(client).head(),
      (err: unknown) => err instanceof AwsError && err.kind === "retryable",
    );
  });
});

describe("BucketApi.create", () => {
  it("sends a LocationConstraint outside us-east-1 only", async () => {
    const eu = clientAnswering({});
    assert.equal(await api(eu.client).create(), "created");
    assert.deepEqual(eu.inputs[0], {
      Bucket: "b",
      CreateBucketConfiguration: { LocationConstraint: "eu-west-1" },
    });
    const us = clientAnswering({});
    await api(us.client, "us-east-1").create();
    assert.deepEqual(us.inputs[0], { Bucket: "b" });
  });

  it("takes BucketAlreadyOwnedByYou as success and lets BucketAlreadyExists through as terminal", async () => {
    const owned = Object.assign(new Error("owned"), {
      name: "BucketAlreadyOwnedByYou",
      $fault: "client",
      $metadata: { httpStatusCode: 409 },
    });
    assert.equal(await api(clientAnswering(owned).client).create(), "already-owned");
    const taken = Object.assign(new Error("taken"), {
      name: "BucketAlreadyExists",
      $fault: "client",
      $metadata: { httpStatusCode: 409 },
    });
    await assert.rejects(
      api(clientAnswering(taken).client).create(),
      (err: unknown) =>
        err instanceof AwsError && err.code === "BucketAlreadyExists" && err.kind === "terminal",
    );
  });
});

describe("BucketApi.deleteVersions", () => {
  it("deletes each version by its ID, null included, quietly", async () => {
    const { client, inputs } = clientAnswering({});
    await api(client).deleteVersions([
      { Key: "a", VersionId: "null" },
      { Key: "a", VersionId: "v2" },
    ]);
    assert.deepEqual(inputs[0], {
      Bucket: "b",
      Delete: {
        Objects: [
          { Key: "a", VersionId: "null" },
          { Key: "a", VersionId: "v2" },
        ],
        Quiet: true,
      },
    });
  });

  it("counts the versions S3 Object Lock keeps, without ever asking to bypass governance retention", async () => {
    const { client, inputs } = clientAnswering({
      Errors: [
        {
          Key: "a",
          VersionId: "v1",
          Code: "AccessDenied",
          Message: "Access Denied because object protected by object lock.",
        },
        {
          Key: "b",
          VersionId: "v2",
          Code: "AccessDenied",
          Message: "Access Denied because object protected by object lock.",
        },
      ],
    });
    const refs = [
      { Key: "a", VersionId: "v1" },
      { Key: "b", VersionId: "v2" },
      { Key: "c", VersionId: "v3" },
    ];
    assert.deepEqual(await api(client).deleteVersions(refs), { locked: 2 });
    assert.equal((inputs[0] as Record<string, unknown>)["BypassGovernanceRetention"], undefined);
    // A lock refusal beside another refusal: the other one is the failure.
    const mixed = clientAnswering({
      Errors: [
        { Key: "a", Code: "AccessDenied", Message: "Access Denied because object protected by object lock." },
        { Key: "b", Code: "InternalError", Message: "try again" },
      ],
    });
    await assert.rejects(
      api(mixed.client).deleteVersions(refs),
      (err: unknown) =>
        err instanceof AwsError && err.code === "InternalError" && /for 1 of 3 keys/.test(err.message),
    );
  });

  it("fails when S3 refuses a key, with that key's code and kind (a refusal of access retried once IAM is fixed)", async () => {
    const { client } = clientAnswering({
      Errors: [{ Key: "a", Code: "AccessDenied", Message: "Access Denied" }],
    });
    await assert.rejects(
      api(client).deleteVersions([{ Key: "a", VersionId: "null" }]),
      (err: unknown) =>
        err instanceof AwsError &&
        err.code === "AccessDenied" &&
        err.kind === "terminal" &&
        err.info.access === "denied",
    );
    const slow = clientAnswering({ Errors: [{ Key: "a", Code: "SlowDown" }] });
    await assert.rejects(
      api(slow.client).deleteVersions([{ Key: "a" }]),
      (err: unknown) => err instanceof AwsError && err.kind === "throttled",
    );
  });
});
