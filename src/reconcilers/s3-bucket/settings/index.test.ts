import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { actionOfCall, callsOf } from "../../common/iam.ts";
import { S3_BUCKET_IAM } from "../iam.ts";
import { callsAnswering } from "../testing/bucket-calls.ts";
import { bucketObject } from "../testing/objects.ts";
import type { CorsRule } from "./cors.ts";
import { encryption } from "./encryption.ts";
import { logging } from "./logging.ts";
import { desiredSettings, managedSettings, settingPlans, SETTINGS, type BucketSettings } from "./index.ts";
import type { BucketSettingDef } from "./setting.ts";

const spec = (over: Parameters<typeof bucketObject>[0]) => bucketObject(over).spec;

/** The Event phrases of the changes that bring `actual` to `desired`. */
const described = (desired: BucketSettings, actual: BucketSettings): string[] =>
  settingPlans(desired, actual).flatMap((p) => p.changes.map((c) => c.description));

/** The operations and inputs of the writes that bring `actual` to `desired`. */
async function written(desired: BucketSettings, actual: BucketSettings) {
  const { s3, calls } = callsAnswering();
  for (const p of settingPlans(desired, actual)) await p.write(s3);
  return calls;
}

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
      encryption: {
        bucketKeyEnabled: true,
        kmsKeyId: "alias/k",
        algorithm: "aws:kms",
        blockedEncryptionTypes: ["SSE-C"],
      },
      policy: JSON.parse(JSON.stringify({ Statement: policy.Statement, Version: policy.Version })),
    };
    assert.deepEqual(settingPlans(desired, reordered), []);
  });

  it("keeps the bucket's blocked encryption types in a write of the spec's encryption", async () => {
    const desired = desiredSettings(spec({ encryption: { algorithm: "AES256", bucketKeyEnabled: false } }));
    const have: BucketSettings = {
      encryption: {
        algorithm: "aws:kms",
        kmsKeyId: "alias/k",
        bucketKeyEnabled: true,
        blockedEncryptionTypes: ["SSE-C"],
      },
    };
    const [plan] = settingPlans(desired, have);
    assert.ok(plan !== undefined);
    const { s3, calls } = callsAnswering();
    await plan.write(s3);
    assert.deepEqual(calls[0]?.input["ServerSideEncryptionConfiguration"], {
      Rules: [
        {
          ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" },
          BucketKeyEnabled: false,
          BlockedEncryptionTypes: { EncryptionType: ["SSE-C"] },
        },
      ],
    });
    // An export writes the rest and names the block, which adopting keeps.
    const exported = encryption.specOf(have.encryption ?? null, {
      region: "us-east-1",
      refOf: () => undefined,
    });
    assert.deepEqual(exported.fields, {
      encryption: { algorithm: "aws:kms", kmsKeyId: "alias/k", bucketKeyEnabled: true },
    });
    assert.deepEqual(exported.omitted, [
      "encryption: blocks uploads encrypted with SSE-C (kept as it is when managed)",
    ]);
    // An algorithm the CRD does not take (dual-layer KMS) is left out, and named.
    const dsse = encryption.specOf(
      {
        algorithm: "aws:kms:dsse",
        kmsKeyId: undefined,
        bucketKeyEnabled: false,
        blockedEncryptionTypes: undefined,
      },
      { region: "us-east-1", refOf: () => undefined },
    );
    assert.deepEqual(dsse.fields, {});
    assert.deepEqual(dsse.omitted, [
      "encryption: aws:kms:dsse (spec.encryption left unset: it takes AES256 or aws:kms)",
    ]);
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
    assert.deepEqual(described(desired, { objectOwnership: "ObjectWriter", publicAccessBlock: null }), [
      "objectOwnership: ObjectWriter -> BucketOwnerEnforced",
      "publicAccessBlock",
    ]);
    assert.equal(settingPlans(desired, {}).length, 2, "unread settings are written (create)");
  });

  it("compares lifecycle rules by id whatever their order, and an empty list removes them", async () => {
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
    assert.deepEqual(settingPlans(desired, { lifecycleRules: desired.lifecycleRules ?? [] }), []);
    const none = desiredSettings(spec({ lifecycleRules: [] }));
    assert.deepEqual(described(none, { lifecycleRules: desired.lifecycleRules ?? [] }), [
      "lifecycleRules: removed a",
      "lifecycleRules: removed b",
    ]);
    assert.deepEqual(
      (await written(none, { lifecycleRules: desired.lifecycleRules ?? [] })).map((c) => c.op),
      ["DeleteBucketLifecycle"],
    );
    assert.deepEqual(settingPlans(none, { lifecycleRules: [] }), []);
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
      settingPlans(desired, { objectLock: { mode: "GOVERNANCE", days: 30, years: undefined } }),
      [],
    );
    assert.deepEqual(described(desired, { objectLock: { mode: "COMPLIANCE", days: undefined, years: 1 } }), [
      "objectLock: defaultRetention COMPLIANCE 1 year -> GOVERNANCE 30 days",
    ]);
    assert.deepEqual(described(desired, { objectLock: null }), [
      "objectLock: defaultRetention none -> GOVERNANCE 30 days",
    ]);
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
    assert.deepEqual(settingPlans(desired, { cors: [first, second] }), []);
    assert.deepEqual(described(desired, { cors: [second, first] }), ["cors: 2 rules"]);
    assert.deepEqual(
      settingPlans(desiredSettings(spec({ cors: [] })), { cors: [] }),
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
    assert.deepEqual(settingPlans(desired, { ...desired, website: { ...website, routingRules: 0 } }), []);
    assert.deepEqual(described(desired, { ...desired, website: { ...website, routingRules: 1 } }), [
      "website: index index.html",
    ]);
  });

  it("drops a KMS key from AES256 encryption", () => {
    const desired = desiredSettings(spec({ encryption: { algorithm: "AES256", bucketKeyEnabled: false } }));
    assert.deepEqual(desired.encryption, {
      algorithm: "AES256",
      kmsKeyId: undefined,
      bucketKeyEnabled: false,
      blockedEncryptionTypes: undefined,
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
    assert.deepEqual(settingPlans(desired, { notifications: want }), []);
    const changes = settingPlans(desired, { notifications: { ...want, otherDestinations: 1 } }).flatMap(
      (p) => p.changes,
    );
    assert.deepEqual(
      changes.map((c) => [c.setting, c.description]),
      [["notifications", "notifications: 2 queues"]],
    );
  });

  it("leaves EventBridge as the bucket has it when eventBridge is unset, and writes it back with the queues", async () => {
    const desired = desiredSettings(spec({ notifications: notifications as never }), resolved);
    const want = desired.notifications;
    assert.ok(want);
    for (const eventBridge of [true, false]) {
      assert.deepEqual(
        settingPlans(desired, { notifications: { ...want, eventBridge } }),
        [],
        `${eventBridge}`,
      );
      // A queue drifted: the one document written keeps the bucket's EventBridge setting.
      const actual: BucketSettings = {
        notifications: { ...want, queues: want.queues.slice(1), eventBridge },
      };
      const [change, ...more] = settingPlans(desired, actual).flatMap((p) => p.changes);
      assert.deepEqual(more, []);
      assert.equal((change?.desired as { eventBridge: boolean }).eventBridge, eventBridge);
      const [write] = await written(desired, actual);
      const doc = write?.input.NotificationConfiguration as Record<string, unknown[]>;
      assert.equal("EventBridgeConfiguration" in doc, eventBridge);
      assert.equal(doc.QueueConfigurations?.length, 2);
    }
  });

  it("repairs EventBridge both ways when the spec sets eventBridge", () => {
    for (const eventBridge of [true, false]) {
      const desired = desiredSettings(spec({ notifications: { eventBridge } as never }));
      assert.deepEqual(desired.notifications, { queues: [], otherDestinations: 0, eventBridge });
      const bucket = { queues: [], otherDestinations: 0, eventBridge: !eventBridge };
      assert.deepEqual(described(desired, { notifications: bucket }), [
        `notifications: 0 queues, EventBridge ${eventBridge ? "on" : "off"}`,
      ]);
      assert.deepEqual(settingPlans(desired, { notifications: { ...bucket, eventBridge } }), []);
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

          notInSpec: [],
        },
        {
          id: "z",
          priority: 2,
          enabled: true,
          prefix: "",
          destinationArn: "arn:aws:s3:::replica",
          storageClass: undefined,
          deleteMarkerReplication: false,

          notInSpec: [],
        },
      ],
    });
    const want = desired.replication;
    assert.ok(want);
    assert.deepEqual(settingPlans(desired, { replication: want }), []);
    assert.deepEqual(described(desired, { replication: null }), ["replication: 2 rules"]);
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
    assert.deepEqual(desired.logging, {
      targetBucket: "team-logs",
      targetPrefix: "site/",
      keyFormat: undefined,
      grants: undefined,
    });
    assert.throws(
      () => desiredSettings(spec({ logging: { targetBucketRef: { name: "logs" }, targetPrefix: "" } })),
      /not resolved/,
    );
  });

  it("keeps the log objects' key format and grants in a write of the spec's target", async () => {
    const keyFormat = { PartitionedPrefix: { PartitionDateSource: "EventTime" as const } };
    const grants = [
      {
        Grantee: { Type: "Group" as const, URI: "http://acs.amazonaws.com/groups/global/AllUsers" },
        Permission: "READ" as const,
      },
    ];
    const have: BucketSettings = {
      logging: { targetBucket: "old-logs", targetPrefix: "", keyFormat, grants },
    };
    const desired = desiredSettings(spec({ logging: { targetBucket: "team-logs", targetPrefix: "site/" } }));
    const [plan] = settingPlans(desired, have);
    assert.ok(plan !== undefined);
    const { s3, calls } = callsAnswering();
    await plan.write(s3);
    assert.deepEqual(calls[0]?.input["BucketLoggingStatus"], {
      LoggingEnabled: {
        TargetBucket: "team-logs",
        TargetPrefix: "site/",
        TargetObjectKeyFormat: keyFormat,
        TargetGrants: grants,
      },
    });
    assert.deepEqual(
      settingPlans(desiredSettings(spec({ logging: { targetBucket: "old-logs", targetPrefix: "" } })), have),
      [],
      "the bucket's key format and grants are no drift",
    );
    const exported = logging.specOf(have.logging ?? null, { region: "us-east-1", refOf: () => undefined });
    assert.deepEqual(exported.omitted, [
      "logging: log object keys partitioned by EventTime (kept as it is when managed)",
      "logging: 1 grant on the log objects (kept as it is when managed)",
    ]);
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

/** A spec that sets every managed setting, with what its references resolve to. */
const EVERY = {
  spec: spec({
    versioning: true,
    objectOwnership: "BucketOwnerEnforced",
    encryption: { algorithm: "aws:kms", kmsKeyId: "alias/k", bucketKeyEnabled: true },
    publicAccessBlock: {
      blockPublicAcls: true,
      ignorePublicAcls: true,
      blockPublicPolicy: true,
      restrictPublicBuckets: true,
    },
    policy: policy as never,
    lifecycleRules: [{ id: "logs", enabled: true, prefix: "logs/", expirationDays: 30 }],
    notifications: {
      queues: [{ id: "q", events: ["s3:ObjectCreated:*"], queueRef: { name: "q" } }],
      eventBridge: true,
    } as never,
    replication: {
      roleArn: "arn:aws:iam::123456789012:role/r",
      rules: [
        {
          id: "r",
          priority: 1,
          enabled: true,
          deleteMarkerReplication: false,
          destination: { bucketArn: "arn:aws:s3:::replica" },
        },
      ],
    } as never,
    logging: { targetBucketRef: { name: "logs" }, targetPrefix: "site/" },
    objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
    cors: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }],
    website: { indexDocument: "index.html" },
  }),
  resolved: {
    queueArns: new Map([["q", "arn:aws:sqs:eu-west-1:123456789012:q"]]),
    loggingTarget: "team-logs",
  },
};

