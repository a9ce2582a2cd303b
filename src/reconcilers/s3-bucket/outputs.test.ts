import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { S3_BUCKET_OUTPUT_KEYS } from "../../api/v1/index.ts";
import { s3BucketOutputs } from "./outputs.ts";

describe("S3Bucket outputs", () => {
  const spec = {
    bucketName: "assets",
    region: "eu-west-1",
    versioning: false,
    forceDelete: false,
    managementPolicy: "Full" as const,
    driftPolicy: "Repair" as const,
    changePolicy: "Auto" as const,
    deletionPolicy: "Delete" as const,
    adoptExisting: false,
    onDeletedOutOfBand: "Recreate" as const,
  };

  it("holds the name, ARN, the region S3 reports and the endpoint, under the documented keys", () => {
    const endpoint = "https://assets.s3.eu-west-1.amazonaws.com";
    const out = s3BucketOutputs({
      spec,
      status: { bucketArn: "arn:aws:s3:::assets", region: "eu-west-1", endpoint },
    });
    assert.deepEqual(out, {
      BUCKET_NAME: "assets",
      BUCKET_ARN: "arn:aws:s3:::assets",
      BUCKET_REGION: "eu-west-1",
      BUCKET_ENDPOINT: endpoint,
    });
    assert.deepEqual(
      Object.keys(out),
      S3_BUCKET_OUTPUT_KEYS.map(([k]) => k),
    );
  });

  it("prefers the region S3 reports over the spec's, and falls back to the spec's", () => {
    assert.equal(s3BucketOutputs({ spec, status: { region: "us-east-1" } }).BUCKET_REGION, "us-east-1");
    assert.equal(s3BucketOutputs({ spec }).BUCKET_REGION, "eu-west-1");
  });
});
