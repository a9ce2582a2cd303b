import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { S3Client } from "@aws-sdk/client-s3";
import type { AwsClientSource } from "../../aws/clients.ts";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import { context } from "../common/testing/context.ts";
import type { ExportContext, ExportedRef, KindExporter, ListedResource } from "../common/export.ts";
import { S3BucketDriver } from "./driver.ts";
import { locationRegion, policyFields, s3BucketExporter } from "./export.ts";
import type { S3BucketObject } from "./model.ts";
import { FakeS3, type FakeBucket } from "./testing/fake-s3.ts";
import { BUCKET_SETTINGS, managedSettings } from "./settings/index.ts";
import { bucketObject } from "./testing/objects.ts";

const NOW = Date.parse("2026-03-01T10:00:00Z");
const EVENTS_QUEUE = "arn:aws:sqs:eu-west-1:111122223333:events";
const OTHER_QUEUE = "arn:aws:sqs:eu-west-1:111122223333:other";
const REPLICA = "arn:aws:s3:::replica-1";
const LOGS = "arn:aws:s3:::logs-1";
const POLICY = {
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "read",
      Effect: "Allow",
      Principal: "*",
      Action: "s3:GetObject",
      Resource: "arn:aws:s3:::assets-1/*",
    },
  ],
};

/** A bucket of the export whose object name is not its bucket name. */
const SITE_LOGS = "arn:aws:s3:::site.logs";
const SITE_LOGS_OBJECT = "site-logs-0a1b2c3d";
/** A bucket the export does not hold. */
const OUTSIDE = "arn:aws:s3:::outside-1";

/** The statement letting `source`'s access logs into assets-1, as S3 answers a policy read. */
const loggingGrant = (source: string): Record<string, unknown> => ({
  Sid: `s3-logging-${source.slice("arn:aws:s3:::".length)}`,
  Effect: "Allow",
  Principal: { Service: "logging.s3.amazonaws.com" },
  Action: "s3:PutObject",
  Resource: "arn:aws:s3:::assets-1/*",
  Condition: { ArnLike: { "aws:SourceArn": source } },
});

/** A bucket in eu-west-1 with every setting the CRD can express set, as S3 answers their reads. */
function richBucket(): FakeBucket {
  return {
    region: "eu-west-1",
    tags: { team: "data", "aws:cloudformation:stack-name": "web" },
    versioning: "Enabled",
    versions: [],
    settings: {
      GetBucketOwnershipControls: {
        OwnershipControls: { Rules: [{ ObjectOwnership: "BucketOwnerPreferred" }] },
      },
      GetBucketEncryption: {
        ServerSideEncryptionConfiguration: {
          Rules: [
            {
              ApplyServerSideEncryptionByDefault: {
                SSEAlgorithm: "aws:kms",
                KMSMasterKeyID: "arn:aws:kms:eu-west-1:111122223333:key/k1",
              },
              BucketKeyEnabled: true,
            },
          ],
        },
      },
      GetPublicAccessBlock: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          IgnorePublicAcls: true,
          BlockPublicPolicy: false,
          RestrictPublicBuckets: false,
        },
      },
      GetBucketPolicy: { Policy: JSON.stringify(POLICY) },
      GetBucketLifecycleConfiguration: {
        Rules: [
          {
            ID: "tmp",
            Status: "Disabled",
            Filter: { Prefix: "" },
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
            NoncurrentVersionExpiration: { NoncurrentDays: 5 },
          },
          {
            ID: "logs",
            Status: "Enabled",
            Filter: { And: { Prefix: "logs/", Tags: [{ Key: "kind", Value: "log" }] } },
            Expiration: { Days: 365 },
            Transitions: [
              { Days: 90, StorageClass: "GLACIER" },
              { Days: 30, StorageClass: "STANDARD_IA" },
            ],
          },
        ],
      },
      GetBucketNotificationConfiguration: {
        QueueConfigurations: [
          {
            Id: "q2",
            QueueArn: OTHER_QUEUE,
            Events: ["s3:ObjectRemoved:*", "s3:ObjectCreated:Put"],
          },
          {
            Id: "q1",
            QueueArn: EVENTS_QUEUE,
            Events: ["s3:ObjectCreated:*"],
            Filter: { Key: { FilterRules: [{ Name: "Prefix", Value: "in/" }] } },
          },
        ],
        EventBridgeConfiguration: {},
      },
      GetBucketReplication: {
        ReplicationConfiguration: {
          Role: "arn:aws:iam::111122223333:role/replication",
          Rules: [
            {
              ID: "all",
              Priority: 1,
              Status: "Enabled",
              Filter: { Prefix: "" },
              Destination: { Bucket: REPLICA, StorageClass: "STANDARD_IA" },
              DeleteMarkerReplication: { Status: "Disabled" },
            },
          ],
        },
      },
      GetBucketLogging: { LoggingEnabled: { TargetBucket: "logs-1", TargetPrefix: "assets/" } },
      GetObjectLockConfiguration: {
        ObjectLockConfiguration: {
          ObjectLockEnabled: "Enabled",
          Rule: { DefaultRetention: { Mode: "GOVERNANCE", Days: 30 } },
        },
      },
      GetBucketCors: {
        CORSRules: [
          {
            ID: "web",
            AllowedMethods: ["PUT", "GET"],
            AllowedOrigins: ["https://b.example", "https://a.example"],
            MaxAgeSeconds: 300,
          },
        ],
      },
      GetBucketWebsite: { IndexDocument: { Suffix: "index.html" }, ErrorDocument: { Key: "404.html" } },
    },
  };
}

