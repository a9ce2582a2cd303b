/**
 * The AWS client layer against moto over HTTP: the endpoint comes from AWS_ENDPOINT_URL (read
 * by the SDK itself), credentials from the environment through the default chain, and every
 * failure checked here is a real error produced by the SDK from moto's answer.
 */
import {
  CreateTagsCommand,
  DescribeInstancesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  HeadBucketCommand,
  NoSuchBucket,
  PutBucketTaggingCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  QueueDoesNotExist,
} from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { Registry } from "prom-client";
import { AwsClients } from "../../src/aws/clients.ts";
import { AwsError, type AwsErrorKind } from "../../src/aws/errors.ts";
import { AWS_METRIC_NAMES } from "../../src/aws/metrics.ts";
import {
  desiredTags,
  ec2OwnershipFilters,
  fromEc2Tags,
  fromS3TagSet,
  fromSqsTags,
  toEc2Tags,
  toS3TagSet,
  toSqsTags,
} from "../../src/aws/ownership.ts";
import { verdictOf } from "../../src/reconcilers/common/ownership.ts";
import { startEmulator } from "../support/backends.ts";
import type { Moto } from "../support/moto.ts";
import { metricValue, registrySamples, registrySum } from "../../src/runtime/testing/prometheus-text.ts";

// Distinctive credentials: moto accepts any, and the log test searches for these strings.
const ACCESS_KEY_ID = "AKIAKPTESTONLY0000001";
const SECRET_ACCESS_KEY = "kpSecretValueThatMustNeverBeLogged/0123456789";
const SESSION_TOKEN = "kpSessionTokenThatMustNeverBeLogged0123456789";

