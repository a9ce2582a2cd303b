/**
 * The operator as an IAM user whose only policy is config/iam/policy.json, on a test AWS that
 * enforces IAM (test/README.md, "IAM enforcement"), over an estate of every kind: the documented
 * samples (config/samples: references between objects, outputs) and a fleet of each kind
 * converge; drift is repaired; spec changes of every setting family are applied, EC2 state
 * changes included; resources made outside the operator are adopted; change events and bulk tag
 * reads are read; a queue lives in an AwsAccount whose role has the same policy (and one whose
 * external ID is wrong is refused); everything is deleted. No call is refused but those the tests
 * provoke: a policy without one action makes the object report the action and the policy file,
 * and the object heals, with no change to it, once the action is allowed again. Last, every
 * action of the policy that the emulator authorizes must have been needed by a call that
 * succeeded, so an action the generator drops fails this file.
 *
 * `make test` runs it with a fleet of 2 of each kind (about half a minute alone); `IAM_PROFILE=full`
 * (`make test-iam`) with 24.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { DeleteTagsCommand } from "@aws-sdk/client-ec2";
import {
  CreateBucketCommand,
  GetBucketEncryptionCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { CreateQueueCommand, SetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { Condition } from "../../src/api/v1/index.ts";
import { documentedPatterns, documentedQueuePolicy, ruleToQueue } from "../support/change-event-rules.ts";
import { ACCOUNT, generatedPolicy, withoutAction } from "../support/enforced-iam.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { repoRoot, runCommand, waitFor, WAIT_MS } from "../support/process.ts";
import { KINDS } from "../../src/kinds.ts";
import { sizedBy } from "../support/profile.ts";
import type { KubeObj } from "../support/reconciler-env.ts";
import { tagMap } from "./reconciler-ec2-fixture.ts";
import {
  DENIALS,
  declaredActionsOf,
  IamEstate,
  OPERATOR_USER,
  type AwsCall,
} from "./iam-enforced-fixture.ts";

/**
 * Objects of each kind beside the samples, converged and deleted together: the full pass
 * (`IAM_PROFILE=full`, `make test-iam`) runs every check on a larger estate.
 */
const FLEET = sizedBy("IAM_PROFILE")({ full: 24, reduced: 2 });
const NS = "iam-enforced";
const POLICY = generatedPolicy("policy.json");
const TENANT_EXTERNAL_ID = "tenant-7f3c";
/**
 * The actions of the policy the emulator never authorizes, so that no test here can show one
 * missing: EC2 and S3 use the role an instance profile or a replication rule names (iam:PassRole)
 * and a volume's KMS key on the caller's behalf, and moto checks neither; sts:TagSession is needed
 * for session tags, which the operator passes on only under EKS Pod Identity.
 */
const NOT_EVALUATED = /^(iam:PassRole|kms:.*|sts:TagSession)$/;
/** The samples' objects, by kind. */
const SAMPLES = {
  S3Bucket: ["assets", "vault", "ledger", "uploads", "backups-replica", "backups"],
  SqsQueue: ["orders", "jobs", "jobs-dlq", "uploads-events"],
  Ec2Instance: ["web-server", "hardened"],
} as const;

