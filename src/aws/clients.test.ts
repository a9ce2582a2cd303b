import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { AwsClients, s3EndpointOverridden } from "./clients.ts";
import { AwsError } from "./errors.ts";

describe("AwsClients", () => {
  it("builds one client per service and region and hands the same one out again", () => {
    const clients = new AwsClients({ registry: new Registry(), endpoint: "http://127.0.0.1:1" });
    try {
      assert.equal(clients.ec2("us-east-1"), clients.ec2("us-east-1"));
      assert.notEqual(clients.ec2("us-east-1"), clients.ec2("eu-west-1"));
      assert.equal(clients.s3("eu-west-1"), clients.s3("eu-west-1"));
      assert.equal(clients.sqs("ap-southeast-2"), clients.sqs("ap-southeast-2"));
    } finally {
      clients.destroy();
    }
  });

  it("gives each service and region its own rate budget with the service's defaults", () => {
    const clients = new AwsClients({ registry: new Registry(), rateBudget: { sqs: { ratePerSecond: 7 } } });
    try {
      clients.ec2("us-east-1");
      clients.ec2("eu-west-1");
      clients.sqs("us-east-1");
      const a = clients.budget("ec2", "us-east-1");
      const b = clients.budget("ec2", "eu-west-1");
      assert.ok(a && b && a !== b);
      assert.equal(a.maxRate, 20);
      assert.equal(a.burst, 40);
      assert.equal(clients.budget("sqs", "us-east-1")?.maxRate, 7);
      assert.equal(clients.budget("sqs", "us-east-1")?.burst, 100, "unset fields keep the default");
      assert.equal(clients.budget("s3", "us-east-1"), undefined, "no budget before a client exists");
    } finally {
      clients.destroy();
    }
  });

  it("builds no budget when budgets are disabled", () => {
    const clients = new AwsClients({ registry: new Registry(), rateBudget: false });
    clients.ec2("us-east-1");
    assert.equal(clients.budget("ec2", "us-east-1"), undefined);
    clients.destroy();
  });

  it("applies retry mode, attempts and path-style addressing to the SDK config", async () => {
    const clients = new AwsClients({
      registry: new Registry(),
      endpoint: "http://127.0.0.1:1",
      maxAttempts: 2,
    });
    try {
      const s3 = clients.s3("us-east-1");
      assert.equal(await s3.config.maxAttempts(), 2);
      assert.equal(s3.config.retryMode, "standard");
      const strategy = await s3.config.retryStrategy();
      assert.equal("mode" in strategy ? strategy.mode : undefined, "standard");
      assert.equal(s3.config.forcePathStyle, true);
      assert.equal(await s3.config.region(), "us-east-1");
    } finally {
      clients.destroy();
    }
  });

  it("refuses a malformed region with a terminal AwsError", () => {
    const clients = new AwsClients({ registry: new Registry() });
    for (const bad of ["", "useast1", "us-east-1; rm -rf", "US-EAST-1"]) {
      assert.throws(
        () => clients.ec2(bad),
        (e: unknown) => e instanceof AwsError && e.kind === "terminal" && e.code === "InvalidRegion",
        bad,
      );
    }
    clients.destroy();
  });

  it("rejects bad options when constructed", () => {
    assert.throws(() => new AwsClients({ requestTimeoutMs: 0 }), RangeError);
    assert.throws(() => new AwsClients({ maxAttempts: 0 }), RangeError);
    assert.throws(() => new AwsClients({ endpoint: "not a url" }), TypeError);
  });

  it("cannot be used after destroy", () => {
    const clients = new AwsClients({ registry: new Registry() });
    clients.destroy();
    assert.throws(() => clients.sqs("us-east-1"), /after destroy/);
  });
});

describe("s3EndpointOverridden", () => {
  it("follows the variables the SDK reads", () => {
    assert.equal(s3EndpointOverridden(undefined, {}), false);
    assert.equal(s3EndpointOverridden("http://x", {}), true);
    assert.equal(s3EndpointOverridden(undefined, { AWS_ENDPOINT_URL: "http://x" }), true);
    assert.equal(s3EndpointOverridden(undefined, { AWS_ENDPOINT_URL_S3: "http://x" }), true);
    assert.equal(s3EndpointOverridden(undefined, { AWS_ENDPOINT_URL_EC2: "http://x" }), false);
    assert.equal(
      s3EndpointOverridden(undefined, {
        AWS_ENDPOINT_URL: "http://x",
        AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "true",
      }),
      false,
    );
  });
});
