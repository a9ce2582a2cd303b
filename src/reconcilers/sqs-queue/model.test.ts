import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  attributeChange,
  attributeDrift,
  attributesAfterCreate,
  attributeUpdate,
  createActionsFor,
  createAttributes,
  managedAttributes,
  observedAttributes,
  SQS_DRIFT_SETTINGS,
  queueArnOfUrl,
  queueNameOfUrl,
  queuePolicy,
} from "./model.ts";
import { conflictingSids } from "../common/references.ts";
import { DEFAULT_TAG_POLICY, describeTagPlan, planTags } from "../common/tags.ts";
import type { TagMap } from "../../aws/ownership.ts";

const tagPlan = (desired: TagMap, actual: TagMap) => planTags(desired, actual, DEFAULT_TAG_POLICY);

const spec = { visibilityTimeoutSeconds: 45, messageRetentionSeconds: 86400, fifo: false };

describe("SqsQueue attributes", () => {
  it("asks for the visibility timeout and retention as decimal strings", () => {
    assert.deepEqual(managedAttributes(spec), { VisibilityTimeout: "45", MessageRetentionPeriod: "86400" });
  });

  it("omits FifoQueue on a standard queue's create, which SQS would reject as false", () => {
    const attrs = createAttributes(spec);
    assert.equal("FifoQueue" in attrs, false);
    assert.deepEqual(attrs, { VisibilityTimeout: "45", MessageRetentionPeriod: "86400" });
  });

  it("sets FifoQueue to true on a FIFO queue's create", () => {
    assert.deepEqual(createAttributes({ ...spec, fifo: true }), {
      FifoQueue: "true",
      VisibilityTimeout: "45",
      MessageRetentionPeriod: "86400",
    });
  });

  it("finds no drift when SQS reports the spec's values, whatever else it reports", () => {
    const actual = {
      VisibilityTimeout: "45",
      MessageRetentionPeriod: "86400",
      DelaySeconds: "5",
      QueueArn: "arn:aws:sqs:eu-west-1:1:q",
    };
    assert.deepEqual(attributeDrift(spec, actual), []);
  });

  it("compares values as numbers", () => {
    assert.deepEqual(
      attributeDrift(spec, { VisibilityTimeout: "045", MessageRetentionPeriod: "86400.0" }),
      [],
    );
  });

  it("reports only the attributes that differ, with old and new values", () => {
    const drift = attributeDrift(spec, { VisibilityTimeout: "30", MessageRetentionPeriod: "86400" });
    assert.deepEqual(drift, [{ name: "VisibilityTimeout", from: "30", to: "45" }]);
    assert.deepEqual(attributeUpdate(drift), { VisibilityTimeout: "45" });
  });

  it("treats a missing or blank attribute as drift", () => {
    const drift = attributeDrift(spec, { MessageRetentionPeriod: " " });
    assert.deepEqual(
      drift.map((c) => [c.name, c.from]),
      [
        ["VisibilityTimeout", undefined],
        ["MessageRetentionPeriod", " "],
      ],
    );
  });
});