const estate = new IamEstate({
  ns: NS,
  policy: POLICY,
  // Adoption is a right the install grants per namespace.
  operatorArgs: [
    `--adoption-namespaces=${NS}`,
    // Change events stand in for most polls, but moto sends none for the drift the tests make.
    "--bulk-tag-reads",
    "--bulk-tag-window=3s",
    "--poll-interval-with-events=1s",
  ],
  prepare: async (aws) => {
    await aws.moto.createInstanceProfile("kubeprovisioner-sample-web");
    await aws.moto.createInstanceProfile("kubeprovisioner-sample-batch");
    // The role of an AwsAccount, in the same account: the operator's user may assume it with the
    // external ID, and it has the same policy.
    await aws.createRole(
      "kubeprovisioner-tenant",
      {
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: { AWS: `arn:aws:iam::${ACCOUNT}:user/${OPERATOR_USER}` },
            Action: "sts:AssumeRole",
            Condition: { StringEquals: { "sts:ExternalId": TENANT_EXTERNAL_ID } },
          },
        ],
      },
      POLICY,
    );
    // The change-event queue, its policy and the rules, as docs/aws.md#change-events has users make them.
    const queues = new SQSClient({
      region: "us-east-1",
      endpoint: aws.moto.endpoint,
      credentials: aws.harness,
    });
    try {
      const url =
        (await queues.send(new CreateQueueCommand({ QueueName: "kp-change-events" }))).QueueUrl ?? "";
      const arn = `arn:aws:sqs:us-east-1:${ACCOUNT}:kp-change-events`;
      await queues.send(
        new SetQueueAttributesCommand({
          QueueUrl: url,
          Attributes: { Policy: JSON.stringify(documentedQueuePolicy(arn)) },
        }),
      );
      for (const [i, pattern] of documentedPatterns().entries())
        await ruleToQueue(aws.moto.endpoint, { name: `docs-${i + 1}`, pattern, queueArn: arn });
      return [`--change-events=${url}`];
    } finally {
      queues.destroy();
    }
  },
}).hooks();
const { s3, sqs, ec2 } = estate;
const fleet = Array.from({ length: FLEET }, (_, i) => `fleet-${i}`);

/** A condition of `o` whose reason is a refusal by IAM (AWS's code: AccessDenied, UnauthorizedOperation), if any. */
const denied = (o: KubeObj | undefined): Condition | undefined =>
  o?.status?.conditions?.find((c) => DENIALS.includes(c.reason));

/** Waits until every object named is Ready. */
async function allReady(names: {
  s3?: readonly string[];
  sqs?: readonly string[];
  ec2?: readonly string[];
}): Promise<void> {
  await Promise.all([
    ...(names.s3 ?? []).map((n) => s3.waitReady(n)),
    ...(names.sqs ?? []).map((n) => sqs.waitReady(n)),
    ...(names.ec2 ?? []).map((n) => ec2.waitReady(n)),
  ]);
}

/** The calls IAM refused, as `prefix:operation code xcount`. */
const refusals = (calls: readonly AwsCall[]): string[] =>
  calls
    .filter((c) => DENIALS.includes(c.code))
    .map((c) => `${c.prefix}:${c.operation} ${c.code} x${c.count}`);

/** The operations whose refusal a test provoked, with what it took away. */
const intended: { operation: string; action: string }[] = [];
/** Whether kubeprovisioner export ran to the end with the operator's policy alone. */
let exportedUnderPolicy = false;

/**
 * Takes `action` away from the operator's policy, runs `provoke` (which makes object `name` of
 * `env` need it), waits until the object reports the refused `operation` naming `named` (the
 * actions the call needs) and the policy file, gives the action back and waits until the object
 * is Ready with no change to it.
 */
async function refuseThenAllow(
  env: typeof s3 | typeof sqs | typeof ec2,
  name: string,
  refused: { action: string; operation: string; named?: string },
  provoke: () => Promise<unknown>,
): Promise<void> {
  const { action, operation, named = action } = refused;
  intended.push({ operation, action });
  await estate.setPolicy(withoutAction(POLICY, action));
  await provoke();
  const failed = await env.waitUntil(name, `AccessDenied naming ${action}`, (o) => denied(o) !== undefined);
  const message = denied(failed)?.message ?? "";
  assert.match(message, new RegExp(`^${operation}: `), message);
  assert.ok(message.includes(`needs ${named}: config/iam/policy.json allows it`), message);
  await env.waitEvent(name, "Warning", denied(failed)?.reason ?? "", WAIT_MS);
  const generation = failed?.metadata.generation;
  await estate.setPolicy(POLICY);
  const healed = await env.waitUntil(
    name,
    "Ready with no AccessDenied",
    (o) =>
      denied(o) === undefined &&
      o?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true,
  );
  assert.equal(healed?.metadata.generation, generation, "the object was not changed");
}