describe("the changes of a plan", () => {
  const desired = desiredSettings(EVERY.spec, EVERY.resolved);

  it("plans nothing for a bucket in sync with every setting", () => {
    assert.deepEqual(
      managedSettings(EVERY.spec),
      SETTINGS.map((s) => s.name),
    );
    assert.deepEqual(settingPlans(desired, desired), []);
  });

  it("names the spec path, the values as the spec writes them, the write's IAM action and no disruption", () => {
    const actual: BucketSettings = {
      ...desired,
      encryption: {
        algorithm: "AES256",
        kmsKeyId: undefined,
        bucketKeyEnabled: false,
        blockedEncryptionTypes: undefined,
      },
      objectOwnership: null,
      logging: { targetBucket: "elsewhere", targetPrefix: "", keyFormat: undefined, grants: undefined },
      objectLock: null,
    };
    const changes = settingPlans(desired, actual).flatMap((p) => p.changes);
    assert.deepEqual(changes, [
      {
        setting: "objectOwnership",
        path: "spec.objectOwnership",
        desired: "BucketOwnerEnforced",
        actions: ["s3:PutBucketOwnershipControls"],
        disruption: "none",
        group: "objectOwnership",
        description: "objectOwnership: none -> BucketOwnerEnforced",
      },
      {
        setting: "encryption",
        path: "spec.encryption",
        observed: { algorithm: "AES256", bucketKeyEnabled: false },
        desired: { algorithm: "aws:kms", kmsKeyId: "alias/k", bucketKeyEnabled: true },
        actions: ["s3:PutEncryptionConfiguration"],
        disruption: "none",
        group: "encryption",
        description: "encryption: aws:kms (alias/k)",
      },
      {
        setting: "logging",
        path: "spec.logging",
        observed: { targetBucket: "elsewhere", targetPrefix: "" },
        desired: { targetBucket: "team-logs", targetPrefix: "site/" },
        actions: ["s3:PutBucketLogging"],
        disruption: "none",
        group: "logging",
        description: "logging: team-logs/site/",
      },
      {
        setting: "objectLock",
        path: "spec.objectLock.defaultRetention",
        desired: { mode: "GOVERNANCE", days: 1 },
        actions: ["s3:PutBucketObjectLockConfiguration"],
        disruption: "none",
        group: "objectLock",
        description: "objectLock: defaultRetention none -> GOVERNANCE 1 day",
      },
    ]);
  });

  it("names each lifecycle rule that was added, changed or removed, and writes the rules in one call", async () => {
    const rules = (over: object[]) =>
      desiredSettings(spec({ lifecycleRules: over as never })).lifecycleRules ?? [];
    const want = desiredSettings(
      spec({
        lifecycleRules: [
          { id: "keep", enabled: true, expirationDays: 1 },
          { id: "logs", enabled: true, prefix: "logs/", expirationDays: 30 },
          { id: "new", enabled: true, abortIncompleteMultipartUploadDays: 7 },
        ],
      }),
    );
    const have = {
      lifecycleRules: rules([
        { id: "keep", enabled: true, expirationDays: 1 },
        { id: "logs", enabled: false, prefix: "logs/", expirationDays: 30 },
        { id: "old", enabled: true, expirationDays: 9 },
      ]),
    };
    const [plan, ...others] = settingPlans(want, have);
    assert.deepEqual(others, []);
    assert.deepEqual(
      plan?.changes.map((c) => [c.path, c.observed, c.desired, c.description, c.group, c.actions]),
      [
        [
          "spec.lifecycleRules[id=logs]",
          { id: "logs", enabled: false, prefix: "logs/", expirationDays: 30 },
          { id: "logs", enabled: true, prefix: "logs/", expirationDays: 30 },
          "lifecycleRules: changed logs",
          "lifecycleRules",
          ["s3:PutLifecycleConfiguration"],
        ],
        [
          "spec.lifecycleRules[id=new]",
          undefined,
          { id: "new", enabled: true, abortIncompleteMultipartUploadDays: 7 },
          "lifecycleRules: added new",
          "lifecycleRules",
          ["s3:PutLifecycleConfiguration"],
        ],
        [
          "spec.lifecycleRules[id=old]",
          { id: "old", enabled: true, expirationDays: 9 },
          undefined,
          "lifecycleRules: removed old",
          "lifecycleRules",
          ["s3:PutLifecycleConfiguration"],
        ],
      ],
    );
    const calls = await written(want, have);
    assert.deepEqual(
      calls.map((c) => c.op),
      ["PutBucketLifecycleConfiguration"],
    );
    const sent = calls[0]?.input.LifecycleConfiguration as { Rules: { ID: string }[] };
    assert.deepEqual(
      sent.Rules.map((r) => r.ID),
      ["keep", "logs", "new"],
      "the whole desired document, the rule in sync included",
    );
  });

  it("shows rules removed by an empty list without a desired value, and deletes them", async () => {
    const want = desiredSettings(spec({ cors: [] }));
    const have = desiredSettings(spec({ cors: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }] }));
    assert.deepEqual(
      settingPlans(want, have).flatMap((p) => p.changes),
      [
        {
          setting: "cors",
          path: "spec.cors",
          observed: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }],
          actions: ["s3:PutBucketCORS"],
          disruption: "none",
          group: "cors",
          description: "cors: 0 rules",
        },
      ],
    );
    assert.deepEqual(
      (await written(want, have)).map((c) => c.op),
      ["DeleteBucketCors"],
    );
  });

  it("shows routing rules, which the spec cannot write, by their count", () => {
    const want = desiredSettings(spec({ website: { indexDocument: "index.html" } }));
    const [change] = settingPlans(want, { website: { ...want.website!, routingRules: 2 } }).flatMap(
      (p) => p.changes,
    );
    assert.deepEqual(change?.observed, { indexDocument: "index.html", routingRules: 2 });
    assert.deepEqual(change?.desired, { indexDocument: "index.html" });
  });
});