describe("SqsQueue tag plan", () => {
  const desired = { env: "prod", "compute.cloud.com/uid": "u1" };

  it("is empty when the queue carries exactly the desired tags", () => {
    assert.deepEqual(tagPlan(desired, { ...desired }), { set: {}, remove: [] });
  });

  it("sets missing and changed tags and removes every other tag (authoritative)", () => {
    const plan = tagPlan(desired, { env: "dev", team: "a", "cost-center": "7" });
    assert.deepEqual(plan.set, { "compute.cloud.com/uid": "u1", env: "prod" });
    assert.deepEqual(plan.remove, ["cost-center", "team"]);
  });

  it("never removes aws: tags, which only AWS may write", () => {
    const plan = tagPlan(desired, { ...desired, "aws:cloudformation:stack-name": "s", "AWS:x": "y" });
    assert.deepEqual(plan, { set: {}, remove: [] });
  });

  it("describes attribute and tag changes by name", () => {
    const text = [
      attributeChange({ name: "VisibilityTimeout", from: "30", to: "45" }),
      { setting: "tags", description: describeTagPlan({ set: { b: "1", a: "2" }, remove: ["c"] }) },
    ];
    assert.deepEqual(
      text.map((c) => ({ setting: c.setting, description: c.description })),
      [
        { setting: "visibilityTimeoutSeconds", description: "VisibilityTimeout 30 -> 45" },
        { setting: "tags", description: "tags: set b, a; removed c" },
      ],
    );
    const unset = attributeChange({ name: "MessageRetentionPeriod", from: undefined, to: "60" });
    assert.deepEqual(
      [unset.setting, unset.description],
      ["messageRetentionSeconds", "MessageRetentionPeriod unset -> 60"],
    );
  });

  it("names every setting it repairs after the spec field", () => {
    assert.deepEqual([...SQS_DRIFT_SETTINGS].sort(), [
      "contentBasedDeduplication",
      "deadLetterQueue",
      "deduplicationScope",
      "delaySeconds",
      "encryption",
      "fifoThroughputLimit",
      "maximumMessageSize",
      "messageRetentionSeconds",
      "policy",
      "receiveWaitTimeSeconds",
      "redriveAllowPolicy",
      "tags",
      "visibilityTimeoutSeconds",
    ]);
  });
});

describe("the optional attributes", () => {
  const base = { visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345600 };
  const policy = {
    Version: "2012-10-17" as const,
    Statement: [{ Effect: "Allow" as const, Principal: "*", Action: "sqs:SendMessage", Resource: "*" }],
  };
  const full = {
    ...base,
    delaySeconds: 5,
    receiveWaitTimeSeconds: 20,
    maximumMessageSize: 2048,
    contentBasedDeduplication: true,
    encryption: { kmsKeyId: "alias/q", dataKeyReusePeriodSeconds: 600 },
    policy,
    deadLetterQueue: { targetArn: "arn:aws:sqs:us-east-1:123456789012:dlq", maxReceiveCount: 4 },
  };

  it("manages only what the spec sets", () => {
    assert.deepEqual(Object.keys(managedAttributes(base)), ["VisibilityTimeout", "MessageRetentionPeriod"]);
    assert.deepEqual(managedAttributes(full), {
      VisibilityTimeout: "30",
      MessageRetentionPeriod: "345600",
      DelaySeconds: "5",
      ReceiveMessageWaitTimeSeconds: "20",
      MaximumMessageSize: "2048",
      ContentBasedDeduplication: "true",
      KmsMasterKeyId: "alias/q",
      KmsDataKeyReusePeriodSeconds: "600",
      Policy: JSON.stringify(policy),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
        maxReceiveCount: 4,
      }),
    });
    assert.deepEqual(
      managedAttributes({ ...base, encryption: { sqsManaged: true } }).SqsManagedSseEnabled,
      "true",
    );
  });

  it("takes a dead-letter queue named by reference from the resolved ARN", () => {
    const spec = { ...base, deadLetterQueue: { queueRef: { name: "dlq" }, maxReceiveCount: 3 } };
    assert.throws(() => managedAttributes(spec), /not resolved/);
    const attrs = managedAttributes(spec, { deadLetterTargetArn: "arn:aws:sqs:us-east-1:1:dlq" });
    assert.deepEqual(JSON.parse(attrs.RedrivePolicy ?? "{}"), {
      deadLetterTargetArn: "arn:aws:sqs:us-east-1:1:dlq",
      maxReceiveCount: 3,
    });
  });

  it("compares switches without case, policies as JSON values, and a redrive count as a number", () => {
    const actual = {
      ...managedAttributes(full),
      ContentBasedDeduplication: "TRUE",
      Policy: JSON.stringify({ Statement: policy.Statement, Version: policy.Version }, null, 2),
      RedrivePolicy: '{"maxReceiveCount":"4","deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:dlq"}',
    };
    assert.deepEqual(attributeDrift(full, actual), []);
    const drifted = attributeDrift(full, { ...actual, ContentBasedDeduplication: "false", Policy: "{}" });
    assert.deepEqual(
      drifted.map((c) => c.name),
      ["ContentBasedDeduplication", "Policy"],
    );
    assert.deepEqual(
      drifted.map(attributeChange).map((c) => [c.setting, c.description]),
      [
        ["contentBasedDeduplication", "ContentBasedDeduplication false -> true"],
        ["policy", "Policy updated"],
      ],
    );
  });
});

