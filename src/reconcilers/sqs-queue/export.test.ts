import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { JsonValue } from "../../api/schema/openapi.ts";
import { withDefaults } from "../../api/schema/defaults.ts";
import {
  OWNERSHIP_TAGS,
  sqsQueueSpecSchema,
  type S3Bucket,
  type SqsQueue,
  type SqsQueueSpec,
} from "../../api/v1/index.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { s3BucketArn } from "../../aws/partition.ts";
import type { ExportContext, ExportedRef, ExportedResource, ListedResource } from "../common/export.ts";
import { context } from "../common/testing/context.ts";
import { SqsQueueDriver, type SqsQueueObject } from "./driver.ts";
import { LIST_QUEUES_PAGE_SIZE, SqsQueueExporter } from "./export.ts";
import { queuePolicy, splitQueuePolicy } from "./model.ts";
import { resolveReferences } from "./references.ts";
import { FakeSqs } from "./testing/fake-sqs.ts";

const REGION = "eu-west-1";
const ACCOUNT = "123456789012";
const arnOf = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;

/** Attributes as GetQueueAttributes(All) reports them for a queue made with `set`. */
function reported(name: string, set: Record<string, string> = {}): Record<string, string> {
  return {
    QueueArn: arnOf(name),
    ApproximateNumberOfMessages: "3",
    ApproximateNumberOfMessagesNotVisible: "0",
    ApproximateNumberOfMessagesDelayed: "0",
    CreatedTimestamp: "1733500000",
    LastModifiedTimestamp: "1733500001",
    VisibilityTimeout: "30",
    MaximumMessageSize: "262144",
    MessageRetentionPeriod: "345600",
    DelaySeconds: "0",
    ReceiveMessageWaitTimeSeconds: "0",
    SqsManagedSseEnabled: "true",
    ...(name.endsWith(".fifo")
      ? {
          FifoQueue: "true",
          ContentBasedDeduplication: "false",
          DeduplicationScope: "queue",
          FifoThroughputLimit: "perQueue",
        }
      : {}),
    ...set,
  };
}

const grant = (queue: string, bucket: string) => ({
  Sid: `s3-notifications-${bucket}`,
  Effect: "Allow",
  Principal: { Service: "s3.amazonaws.com" },
  Action: "sqs:SendMessage",
  Resource: arnOf(queue),
  Condition: { ArnEquals: { "aws:SourceArn": s3BucketArn(bucket, REGION) } },
});
const userStatement = (queue: string) => ({
  Sid: "consumers",
  Effect: "Allow" as const,
  Principal: { AWS: `arn:aws:iam::${ACCOUNT}:role/consumer` },
  Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage"],
  Resource: arnOf(queue),
});

describe("splitQueuePolicy", () => {
  const all = () => true;
  it("is the inverse of queuePolicy for every policy queuePolicy writes", () => {
    const sources = ["b", "a", "c"].map((b) => ({ bucketName: b, bucketArn: s3BucketArn(b, REGION) }));
    const base: SqsQueueSpec["policy"] = { Version: "2008-10-17", Id: "p", Statement: [userStatement("q")] };
    for (const policy of [undefined, base])
      for (let n = 1; n <= sources.length; n++) {
        const doc = queuePolicy(policy, arnOf("q"), sources.slice(0, n)) as Parameters<
          typeof splitQueuePolicy
        >[0];
        const split = splitQueuePolicy(doc, arnOf("q"), all);
        assert.deepEqual(split.policy, policy);
        assert.deepEqual(queuePolicy(split.policy as typeof policy, arnOf("q"), split.sources), doc);
      }
  });

  it("takes no grant whose Sid the rest of the policy uses, or that would leave an empty policy with an Id", () => {
    const clash = {
      Version: "2012-10-17",
      Statement: [{ ...userStatement("q"), Sid: "s3-notifications-logs" }, grant("q", "logs")],
    };
    assert.deepEqual(splitQueuePolicy(clash, arnOf("q"), all), { policy: clash, sources: [] });
    const withId = { Version: "2012-10-17", Id: "x", Statement: [grant("q", "logs")] };
    assert.deepEqual(splitQueuePolicy(withId, arnOf("q"), all), { policy: withId, sources: [] });
    const otherQueue = { Version: "2012-10-17", Statement: [grant("other", "logs")] };
    assert.deepEqual(splitQueuePolicy(otherQueue, arnOf("q"), all), { policy: otherQueue, sources: [] });
  });
});

