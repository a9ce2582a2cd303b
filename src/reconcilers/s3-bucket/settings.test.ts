import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  desiredSettings,
  managedSettings,
  settingChanges,
  type BucketSettings,
  type CorsRule,
} from "./settings.ts";
import { bucketObject } from "./testing/objects.ts";

const spec = (over: Parameters<typeof bucketObject>[0]) => bucketObject(over).spec;

const policy = {
  Version: "2012-10-17",
  Statement: [{ Effect: "Deny", Principal: "*", Action: "s3:*", Resource: "arn:aws:s3:::b/*" }],
};

describe("bucket settings", () => {
  it("manages only the settings the spec sets, in the order they are applied", () => {
    assert.deepEqual(managedSettings(spec({})), []);
    assert.deepEqual(
      managedSettings(
        spec({
          lifecycleRules: [],
          policy: policy as never,
          objectOwnership: "ObjectWriter",
        }),
      ),
      ["objectOwnership", "policy", "lifecycleRules"],
    );
  });

  it("writes nothing when the bucket matches, comparing policies as JSON values", () => {
    const s = spec({
      encryption: { algorithm: "aws:kms", kmsKeyId: "alias/k", bucketKeyEnabled: true },
      policy: policy as never,
    });
    const desired = desiredSettings(s);
    const reordered: BucketSettings = {
      encryption: { bucketKeyEnabled: true, kmsKeyId: "alias/k", algorithm: "aws:kms" },
      policy: JSON.parse(JSON.stringify({ Statement: policy.Statement, Version: policy.Version })),
    };
    assert.deepEqual(settingChanges(desired, reordered), []);
  });

  it("writes a setting that differs, is missing, or was not read", () => {
    const desired = desiredSettings(
      spec({
        objectOwnership: "BucketOwnerEnforced",
        publicAccessBlock: {
          blockPublicAcls: true,
          ignorePublicAcls: true,
          blockPublicPolicy: true,
          restrictPublicBuckets: false,
        },
      }),
    );
    const changes = settingChanges(desired, { objectOwnership: "ObjectWriter", publicAccessBlock: null });
    assert.deepEqual(
      changes.map((c) => c.description),
      ["objectOwnership: ObjectWriter -> BucketOwnerEnforced", "publicAccessBlock"],
    );
    assert.equal(settingChanges(desired, {}).length, 2, "unread settings are written (create)");
  });

  it("compares lifecycle rules by id whatever their order, and an empty list removes them", () => {
    const rules = [
      { id: "b", enabled: true, expirationDays: 5 },
      {
        id: "a",
        enabled: false,
        prefix: "logs/",
        expirationDays: 90,
        transitions: [
          { days: 60, storageClass: "GLACIER" as const },
          { days: 30, storageClass: "STANDARD_IA" as const },
        ],
      },
    ];
    const desired = desiredSettings(spec({ lifecycleRules: rules }));
    assert.deepEqual(
      desired.lifecycleRules?.map((r) => [r.id, r.prefix, r.transitions.map((t) => t.days)]),
      [
        ["a", "logs/", [30, 60]],
        ["b", "", []],
      ],
    );
    assert.deepEqual(settingChanges(desired, { lifecycleRules: desired.lifecycleRules ?? [] }), []);
    const none = desiredSettings(spec({ lifecycleRules: [] }));
    assert.deepEqual(
      settingChanges(none, { lifecycleRules: desired.lifecycleRules ?? [] }).map((c) => c.description),
      ["lifecycleRules: 0 rules"],
    );
    assert.deepEqual(settingChanges(none, { lifecycleRules: [] }), []);
  });

  it("manages Object Lock's default retention only when the spec sets it", () => {
    assert.deepEqual(managedSettings(spec({ versioning: true, objectLock: { enabled: true } })), []);
    const desired = desiredSettings(
      spec({
        versioning: true,
        objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 30 } },
      }),
    );
    assert.deepEqual(desired.objectLock, { mode: "GOVERNANCE", days: 30, years: undefined });
    assert.deepEqual(
      settingChanges(desired, { objectLock: { mode: "GOVERNANCE", days: 30, years: undefined } }),
      [],
    );
    assert.deepEqual(
      settingChanges(desired, { objectLock: { mode: "COMPLIANCE", days: undefined, years: 1 } }).map(
        (c) => c.description,
      ),
      ["objectLock: defaultRetention COMPLIANCE 1 year -> GOVERNANCE 30 days"],
    );
    assert.deepEqual(
      settingChanges(desired, { objectLock: null }).map((c) => c.description),
      ["objectLock: defaultRetention none -> GOVERNANCE 30 days"],
    );
  });

  it("compares CORS rules in their order, each rule's lists as sets", () => {
    const desired = desiredSettings(
      spec({
        cors: [
          { id: "a", allowedMethods: ["PUT", "GET"], allowedOrigins: ["https://b", "https://a"] },
          { allowedMethods: ["GET"], allowedOrigins: ["*"], maxAgeSeconds: 60 },
        ],
      }),
    );
    const rule = (over: Partial<CorsRule>): CorsRule => ({
      id: undefined,
      allowedMethods: ["GET"],
      allowedOrigins: ["*"],
      allowedHeaders: [],
      exposeHeaders: [],
      maxAgeSeconds: undefined,
      ...over,
    });
    const first = rule({
      id: "a",
      allowedMethods: ["GET", "PUT"],
      allowedOrigins: ["https://a", "https://b"],
    });
    const second = rule({ maxAgeSeconds: 60 });
    assert.deepEqual(settingChanges(desired, { cors: [first, second] }), []);
    assert.deepEqual(
      settingChanges(desired, { cors: [second, first] }).map((c) => c.description),
      ["cors: 2 rules"],
    );
    assert.deepEqual(
      settingChanges(desiredSettings(spec({ cors: [] })), { cors: [] }),
      [],
      "no rules where none are wanted",
    );
  });

  it("counts routing rules added to a website as drift", () => {
    const desired = desiredSettings(
      spec({ publicAccessBlock: {} as never, website: { indexDocument: "index.html" } }),
    );
    const website = {
      indexDocument: "index.html",
      errorDocument: undefined,
      redirectAllRequestsTo: undefined,
    };
    assert.deepEqual(settingChanges(desired, { ...desired, website: { ...website, routingRules: 0 } }), []);
    assert.deepEqual(
      settingChanges(desired, { ...desired, website: { ...website, routingRules: 1 } }).map(
        (c) => c.description,
      ),
      ["website: index index.html"],
    );
  });

  it("drops a KMS key from AES256 encryption", () => {
    const desired = desiredSettings(spec({ encryption: { algorithm: "AES256", bucketKeyEnabled: false } }));
    assert.deepEqual(desired.encryption, {
      algorithm: "AES256",
      kmsKeyId: undefined,
      bucketKeyEnabled: false,
    });
  });
});