describe("SqsQueue redrive allow policy", () => {
  const base = { visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345600 };
  const own = "arn:aws:sqs:eu-west-1:111122223333:jobs-dlq";
  const allow = (redriveAllowPolicy: object) =>
    ({ ...base, redriveAllowPolicy }) as Parameters<typeof managedAttributes>[0];

  it("sends redrivePermission alone for allowAll and denyAll", () => {
    for (const redrivePermission of ["allowAll", "denyAll"])
      assert.deepEqual(JSON.parse(managedAttributes(allow({ redrivePermission })).RedriveAllowPolicy ?? ""), {
        redrivePermission,
      });
  });

  it("lists byQueue's sources of both kinds, sorted, a queue not created yet by its ARN in this queue's account", () => {
    const spec = allow({
      redrivePermission: "byQueue",
      sourceQueueRefs: [{ name: "mail" }, { name: "jobs" }],
      sourceQueueArns: ["arn:aws:sqs:eu-west-1:111122223333:legacy"],
    });
    assert.throws(() => managedAttributes(spec), /not resolved/);
    const redriveSources = [
      { arn: "arn:aws:sqs:eu-west-1:111122223333:mail" },
      { queueName: "jobs", region: "eu-west-1" },
    ];
    assert.equal(
      managedAttributes(spec, { redriveSources }).RedriveAllowPolicy,
      undefined,
      "not before the queue's own ARN is known",
    );
    assert.deepEqual(
      JSON.parse(managedAttributes(spec, { redriveSources, queueArn: own }).RedriveAllowPolicy ?? ""),
      {
        redrivePermission: "byQueue",
        sourceQueueArns: [
          "arn:aws:sqs:eu-west-1:111122223333:jobs",
          "arn:aws:sqs:eu-west-1:111122223333:legacy",
          "arn:aws:sqs:eu-west-1:111122223333:mail",
        ],
      },
    );
  });

  it("compares as JSON values whatever the order of the source queues, and names the repair", () => {
    const spec = allow({
      redrivePermission: "byQueue",
      sourceQueueArns: ["arn:aws:sqs:eu-west-1:111122223333:b", "arn:aws:sqs:eu-west-1:111122223333:a"],
    });
    const reordered = JSON.stringify({
      sourceQueueArns: ["arn:aws:sqs:eu-west-1:111122223333:b", "arn:aws:sqs:eu-west-1:111122223333:a"],
      redrivePermission: "byQueue",
    });
    const actual = { ...managedAttributes(base), RedriveAllowPolicy: reordered };
    assert.deepEqual(attributeDrift(spec, actual), []);
    const drifted = attributeDrift(spec, {
      ...actual,
      RedriveAllowPolicy: '{"redrivePermission":"allowAll"}',
    });
    assert.deepEqual(
      drifted.map(attributeChange).map((c) => [c.setting, c.description]),
      [["redriveAllowPolicy", "RedriveAllowPolicy updated"]],
    );
    assert.deepEqual(attributeDrift(base, { ...actual, RedriveAllowPolicy: "{}" }), [], "unset: not managed");
  });
});

