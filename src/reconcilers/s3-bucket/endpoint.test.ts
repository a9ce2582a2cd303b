import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { S3Client } from "@aws-sdk/client-s3";
import { bucketEndpoint } from "./endpoint.ts";

const VARS = ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] as const;

describe("bucketEndpoint", () => {
  const saved: Partial<Record<(typeof VARS)[number], string>> = {};
  beforeEach(() => {
    for (const v of VARS) {
      saved[v] = process.env[v];
      delete process.env[v];
    }
  });
  afterEach(() => {
    for (const v of VARS) {
      if (saved[v] === undefined) delete process.env[v];
      else process.env[v] = saved[v];
    }
  });

  it("is the virtual-hosted regional URL on AWS", async () => {
    const client = new S3Client({ region: "eu-west-1", ignoreConfiguredEndpointUrls: true });
    assert.equal(
      await bucketEndpoint(client, "assets-1", "eu-west-1"),
      "https://assets-1.s3.eu-west-1.amazonaws.com",
    );
    const cn = new S3Client({ region: "cn-north-1", ignoreConfiguredEndpointUrls: true });
    assert.equal(
      await bucketEndpoint(cn, "assets-1", "cn-north-1"),
      "https://assets-1.s3.cn-north-1.amazonaws.com.cn",
    );
  });

  it("falls back to path-style for names with dots, which break virtual-hosted TLS", async () => {
    const client = new S3Client({ region: "us-east-1", ignoreConfiguredEndpointUrls: true });
    assert.equal(
      await bucketEndpoint(client, "a.b.c", "us-east-1"),
      "https://s3.us-east-1.amazonaws.com/a.b.c",
    );
  });

  it("is the path-style URL under an endpoint set in the client", async () => {
    const client = new S3Client({
      region: "us-west-2",
      endpoint: "http://127.0.0.1:4566",
      forcePathStyle: true,
    });
    assert.equal(await bucketEndpoint(client, "assets-1", "us-west-2"), "http://127.0.0.1:4566/assets-1");
  });

  it("is the path-style URL under an endpoint from the environment, the same on every call", async () => {
    process.env.AWS_ENDPOINT_URL = "http://127.0.0.1:5000";
    const client = new S3Client({ region: "us-west-2", forcePathStyle: true });
    const first = await bucketEndpoint(client, "assets-1", "us-west-2");
    assert.equal(first, "http://127.0.0.1:5000/assets-1");
    assert.equal(await bucketEndpoint(client, "assets-1", "us-west-2"), first);
  });
});