/** The Ready condition of AwsAccount `name`. */
async function accountReady(name: string): Promise<Condition | undefined> {
  const res = await s3.cp.request("GET", `/apis/compute.cloud.com/v1/awsaccounts/${name}`);
  const status = (res.body as { status?: { conditions?: Condition[] } }).status;
  return status?.conditions?.find((c) => c.type === "Ready");
}

describe("IAM enforced: the operator's only policy is config/iam/policy.json", () => {
  it("converges the documented samples", async () => {
    await s3.cp.kubectl(["apply", "-n", NS, "-k", path.join(repoRoot, "config/samples")]);
    await allReady({ s3: SAMPLES.S3Bucket, sqs: SAMPLES.SqsQueue, ec2: SAMPLES.Ec2Instance });
    const outputs = await sqs.configMap("jobs-queue");
    assert.equal(outputs?.data?.QUEUE_NAME, "kubeprovisioner-sample-jobs");
  });

  it(`converges ${FLEET} more objects of each kind`, async () => {
    await Promise.all(
      fleet.flatMap((name) => [
        s3.create(name, {
          bucketName: `iam-enforced-${name}`,
          versioning: true,
          encryption: { algorithm: "aws:kms", bucketKeyEnabled: true },
          publicAccessBlock: { blockPublicAcls: true, ignorePublicAcls: true },
          tags: { fleet: name },
        }),
        sqs.create(name, {
          queueName: `iam-enforced-${name}`,
          visibilityTimeoutSeconds: 45,
          encryption: { sqsManaged: true },
          tags: { fleet: name },
        }),
        ec2.create(name, { tags: { fleet: name }, metadataOptions: { httpTokens: "required" } }),
      ]),
    );
    await allReady({ s3: fleet, sqs: fleet, ec2: fleet });
  });

  it("repairs drift of each kind made outside the operator", async () => {
    await s3.s3().send(
      new PutBucketVersioningCommand({
        Bucket: "kubeprovisioner-sample-vault",
        VersioningConfiguration: { Status: "Suspended" },
      }),
    );
    const dlq = await sqs.queue("kubeprovisioner-sample-jobs-dlq");
    await sqs.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: dlq.url,
        Attributes: { MessageRetentionPeriod: "60" },
      }),
    );
    const instanceId = (await ec2.waitReady("web-server")).status?.instanceId ?? "";
    await ec2.ec2().send(new DeleteTagsCommand({ Resources: [instanceId], Tags: [{ Key: "Environment" }] }));
    await waitFor(
      "the operator to repair the drift",
      async () =>
        (await s3.versioning("kubeprovisioner-sample-vault")) === "Enabled" &&
        (await sqs.queue("kubeprovisioner-sample-jobs-dlq")).attributes.MessageRetentionPeriod ===
          "1209600" &&
        tagMap((await ec2.instance(instanceId))?.Tags).Environment === "dev",
      WAIT_MS,
      200,
    );
  });

  it("applies changes of the spec", async () => {
    await s3.patch("vault", {
      spec: {
        encryption: { algorithm: "AES256" },
        lifecycleRules: [{ id: "logs", prefix: "logs/", expirationDays: 30 }],
      },
    });
    await sqs.patch("orders", {
      spec: { visibilityTimeoutSeconds: 90, tags: { Environment: "dev", team: "shop" } },
    });
    await ec2.patch("hardened", {
      spec: { metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 3 } },
    });
    // A merge patch: null removes the key.
    await ec2.patch("web-server", { spec: { tags: { Environment: null } } });
    const vaultEncryption = async (): Promise<string | undefined> => {
      const out = await s3
        .s3()
        .send(new GetBucketEncryptionCommand({ Bucket: "kubeprovisioner-sample-vault" }));
      return out.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault
        ?.SSEAlgorithm;
    };
    const instance = async (name: string) => ec2.instance((await ec2.get(name))?.status?.instanceId ?? "");
    await waitFor(
      "vault encrypted with AES256",
      async () => (await vaultEncryption()) === "AES256",
      WAIT_MS,
      200,
    );
    await waitFor(
      "the orders queue's new visibility timeout and tags",
      async () => {
        const orders = await sqs.queue("kubeprovisioner-sample-orders.fifo");
        return orders.attributes.VisibilityTimeout === "90" && orders.tags.team === "shop";
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "hardened's new hop limit",
      async () => (await instance("hardened"))?.MetadataOptions?.HttpPutResponseHopLimit === 3,
      WAIT_MS,
      200,
    );
    await waitFor(
      "web-server without its Environment tag",
      async () => tagMap((await instance("web-server"))?.Tags).Environment === undefined,
      WAIT_MS,
      200,
    );
    await allReady({ s3: ["vault"], sqs: ["orders"], ec2: ["hardened", "web-server"] });
  });

  it("adopts a bucket and a queue made outside the operator", async () => {
    await s3.s3().send(new CreateBucketCommand({ Bucket: "iam-enforced-legacy" }));
    await s3.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "iam-enforced-legacy",
        Tagging: { TagSet: [{ Key: "k", Value: "v" }] },
      }),
    );
    await sqs.sqs().send(new CreateQueueCommand({ QueueName: "iam-enforced-legacy" }));
    await s3.create("legacy-bucket", {
      bucketName: "iam-enforced-legacy",
      adoptExisting: true,
      versioning: true,
    });
    await sqs.create("legacy-queue", {
      queueName: "iam-enforced-legacy",
      adoptExisting: true,
      tags: { app: "old" },
    });
    await allReady({ s3: ["legacy-bucket"], sqs: ["legacy-queue"] });
    assert.equal(await s3.versioning("iam-enforced-legacy"), "Enabled");
    assert.equal((await sqs.queue("iam-enforced-legacy")).tags.app, "old");
  });

  settingFamiliesAndAccounts();

  it("names the refused action and the policy file, and heals once the policy allows it again", async () => {
    await refuseThenAllow(
      s3,
      "refused-encryption",
      { action: "s3:PutEncryptionConfiguration", operation: "PutBucketEncryption" },
      () =>
        s3.create("refused-encryption", {
          bucketName: "iam-enforced-refused",
          encryption: { algorithm: "AES256" },
        }),
    );
    await refuseThenAllow(
      sqs,
      "orders",
      { action: "sqs:SetQueueAttributes", operation: "SetQueueAttributes" },
      () => sqs.patch("orders", { spec: { visibilityTimeoutSeconds: 120 } }),
    );
    await refuseThenAllow(
      ec2,
      "hardened",
      { action: "ec2:ModifyInstanceMetadataOptions", operation: "ModifyInstanceMetadataOptions" },
      () =>
        ec2.patch("hardened", {
          spec: { metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 } },
        }),
    );
    // CreateQueue with the operator's tags needs sqs:TagQueue too: the message names both.
    await refuseThenAllow(
      sqs,
      "refused-tags",
      { action: "sqs:TagQueue", operation: "CreateQueue", named: "sqs:CreateQueue and sqs:TagQueue" },
      () => sqs.create("refused-tags", { queueName: "iam-enforced-refused-tags" }),
    );
    // A bucket a refused PutBucketTagging left untagged is known as the object's own afterwards
    // (the crash window of a create, read with ListBuckets).
    await refuseThenAllow(
      s3,
      "refused-tagging",
      { action: "s3:PutBucketTagging", operation: "PutBucketTagging" },
      () => s3.create("refused-tagging", { bucketName: "iam-enforced-refused-tagging" }),
    );
  });

  it("exports the estate with the operator's policy alone: kubeprovisioner export", async () => {
    const key = estate.operatorKey;
    const out = await runCommand(
      process.execPath,
      [operatorProgram(), "export", "--region=us-east-1", "--region=eu-west-1", "-o", "-"],
      {
        env: {
          ...process.env,
          AWS_ENDPOINT_URL: estate.aws.moto.endpoint,
          AWS_ACCESS_KEY_ID: key.accessKeyId,
          AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
          AWS_EC2_METADATA_DISABLED: "true",
          KUBECONFIG: estate.s3.cp.kubeconfigPath,
        },
      },
    );
    assert.match(out.stderr, /written, \d+ skipped, 0 failed/);
    assert.doesNotMatch(out.stderr, /^failed /m);
    exportedUnderPolicy = true;
  });

  it("deletes every object and its resource", async () => {
    const buckets = [
      ...SAMPLES.S3Bucket,
      "legacy-bucket",
      "refused-encryption",
      "site",
      "logs",
      "refused-tagging",
      ...fleet,
    ];
    const queues = [...SAMPLES.SqsQueue, "legacy-queue", "refused-tags", ...fleet];
    const instances = [...SAMPLES.Ec2Instance, ...fleet];
    await Promise.all([
      ...buckets.map((n) => s3.delete(n)),
      ...queues.map((n) => sqs.delete(n)),
      ...instances.map((n) => ec2.delete(n)),
    ]);
    await Promise.all([
      ...buckets.map((n) => s3.waitGone(n)),
      ...queues.map((n) => sqs.waitGone(n)),
      ...instances.map((n) => ec2.waitGone(n)),
    ]);
    assert.equal(await s3.bucketExists("kubeprovisioner-sample-vault"), false);
    assert.equal(await s3.bucketExists("kubeprovisioner-sample-ledger"), false);
    assert.equal(
      await s3.bucketExists("kubeprovisioner-sample-assets"),
      true,
      "deletionPolicy Retain keeps it",
    );
    assert.equal(await sqs.queueExists("kubeprovisioner-sample-jobs"), false);
    assert.equal(await s3.bucketExists("iam-enforced-site"), false, "forceDelete emptied it first");
  });

  it("was refused no call but those the tests provoked", async () => {
    const calls = await estate.awsCalls();
    const unexpected = calls.filter(
      (c) => DENIALS.includes(c.code) && !intended.some((i) => i.operation === c.operation),
    );
    assert.deepEqual(refusals(unexpected), [], `calls refused to ${OPERATOR_USER}`);
    for (const i of intended)
      assert.ok(
        calls.some((c) => c.operation === i.operation && DENIALS.includes(c.code)),
        `${i.operation} was never refused without ${i.action}`,
      );
    const exercised = declaredActionsOf(calls.filter((c) => c.code === "OK"));
    // Every action of the policy that the emulator authorizes was needed by a call that succeeded.
    const granted = POLICY.Statement.flatMap((st) =>
      typeof st.Action === "string" ? [st.Action] : st.Action,
    );
    // What only kubeprovisioner export calls is shown by the export above succeeding under the policy.
    const exportOnly = new Set(
      KINDS.flatMap((k) => k.iam)
        .filter((a) => a.when?.includes("kubeprovisioner export") === true && a.when.startsWith("by "))
        .map((a) => a.action),
    );
    assert.ok(exportedUnderPolicy, "the export ran under the policy");
    const missed = [...new Set(granted)].filter(
      (a) => !NOT_EVALUATED.test(a) && !exercised.has(a) && !exportOnly.has(a),
    );
    assert.deepEqual(missed, [], "actions of config/iam/policy.json that no call succeeded with");
  });
});

