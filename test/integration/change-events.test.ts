/**
 * Change events against a real API server and the test AWS (test/README.md). The events queue
 * carries the policy, and the default event bus the four rules, that docs/aws.md#change-events
 * documents, both read from that page. The test AWS sends EC2's own state-change events through
 * those rules, as AWS does; it sends no CloudTrail events, so each other out-of-band change made
 * here is followed by the event AWS would send for it, shaped as AWS documents it
 * (src/change-events/testing/events.ts) and put straight into the operator's queue, or once
 * through PutEvents and a rule whose target is the queue. The operator runs with
 * `--poll-interval=3s` and `--poll-interval-with-events=1h`, and every object is created while
 * its queue is read: any repair within seconds comes from the event, since the object's next poll
 * is an hour away.
 *
 * Covered: tag drift and out-of-band deletion of a bucket, a queue's settings, an instance
 * stopped out of band (heard through EC2's own event and the documented rule, nothing injected);
 * the operator's own calls enqueue nothing (counted from the controller's reconcile metric);
 * malformed and unowned messages are dropped, counted and gone from the queue; an AwsAccount's
 * queue is read with its role and its events reach that account's object only; and a deleted
 * queue brings the normal poll back, with a Warning Event on the operator's Pod and the health
 * gauge at 0.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { StopInstancesCommand } from "@aws-sdk/client-ec2";
import { DeleteBucketCommand, GetBucketTaggingCommand, PutBucketTaggingCommand } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { AssumeRoleCommand, STSClient } from "@aws-sdk/client-sts";
import { cloudTrailEvent } from "../../src/change-events/testing/events.ts";
import {
  documentedPatterns,
  documentedQueuePolicy,
  eventBridge,
  ruleToQueue,
} from "../support/change-event-rules.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "change-events";
const NS_B = "change-events-b";
const POD = "kubeprovisioner-test-0";
/** moto's default account, the operator's own. */
const OWN = "123456789012";
const ACCOUNT_B = "333333333333";
const ROLE_B = `arn:aws:iam::${ACCOUNT_B}:role/kubeprovisioner`;
const REGION = "us-east-1";
const API = "/apis/compute.cloud.com/v1";

const queues = new SqsEnv(NS, [], { operatorEnv: { POD_NAMESPACE: NS, POD_NAME: POD } });
const buckets = new S3Env(NS);
const instances = new Ec2Env({ ns: NS });
let eventsUrl = "";
let eventsUrlB = "";
let sqsB: SQSClient | undefined;

/** Puts an event (or any body) straight into a queue, as an EventBridge rule's SQS target would. */
async function inject(body: unknown, url = eventsUrl, client: SQSClient = queues.sqs()): Promise<void> {
  await client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

const metric = (name: string, labels: Record<string, string> = {}): Promise<number> =>
  queues.op.metric(`kubeprovisioner_change_events_${name}`, labels);
const dropped = (reason: string, queue = eventsUrl): Promise<number> =>
  metric("dropped_total", { queue, reason });

async function waitMetric(what: string, read: () => Promise<number>, atLeast: number): Promise<void> {
  await waitFor(what, async () => (await read()) >= atLeast, 20_000, 100);
}

/** One call of EventBridge's JSON API on the test AWS. */
const events = (target: string, body: unknown): Promise<unknown> =>
  eventBridge(queues.moto.endpoint, target, body, REGION);

/** The events queue's ARN. */
async function queueArn(url: string): Promise<string> {
  const out = await queues
    .sqs()
    .send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }));
  assert.ok(out.Attributes?.QueueArn);
  return out.Attributes.QueueArn;
}

async function bucketTags(name: string): Promise<Record<string, string>> {
  const out = await buckets.s3().send(new GetBucketTaggingCommand({ Bucket: name }));
  return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
}