describe("bucket notifications", () => {
  const notifications = {
    queues: [
      { id: "b", events: ["s3:ObjectRemoved:*", "s3:ObjectCreated:*"], queueRef: { name: "q" } },
      {
        id: "a",
        events: ["s3:ObjectCreated:Put"],
        filter: { prefix: "in/" },
        queueArn: "arn:aws:sqs:us-east-1:123456789012:other",
      },
    ],
  } as const;
  const resolved = { queueArns: new Map([["q", "arn:aws:sqs:us-east-1:123456789012:q"]]) };

  it("puts queueRefs' resolved ARNs in, sorts by id and events, and has no other destination", () => {
    const desired = desiredSettings(spec({ notifications: notifications as never }), resolved);
    assert.deepEqual(desired.notifications, {
      queues: [
        {
          id: "a",
          queueArn: "arn:aws:sqs:us-east-1:123456789012:other",
          events: ["s3:ObjectCreated:Put"],
          prefix: "in/",
          suffix: "",
        },
        {
          id: "b",
          queueArn: "arn:aws:sqs:us-east-1:123456789012:q",
          events: ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
          prefix: "",
          suffix: "",
        },
      ],
      otherDestinations: 0,
      eventBridge: undefined,
    });
    assert.deepEqual(managedSettings(spec({ notifications: notifications as never })), ["notifications"]);
  });

  it("refuses to build the configuration of an unresolved queueRef", () => {
    assert.throws(() => desiredSettings(spec({ notifications: notifications as never })), /not resolved/);
  });

  it("counts another destination on the bucket as drift, described by the queues", () => {
    const desired = desiredSettings(spec({ notifications: notifications as never }), resolved);
    const want = desired.notifications;
    assert.ok(want);
    assert.deepEqual(settingChanges(desired, { notifications: want }), []);
    const changes = settingChanges(desired, { notifications: { ...want, otherDestinations: 1 } });
    assert.deepEqual(
      changes.map((c) => [c.setting, c.description]),
      [["notifications", "notifications: 2 queues"]],
    );
  });

  it("leaves EventBridge as the bucket has it when eventBridge is unset, and writes it back with the queues", () => {
    const desired = desiredSettings(spec({ notifications: notifications as never }), resolved);
    const want = desired.notifications;
    assert.ok(want);
    for (const eventBridge of [true, false]) {
      assert.deepEqual(
        settingChanges(desired, { notifications: { ...want, eventBridge } }),
        [],
        `${eventBridge}`,
      );
      // A queue drifted: the one document written keeps the bucket's EventBridge setting.
      const changes = settingChanges(desired, {
        notifications: { ...want, queues: want.queues.slice(1), eventBridge },
      });
      assert.equal(changes.length, 1);
      assert.equal((changes[0]?.desired as typeof want).eventBridge, eventBridge);
      assert.equal((changes[0]?.desired as typeof want).queues.length, 2);
    }
  });

  it("repairs EventBridge both ways when the spec sets eventBridge", () => {
    for (const eventBridge of [true, false]) {
      const desired = desiredSettings(spec({ notifications: { eventBridge } as never }));
      assert.deepEqual(desired.notifications, { queues: [], otherDestinations: 0, eventBridge });
      const bucket = { queues: [], otherDestinations: 0, eventBridge: !eventBridge };
      assert.deepEqual(
        settingChanges(desired, { notifications: bucket }).map((c) => [c.setting, c.description]),
        [["notifications", `notifications: 0 queues, EventBridge ${eventBridge ? "on" : "off"}`]],
      );
      assert.deepEqual(settingChanges(desired, { notifications: { ...bucket, eventBridge } }), []);
    }
  });
});