/** The setting families the samples leave out, change events, bulk tag reads and an AwsAccount. */
function settingFamiliesAndAccounts(): void {
  it("applies the setting families the samples leave out", async () => {
    await s3.create("logs", {
      bucketName: "iam-enforced-logs",
      // S3 writes the site's access logs into it.
      forceDelete: true,
      allowLoggingFrom: [{ bucketRef: { name: "site" } }],
    });
    await s3.create("site", {
      bucketName: "iam-enforced-site",
      forceDelete: true,
      logging: { targetBucketRef: { name: "logs" }, targetPrefix: "site/" },
      cors: [{ allowedMethods: ["GET"], allowedOrigins: ["*"] }],
      website: { redirectAllRequestsTo: { hostName: "example.com" } },
    });
    await ec2.patch("web-server", {
      spec: {
        monitoring: true,
        // T3 instances launch with unlimited credits.
        creditSpecification: "standard",
        instanceInitiatedShutdownBehavior: "terminate",
        iamInstanceProfile: "kubeprovisioner-sample-web",
        volumeTags: { backup: "daily" },
      },
    });
    await ec2.patch("hardened", { spec: { iamInstanceProfile: "kubeprovisioner-sample-batch" } });
    await sqs.patch("orders", { spec: { tags: { team: null } } });
    await allReady({ s3: ["logs", "site"], sqs: ["orders"], ec2: ["web-server", "hardened"] });
    await s3.s3().send(new PutObjectCommand({ Bucket: "iam-enforced-site", Key: "index.html", Body: "hi" }));
    // Once a steady poll has read the website back, it goes.
    await waitFor(
      "a steady poll of site's website",
      async () =>
        (await estate.awsCalls()).some((c) => c.operation === "GetBucketWebsite" && c.code === "OK"),
      WAIT_MS,
      200,
    );
    await s3.patch("site", { spec: { cors: [], website: null } });
    await ec2.patch("web-server", { spec: { monitoring: false } });
    await s3.patch("vault", { spec: { lifecycleRules: null } });
    await ec2.patch("web-server", { spec: { desiredState: "stopped" } });
    await ec2.waitUntil("web-server", "stopped", (o) => o?.status?.state === "stopped");
    await ec2.patch("web-server", { spec: { desiredState: "running" } });
    await ec2.waitUntil("web-server", "running again", (o) => o?.status?.state === "running");
    await allReady({ s3: ["site", "vault"], ec2: ["web-server"] });
  });

  it("reads change events and bulk tags", async () => {
    const succeeded = async (operation: string): Promise<boolean> =>
      (await estate.awsCalls()).some((c) => c.operation === operation && c.code === "OK");
    // The stop and start of web-server sent state-change events to the queue.
    await waitFor("change events read and deleted", () => succeeded("DeleteMessageBatch"), WAIT_MS, 500);
    assert.ok(await succeeded("ReceiveMessage"));
    await waitFor("a bulk tag read", () => succeeded("GetResources"), WAIT_MS, 500);
  });

  it("manages a queue through an AwsAccount whose role has the same policy", async () => {
    for (const [name, externalId] of [
      ["tenant", TENANT_EXTERNAL_ID],
      ["tenant-wrong-id", "not-the-id"],
    ] as const) {
      const res = await s3.cp.request("POST", "/apis/compute.cloud.com/v1/awsaccounts", {
        apiVersion: "compute.cloud.com/v1",
        kind: "AwsAccount",
        metadata: { name },
        spec: {
          roleArn: `arn:aws:iam::${ACCOUNT}:role/kubeprovisioner-tenant`,
          externalId,
          allowedNamespaces: { names: [NS] },
        },
      });
      assert.equal(res.status, 201, res.text);
    }
    await waitFor(
      "AwsAccount tenant Ready",
      async () => (await accountReady("tenant"))?.status === "True",
      WAIT_MS,
      200,
    );
    // The role's trust policy requires the external ID: AssumeRole with another one is refused
    // (counted too on the GetCallerIdentity whose credentials it was to provide).
    for (const operation of ["AssumeRole", "GetCallerIdentity"])
      intended.push({ operation, action: "the role's trust (external ID)" });
    let refused: Condition | undefined;
    await waitFor(
      "AwsAccount tenant-wrong-id refused",
      async () => (refused = await accountReady("tenant-wrong-id"))?.reason === "AssumeRoleFailed",
      WAIT_MS,
      200,
    );
    assert.match(
      refused?.message ?? "",
      /^AccessDenied: could not assume .*kubeprovisioner-tenant: AssumeRole: .* is not authorized to perform: sts:AssumeRole on resource: .*; the operator's IAM role needs sts:AssumeRole and sts:TagSession on the AwsAccount's role, and that role's trust policy must allow both .*\(with the external ID\)/,
    );
    await sqs.create("tenant-queue", { queueName: "iam-enforced-tenant", accountRef: { name: "tenant" } });
    await sqs.waitReady("tenant-queue");
    await sqs.delete("tenant-queue");
    await sqs.waitGone("tenant-queue");
    for (const name of ["tenant", "tenant-wrong-id"])
      await s3.cp.request("DELETE", `/apis/compute.cloud.com/v1/awsaccounts/${name}`);
  });
}