describe("change events", () => {
  before(async () => {
    await queues.start();
    await queues.op.stop();
    eventsUrl =
      (await queues.sqs().send(new CreateQueueCommand({ QueueName: "kp-change-events" }))).QueueUrl ?? "";
    // The queue's policy and the rules, as docs/aws.md#change-events has users make them.
    const arn = await queueArn(eventsUrl);
    await queues.sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: eventsUrl,
        Attributes: { Policy: JSON.stringify(documentedQueuePolicy(arn)) },
      }),
    );
    for (const [i, pattern] of documentedPatterns().entries())
      await ruleToQueue(queues.moto.endpoint, {
        name: `docs-${i + 1}`,
        pattern,
        queueArn: arn,
        region: REGION,
      });
    await queues.startOperator([
      `--change-events=${eventsUrl}`,
      "--poll-interval=3s",
      "--poll-interval-with-events=1h",
    ]);
    buckets.attachTo(queues);
    instances.attachTo(queues);
    await waitMetric("the queue read", () => metric("queue_healthy", { queue: eventsUrl }), 1);
  });
  after(async () => {
    sqsB?.destroy();
    await queues.stop();
  });

  it("repairs a bucket's tag drift on its PutBucketTagging event", async () => {
    await buckets.create("tagged", { bucketName: "ce-tagged", tags: { team: "a" } });
    await buckets.waitReady("tagged");
    const repairs = await queues.op.metric("kubeprovisioner_drift_repairs_total", {
      kind: "S3Bucket",
      setting: "tags",
    });
    const tags = await bucketTags("ce-tagged");
    await buckets.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "ce-tagged",
        Tagging: { TagSet: Object.entries({ ...tags, team: "b" }).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
    await inject(
      cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "PutBucketTagging",
        requestParameters: { bucketName: "ce-tagged", Host: "ce-tagged.s3.amazonaws.com", tagging: "" },
        account: OWN,
        region: REGION,
      }),
    );
    await buckets.waitEvent("tagged", "Normal", "Updated");
    await waitFor("team=a again", async () => (await bucketTags("ce-tagged")).team === "a", 15_000, 100);
    assert.equal(
      await queues.op.metric("kubeprovisioner_drift_repairs_total", { kind: "S3Bucket", setting: "tags" }),
      repairs + 1,
    );
    assert.ok((await metric("matched_total", { queue: eventsUrl, kind: "S3Bucket" })) >= 1);
    assert.ok((await metric("lag_seconds_count", { queue: eventsUrl })) >= 1);
  });

  it("hears the same event through an EventBridge rule whose target is the queue", async () => {
    const arn = await queueArn(eventsUrl);
    await events("PutRule", {
      Name: "kubeprovisioner-s3",
      EventPattern: JSON.stringify({
        "detail-type": ["AWS API Call via CloudTrail"],
        detail: { eventSource: ["s3.amazonaws.com"], eventName: ["PutBucketTagging"] },
      }),
    });
    await events("PutTargets", { Rule: "kubeprovisioner-s3", Targets: [{ Id: "queue", Arn: arn }] });
    const tags = await bucketTags("ce-tagged");
    await buckets.s3().send(
      new PutBucketTaggingCommand({
        Bucket: "ce-tagged",
        Tagging: { TagSet: Object.entries({ ...tags, team: "z" }).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
    const received = await metric("received_total", { queue: eventsUrl });
    const event = cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "PutBucketTagging",
      requestParameters: { bucketName: "ce-tagged", Host: "ce-tagged.s3.amazonaws.com", tagging: "" },
      account: OWN,
      region: REGION,
    });
    // PutEvents takes the envelope's fields apart; EventBridge puts them back together for the
    // target, the account included.
    const out = (await events("PutEvents", {
      Entries: [
        {
          Source: "kubeprovisioner.test",
          DetailType: event["detail-type"],
          Resources: [],
          Detail: JSON.stringify(event.detail),
        },
      ],
    })) as { FailedEntryCount?: number };
    assert.equal(out.FailedEntryCount ?? 0, 0);
    await waitMetric(
      "the rule's message received",
      () => metric("received_total", { queue: eventsUrl }),
      received + 1,
    );
    await waitFor("team=a again", async () => (await bucketTags("ce-tagged")).team === "a", 15_000, 100);
  });

  it("puts a queue's setting back on its SetQueueAttributes event", async () => {
    await queues.create("settings", { queueName: "ce-settings", visibilityTimeoutSeconds: 45 });
    await queues.waitReady("settings");
    const { url } = await queues.queue("ce-settings");
    await queues
      .sqs()
      .send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "99" } }));
    await inject(
      cloudTrailEvent({
        eventSource: "sqs.amazonaws.com",
        eventName: "SetQueueAttributes",
        requestParameters: {
          queueUrl: `https://sqs.${REGION}.amazonaws.com/${OWN}/ce-settings`,
          attributes: { VisibilityTimeout: "99" },
        },
        account: OWN,
        region: REGION,
      }),
    );
    await queues.waitEvent("settings", "Normal", "Updated");
    await waitFor(
      "VisibilityTimeout 45 again",
      async () => (await queues.queue("ce-settings")).attributes.VisibilityTimeout === "45",
      15_000,
      100,
    );
  });

  it("recreates a bucket deleted out of band on its DeleteBucket event", async () => {
    await buckets.create("doomed", { bucketName: "ce-doomed" });
    await buckets.waitReady("doomed");
    await buckets.s3().send(new DeleteBucketCommand({ Bucket: "ce-doomed" }));
    await inject(
      cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "DeleteBucket",
        requestParameters: { bucketName: "ce-doomed", Host: "ce-doomed.s3.amazonaws.com" },
        account: OWN,
        region: REGION,
      }),
    );
    await buckets.waitEvent("doomed", "Warning", "DeletedOutOfBand");
    await waitFor("the bucket back", () => buckets.bucketExists("ce-doomed"), 15_000, 100);
  });

  it("starts an instance stopped out of band on EC2's own state-change event, through the documented rule", async () => {
    await instances.create("runner");
    const obj = await instances.waitUntil(
      "runner",
      "running and Ready",
      (o) =>
        o?.status?.state === "running" &&
        o.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true,
      60_000,
    );
    const id = obj?.status?.instanceId ?? "";
    const starts = instances.proxy.count("StartInstances");
    const matched = await metric("matched_total", { queue: eventsUrl, kind: "Ec2Instance" });
    const linesBefore = queues.op.logLines().length;
    // Nothing is put into the queue here: EC2 sends "stopping" and "stopped" to the default bus.
    await instances.ec2().send(new StopInstancesCommand({ InstanceIds: [id] }));
    await waitFor(
      "the instance started again",
      async () =>
        instances.proxy.count("StartInstances") > starts &&
        (await instances.instance(id))?.State?.Name === "running",
      15_000,
      100,
    );
    assert.ok((await metric("matched_total", { queue: eventsUrl, kind: "Ec2Instance" })) > matched);
    const woken = queues.op
      .logLines()
      .slice(linesBefore)
      .filter((l) => l.msg === "change event enqueued an object" && l.name === "runner");
    assert.ok(woken.length >= 1, "the operator's record of the event enqueueing the instance");
  });

  it("enqueues nothing for the operator's own calls", async () => {
    await buckets.patch("tagged", { spec: { tags: { team: "c" } } });
    await waitFor("team=c", async () => (await bucketTags("ce-tagged")).team === "c", 15_000, 100);
    const generation = (await buckets.get("tagged"))?.metadata.generation;
    await buckets.waitUntil("tagged", "synced", (o) => o?.status?.observedGeneration === generation);
    await waitFor(
      "the patch's reconcile finished",
      async () => buckets.reconcilesOf("tagged") >= 1,
      10_000,
      100,
    );
    const own = await dropped("own_call");
    const doomed = buckets.reconcilesOf("doomed");
    const total = await buckets.reconciles();
    // The CloudTrail record of the operator's own PutBucketTagging: its SDK's user agent.
    await inject(
      cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "PutBucketTagging",
        requestParameters: { bucketName: "ce-tagged", Host: "ce-tagged.s3.amazonaws.com", tagging: "" },
        account: OWN,
        region: REGION,
        caller: {
          userAgent:
            "[aws-sdk-js/3.1169.0 ua/2.1 os/linux#6.1 lang/js md/nodejs#24.22.3 api/s3#3.1169.0 m/E,N kubeprovisioner]",
        },
      }),
    );
    // Someone else's call on another bucket, after it: its reconcile shows the queue was read.
    await inject(
      cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "PutBucketPolicy",
        requestParameters: { bucketName: "ce-doomed", Host: "ce-doomed.s3.amazonaws.com", bucketPolicy: {} },
        account: OWN,
        region: REGION,
      }),
    );
    await waitMetric("the own call dropped", () => dropped("own_call"), own + 1);
    await waitFor(
      "the other bucket reconciled",
      async () => buckets.reconcilesOf("doomed") > doomed,
      15_000,
      100,
    );
    await waitFor(
      "its reconcile counted",
      async () => (await buckets.reconciles()) >= total + 1,
      10_000,
      100,
    );
    assert.equal(
      await buckets.reconciles(),
      total + 1,
      "one reconcile: the other bucket's, none for the own call",
    );
  });

  it("drops malformed and unowned messages once, counted, and leaves none in the queue", async () => {
    const malformed = await dropped("malformed");
    const unowned = await dropped("unowned");
    const unsupported = await dropped("unsupported");
    await inject("this is not an event");
    await inject({ "detail-type": "AWS API Call via CloudTrail", account: OWN, region: REGION, detail: {} });
    await inject(
      cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "DeleteBucket",
        requestParameters: { bucketName: "nobody-owns-this" },
        account: OWN,
        region: REGION,
      }),
    );
    await inject({
      ...cloudTrailEvent({
        eventSource: "s3.amazonaws.com",
        eventName: "Invoke",
        requestParameters: {},
        account: OWN,
        region: REGION,
      }),
      detail: { eventSource: "lambda.amazonaws.com", eventName: "Invoke" },
    });
    await waitMetric("2 malformed", () => dropped("malformed"), malformed + 2);
    await waitMetric("1 unowned", () => dropped("unowned"), unowned + 1);
    await waitMetric("1 unsupported", () => dropped("unsupported"), unsupported + 1);
    await waitFor(
      "the queue empty",
      async () => {
        const out = await queues.sqs().send(
          new GetQueueAttributesCommand({
            QueueUrl: eventsUrl,
            AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
          }),
        );
        return (
          out.Attributes?.ApproximateNumberOfMessages === "0" &&
          out.Attributes.ApproximateNumberOfMessagesNotVisible === "0"
        );
      },
      15_000,
      200,
    );
  });

  it("reads an AwsAccount's queue with its role and routes its events to that account's objects", async () => {
    const sts = new STSClient({
      region: REGION,
      endpoint: queues.moto.endpoint,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    });
    const c = (await sts.send(new AssumeRoleCommand({ RoleArn: ROLE_B, RoleSessionName: "test" })))
      .Credentials;
    sts.destroy();
    assert.ok(c?.AccessKeyId && c.SecretAccessKey && c.SessionToken);
    sqsB = new SQSClient({
      region: REGION,
      endpoint: queues.moto.endpoint,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
      },
    });
    eventsUrlB = (await sqsB.send(new CreateQueueCommand({ QueueName: "kp-change-events" }))).QueueUrl ?? "";
    assert.ok(eventsUrlB.includes(ACCOUNT_B), eventsUrlB);
    let res = await queues.cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS_B } });
    assert.equal(res.status, 201, res.text);
    // A queue name alone is refused at admission, saying what to give instead.
    res = await queues.cp.request("POST", `${API}/awsaccounts`, {
      apiVersion: "compute.cloud.com/v1",
      kind: "AwsAccount",
      metadata: { name: "team-b" },
      spec: { roleArn: ROLE_B, changeEvents: { queue: "kp-change-events" } },
    });
    assert.equal(res.status, 422, res.text);
    assert.match(res.text, /a queue name alone says neither account nor region/);
    res = await queues.cp.request("POST", `${API}/awsaccounts`, {
      apiVersion: "compute.cloud.com/v1",
      kind: "AwsAccount",
      metadata: { name: "team-b" },
      spec: { roleArn: ROLE_B, allowedNamespaces: { names: [NS_B] }, changeEvents: { queue: eventsUrlB } },
    });
    assert.equal(res.status, 201, res.text);
    await waitFor(
      "AwsAccount team-b ChangeEvents=True",
      async () => {
        const r = await queues.cp.request("GET", `${API}/awsaccounts/team-b`);
        const conds = (r.body as { status?: { conditions?: { type: string; status: string }[] } }).status
          ?.conditions;
        return conds?.some((x) => x.type === "ChangeEvents" && x.status === "True") === true;
      },
      WAIT_MS,
      200,
    );
    // The same queue name in both accounts: the event names account B, so only B's object wakes.
    await queues.create("orders", { queueName: "ce-orders" });
    const inB = await queues.objectsIn(NS_B);
    await inB.create("orders", {
      queueName: "ce-orders",
      visibilityTimeoutSeconds: 45,
      accountRef: { name: "team-b" },
    });
    await queues.waitReady("orders");
    await inB.waitReady("orders");
    const urlB = (
      await sqsB.send(
        new GetQueueAttributesCommand({
          QueueUrl: eventsUrlB.replace("kp-change-events", "ce-orders"),
          AttributeNames: ["QueueArn"],
        }),
      )
    ).Attributes?.QueueArn;
    assert.ok(urlB?.includes(ACCOUNT_B));
    await sqsB.send(
      new SetQueueAttributesCommand({
        QueueUrl: eventsUrlB.replace("kp-change-events", "ce-orders"),
        Attributes: { VisibilityTimeout: "99" },
      }),
    );
    const linesBefore = queues.op.logLines().length;
    const bReconciles = queues.reconcilesOf("orders", NS_B);
    await inject(
      cloudTrailEvent({
        eventSource: "sqs.amazonaws.com",
        eventName: "SetQueueAttributes",
        requestParameters: {
          queueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT_B}/ce-orders`,
          attributes: { VisibilityTimeout: "99" },
        },
        account: ACCOUNT_B,
        region: REGION,
      }),
      eventsUrlB,
      sqsB,
    );
    await inB.waitEvent("orders", "Normal", "Updated");
    await waitFor(
      "VisibilityTimeout 45 again in account B",
      async () =>
        (
          await sqsB?.send(
            new GetQueueAttributesCommand({
              QueueUrl: eventsUrlB.replace("kp-change-events", "ce-orders"),
              AttributeNames: ["VisibilityTimeout"],
            }),
          )
        )?.Attributes?.VisibilityTimeout === "45",
      15_000,
      100,
    );
    assert.ok(queues.reconcilesOf("orders", NS_B) > bReconciles);
    // Which objects the event enqueued, from the operator's own record of it: a count of
    // reconciles would also count the polls a slow read of the default queue brings back.
    const woken = queues.op
      .logLines()
      .slice(linesBefore)
      .filter((l) => l.msg === "change event enqueued an object" && l.name === "orders")
      .map((l) => `${String(l.queue)} ${String(l.namespace)}`);
    assert.ok(woken.includes(`${eventsUrlB} ${NS_B}`), `account B's queue is woken: ${woken.join(", ")}`);
    assert.ok(
      !woken.some((w) => w.endsWith(` ${NS}`)),
      `the default account's queue of the same name is not woken: ${woken.join(", ")}`,
    );
    assert.ok((await metric("matched_total", { queue: eventsUrlB, kind: "SqsQueue" })) >= 1);
  });

  it("goes back to the normal poll at once when its queue is deleted, with a Warning Event and the gauge at 0", async () => {
    const polls = buckets.reconcilesOf("tagged");
    await queues.sqs().send(new DeleteQueueCommand({ QueueUrl: eventsUrl }));
    await waitFor(
      "a QueueUnreadable Event on the operator's Pod",
      async () => {
        const r = await queues.cp.request(
          "GET",
          `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${POD}`,
        );
        const items =
          (r.body as { items?: { reason?: string; type?: string; message?: string }[] }).items ?? [];
        return items.some(
          (e) =>
            e.reason === "QueueUnreadable" && e.type === "Warning" && (e.message ?? "").includes(eventsUrl),
        );
      },
      90_000,
      200,
    );
    assert.equal(await metric("queue_healthy", { queue: eventsUrl }), 0);
    // Polled every 3 s again: two polls come within seconds, where the events' hour would allow none.
    await waitFor(
      "two polls of the bucket",
      async () => buckets.reconcilesOf("tagged") >= polls + 2,
      20_000,
      200,
    );
    // The account's own queue is still read.
    assert.equal(await metric("queue_healthy", { queue: eventsUrlB }), 1);
  });
});