describe("the IAM of each setting", () => {
  /** The values to write: every setting of {@link EVERY}, and the rule lists empty. */
  const values: [BucketSettingDef<string, unknown>, unknown][] = SETTINGS.flatMap((s) => {
    const def = s as BucketSettingDef<string, unknown>;
    const value = (desiredSettings(EVERY.spec, EVERY.resolved) as Record<string, unknown>)[s.name];
    return [[def, value], ...(Array.isArray(value) ? [[def, []] as [typeof def, unknown]] : [])];
  });

  it("calls in each write only operations its write action names, the action the kind's table names for them", async () => {
    for (const [def, value] of values) {
      const { s3, calls } = callsAnswering();
      await def.write(s3, value as object);
      assert.equal(calls.length, 1, def.name);
      for (const { op } of calls) {
        assert.ok(callsOf(def.iam.write).includes(op), `${def.name}: ${op}`);
        assert.equal(actionOfCall(S3_BUCKET_IAM, "s3", op), def.iam.write.action, `${def.name}: ${op}`);
      }
    }
  });

  it("calls in each read the operation its read action names", async () => {
    for (const s of SETTINGS) {
      const { s3, calls } = callsAnswering();
      await (s as BucketSettingDef<string, unknown>).read(s3);
      assert.deepEqual(
        calls.map((c) => actionOfCall(S3_BUCKET_IAM, "s3", c.op)),
        [s.iam.read.action],
        s.name,
      );
    }
  });
});