describe("queueNameOfUrl", () => {
  it("takes the last path segment", () => {
    assert.equal(
      queueNameOfUrl("https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo"),
      "orders.fifo",
    );
    assert.equal(queueNameOfUrl("http://127.0.0.1:4566/123456789012/q-1/"), "q-1");
  });

  it("gives undefined for something that is not a URL with a path", () => {
    assert.equal(queueNameOfUrl("not a url"), undefined);
    assert.equal(queueNameOfUrl("https://sqs.eu-west-1.amazonaws.com/"), undefined);
  });
});

describe("observed SqsQueue attributes", () => {
  it("are every attribute but the message counters and the ARN, keys sorted", () => {
    const observed = observedAttributes({
      VisibilityTimeout: "30",
      ApproximateNumberOfMessages: "4",
      ApproximateNumberOfMessagesNotVisible: "1",
      ApproximateNumberOfMessagesDelayed: "0",
      QueueArn: "arn:aws:sqs:us-east-1:123456789012:q",
      FifoQueue: "true",
      DelaySeconds: "0",
    });
    assert.deepEqual(observed, { DelaySeconds: "0", FifoQueue: "true", VisibilityTimeout: "30" });
    assert.deepEqual(Object.keys(observed), ["DelaySeconds", "FifoQueue", "VisibilityTimeout"]);
  });
});

describe("queueArnOfUrl", () => {
  it("builds the ARN from the URL's account and name and the region's partition", () => {
    assert.equal(
      queueArnOfUrl("https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo", "eu-west-1"),
      "arn:aws:sqs:eu-west-1:123456789012:orders.fifo",
    );
    assert.equal(
      queueArnOfUrl("https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q", "cn-north-1"),
      "arn:aws-cn:sqs:cn-north-1:123456789012:q",
    );
    assert.equal(
      queueArnOfUrl("http://127.0.0.1:5000/123456789012/q-1", "us-east-1"),
      "arn:aws:sqs:us-east-1:123456789012:q-1",
    );
  });

  it("gives undefined for a URL of another shape", () => {
    assert.equal(queueArnOfUrl("not a url", "us-east-1"), undefined);
    assert.equal(queueArnOfUrl("https://sqs.us-east-1.amazonaws.com/q", "us-east-1"), undefined);
    assert.equal(queueArnOfUrl("https://sqs.us-east-1.amazonaws.com/acct/q", "us-east-1"), undefined);
    assert.equal(queueArnOfUrl("https://h/x/123456789012/q", "us-east-1"), undefined);
  });
});

describe("SqsQueue S3 notification grants", () => {
  const queueArn = "arn:aws:sqs:us-east-1:123456789012:events";
  const sources = [
    { bucketName: "zeta", bucketArn: "arn:aws:s3:::zeta" },
    { bucketName: "alpha", bucketArn: "arn:aws:s3:::alpha" },
  ];
  const grant = (b: string) => ({
    Sid: `s3-notifications-${b}`,
    Effect: "Allow",
    Principal: { Service: "s3.amazonaws.com" },
    Action: "sqs:SendMessage",
    Resource: queueArn,
    Condition: { ArnEquals: { "aws:SourceArn": `arn:aws:s3:::${b}` } },
  });
  const own = {
    Version: "2012-10-17",
    Statement: [{ Sid: "Mine", Effect: "Deny", Principal: "*", Action: "sqs:*" }],
  };

  it("appends one statement per bucket, sorted by bucket name, after spec.policy's", () => {
    assert.deepEqual(queuePolicy(own as never, queueArn, sources), {
      Version: "2012-10-17",
      Statement: [own.Statement[0], grant("alpha"), grant("zeta")],
    });
    assert.deepEqual(queuePolicy(undefined, queueArn, sources), {
      Version: "2012-10-17",
      Statement: [grant("alpha"), grant("zeta")],
    });
  });

  it("manages the Policy attribute once the queue's ARN is known, and not before", () => {
    const s = { ...spec, allowS3Notifications: [{ bucketRef: { name: "a" } }] };
    assert.equal("Policy" in managedAttributes(s, { s3NotificationSources: sources }), false);
    const attrs = managedAttributes(s, { s3NotificationSources: sources, queueArn });
    assert.deepEqual(JSON.parse(attrs.Policy ?? "{}"), queuePolicy(undefined, queueArn, sources));
    assert.throws(() => managedAttributes(s, {}), /not resolved/);
  });

  it("finds spec.policy statements that use a grant's Sid", () => {
    const p = { Version: "2012-10-17", Statement: [{ Sid: "s3-notifications-alpha" }, { Sid: "Mine" }, {}] };
    assert.deepEqual(conflictingSids(p as never, ["s3-notifications-alpha", "s3-notifications-zeta"]), [
      "s3-notifications-alpha",
    ]);
    assert.deepEqual(conflictingSids(undefined, ["s3-notifications-alpha"]), []);
  });
});

