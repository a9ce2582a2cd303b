/**
 * The operator as an IAM user whose only policy is config/iam/policy-tag-scoped.json, on a test
 * AWS that enforces IAM, for what the emulator can evaluate of that policy (test/README.md, "IAM
 * enforcement"): the S3 and SQS samples converge, drift and spec changes are applied, a queue made
 * outside the operator is adopted, and everything is deleted with no call refused.
 *
 * The SQS statements are evaluated in full: the queue's ARN as the resource (a queue being created
 * included), `aws:RequestTag/compute.cloud.com/managed-by` from the tags CreateQueue and TagQueue
 * put, `aws:ResourceTag/...` from the queue's tags. So this shows that the operator tags what it
 * creates at creation and takes over a queue by tagging it before it changes it, and the last
 * test shows the scoping holds: the same user may not change a queue without the tag. The S3
 * statements are the same as in policy.json (S3 cannot be confined by tag). The EC2 statements
 * are not evaluated: moto authorizes every EC2 call against the resource `*`, and RunInstances
 * against several resources of several types, so Ec2Instance is left out.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { CreateQueueCommand, SetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { generatedPolicy } from "../support/enforced-iam.ts";
import { repoRoot, waitFor, WAIT_MS } from "../support/process.ts";
import { DENIALS, declaredActionsOf, IamEstate } from "./iam-enforced-fixture.ts";

const NS = "iam-tag-scoped";
const BUCKETS = ["assets", "vault", "ledger", "uploads", "backups-replica", "backups"];
const QUEUES = ["orders", "jobs", "jobs-dlq", "uploads-events"];

const estate = new IamEstate({
  ns: NS,
  policy: generatedPolicy("policy-tag-scoped.json"),
  operatorArgs: [`--adoption-namespaces=${NS}`],
}).hooks();
const { s3, sqs } = estate;

describe("IAM enforced: the operator's only policy is config/iam/policy-tag-scoped.json", () => {
  it("converges the S3 and SQS samples", async () => {
    const samples = readdirSync(path.join(repoRoot, "config/samples"))
      .filter((f) => /^compute_v1_(s3bucket|sqsqueue).*\.yaml$/.test(f))
      .flatMap((f) => ["-f", path.join(repoRoot, "config/samples", f)]);
    await s3.cp.kubectl(["apply", "-n", NS, ...samples]);
    await Promise.all([...BUCKETS.map((n) => s3.waitReady(n)), ...QUEUES.map((n) => sqs.waitReady(n))]);
  });

  it("repairs a queue's attributes and applies tag changes on queues it owns", async () => {
    const jobs = await sqs.queue("kubeprovisioner-sample-jobs-dlq");
    await sqs
      .sqs()
      .send(
        new SetQueueAttributesCommand({ QueueUrl: jobs.url, Attributes: { MessageRetentionPeriod: "60" } }),
      );
    await sqs.patch("orders", { spec: { tags: { team: "shop", Environment: null } } });
    await waitFor(
      "the repair and the new tags",
      async () => {
        const dlq = await sqs.queue("kubeprovisioner-sample-jobs-dlq");
        const orders = await sqs.queue("kubeprovisioner-sample-orders.fifo");
        return (
          dlq.attributes.MessageRetentionPeriod === "1209600" &&
          orders.tags.team === "shop" &&
          orders.tags.Environment === undefined
        );
      },
      WAIT_MS,
      200,
    );
  });

  it("adopts a queue made outside the operator by tagging it first", async () => {
    await sqs.sqs().send(new CreateQueueCommand({ QueueName: "iam-tag-scoped-legacy" }));
    await sqs.create("legacy", {
      queueName: "iam-tag-scoped-legacy",
      adoptExisting: true,
      visibilityTimeoutSeconds: 45,
    });
    await sqs.waitReady("legacy");
    assert.equal((await sqs.queue("iam-tag-scoped-legacy")).attributes.VisibilityTimeout, "45");
  });

  it("deletes every object and its resource", async () => {
    await Promise.all([
      ...BUCKETS.map((n) => s3.delete(n)),
      ...[...QUEUES, "legacy"].map((n) => sqs.delete(n)),
    ]);
    await Promise.all([
      ...BUCKETS.map((n) => s3.waitGone(n)),
      ...[...QUEUES, "legacy"].map((n) => sqs.waitGone(n)),
    ]);
    assert.equal(await sqs.queueExists("kubeprovisioner-sample-jobs"), false);
    assert.equal(await s3.bucketExists("kubeprovisioner-sample-vault"), false);
  });

  it("was refused no call, and exercised the tag-scoped SQS statements", async () => {
    const calls = await estate.awsCalls();
    const refused = calls.filter((c) => DENIALS.includes(c.code));
    assert.deepEqual(
      refused.map((c) => `${c.prefix}:${c.operation} ${c.code} x${c.count}`),
      [],
    );
    const exercised = declaredActionsOf(calls.filter((c) => c.code === "OK"));
    for (const action of [
      "sqs:CreateQueue",
      "sqs:TagQueue",
      "sqs:UntagQueue",
      "sqs:SetQueueAttributes",
      "sqs:DeleteQueue",
    ])
      assert.ok(exercised.has(action), `${action} was not exercised`);
  });

  it("allows the same user no change of a queue without the managed-by tag", async () => {
    const foreign = (await sqs.sqs().send(new CreateQueueCommand({ QueueName: "iam-tag-scoped-foreign" })))
      .QueueUrl;
    const asOperator = new SQSClient({
      region: "us-east-1",
      endpoint: estate.aws.moto.endpoint,
      credentials: estate.operatorKey,
    });
    try {
      await assert.rejects(
        asOperator.send(
          new SetQueueAttributesCommand({ QueueUrl: foreign, Attributes: { VisibilityTimeout: "5" } }),
        ),
        (err: Error) => err.name === "AccessDenied" && /sqs:setqueueattributes/.test(err.message),
      );
      await assert.rejects(
        asOperator.send(new CreateQueueCommand({ QueueName: "iam-tag-scoped-untagged" })),
        (err: Error) => err.name === "AccessDenied",
      );
    } finally {
      asOperator.destroy();
    }
  });
});
