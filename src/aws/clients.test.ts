import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { DescribeImagesCommand, DescribeInstancesCommand, RunInstancesCommand } from "@aws-sdk/client-ec2";
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { AwsClients, OPERATOR_USER_AGENT, s3EndpointOverridden } from "./clients.ts";
import { AWS_METRIC_NAMES } from "./metrics.ts";
import type { RateBudget } from "./rate-budget.ts";
import { AwsError } from "./errors.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { createLogger } from "../runtime/logging.ts";

/** A debug logger whose JSON lines are kept. */
function captureLogs(): { logger: ReturnType<typeof createLogger>; lines(): Record<string, unknown>[] } {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text.push(chunk.toString());
      cb();
    },
  });
  return {
    logger: createLogger({ level: "debug", destination }),
    lines: () =>
      text
        .join("")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("AwsClients", () => {
  it("keys the clients of other accounts by scope and their rate budgets by account ID", async () => {
    // A clock that stands still: no budget refills between the calls.
    const clients = new AwsClients({
      clock: new FakeClock(),
      registry: new Registry(),
      endpoint: "http://127.0.0.1:1",
      maxAttempts: 1,
    });
    const asked: string[] = [];
    const creds = (id: string) => async () => {
      asked.push(id);
      return { accessKeyId: id, secretAccessKey: "s" };
    };
    try {
      const a = clients.forAccount({ key: "a", accountId: "111111111111", credentials: creds("A") });
      const a2 = clients.forAccount({ key: "a2", accountId: "111111111111", credentials: creds("A2") });
      const b = clients.forAccount({ key: "b", accountId: "222222222222", credentials: creds("B") });
      assert.equal(await a.client("sqs", "us-east-1"), await a.client("sqs", "us-east-1"));
      assert.notEqual(await a.client("sqs", "us-east-1"), await clients.client("sqs", "us-east-1"));
      assert.notEqual(await a.client("sqs", "us-east-1"), await b.client("sqs", "us-east-1"));
      const fail = (p: Promise<unknown>): Promise<unknown> => p.catch((e: unknown) => e);
      await fail((await a.client("sqs", "us-east-1")).send(new ListQueuesCommand({})));
      await fail((await a2.client("sqs", "us-east-1")).send(new ListQueuesCommand({})));
      await fail((await b.client("sqs", "us-east-1")).send(new ListQueuesCommand({})));
      assert.deepEqual(asked.sort(), ["A", "A2", "B"], "each scope signs with its own credentials");
      const budgetA = clients.budget("sqs", "us-east-1", "sqs", "111111111111");
      assert.ok(budgetA !== undefined);
      assert.equal(budgetA.available, 98, "two scopes in one account draw from one budget");
      assert.equal(clients.budget("sqs", "us-east-1", "sqs", "222222222222")?.available, 99);
      assert.equal(clients.budget("sqs", "us-east-1", "sqs"), undefined, "the operator's own is untouched");
      const before = await a.client("sqs", "us-east-1");
      clients.dropAccount("a");
      assert.notEqual(await a.client("sqs", "us-east-1"), before, "a dropped scope gets new clients");
      assert.equal(await b.client("sqs", "us-east-1"), await b.client("sqs", "us-east-1"));
    } finally {
      clients.destroy();
    }
  });

  it("builds one client per service and region and hands the same one out again", async () => {
    const clients = new AwsClients({ registry: new Registry(), endpoint: "http://127.0.0.1:1" });
    try {
      assert.equal(await clients.client("ec2", "us-east-1"), await clients.client("ec2", "us-east-1"));
      assert.notEqual(await clients.client("ec2", "us-east-1"), await clients.client("ec2", "eu-west-1"));
      assert.equal(await clients.client("s3", "eu-west-1"), await clients.client("s3", "eu-west-1"));
      assert.equal(
        await clients.client("sqs", "ap-southeast-2"),
        await clients.client("sqs", "ap-southeast-2"),
      );
    } finally {
      clients.destroy();
    }
  });

  it("gives each EC2 action a budget sized by its class, S3 and SQS one each, per region", async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = "testing";
    process.env.AWS_SECRET_ACCESS_KEY = "testing";
    const registry = new Registry();
    const clients = new AwsClients({
      registry,
      endpoint: "http://127.0.0.1:1",
      maxAttempts: 1,
      rateBudget: { "ec2.nonMutating": { ratePerSecond: 7 }, sqs: { burst: 3 } },
    });
    try {
      // Nothing listens on port 1: each call fails at connect, after it drew its permits.
      const fail = (p: Promise<unknown>): Promise<unknown> => p.catch((e: unknown) => e);
      await fail((await clients.client("ec2", "us-east-1")).send(new DescribeInstancesCommand({})));
      await fail((await clients.client("ec2", "us-east-1")).send(new DescribeImagesCommand({})));
      await fail(
        (await clients.client("ec2", "us-east-1")).send(
          new RunInstancesCommand({ MinCount: 1, MaxCount: 3 }),
        ),
      );
      await fail((await clients.client("ec2", "eu-west-1")).send(new DescribeInstancesCommand({})));
      await fail((await clients.client("sqs", "us-east-1")).send(new ListQueuesCommand({})));
      const size = (b: RateBudget | undefined): [number, number] | undefined =>
        b === undefined ? undefined : [b.maxRate, b.burst];
      const describe = clients.budget("ec2", "us-east-1", "DescribeInstances");
      assert.deepEqual(size(describe), [7, 99], "the configured rate over the class's bucket size");
      assert.notEqual(
        clients.budget("ec2", "us-east-1", "DescribeImages"),
        describe,
        "one bucket per action",
      );
      assert.notEqual(clients.budget("ec2", "eu-west-1", "DescribeInstances"), describe, "one per region");
      assert.deepEqual(size(clients.budget("ec2", "us-east-1", "RunInstances")), [2, 4]);
      const instances = clients.budget("ec2", "us-east-1", "RunInstances/instances");
      assert.deepEqual(size(instances), [2, 999]);
      assert.equal(instances?.available, 996, "RunInstances takes one instance token per instance");
      assert.deepEqual(size(clients.budget("sqs", "us-east-1", "sqs")), [50, 3]);
      assert.equal(
        clients.budget("s3", "us-east-1", "s3"),
        undefined,
        "no budget before a call draws from it",
      );
      const gauge = await registry.getSingleMetric(AWS_METRIC_NAMES.budgetRate)?.get();
      assert.equal(
        gauge?.values.find((v) => v.labels.budget === "RunInstances" && v.labels.region === "us-east-1")
          ?.value,
        2,
        "the rate gauge shows each budget once it exists",
      );
    } finally {
      clients.destroy();
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });

  it("builds no budget when budgets are disabled", async () => {
    const clients = new AwsClients({
      registry: new Registry(),
      rateBudget: false,
      endpoint: "http://127.0.0.1:1",
      maxAttempts: 1,
    });
    await (
      await clients.client("ec2", "us-east-1")
    )
      .send(new DescribeInstancesCommand({}))
      .catch(() => undefined);
    assert.equal(clients.budget("ec2", "us-east-1", "DescribeInstances"), undefined);
    clients.destroy();
  });

  it("applies retry mode, attempts and path-style addressing to the SDK config", async () => {
    const clients = new AwsClients({
      registry: new Registry(),
      endpoint: "http://127.0.0.1:1",
      maxAttempts: 2,
    });
    try {
      const s3 = await clients.client("s3", "us-east-1");
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

  it("sends the operator's product in the User-Agent header, which CloudTrail records as userAgent", async () => {
    const agents: string[] = [];
    const server = createServer((req, res) => {
      agents.push(req.headers["user-agent"] ?? "");
      res.writeHead(200, { "content-type": "text/xml" });
      res.end("<ListQueuesResponse><ListQueuesResult></ListQueuesResult></ListQueuesResponse>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const clients = new AwsClients({
      registry: new Registry(),
      endpoint: `http://127.0.0.1:${port}`,
      maxAttempts: 1,
    });
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = "testing";
    process.env.AWS_SECRET_ACCESS_KEY = "testing";
    try {
      await (await clients.client("sqs", "us-east-1")).send(new ListQueuesCommand({})).catch(() => undefined);
      assert.equal(agents.length, 1);
      assert.ok(agents[0]?.split(" ").includes(OPERATOR_USER_AGENT), agents[0]);
    } finally {
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      else process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      clients.destroy();
      server.close();
    }
  });

  it("refuses a malformed region with a terminal AwsError", async () => {
    const clients = new AwsClients({ registry: new Registry() });
    for (const bad of ["", "useast1", "us-east-1; rm -rf", "US-EAST-1"]) {
      await assert.rejects(
        clients.client("ec2", bad),
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

  it("cannot be used after destroy", async () => {
    const clients = new AwsClients({ registry: new Registry() });
    clients.destroy();
    await assert.rejects(clients.client("sqs", "us-east-1"), /after destroy/);
  });

  it("closes a client whose module was still loading when the factory was destroyed", async () => {
    const clients = new AwsClients({ registry: new Registry(), endpoint: "http://127.0.0.1:1" });
    const pending = clients.client("sts", "us-east-1");
    clients.destroy();
    await assert.rejects(pending, /after destroy/);
  });

  it("loads a service's SDK module with the first client of the service, and logs it once", async () => {
    const logs = captureLogs();
    const clients = new AwsClients({
      registry: new Registry(),
      endpoint: "http://127.0.0.1:1",
      logger: logs.logger,
    });
    try {
      assert.deepEqual(clients.loadedServices(), []);
      await clients.client("sqs", "us-east-1");
      await clients.client("sqs", "eu-west-1");
      await clients
        .forAccount({
          key: "k",
          accountId: "111111111111",
          credentials: async () => ({ accessKeyId: "a", secretAccessKey: "s" }),
        })
        .client("sqs", "us-east-1");
      assert.deepEqual(clients.loadedServices(), ["sqs"], "no other service's module");
      await clients.client("s3", "us-east-1");
      assert.deepEqual(clients.loadedServices(), ["sqs", "s3"]);
      assert.deepEqual(
        logs
          .lines()
          .filter((l) => l.msg === "loaded the AWS SDK client module")
          .map((l) => l.service),
        ["sqs", "s3"],
      );
    } finally {
      clients.destroy();
    }
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