describe("SqsQueue attribute changes", () => {
  const base = { visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345600 };
  const dlq = "arn:aws:sqs:eu-west-1:123456789012:dlq";
  const data = (c: ReturnType<typeof attributeChange>) => [c.path, c.observed, c.desired];

  it("name the spec field each attribute comes from, with both values as the spec writes them", () => {
    const want = {
      ...base,
      delaySeconds: 5,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup" as const,
      encryption: { kmsKeyId: "alias/new", dataKeyReusePeriodSeconds: 600 },
      deadLetterQueue: { targetArn: dlq, maxReceiveCount: 4 },
    };
    const changes = attributeDrift(want, {
      VisibilityTimeout: "5",
      MessageRetentionPeriod: "345600",
      ContentBasedDeduplication: "FALSE",
      DeduplicationScope: "queue",
      KmsMasterKeyId: "alias/old",
      KmsDataKeyReusePeriodSeconds: "300",
      RedrivePolicy: `{"deadLetterTargetArn":"${dlq}","maxReceiveCount":"2"}`,
    }).map(attributeChange);
    assert.deepEqual(changes.map(data), [
      ["spec.visibilityTimeoutSeconds", 5, 30],
      ["spec.delaySeconds", undefined, 5],
      ["spec.contentBasedDeduplication", false, true],
      ["spec.deduplicationScope", "queue", "messageGroup"],
      ["spec.encryption.kmsKeyId", "alias/old", "alias/new"],
      ["spec.encryption.dataKeyReusePeriodSeconds", 300, 600],
      [
        "spec.deadLetterQueue",
        { targetArn: dlq, maxReceiveCount: 2 },
        { targetArn: dlq, maxReceiveCount: 4 },
      ],
    ]);
    assert.equal("observed" in (changes[1] ?? {}), false, "an attribute SQS does not report is absent");
    for (const c of changes) {
      assert.deepEqual(c.actions, ["sqs:SetQueueAttributes"]);
      assert.equal(c.disruption, "none");
      assert.equal(c.group, "attributes");
    }
  });

  it("show a dead-letter queue named by reference as the ARN it resolved to, and a value of another shape as SQS wrote it", () => {
    const want = { ...base, deadLetterQueue: { queueRef: { name: "dlq" }, maxReceiveCount: 3 } };
    const [timeout, redrive] = attributeDrift(
      want,
      { ...managedAttributes(base), VisibilityTimeout: " ", RedrivePolicy: "not json" },
      { deadLetterTargetArn: dlq },
    ).map(attributeChange);
    assert.deepEqual(data(timeout!), ["spec.visibilityTimeoutSeconds", " ", 30]);
    assert.deepEqual(data(redrive!), [
      "spec.deadLetterQueue",
      "not json",
      { targetArn: dlq, maxReceiveCount: 3 },
    ]);
  });

  it("show policies as JSON values: the redrive allow policy's sources sorted, the queue policy with its grants", () => {
    const queueArn = "arn:aws:sqs:eu-west-1:123456789012:events";
    const want = {
      ...base,
      redriveAllowPolicy: {
        redrivePermission: "byQueue" as const,
        sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:b", "arn:aws:sqs:eu-west-1:123456789012:a"],
      },
      allowS3Notifications: [{ bucketRef: { name: "logs" } }],
    };
    const sources = [{ bucketName: "logs", bucketArn: "arn:aws:s3:::logs" }];
    const changes = attributeDrift(
      want,
      {
        ...managedAttributes(base),
        Policy: '{"Version":"2012-10-17","Statement":[]}',
        RedriveAllowPolicy: '{"redrivePermission":"allowAll"}',
      },
      { s3NotificationSources: sources, queueArn },
    ).map(attributeChange);
    assert.deepEqual(changes.map(data), [
      [
        "spec.policy",
        { Version: "2012-10-17", Statement: [] },
        queuePolicy(undefined, queueArn, sources) as never,
      ],
      [
        "spec.redriveAllowPolicy",
        { redrivePermission: "allowAll" },
        {
          redrivePermission: "byQueue",
          sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:a", "arn:aws:sqs:eu-west-1:123456789012:b"],
        },
      ],
    ]);
    assert.deepEqual(
      changes.map((c) => c.setting),
      ["policy", "redriveAllowPolicy"],
    );
  });

  it("name SSE-SQS under spec.encryption.sqsManaged", () => {
    const [c] = attributeDrift(
      { ...base, encryption: { sqsManaged: true } },
      { ...managedAttributes(base), SqsManagedSseEnabled: "false" },
    ).map(attributeChange);
    assert.deepEqual(data(c!), ["spec.encryption.sqsManaged", false, true]);
    assert.equal(c?.setting, "encryption");
  });
});