async function expectAwsError(p: Promise<unknown>, kind: AwsErrorKind, code: string): Promise<AwsError> {
  const err = await p.then(
    () => assert.fail(`expected ${kind} ${code}, the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AwsError, `not an AwsError: ${String(err)}`);
  assert.equal(err.info.code, code, err.message);
  assert.equal(err.info.kind, kind, err.message);
  assert.ok(!/RequestId|[0-9a-f]{8}-[0-9a-f]{4}-/i.test(err.info.message), err.info.message);
  return err;
}

/** Requests per `service/operation/code`, summed over regions (or per `region/service/...` with `byRegion`). */
async function counts(registry: Registry, byRegion = false): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of await registrySamples(registry, AWS_METRIC_NAMES.requests)) {
    const key = `${byRegion ? `${v.labels.region}/` : ""}${v.labels.service}/${v.labels.operation}/${v.labels.code}`;
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}

async function durationCount(registry: Registry, service: string, operation: string): Promise<number> {
  return registrySum(registry, `${AWS_METRIC_NAMES.duration}_count`, { service, operation });
}

/** A TCP server that accepts connections and never answers. */
async function blackHole(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === "object");
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function captureLogs() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, logger: pino({ level: "trace" }, stream) };
}

const owner = { uid: randomUUID(), namespace: "it", name: "aws-clients", kind: "S3Bucket" };
const savedEnv = { ...process.env };

describe("AWS clients against moto", () => {
  let moto: Moto;
  let registry: Registry;
  let clients: AwsClients;
  const logs = captureLogs();

  before(async () => {
    moto = await startEmulator();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY,
      AWS_SESSION_TOKEN: SESSION_TOKEN,
      AWS_EC2_METADATA_DISABLED: "true",
    });
    registry = new Registry();
    clients = new AwsClients({ registry, logger: logs.logger });
  });

  after(async () => {
    clients?.destroy();
    await moto?.stop();
    for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
    Object.assign(process.env, savedEnv);
  });

  it("creates, tags, describes and deletes an S3 bucket in us-east-1", async () => {
    const s3 = await clients.client("s3", "us-east-1");
    const bucket = `kp-it-${owner.uid.slice(0, 8)}-use1`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const head = await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    assert.equal(head.BucketRegion, "us-east-1");
    await expectAwsError(
      s3.send(new GetBucketTaggingCommand({ Bucket: bucket })),
      "not-found",
      "NoSuchTagSet",
    );
    const tags = desiredTags({ team: "storage" }, owner);
    await s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: toS3TagSet(tags) } }));
    const got = await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }));
    assert.deepEqual(fromS3TagSet(got.TagSet), tags);
    assert.equal(verdictOf(fromS3TagSet(got.TagSet), { metadata: { uid: owner.uid } }).ownership, "owned");
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    await expectAwsError(s3.send(new HeadBucketCommand({ Bucket: bucket })), "not-found", "NotFound");
    const gone = await expectAwsError(
      s3.send(new DeleteBucketCommand({ Bucket: bucket })),
      "not-found",
      "NoSuchBucket",
    );
    assert.ok(gone.cause instanceof NoSuchBucket, "the SDK exception is kept as cause");
  });

  it("creates an S3 bucket in eu-west-1 with a LocationConstraint; conflicts classify as such", async () => {
    const s3 = await clients.client("s3", "eu-west-1");
    const bucket = `kp-it-${owner.uid.slice(0, 8)}-euw1`;
    const create = () =>
      s3.send(
        new CreateBucketCommand({
          Bucket: bucket,
          CreateBucketConfiguration: { LocationConstraint: "eu-west-1" },
        }),
      );
    await create();
    const loc = await s3.send(new GetBucketLocationCommand({ Bucket: bucket }));
    assert.equal(loc.LocationConstraint, "eu-west-1");
    const again = await expectAwsError(create(), "conflict", "BucketAlreadyOwnedByYou");
    assert.equal(again.info.httpStatus, 409);
    assert.equal(again.info.service, "s3");
    assert.equal(again.info.operation, "CreateBucket");
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "keep-me", Body: "data" }));
    const notEmpty = await expectAwsError(
      s3.send(new DeleteBucketCommand({ Bucket: bucket })),
      "conflict",
      "BucketNotEmpty",
    );
    assert.match(notEmpty.message, /^S3 DeleteBucket failed with BucketNotEmpty: /);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "keep-me" }));
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  });

  it("creates, inspects and deletes an SQS queue; real SQS errors classify", async () => {
    const sqs = await clients.client("sqs", "eu-west-1");
    const name = `kp-it-${owner.uid.slice(0, 8)}`;
    const tags = desiredTags({ app: "orders" }, owner);
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { VisibilityTimeout: "30" },
        tags: toSqsTags(tags),
      }),
    );
    assert.ok(created.QueueUrl?.endsWith(`/${name}`));
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    assert.equal(QueueUrl, created.QueueUrl);
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
    assert.equal(attrs.Attributes?.VisibilityTimeout, "30");
    assert.match(attrs.Attributes?.QueueArn ?? "", /^arn:aws:sqs:eu-west-1:\d+:kp-it-/);
    const listed = await sqs.send(new ListQueueTagsCommand({ QueueUrl }));
    assert.deepEqual(fromSqsTags(listed.Tags), tags);
    await expectAwsError(
      sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "60" } })),
      "conflict",
      "QueueNameExists",
    );
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    const missing = await expectAwsError(
      sqs.send(new GetQueueUrlCommand({ QueueName: name })),
      "not-found",
      "QueueDoesNotExist",
    );
    assert.ok(missing.cause instanceof QueueDoesNotExist);
  });

  it("runs an EC2 instance with ownership tags, finds it by tag, and terminates it", async () => {
    const ec2 = await clients.client("ec2", "us-east-1");
    const tags = desiredTags({ Name: "it-web" }, owner);
    const run = await ec2.send(
      new RunInstancesCommand({
        ImageId: "ami-12c6146b",
        InstanceType: "t3.micro",
        MinCount: 1,
        MaxCount: 1,
        ClientToken: `${owner.uid}-1`,
        TagSpecifications: [{ ResourceType: "instance", Tags: toEc2Tags(tags) }],
      }),
    );
    const id = run.Instances?.[0]?.InstanceId;
    assert.ok(id);
    const found = await ec2.send(new DescribeInstancesCommand({ Filters: ec2OwnershipFilters(owner.uid) }));
    const instances = (found.Reservations ?? []).flatMap((r) => r.Instances ?? []);
    assert.deepEqual(
      instances.map((i) => i.InstanceId),
      [id],
    );
    assert.deepEqual(fromEc2Tags(instances[0]?.Tags), tags);
    await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: "extra", Value: "1" }] }));
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
    const after = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
    const state = after.Reservations?.[0]?.Instances?.[0]?.State?.Name;
    assert.ok(state === "terminated" || state === "shutting-down", `state ${state}`);
    await expectAwsError(
      ec2.send(new DescribeInstancesCommand({ InstanceIds: ["i-0123456789abcdef0"] })),
      "not-found",
      "InvalidInstanceID.NotFound",
    );
    const badSubnet = await expectAwsError(
      ec2.send(
        new RunInstancesCommand({
          ImageId: "ami-12c6146b",
          MinCount: 1,
          MaxCount: 1,
          SubnetId: "subnet-12345678",
        }),
      ),
      "terminal",
      "InvalidSubnetID.NotFound",
    );
    assert.equal(
      badSubnet.message,
      "EC2 RunInstances failed with InvalidSubnetID.NotFound: The subnet ID 'subnet-12345678' does not exist",
    );
  });

  it("counted every attempt above per service, operation and code, and timed it", async () => {
    const c = await counts(registry);
    assert.equal(c["s3/CreateBucket/OK"], 2);
    assert.equal(c["s3/CreateBucket/BucketAlreadyOwnedByYou"], 1);
    assert.equal(c["s3/DeleteBucket/BucketNotEmpty"], 1);
    assert.equal(c["s3/DeleteBucket/NoSuchBucket"], 1);
    assert.equal(c["s3/HeadBucket/NotFound"], 1);
    assert.equal(c["s3/GetBucketTagging/NoSuchTagSet"], 1);
    assert.equal(c["sqs/CreateQueue/OK"], 1);
    assert.equal(c["sqs/CreateQueue/QueueNameExists"], 1);
    assert.equal(c["sqs/GetQueueUrl/QueueDoesNotExist"], 1);
    assert.equal(c["ec2/RunInstances/OK"], 1);
    assert.equal(c["ec2/RunInstances/InvalidSubnetID.NotFound"], 1);
    assert.equal(c["ec2/DescribeInstances/InvalidInstanceID.NotFound"], 1);
    assert.equal(c["ec2/TerminateInstances/OK"], 1);
    assert.equal(await durationCount(registry, "s3", "CreateBucket"), 3);
    assert.equal(await durationCount(registry, "ec2", "DescribeInstances"), 3);
    const perRegion = await counts(registry, true);
    assert.equal(perRegion["us-east-1/s3/CreateBucket/OK"], 1, "each client labels its own region");
    assert.equal(perRegion["eu-west-1/s3/CreateBucket/OK"], 1);
    assert.equal(perRegion["eu-west-1/s3/CreateBucket/BucketAlreadyOwnedByYou"], 1);
    const text = await registry.metrics();
    const ec2Budget = (budget: string): number | undefined =>
      metricValue(text, "aws_api_rate_budget_permits_per_second", {
        service: "ec2",
        region: "us-east-1",
        budget,
      });
    assert.equal(ec2Budget("DescribeInstances"), 20);
    assert.equal(ec2Budget("RunInstances"), 2);
  });

  it("times out against an endpoint that never answers, classified retryable", async () => {
    const hole = await blackHole();
    const reg = new Registry();
    const slow = new AwsClients({
      registry: reg,
      endpoint: hole.url,
      requestTimeoutMs: 300,
      connectionTimeoutMs: 200,
      maxAttempts: 2,
    });
    try {
      const start = Date.now();
      const err = await expectAwsError(
        (await slow.client("sqs", "us-east-1")).send(new ListQueuesCommand({})),
        "retryable",
        "TimeoutError",
      );
      const elapsed = Date.now() - start;
      assert.ok(elapsed >= 2 * 300, `two attempts of 300 ms each, took ${elapsed} ms`);
      assert.ok(elapsed < 5000, `bounded by the timeout, took ${elapsed} ms`);
      assert.equal(
        err.message,
        "SQS ListQueues failed with TimeoutError: no response within the request timeout",
      );
      assert.deepEqual(await counts(reg), { "sqs/ListQueues/TimeoutError": 2 });
    } finally {
      slow.destroy();
      await hole.close();
    }
  });

  it("fails fast and retryable when nothing listens on the endpoint", async () => {
    const hole = await blackHole();
    const url = hole.url;
    await hole.close();
    const refused = new AwsClients({ registry: new Registry(), endpoint: url, maxAttempts: 1 });
    try {
      await expectAwsError(
        (await refused.client("s3", "us-east-1")).send(new HeadBucketCommand({ Bucket: "any-bucket" })),
        "retryable",
        "ECONNREFUSED",
      );
    } finally {
      refused.destroy();
    }
  });

  it("honours the per-service endpoint variable over AWS_ENDPOINT_URL, as the SDK defines", async () => {
    const hole = await blackHole();
    process.env.AWS_ENDPOINT_URL_SQS = hole.url;
    const mixed = new AwsClients({ registry: new Registry(), requestTimeoutMs: 300, maxAttempts: 1 });
    try {
      await (
        await mixed.client("s3", "us-east-1")
      ).send(new CreateBucketCommand({ Bucket: `kp-it-${owner.uid.slice(0, 8)}-env` }));
      await expectAwsError(
        (await mixed.client("sqs", "us-east-1")).send(new ListQueuesCommand({})),
        "retryable",
        "TimeoutError",
      );
    } finally {
      delete process.env.AWS_ENDPOINT_URL_SQS;
      mixed.destroy();
      await hole.close();
    }
  });

  it("never wrote a credential to the log, though the SDK logged every call", () => {
    const all = logs.lines.join("");
    assert.ok(logs.lines.length >= 20, `expected SDK log lines, got ${logs.lines.length}`);
    assert.match(all, /"component":"aws-sdk"/);
    assert.match(all, /RunInstancesCommand/);
    for (const secret of [ACCESS_KEY_ID, SECRET_ACCESS_KEY, SESSION_TOKEN]) {
      assert.ok(!all.includes(secret), `log output contains ${secret.slice(0, 8)}...`);
    }
  });
});