/** The objects an export holds, by ARN. */
const HELD = new Map<string, ExportedRef>([
  [EVENTS_QUEUE, { kind: "SqsQueue", name: "events" }],
  [REPLICA, { kind: "S3Bucket", name: "replica-1" }],
  [LOGS, { kind: "S3Bucket", name: "logs-1" }],
  [SITE_LOGS, { kind: "S3Bucket", name: SITE_LOGS_OBJECT }],
]);

const exportCtx = (held: ReadonlyMap<string, ExportedRef> = HELD): ExportContext => ({
  signal: new AbortController().signal,
  refOf: (arn) => held.get(arn),
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const listed = (name: string, region = "eu-west-1"): ListedResource => ({
  id: name,
  region,
  arn: `arn:aws:s3:::${name}`,
  awsName: name,
});

describe("S3Bucket export", () => {
  let s3: FakeS3;
  let aws: AwsClientSource;
  let exporter: KindExporter;
  const signal = new AbortController().signal;
  beforeEach(() => {
    s3 = new FakeS3(NOW);
    aws = { client: (() => s3 as unknown as S3Client) as AwsClientSource["client"] };
    exporter = s3BucketExporter(aws);
  });
  const plain = (region: string): FakeBucket => ({
    region,
    tags: undefined,
    versioning: undefined,
    versions: [],
  });

  describe("list", () => {
    it("pages through ListBuckets and keeps the buckets of the region, with their ARNs", async () => {
      for (let i = 0; i < 25; i++) {
        const n = String(i).padStart(2, "0");
        s3.buckets.set(`b-${n}`, plain(i % 3 === 0 ? "us-east-1" : "eu-west-1"));
      }
      const eu = await collect(exporter.list("eu-west-1", signal));
      assert.deepEqual(
        eu.map((b) => b.id),
        [...s3.buckets.keys()].filter((n) => s3.buckets.get(n)?.region === "eu-west-1").sort(),
      );
      assert.deepEqual(eu[0], {
        id: "b-01",
        region: "eu-west-1",
        arn: "arn:aws:s3:::b-01",
        awsName: "b-01",
      });
      const lists = s3.calls.filter((c) => c.op === "ListBuckets");
      assert.equal(lists[0]?.input.BucketRegion, "eu-west-1");
      assert.equal(s3.calls.filter((c) => c.op === "GetBucketLocation").length, 0);
      assert.deepEqual(
        (await collect(exporter.list("us-east-1", signal))).map((b) => b.id),
        ["b-00", "b-03", "b-06", "b-09", "b-12", "b-15", "b-18", "b-21", "b-24"],
      );
    });

    it("follows the continuation token page by page", async () => {
      for (let i = 0; i < 5; i++) s3.buckets.set(`p-${i}`, plain("eu-west-1"));
      const pages: string[] = [];
      const small: AwsClientSource = {
        client: (() => ({
          send: (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
            if (cmd.constructor.name === "ListBucketsCommand") {
              cmd.input.MaxBuckets = 2;
              pages.push(String(cmd.input.ContinuationToken ?? ""));
            }
            return s3.send(cmd);
          },
        })) as unknown as AwsClientSource["client"],
      };
      const names = (await collect(s3BucketExporter(small).list("eu-west-1", signal))).map((b) => b.id);
      assert.deepEqual(names, ["p-0", "p-1", "p-2", "p-3", "p-4"]);
      assert.deepEqual(pages, ["", "p-1", "p-3"]);
    });

    it("asks GetBucketLocation for each bucket when the listing does not name its region", async () => {
      s3.listsBucketRegion = false;
      s3.buckets.set("east", plain("us-east-1"));
      s3.buckets.set("west", plain("eu-west-1"));
      assert.deepEqual(
        (await collect(exporter.list("us-east-1", signal))).map((b) => b.id),
        ["east"],
      );
      assert.deepEqual(
        s3.calls.filter((c) => c.op === "GetBucketLocation").map((c) => c.input.Bucket),
        ["east", "west"],
      );
    });

    it("reads S3's location constraints as regions", () => {
      assert.equal(locationRegion(undefined), "us-east-1");
      assert.equal(locationRegion(""), "us-east-1");
      assert.equal(locationRegion("EU"), "eu-west-1");
      assert.equal(locationRegion("ap-south-1"), "ap-south-1");
    });
  });

  describe("read", () => {
    it("writes the full spec of a bucket with every setting, references where the export holds them", async () => {
      s3.buckets.set("assets-1", richBucket());
      const out = await exporter.read(listed("assets-1"), exportCtx());
      assert.ok(out);
      assert.equal(out.awsName, "assets-1");
      assert.deepEqual(out.tags, { "aws:cloudformation:stack-name": "web", team: "data" });
      assert.deepEqual(out.spec, {
        bucketName: "assets-1",
        region: "eu-west-1",
        versioning: true,
        forceDelete: false,
        tags: { team: "data" },
        objectOwnership: "BucketOwnerPreferred",
        encryption: {
          algorithm: "aws:kms",
          kmsKeyId: "arn:aws:kms:eu-west-1:111122223333:key/k1",
          bucketKeyEnabled: true,
        },
        publicAccessBlock: {
          blockPublicAcls: true,
          ignorePublicAcls: true,
          blockPublicPolicy: false,
          restrictPublicBuckets: false,
        },
        policy: POLICY,
        lifecycleRules: [
          {
            id: "logs",
            enabled: true,
            prefix: "logs/",
            tags: { kind: "log" },
            expirationDays: 365,
            transitions: [
              { days: 30, storageClass: "STANDARD_IA" },
              { days: 90, storageClass: "GLACIER" },
            ],
          },
          {
            id: "tmp",
            enabled: false,
            noncurrentVersionExpirationDays: 5,
            abortIncompleteMultipartUploadDays: 7,
          },
        ],
        notifications: {
          queues: [
            {
              id: "q1",
              queueRef: { name: "events" },
              events: ["s3:ObjectCreated:*"],
              filter: { prefix: "in/" },
            },
            { id: "q2", queueArn: OTHER_QUEUE, events: ["s3:ObjectCreated:Put", "s3:ObjectRemoved:*"] },
          ],
          eventBridge: true,
        },
        replication: {
          roleArn: "arn:aws:iam::111122223333:role/replication",
          rules: [
            {
              id: "all",
              priority: 1,
              enabled: true,
              destination: { bucketRef: { name: "replica-1" }, storageClass: "STANDARD_IA" },
              deleteMarkerReplication: false,
            },
          ],
        },
        logging: { targetBucketRef: { name: "logs-1" }, targetPrefix: "assets/" },
        objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 30 } },
        cors: [
          {
            id: "web",
            allowedMethods: ["GET", "PUT"],
            allowedOrigins: ["https://a.example", "https://b.example"],
            maxAgeSeconds: 300,
          },
        ],
        website: { indexDocument: "index.html", errorDocument: "404.html" },
      });
      assert.deepEqual(out.unresolved, [
        { path: "spec.notifications.queues[id=q2].queueArn", arn: OTHER_QUEUE },
      ]);
      assert.deepEqual(out.omitted, []);
      // Every setting was read, though no spec asked for one, and nothing was written.
      for (const op of [
        "GetBucketTagging",
        "GetBucketVersioning",
        "GetBucketOwnershipControls",
        "GetBucketEncryption",
        "GetPublicAccessBlock",
        "GetBucketPolicy",
        "GetBucketLifecycleConfiguration",
        "GetBucketNotificationConfiguration",
        "GetBucketReplication",
        "GetBucketLogging",
        "GetObjectLockConfiguration",
        "GetBucketCors",
        "GetBucketWebsite",
      ])
        assert.equal(s3.calls.filter((c) => c.op === op).length, 1, op);
      assert.deepEqual(s3.mutations(), []);
    });

    it("keeps ARNs and bucket names the export does not hold, each listed with its spec path", async () => {
      s3.buckets.set("assets-1", richBucket());
      const out = await exporter.read(listed("assets-1"), exportCtx(new Map()));
      assert.ok(out);
      assert.deepEqual(out.spec.logging, { targetBucket: "logs-1", targetPrefix: "assets/" });
      assert.deepEqual(
        (out.spec.replication as { rules: { destination: unknown }[] }).rules[0]?.destination,
        { bucketArn: REPLICA, storageClass: "STANDARD_IA" },
      );
      assert.deepEqual(out.unresolved, [
        { path: "spec.notifications.queues[id=q1].queueArn", arn: EVENTS_QUEUE },
        { path: "spec.notifications.queues[id=q2].queueArn", arn: OTHER_QUEUE },
        { path: "spec.replication.rules[id=all].destination.bucketArn", arn: REPLICA },
        { path: "spec.logging.targetBucket", arn: LOGS },
      ]);
    });

    it("leaves out what the spec cannot express without a write, and says so", async () => {
      const b = richBucket();
      const docs = b.settings ?? {};
      docs.GetBucketNotificationConfiguration = {
        QueueConfigurations: [{ Id: "q1", QueueArn: EVENTS_QUEUE, Events: ["s3:ObjectCreated:*"] }],
        TopicConfigurations: [{ Id: "t", TopicArn: "arn:aws:sns:eu-west-1:111122223333:t", Events: [] }],
      };
      docs.GetBucketWebsite = {
        IndexDocument: { Suffix: "index.html" },
        RoutingRules: [{ Redirect: { HostName: "example.com" } }, { Redirect: { HostName: "example.org" } }],
      };
      s3.buckets.set("assets-1", b);
      const out = await exporter.read(listed("assets-1"), exportCtx());
      assert.ok(out);
      assert.equal(out.spec.notifications, undefined);
      assert.equal(out.spec.website, undefined);
      assert.deepEqual(out.omitted, [
        "notifications: 1 SNS topic or Lambda function destination (spec.notifications left unset: it names SQS queues only)",
        "website: 2 routing rules (spec.website left unset: it has no routing rules)",
      ]);
    });

    it("leaves out a policy spec.policy would not hold unchanged, and says so", async () => {
      const statement = {
        Effect: "Deny",
        Principal: "*",
        Action: "s3:DeleteBucket",
        Resource: "arn:aws:s3:::assets-1",
      };
      for (const policy of [
        { Statement: [statement] },
        { Version: "2012-10-17", Statement: statement },
        { Version: "2012-10-17", Id: "p", Statement: [{ ...statement, Unknown: 1 }] },
      ]) {
        const b = richBucket();
        (b.settings ?? {}).GetBucketPolicy = { Policy: JSON.stringify(policy) };
        s3.buckets.set("assets-1", b);
        const out = await exporter.read(listed("assets-1"), exportCtx());
        assert.ok(out);
        assert.equal(out.spec.policy, undefined, JSON.stringify(policy));
        assert.equal(out.spec.allowLoggingFrom, undefined);
        assert.ok(
          out.omitted.some((o) =>
            o.startsWith(
              "policy: the bucket policy is not an IAM policy document spec.policy holds unchanged",
            ),
          ),
          JSON.stringify(out.omitted),
        );
      }
    });

    it("leaves out an index-document website the spec's Block Public Access rule forbids", async () => {
      s3.buckets.set("site-1", {
        ...plain("eu-west-1"),
        settings: { GetBucketWebsite: { IndexDocument: { Suffix: "index.html" } } },
      });
      const out = await exporter.read(listed("site-1"), exportCtx());
      assert.ok(out);
      assert.equal(out.spec.website, undefined);
      assert.equal(out.omitted.length, 1);
      assert.match(out.omitted[0] ?? "", /^website: an index document/);
    });

    it("writes a plain bucket with no setting, Object Lock without a retention, and no reserved tags", async () => {
      s3.buckets.set("plain-1", {
        ...plain("eu-west-1"),
        versioning: "Suspended",
        tags: { [OWNERSHIP_TAGS.uid]: "uid-9", env: "prod" },
        settings: {
          GetObjectLockConfiguration: { ObjectLockConfiguration: { ObjectLockEnabled: "Enabled" } },
        },
      });
      const out = await exporter.read(listed("plain-1"), exportCtx());
      assert.ok(out);
      assert.deepEqual(out.spec, {
        bucketName: "plain-1",
        region: "eu-west-1",
        versioning: false,
        forceDelete: false,
        tags: { env: "prod" },
        objectLock: { enabled: true },
      });
      assert.deepEqual(out.tags, { [OWNERSHIP_TAGS.uid]: "uid-9", env: "prod" });
    });

    it("writes the policy's logging statements for buckets it holds as allowLoggingFrom, the rest as spec.policy", async () => {
      const policy = {
        ...POLICY,
        Statement: [...POLICY.Statement, loggingGrant(OUTSIDE), loggingGrant(LOGS), loggingGrant(SITE_LOGS)],
      };
      s3.buckets.set("assets-1", {
        ...plain("eu-west-1"),
        settings: { GetBucketPolicy: { Policy: JSON.stringify(policy) } },
      });
      const out = await exporter.read(listed("assets-1"), exportCtx());
      assert.ok(out);
      assert.deepEqual(out.spec.policy, {
        ...POLICY,
        Statement: [...POLICY.Statement, loggingGrant(OUTSIDE)],
      });
      assert.deepEqual(out.spec.allowLoggingFrom, [
        { bucketRef: { name: "logs-1" } },
        { bucketRef: { name: SITE_LOGS_OBJECT } },
      ]);
      assert.deepEqual(out.unresolved, []);
    });

    it("answers undefined for a bucket gone since the listing", async () => {
      assert.equal(await exporter.read(listed("gone-1"), exportCtx()), undefined);
    });
  });

  describe("policy fields", () => {
    const ASSETS = "arn:aws:s3:::assets-1";
    const fields = (policy: Record<string, unknown>) =>
      policyFields(policy as never, ASSETS, (arn) => HELD.get(arn));
    const doc = (...statements: Record<string, unknown>[]) => ({
      Version: "2012-10-17",
      Statement: statements,
    });
    const read = POLICY.Statement[0] ?? {};

    it("leaves spec.policy unset when only the operator's logging statements remain", () => {
      assert.deepEqual(fields(doc(loggingGrant(LOGS), loggingGrant(SITE_LOGS))), {
        allowLoggingFrom: [{ bucketRef: { name: "logs-1" } }, { bucketRef: { name: SITE_LOGS_OBJECT } }],
      });
    });

    it("takes only the trailing statements in the operator's order (by bucket name)", () => {
      // site.logs before logs-1: the operator would append logs-1 first, so site.logs stays.
      assert.deepEqual(fields(doc(read, loggingGrant(SITE_LOGS), loggingGrant(LOGS))), {
        policy: doc(read, loggingGrant(SITE_LOGS)),
        allowLoggingFrom: [{ bucketRef: { name: "logs-1" } }],
      });
      // A statement of its own after them: nothing is taken.
      const tail = doc(loggingGrant(LOGS), read);
      assert.deepEqual(fields(tail), { policy: tail });
    });

    it("keeps a statement that differs from the operator's in one detail in spec.policy", () => {
      const variants: Record<string, unknown>[] = [
        { ...loggingGrant(LOGS), Action: ["s3:PutObject"] },
        { ...loggingGrant(LOGS), Sid: "logs" },
        { ...loggingGrant(LOGS), Resource: "arn:aws:s3:::assets-1/logs/*" },
        {
          ...loggingGrant(LOGS),
          Condition: { ArnLike: { "aws:SourceArn": LOGS }, StringEquals: { "aws:SourceAccount": "1" } },
        },
        { ...loggingGrant(LOGS), Principal: { Service: ["logging.s3.amazonaws.com"] } },
        { ...loggingGrant(LOGS), Effect: "Deny" },
      ];
      for (const v of variants) {
        const policy = doc(read, v);
        assert.deepEqual(fields(policy), { policy }, JSON.stringify(v));
      }
    });

    it("keeps the whole policy when the fields could not give it back", () => {
      // Another statement already has the Sid: allowLoggingFrom would conflict with spec.policy.
      const taken = doc({ ...read, Sid: "s3-logging-logs-1" }, loggingGrant(LOGS));
      assert.deepEqual(fields(taken), { policy: taken });
      // Only the statements would remain of a document the default one does not give.
      const withId = { ...doc(loggingGrant(LOGS)), Id: "logs" };
      assert.deepEqual(fields(withId), { policy: withId });
      const old = { ...doc(loggingGrant(LOGS)), Version: "2008-10-17" };
      assert.deepEqual(fields(old), { policy: old });
      // Still an Id beside other statements is carried in spec.policy.
      const kept = { ...doc(read, loggingGrant(LOGS)), Id: "logs" };
      assert.deepEqual(fields(kept), {
        policy: { ...doc(read), Id: "logs" },
        allowLoggingFrom: [{ bucketRef: { name: "logs-1" } }],
      });
    });

    it("names at most 50 buckets in allowLoggingFrom, the CRD's limit", () => {
      const held = new Map<string, ExportedRef>();
      const grants = Array.from({ length: 52 }, (_, i) => {
        const arn = `arn:aws:s3:::src-${String(i).padStart(2, "0")}`;
        held.set(arn, { kind: "S3Bucket", name: `src-${i}` });
        return loggingGrant(arn);
      });
      const out = policyFields(doc(read, ...grants) as never, ASSETS, (arn) => held.get(arn));
      assert.equal((out.allowLoggingFrom as unknown[]).length, 50);
      assert.deepEqual(out.policy, doc(read, grants[0] ?? {}, grants[1] ?? {}));
    });
  });

  describe("round trip", () => {
    /** The driver's plan for an object of the exported spec, adopting the same fake bucket. */
    async function planOfExport(bucket: FakeBucket) {
      s3.buckets.set("assets-1", bucket);
      const out = await exporter.read(listed("assets-1"), exportCtx());
      assert.ok(out);
      const obj: S3BucketObject = bucketObject(
        { ...(out.spec as Partial<S3BucketObject["spec"]>), adoptExisting: true },
        undefined,
        { generation: 1 },
      );
      const driver = new S3BucketDriver({ aws, clock: new FakeClock(NOW) });
      const ctx = context();
      const observed = await driver.observe(obj, ctx);
      assert.ok(observed.exists);
      assert.equal(observed.ownership, "foreign");
      // What the flow resolves the references to: the held objects' resources.
      const heldBucket = (name: string) =>
        [...HELD].find(([, ref]) => ref.kind === "S3Bucket" && ref.name === name)?.[0] ?? "";
      const resolved = {
        queueArns: new Map([["events", EVENTS_QUEUE]]),
        bucketArns: new Map([["replica-1", REPLICA]]),
        loggingTarget: "logs-1",
        loggingSources: obj.spec.allowLoggingFrom?.map(({ bucketRef }) => {
          const arn = heldBucket(bucketRef.name);
          return { bucketName: arn.slice("arn:aws:s3:::".length), bucketArn: arn };
        }),
      };
      return { obj, changes: (await driver.plan(obj, observed, ctx, resolved)).changes };
    }

    it("plans only the ownership tags for the exported spec of a bucket with many settings", async () => {
      const { obj, changes } = await planOfExport(richBucket());
      // The spec manages every setting, so the plan compared each.
      assert.deepEqual(managedSettings(obj.spec), [...BUCKET_SETTINGS]);
      assert.ok(changes.length > 0);
      for (const c of changes) {
        assert.match(c.path, /^tags\[/, c.path);
        assert.equal(c.ownership, true, c.path);
      }
    });

    it("plans only the ownership tags for a policy written back as allowLoggingFrom and spec.policy", async () => {
      const b = richBucket();
      const policy = {
        ...POLICY,
        Statement: [...POLICY.Statement, loggingGrant(OUTSIDE), loggingGrant(LOGS), loggingGrant(SITE_LOGS)],
      };
      (b.settings ?? {}).GetBucketPolicy = { Policy: JSON.stringify(policy) };
      const { obj, changes } = await planOfExport(b);
      assert.equal(obj.spec.allowLoggingFrom?.length, 2);
      assert.equal(obj.spec.policy?.Statement.length, 2);
      assert.deepEqual(
        changes.filter((c) => c.ownership !== true).map((c) => c.path),
        [],
      );
      assert.ok(changes.length > 0);
    });

    it("plans only the ownership tags for a bucket without settings", async () => {
      const { changes } = await planOfExport({ ...plain("eu-west-1"), tags: { env: "prod" } });
      assert.ok(changes.length > 0);
      assert.deepEqual(
        changes.filter((c) => c.ownership !== true).map((c) => c.path),
        [],
      );
    });
  });
});