describe("SqsQueueExporter", () => {
  let fake: FakeSqs;
  let exporter: SqsQueueExporter;
  let aws: AwsClientSource;
  const signal = new AbortController().signal;
  /** The exported objects, by the ARN of their resource. */
  let exported: Map<string, ExportedRef>;
  const ctx = (): ExportContext => ({ signal, refOf: (arn) => exported.get(arn) });
  const seed = (name: string, set: Record<string, string> = {}, tags: Record<string, string> = {}) =>
    fake.queues.set(name, { attributes: reported(name, set), tags });
  const listed = (name: string): ListedResource => ({
    id: fake.url(name),
    region: REGION,
    arn: arnOf(name),
    awsName: name,
  });
  const read = async (name: string): Promise<ExportedResource> => {
    const out = await exporter.read(listed(name), ctx());
    assert.ok(out !== undefined, `${name} was read`);
    return out;
  };

  beforeEach(() => {
    fake = new FakeSqs(REGION);
    aws = {
      client: ((service: string, region: string) => {
        assert.deepEqual([service, region], ["sqs", REGION]);
        return fake as unknown as SQSClient;
      }) as AwsClientSource["client"],
    };
    exporter = new SqsQueueExporter(aws);
    exported = new Map();
  });

  it("lists every queue of the region in pages of 1000, each by URL, ARN and name", async () => {
    const names = Array.from(
      { length: 2 * LIST_QUEUES_PAGE_SIZE + 5 },
      (_, i) => `q-${String(i).padStart(4, "0")}`,
    );
    for (const n of names) seed(n);
    const out: ListedResource[] = [];
    for await (const l of exporter.list(REGION, signal)) out.push(l);
    assert.deepEqual(out, names.map(listed));
    const calls = fake.calls.filter((c) => c.op === "ListQueues").map((c) => c.input);
    assert.deepEqual(calls, [
      { MaxResults: 1000 },
      { MaxResults: 1000, NextToken: "1000" },
      { MaxResults: 1000, NextToken: "2000" },
    ]);
    assert.deepEqual(fake.mutations(), []);
  });

  it("reads a FIFO queue's every setting, its dead-letter queue and redrive sources as references", async () => {
    seed(
      "orders.fifo",
      {
        VisibilityTimeout: "120",
        MessageRetentionPeriod: "86400",
        DelaySeconds: "5",
        ReceiveMessageWaitTimeSeconds: "20",
        MaximumMessageSize: "1024",
        ContentBasedDeduplication: "true",
        DeduplicationScope: "messageGroup",
        FifoThroughputLimit: "perMessageGroupId",
        SqsManagedSseEnabled: "false",
        KmsMasterKeyId: "alias/orders",
        KmsDataKeyReusePeriodSeconds: "600",
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: arnOf("orders-dlq.fifo"),
          maxReceiveCount: "4",
        }),
        RedriveAllowPolicy: JSON.stringify({
          redrivePermission: "byQueue",
          sourceQueueArns: [arnOf("b-src.fifo"), arnOf("a-src.fifo"), arnOf("elsewhere.fifo")],
        }),
      },
      { team: "shop", "aws:cloudformation:stack-name": "s", [OWNERSHIP_TAGS.managedBy]: "kubeprovisioner" },
    );
    exported.set(arnOf("orders-dlq.fifo"), { kind: "SqsQueue", name: "orders-dlq-fifo" });
    exported.set(arnOf("a-src.fifo"), { kind: "SqsQueue", name: "z-source" });
    exported.set(arnOf("b-src.fifo"), { kind: "SqsQueue", name: "a-source" });
    const out = await read("orders.fifo");
    assert.deepEqual(out.spec, {
      queueName: "orders.fifo",
      region: REGION,
      fifo: true,
      visibilityTimeoutSeconds: 120,
      messageRetentionSeconds: 86400,
      delaySeconds: 5,
      receiveWaitTimeSeconds: 20,
      maximumMessageSize: 1024,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
      fifoThroughputLimit: "perMessageGroupId",
      encryption: { kmsKeyId: "alias/orders", dataKeyReusePeriodSeconds: 600 },
      deadLetterQueue: { queueRef: { name: "orders-dlq-fifo" }, maxReceiveCount: 4 },
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueRefs: [{ name: "a-source" }, { name: "z-source" }],
        sourceQueueArns: [arnOf("elsewhere.fifo")],
      },
      tags: { team: "shop" },
    });
    assert.deepEqual(out.unresolved, [
      { path: "spec.redriveAllowPolicy.sourceQueueArns[0]", arn: arnOf("elsewhere.fifo") },
    ]);
    assert.deepEqual(out.omitted, []);
    assert.equal(out.awsName, "orders.fifo");
    assert.equal(out.tags[OWNERSHIP_TAGS.managedBy], "kubeprovisioner");
    assert.deepEqual(fake.mutations(), []);
  });

  it("keeps a dead-letter queue outside the export as its ARN, listed as unresolved", async () => {
    const dlq = arnOf("far-dlq");
    seed("jobs", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq, maxReceiveCount: 10 }) });
    const out = await read("jobs");
    assert.deepEqual(out.spec.deadLetterQueue, { targetArn: dlq, maxReceiveCount: 10 });
    assert.deepEqual(out.unresolved, [{ path: "spec.deadLetterQueue.targetArn", arn: dlq }]);
    assert.equal(out.spec.encryption !== undefined, true);
  });

  it("writes the S3 notification grants of exported buckets as allowS3Notifications and the rest as policy", async () => {
    const policy = {
      Version: "2012-10-17",
      Statement: [
        userStatement("events"),
        grant("events", "away"),
        grant("events", "logs"),
        grant("events", "media"),
      ],
    };
    seed("events", { Policy: JSON.stringify(policy) });
    exported.set(s3BucketArn("logs", REGION), { kind: "S3Bucket", name: "logs-bucket" });
    exported.set(s3BucketArn("media", REGION), { kind: "S3Bucket", name: "media-bucket" });
    const out = await read("events");
    assert.deepEqual(out.spec.allowS3Notifications, [
      { bucketRef: { name: "logs-bucket" } },
      { bucketRef: { name: "media-bucket" } },
    ]);
    // The grant of a bucket outside the export stays a statement of the policy.
    assert.deepEqual(out.spec.policy, { ...policy, Statement: policy.Statement.slice(0, 2) });
    assert.deepEqual(out.omitted, []);
  });

  it("leaves the policy out of the spec with allowS3Notifications alone when it holds only grants", async () => {
    const policy = { Version: "2012-10-17", Statement: [grant("events", "logs")] };
    seed("events", { Policy: JSON.stringify(policy) });
    exported.set(s3BucketArn("logs", REGION), { kind: "S3Bucket", name: "logs" });
    const out = await read("events");
    assert.equal("policy" in out.spec, false);
    assert.deepEqual(out.spec.allowS3Notifications, [{ bucketRef: { name: "logs" } }]);
  });

  it("keeps grants that are not in the operator's order or form in policy", async () => {
    const unsorted = { Version: "2012-10-17", Statement: [grant("q", "media"), grant("q", "logs")] };
    seed("q", { Policy: JSON.stringify(unsorted) });
    exported.set(s3BucketArn("logs", REGION), { kind: "S3Bucket", name: "logs" });
    exported.set(s3BucketArn("media", REGION), { kind: "S3Bucket", name: "media" });
    const out = await read("q");
    // Only the last one can be appended by the operator after the others.
    assert.deepEqual(out.spec.allowS3Notifications, [{ bucketRef: { name: "logs" } }]);
    assert.deepEqual(out.spec.policy, { ...unsorted, Statement: [grant("q", "media")] });
  });

  it("keeps S3 grants of a FIFO queue in its policy: the spec allows allowS3Notifications on standard queues only", async () => {
    const policy = { Version: "2012-10-17", Statement: [userStatement("f.fifo"), grant("f.fifo", "logs")] };
    seed("f.fifo", { Policy: JSON.stringify(policy) });
    exported.set(s3BucketArn("logs", REGION), { kind: "S3Bucket", name: "logs" });
    const out = await read("f.fifo");
    assert.equal("allowS3Notifications" in out.spec, false);
    assert.deepEqual(out.spec.policy, policy);
  });

  it("names what the spec cannot hold and leaves it unmanaged", async () => {
    seed("odd", {
      Policy: JSON.stringify({ Statement: [userStatement("odd")] }),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf("d"), maxReceiveCount: 3, extra: 1 }),
      RedriveAllowPolicy: JSON.stringify({ redrivePermission: "allowAll", sourceQueueArns: [arnOf("x")] }),
      DelaySeconds: "soon",
    });
    const out = await read("odd");
    for (const field of ["policy", "deadLetterQueue", "redriveAllowPolicy", "delaySeconds"])
      assert.equal(field in out.spec, false, field);
    assert.deepEqual(out.omitted, [
      "spec.deadLetterQueue: SQS reports a value the spec cannot reproduce",
      "spec.delaySeconds: SQS reports a value the spec cannot hold",
      "spec.policy: the queue policy is not an IAM policy document the spec can hold",
      "spec.redriveAllowPolicy: SQS reports a value the spec cannot reproduce",
    ]);
    assert.deepEqual(out.unresolved, []);
  });

  it("returns undefined for a queue deleted since it was listed", async () => {
    assert.equal(await exporter.read(listed("gone"), ctx()), undefined);
  });

  describe("round trip: the driver plans only the ownership tags for an object of the exported spec", () => {
    const UID = "0b6f3b5e-6a43-4e43-9a2b-1f0d2c3e4f5a";
    const specNode = sqsQueueSpecSchema.node;
    /** The object of `out` as the API server stores it (CRD defaults applied), switched to Full. */
    const objectOf = (name: string, out: ExportedResource): SqsQueueObject => ({
      apiVersion: "compute.cloud.com/v1",
      kind: "SqsQueue",
      metadata: { name, namespace: "shop", uid: UID, generation: 1 },
      spec: {
        ...(withDefaults(specNode, out.spec as JsonValue) as SqsQueueObject["spec"]),
        managementPolicy: "Full",
        adoptExisting: true,
      },
    });

    it("for queues with every setting, references and foreign grants", async () => {
      seed("dlq");
      seed("src");
      seed("plain", { SqsManagedSseEnabled: "false" });
      seed(
        "main",
        {
          VisibilityTimeout: "45",
          DelaySeconds: "7",
          ReceiveMessageWaitTimeSeconds: "10",
          MaximumMessageSize: "2048",
          SqsManagedSseEnabled: "false",
          KmsMasterKeyId: "alias/k",
          KmsDataKeyReusePeriodSeconds: "300",
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf("dlq"), maxReceiveCount: 5 }),
          Policy: JSON.stringify({
            Version: "2012-10-17",
            Id: "main-policy",
            Statement: [userStatement("main"), grant("main", "outside"), grant("main", "logs")],
          }),
        },
        { team: "a", [OWNERSHIP_TAGS.uid]: "someone-else" },
      );
      seed("dlq-allow", {
        RedriveAllowPolicy: JSON.stringify({
          redrivePermission: "byQueue",
          sourceQueueArns: [arnOf("src"), arnOf("not-exported")],
        }),
      });
      seed("ordered.fifo", {
        ContentBasedDeduplication: "true",
        RedriveAllowPolicy: '{"redrivePermission":"denyAll"}',
      });
      const names = ["dlq", "src", "plain", "main", "dlq-allow", "ordered.fifo"];
      const objectName = (q: string) => q.replace(".", "-");
      for (const q of names) exported.set(arnOf(q), { kind: "SqsQueue", name: objectName(q) });
      exported.set(s3BucketArn("logs", REGION), { kind: "S3Bucket", name: "logs" });

      const objects = new Map<string, SqsQueueObject>();
      for (const q of names) {
        const out = await read(q);
        assert.deepEqual(out.omitted, [], q);
        const obj = objectOf(objectName(q), out);
        obj.status = {
          queueArn: arnOf(q),
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              message: "",
              lastTransitionTime: "2026-01-01T00:00:00Z",
            },
          ],
        } as SqsQueue["status"];
        objects.set(objectName(q), obj);
      }
      assert.deepEqual(objects.get("main")?.spec.allowS3Notifications, [{ bucketRef: { name: "logs" } }]);
      assert.deepEqual(objects.get("main")?.spec.deadLetterQueue, {
        queueRef: { name: "dlq" },
        maxReceiveCount: 5,
      });
      const bucket = { spec: { bucketName: "logs", region: REGION } } as unknown as S3Bucket;
      const lookups = {
        queues: (ref: { name: string }) => objects.get(ref.name),
        buckets: (ref: { name: string }) => (ref.name === "logs" ? bucket : undefined),
      };

      const driver = new SqsQueueDriver({ aws });
      const dctx = context();
      for (const obj of objects.values()) {
        const { status: _s, ...fresh } = obj;
        const observed = await driver.observe(fresh, dctx);
        assert.ok(observed.exists);
        const plan = await driver.plan(fresh, observed, dctx, resolveReferences(fresh, lookups));
        const other = plan.changes.filter((c) => c.ownership !== true);
        assert.deepEqual(other, [], `${obj.metadata.name} plans only ownership tags`);
        assert.ok(plan.changes.length > 0, `${obj.metadata.name} adopts with its ownership tags`);
        assert.ok(plan.changes.every((c) => c.path.startsWith("tags[") || c.path.startsWith("spec.tags")));
      }
      assert.deepEqual(fake.mutations(), []);
    });

    it("the export leaves out what the driver would rewrite, so no attribute change is planned", async () => {
      // No Version: the CRD would default one, and the plan would rewrite the policy.
      seed("nover", { Policy: JSON.stringify({ Statement: [userStatement("nover")] }) });
      const out = await read("nover");
      const obj = objectOf("nover", out);
      const driver = new SqsQueueDriver({ aws });
      const dctx = context();
      const observed = await driver.observe(obj, dctx);
      assert.ok(observed.exists);
      const plan = await driver.plan(obj, observed, dctx, resolveReferences(obj, {}));
      assert.deepEqual(
        plan.changes.filter((c) => c.ownership !== true),
        [],
      );
      assert.deepEqual(out.omitted, [
        "spec.policy: the queue policy is not an IAM policy document the spec can hold",
      ]);
    });
  });
});
