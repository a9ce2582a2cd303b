/**
 * The S3Bucket settings beyond tags and versioning (encryption, Block Public Access, policy,
 * lifecycle rules, Object Ownership) against moto: created with the bucket, enforced on every
 * poll and repaired with an Updated Event naming the setting, never re-sent when equal (a policy
 * is compared as a JSON value), and never read or touched when the spec leaves them unset; the
 * bucket's outputs ConfigMap holds its name, ARN, region and endpoint.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketOwnershipControlsCommand,
  GetBucketPolicyCommand,
  GetPublicAccessBlockCommand,
  PutBucketEncryptionCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutPublicAccessBlockCommand,
} from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const policy = (bucket: string) => ({
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    },
  ],
});

const hardened = (bucket: string) => ({
  bucketName: bucket,
  encryption: { algorithm: "aws:kms", kmsKeyId: "alias/data", bucketKeyEnabled: true },
  publicAccessBlock: {
    blockPublicAcls: true,
    ignorePublicAcls: true,
    blockPublicPolicy: true,
    restrictPublicBuckets: true,
  },
  policy: policy(bucket),
  lifecycleRules: [
    {
      id: "logs",
      prefix: "logs/",
      expirationDays: 90,
      transitions: [{ days: 30, storageClass: "STANDARD_IA" }],
    },
    { id: "uploads", abortIncompleteMultipartUploadDays: 7, noncurrentVersionExpirationDays: 30 },
  ],
  objectOwnership: "BucketOwnerEnforced",
  writeOutputsTo: { configMapName: `${bucket}-bucket` },
});

describe("S3Bucket settings: encryption, public access, policy, lifecycle, ownership", () => {
  const env = new S3Env("s3-settings").hooks();

  it("creates a hardened bucket with every setting in place", async () => {
    await env.create("vault", hardened("vault"));
    await env.waitReady("vault");
    const s3 = env.s3();
    const enc = await s3.send(new GetBucketEncryptionCommand({ Bucket: "vault" }));
    const rule = enc.ServerSideEncryptionConfiguration?.Rules?.[0];
    assert.equal(rule?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm, "aws:kms");
    assert.equal(rule?.ApplyServerSideEncryptionByDefault?.KMSMasterKeyID, "alias/data");
    assert.equal(rule?.BucketKeyEnabled, true);
    const pab = await s3.send(new GetPublicAccessBlockCommand({ Bucket: "vault" }));
    assert.deepEqual(pab.PublicAccessBlockConfiguration, {
      BlockPublicAcls: true,
      IgnorePublicAcls: true,
      BlockPublicPolicy: true,
      RestrictPublicBuckets: true,
    });
    const pol = await s3.send(new GetBucketPolicyCommand({ Bucket: "vault" }));
    assert.deepEqual(JSON.parse(pol.Policy ?? "{}"), policy("vault"));
    const lc = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: "vault" }));
    assert.deepEqual(lc.Rules?.map((r) => r.ID).sort(), ["logs", "uploads"]);
    const logs = lc.Rules?.find((r) => r.ID === "logs");
    assert.equal(logs?.Expiration?.Days, 90);
    assert.equal(logs?.Transitions?.[0]?.StorageClass, "STANDARD_IA");
    const own = await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: "vault" }));
    assert.equal(own.OwnershipControls?.Rules?.[0]?.ObjectOwnership, "BucketOwnerEnforced");
    assert.equal(env.proxy.count("PutBucketOwnershipControls"), 0, "ownership went with CreateBucket");
    const obj = await env.get("vault");
    const cm = await env.configMap("vault-bucket");
    assert.deepEqual(cm?.data, {
      BUCKET_NAME: "vault",
      BUCKET_ARN: "arn:aws:s3:::vault",
      BUCKET_REGION: "us-east-1",
      BUCKET_ENDPOINT: obj?.status?.endpoint,
    });
    assert.equal(cm?.metadata.ownerReferences?.[0]?.uid, obj?.metadata.uid);
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed, every setting set", async () => {
    await env.waitEvent("vault", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const reads = env.proxy.count("GetBucketPolicy");
    await env.patch("vault", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketPolicy") > reads, "the policy was read again");
  });

  it("does not re-send a policy that differs only in key order and formatting", async () => {
    const p = policy("vault");
    const statement = p.Statement[0];
    const reordered = {
      Statement: [
        {
          Condition: statement?.Condition,
          Resource: statement?.Resource,
          Action: statement?.Action,
          Principal: statement?.Principal,
          Effect: statement?.Effect,
          Sid: statement?.Sid,
        },
      ],
      Version: p.Version,
    };
    await env
      .s3()
      .send(new PutBucketPolicyCommand({ Bucket: "vault", Policy: JSON.stringify(reordered, null, 4) }));
    const puts = env.proxy.count("PutBucketPolicy");
    await env.waitReconciles(3, "requeue_after");
    assert.equal(env.proxy.count("PutBucketPolicy"), puts);
  });

  it("repairs drift of each setting with an Updated Event naming it", async () => {
    const s3 = env.s3();
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket: "vault",
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
        },
      }),
    );
    await s3.send(
      new PutPublicAccessBlockCommand({
        Bucket: "vault",
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: false,
          IgnorePublicAcls: false,
          BlockPublicPolicy: false,
          RestrictPublicBuckets: false,
        },
      }),
    );
    await s3.send(
      new PutBucketOwnershipControlsCommand({
        Bucket: "vault",
        OwnershipControls: { Rules: [{ ObjectOwnership: "ObjectWriter" }] },
      }),
    );
    await waitFor(
      "drift repaired",
      async () => {
        const enc = await s3.send(new GetBucketEncryptionCommand({ Bucket: "vault" }));
        const pab = await s3.send(new GetPublicAccessBlockCommand({ Bucket: "vault" }));
        const own = await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: "vault" }));
        return (
          enc.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault
            ?.SSEAlgorithm === "aws:kms" &&
          pab.PublicAccessBlockConfiguration?.BlockPublicPolicy === true &&
          own.OwnershipControls?.Rules?.[0]?.ObjectOwnership === "BucketOwnerEnforced"
        );
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "an Updated Event naming the settings",
      async () => {
        const text = (await env.events("vault"))
          .filter((e) => e.reason === "Updated")
          .map((e) => e.message)
          .join(" ");
        return (
          /encryption: aws:kms/.test(text) && /publicAccessBlock/.test(text) && /objectOwnership/.test(text)
        );
      },
      15_000,
      150,
    );
  });

  it("applies a change of the lifecycle rules and removes them all for an empty list", async () => {
    await env.patch("vault", {
      spec: { lifecycleRules: [{ id: "tmp", prefix: "tmp/", expirationDays: 1 }] },
    });
    const s3 = env.s3();
    await waitFor(
      "one rule",
      async () => {
        const lc = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: "vault" }));
        return lc.Rules?.length === 1 && lc.Rules[0]?.ID === "tmp";
      },
      WAIT_MS,
      200,
    );
    await env.patch("vault", { spec: { lifecycleRules: [] } });
    await waitFor("no rules", async () => env.proxy.count("DeleteBucketLifecycle") === 1, WAIT_MS, 200);
    await assert.rejects(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: "vault" })), {
      name: "NoSuchLifecycleConfiguration",
    });
  });

  it("neither reads nor touches a setting the spec leaves unset", async () => {
    await env.create("plain", { bucketName: "plain" });
    await env.waitReady("plain");
    await env.s3().send(
      new PutBucketEncryptionCommand({
        Bucket: "plain",
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
        },
      }),
    );
    const [encReads, encPuts] = [
      env.proxy.count("GetBucketEncryption"),
      env.proxy.count("PutBucketEncryption"),
    ];
    await env.waitReconciles(3, "requeue_after");
    assert.equal(env.proxy.count("PutBucketEncryption"), encPuts);
    // Only the hardened bucket's polls read encryption.
    const vaultPolls = env.proxy.count("GetBucketEncryption") - encReads;
    assert.ok(vaultPolls <= 3, `GetBucketEncryption ${vaultPolls} times in 3 reconciles of two buckets`);
  });
});