describe("bucket replication", () => {
  const replication = {
    roleArn: "arn:aws:iam::123456789012:role/r",
    rules: [
      {
        id: "z",
        priority: 2,
        enabled: true,
        deleteMarkerReplication: false,
        destination: { bucketRef: { name: "replica" } },
      },
      {
        id: "a",
        priority: 1,
        enabled: false,
        prefix: "logs/",
        deleteMarkerReplication: true,
        destination: { bucketArn: "arn:aws:s3:::elsewhere", storageClass: "GLACIER" },
      },
    ],
  } as const;
  const resolved = { bucketArns: new Map([["replica", "arn:aws:s3:::replica"]]) };

  it("puts bucketRefs' resolved ARNs in and sorts the rules by id", () => {
    const desired = desiredSettings(spec({ versioning: true, replication: replication as never }), resolved);
    assert.deepEqual(desired.replication, {
      roleArn: "arn:aws:iam::123456789012:role/r",
      rules: [
        {
          id: "a",
          priority: 1,
          enabled: false,
          prefix: "logs/",
          destinationArn: "arn:aws:s3:::elsewhere",
          storageClass: "GLACIER",
          deleteMarkerReplication: true,
        },
        {
          id: "z",
          priority: 2,
          enabled: true,
          prefix: "",
          destinationArn: "arn:aws:s3:::replica",
          storageClass: undefined,
          deleteMarkerReplication: false,
        },
      ],
    });
    const want = desired.replication;
    assert.ok(want);
    assert.deepEqual(settingChanges(desired, { replication: want }), []);
    assert.deepEqual(
      settingChanges(desired, { replication: null }).map((c) => c.description),
      ["replication: 2 rules"],
    );
  });

  it("refuses to build the configuration of an unresolved bucketRef", () => {
    assert.throws(
      () => desiredSettings(spec({ versioning: true, replication: replication as never })),
      /not resolved/,
    );
  });
});

describe("bucket logging and the log grants", () => {
  it("writes logs to the resolved target, with the spec's prefix", () => {
    const desired = desiredSettings(
      spec({ logging: { targetBucketRef: { name: "logs" }, targetPrefix: "site/" } }),
      { loggingTarget: "team-logs" },
    );
    assert.deepEqual(desired.logging, { targetBucket: "team-logs", targetPrefix: "site/" });
    assert.throws(
      () => desiredSettings(spec({ logging: { targetBucketRef: { name: "logs" }, targetPrefix: "" } })),
      /not resolved/,
    );
  });

  it("manages the policy for allowLoggingFrom, appending one grant per bucket after spec.policy's", () => {
    const s = spec({ policy: policy as never, allowLoggingFrom: [{ bucketRef: { name: "x" } }] });
    assert.deepEqual(managedSettings(spec({ allowLoggingFrom: [{ bucketRef: { name: "x" } }] })), ["policy"]);
    const sources = [
      { bucketName: "zeta", bucketArn: "arn:aws:s3:::zeta" },
      { bucketName: "alpha", bucketArn: "arn:aws:s3:::alpha" },
    ];
    const grant = (b: string) => ({
      Sid: `s3-logging-${b}`,
      Effect: "Allow",
      Principal: { Service: "logging.s3.amazonaws.com" },
      Action: "s3:PutObject",
      Resource: `arn:aws:s3:::${s.bucketName}/*`,
      Condition: { ArnLike: { "aws:SourceArn": `arn:aws:s3:::${b}` } },
    });
    assert.deepEqual(desiredSettings(s, { loggingSources: sources }).policy, {
      ...policy,
      Statement: [...policy.Statement, grant("alpha"), grant("zeta")],
    });
    assert.throws(() => desiredSettings(s), /not resolved/);
  });
});