describe("what creating a queue calls", () => {
  const base = {
    queueName: "events",
    region: "eu-west-1",
    fifo: false,
    visibilityTimeoutSeconds: 30,
    messageRetentionSeconds: 345600,
  };
  const queueArn = "arn:aws:sqs:eu-west-1:123456789012:events";

  it("is CreateQueue, which carries the tags, alone when CreateQueue takes every attribute", () => {
    assert.deepEqual(createActionsFor(base, {}), ["sqs:CreateQueue", "sqs:TagQueue"]);
    const known = { redriveSources: [{ arn: "arn:aws:sqs:eu-west-1:123456789012:jobs" }] };
    const allow = {
      ...base,
      redriveAllowPolicy: { redrivePermission: "byQueue" as const, sourceQueueRefs: [{ name: "jobs" }] },
    };
    assert.deepEqual(createActionsFor(allow, known), ["sqs:CreateQueue", "sqs:TagQueue"]);
    assert.deepEqual(attributesAfterCreate(allow, known, queueArn), {});
  });

  it("adds SetQueueAttributes for what names the queue's own ARN: S3 grants, a source queue waiting for it", () => {
    const sources = [{ bucketName: "logs", bucketArn: "arn:aws:s3:::logs" }];
    const notified = { ...base, allowS3Notifications: [{ bucketRef: { name: "logs" } }] };
    assert.deepEqual(createActionsFor(notified, { s3NotificationSources: sources }), [
      "sqs:CreateQueue",
      "sqs:TagQueue",
      "sqs:SetQueueAttributes",
    ]);
    assert.deepEqual(
      Object.keys(attributesAfterCreate(notified, { s3NotificationSources: sources }, queueArn)),
      ["Policy"],
    );
    const waiting = { redriveSources: [{ queueName: "jobs", region: "eu-west-1" }] };
    const allow = {
      ...base,
      redriveAllowPolicy: { redrivePermission: "byQueue" as const, sourceQueueRefs: [{ name: "jobs" }] },
    };
    assert.deepEqual(createActionsFor(allow, waiting), [
      "sqs:CreateQueue",
      "sqs:TagQueue",
      "sqs:SetQueueAttributes",
    ]);
    assert.deepEqual(attributesAfterCreate(allow, waiting, queueArn), {
      RedriveAllowPolicy: JSON.stringify({
        redrivePermission: "byQueue",
        sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:jobs"],
      }),
    });
  });
});
