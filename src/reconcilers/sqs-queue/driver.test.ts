import assert from "node:assert/strict";
import { SQS_QUEUE_TRAITS } from "./traits.ts";
import { beforeEach, describe, it } from "node:test";
import { DeleteQueueCommand, ListQueueTagsCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { applyChangeSet, type Change } from "../common/changes.ts";
import { DependencyNotReadyError, recordedIdOf, type Observation } from "../common/driver.ts";
import { context } from "../common/testing/context.ts";
import { QueueExistsError, SqsQueueDriver, type SqsQueueObject, type SqsQueueView } from "./driver.ts";
import { FakeSqs } from "./testing/fake-sqs.ts";
import { resolveReferences } from "./references.ts";

const UID = "0b6f3b5e-6a43-4e43-9a2b-1f0d2c3e4f5a";
function queueObject(
  spec: Partial<SqsQueueObject["spec"]> = {},
  status?: SqsQueueObject["status"],
): SqsQueueObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { name: "orders", namespace: "shop", uid: UID, generation: 1 },
    spec: {
      queueName: "orders",
      region: "eu-west-1",
      fifo: false,
      visibilityTimeoutSeconds: 30,
      messageRetentionSeconds: 345600,
      managementPolicy: "Full",
      driftPolicy: "Repair",
      changePolicy: "Auto",
      deletionPolicy: "Delete",
      adoptExisting: false,
      onDeletedOutOfBand: "Recreate",
      ...spec,
    },
    ...(status !== undefined ? { status } : {}),
  };
}

const ctx = context();
const deleting = context({ deleting: true });

/** The spec's references, resolved as the flow resolves them (no other object in the cache). */
const refsOf = (obj: SqsQueueObject) => resolveReferences(obj, {});

describe("SqsQueueDriver", () => {
  let fake: FakeSqs;
  let driver: SqsQueueDriver;
  /** A create as the flow makes it, with the references resolved. */
  const createQueue = (obj: SqsQueueObject) => driver.create(obj, "tok", ctx, refsOf(obj));
  /** Plans and applies the plan as the flow does; returns the plan's changes. */
  const reconcile = async (
    obj: SqsQueueObject,
    obs: Observation<SqsQueueView> & { exists: true },
  ): Promise<readonly Change[]> => {
    const set = await driver.plan(obj, obs, ctx, refsOf(obj));
    await applyChangeSet(set, ctx);
    return set.changes;
  };
  beforeEach(() => {
    fake = new FakeSqs("eu-west-1");
    driver = new SqsQueueDriver({
      aws: {
        client: ((service: string, region: string) => {
          assert.deepEqual([service, region], ["sqs", "eu-west-1"]);
          return fake as unknown as SQSClient;
        }) as AwsClientSource["client"],
      },
    });
  });

  it("observes a missing queue as absent without mutating anything", async () => {
    assert.deepEqual(await driver.observe(queueObject(), ctx), { exists: false });
    assert.deepEqual(fake.mutations(), []);
  });

  it("creates the queue with its attributes and ownership tags in one call, and reads back only its tags", async () => {
    const view = await createQueue(queueObject({ tags: { env: "prod" } }));
    assert.deepEqual(
      fake.calls.map((c) => c.op),
      ["CreateQueue", "ListQueueTags"],
      "the ARN follows from the URL; only the tags say whether this call made the queue",
    );
    const create = fake.calls.find((c) => c.op === "CreateQueue");
    assert.deepEqual(create?.input.Attributes, { VisibilityTimeout: "30", MessageRetentionPeriod: "345600" });
    const tags = create?.input.tags as Record<string, string>;
    assert.equal(tags.env, "prod");
    assert.equal(tags[OWNERSHIP_TAGS.uid], UID);
    assert.equal(tags[OWNERSHIP_TAGS.kind], "SqsQueue");
    assert.equal(tags[OWNERSHIP_TAGS.namespace], "shop");
    assert.equal(view.url, fake.url("orders"));
    assert.equal(view.arn, "arn:aws:sqs:eu-west-1:123456789012:orders");
    assert.deepEqual(driver.describe(view).status, {
      queueUrl: fake.url("orders"),
      queueArn: "arn:aws:sqs:eu-west-1:123456789012:orders",
      state: "Available",
    });
  });

  it("sets a redrive allow policy naming a source that waits for it right after CreateQueue, by the ARN in its account", async () => {
    // "work" names "orders" as its dead-letter queue, so it waits for "orders" to be Ready; its
    // ARN follows from this queue's account and its own name, known once CreateQueue answers.
    const work = queueObject({
      queueName: "work",
      deadLetterQueue: { queueRef: { name: "orders" }, maxReceiveCount: 3 },
    });
    const withSources = new SqsQueueDriver({
      aws: { client: (() => fake as unknown as SQSClient) as AwsClientSource["client"] },
    });
    const sourcesOf = (o: SqsQueueObject) =>
      resolveReferences(o, {
        queues: ({ name }) =>
          name === "orders" ? undefined : { ...work, metadata: { ...work.metadata, name } },
      });
    const obj = queueObject({
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueRefs: [{ name: "work" }],
        sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:legacy"],
      },
    });
    const view = await withSources.create(obj, "tok", ctx, sourcesOf(obj));
    assert.deepEqual(fake.mutations(), ["CreateQueue", "SetQueueAttributes"]);
    assert.deepEqual(withSources.createActions(obj, sourcesOf(obj)), [
      "sqs:CreateQueue",
      "sqs:TagQueue",
      "sqs:SetQueueAttributes",
    ]);
    const create = fake.calls.find((c) => c.op === "CreateQueue");
    assert.equal((create?.input.Attributes as Record<string, string>).RedriveAllowPolicy, undefined);
    const set = fake.calls.find((c) => c.op === "SetQueueAttributes");
    const policy = {
      redrivePermission: "byQueue",
      sourceQueueArns: [
        "arn:aws:sqs:eu-west-1:123456789012:legacy",
        "arn:aws:sqs:eu-west-1:123456789012:work",
      ],
    };
    assert.deepEqual(set?.input, {
      QueueUrl: view.url,
      Attributes: { RedriveAllowPolicy: JSON.stringify(policy) },
    });
    assert.deepEqual(JSON.parse(view.attributes.RedriveAllowPolicy ?? ""), policy);
  });

  it("creates a FIFO queue with FifoQueue=true", async () => {
    await createQueue(queueObject({ queueName: "orders.fifo", fifo: true }));
    assert.equal(fake.queues.get("orders.fifo")?.attributes.FifoQueue, "true");
  });

  it("observes its own queue by the recorded URL, without GetQueueUrl", async () => {
    const view = await createQueue(queueObject());
    fake.calls.length = 0;
    const obs = await driver.observe(queueObject({}, { queueUrl: view.url }), ctx);
    assert.equal(obs.exists && obs.ownership, "owned");
    assert.deepEqual(fake.calls.map((c) => c.op).sort(), ["GetQueueAttributes", "ListQueueTags"]);
  });

  it("finds its own queue by name after a crash lost the URL, so no second create happens", async () => {
    await createQueue(queueObject());
    const obs = await driver.observe(queueObject({}, { createToken: `${UID}-1`, createAttempt: 1 }), ctx);
    assert.equal(obs.exists && obs.ownership, "owned");
  });

  it("reports a recorded queue that is gone as absent, after checking the name once", async () => {
    const view = await createQueue(queueObject());
    fake.queues.clear();
    fake.calls.length = 0;
    assert.deepEqual(await driver.observe(queueObject({}, { queueUrl: view.url }), ctx), { exists: false });
    assert.equal(fake.calls.filter((c) => c.op === "GetQueueUrl").length, 1);
  });

  it("judges a queue without our UID tag, or with another UID, as foreign", async () => {
    fake.queues.set("orders", { attributes: {}, tags: { team: "x" } });
    let obs = await driver.observe(queueObject(), ctx);
    assert.equal(obs.exists && obs.ownership, "foreign");
    fake.queues.set("orders", { attributes: {}, tags: { [OWNERSHIP_TAGS.uid]: "someone-else" } });
    obs = await driver.observe(queueObject(), ctx);
    assert.equal(obs.exists && obs.ownership, "foreign");
  });

  it("never claims an existing queue on create: other attributes give QueueExistsError", async () => {
    fake.queues.set("orders", { attributes: { VisibilityTimeout: "99" }, tags: {} });
    await assert.rejects(createQueue(queueObject()), QueueExistsError);
  });

  it("never claims an existing queue on create: identical attributes, but not our UID tag", async () => {
    fake.queues.set("orders", {
      attributes: { VisibilityTimeout: "30", MessageRetentionPeriod: "345600" },
      tags: { team: "x" },
    });
    await assert.rejects(createQueue(queueObject()), QueueExistsError);
    assert.deepEqual(fake.queues.get("orders")?.tags, { team: "x" });
  });

  it("retries instead of recording a new queue that does not answer reads yet", async () => {
    const original = fake.send.bind(fake);
    let hidden = 1;
    fake.send = async (cmd) => {
      if (cmd instanceof ListQueueTagsCommand && hidden-- > 0) {
        throw new AwsError({
          kind: "not-found",
          code: "QueueDoesNotExist",
          service: "sqs",
          operation: "x",
          message: "m",
        });
      }
      return original(cmd);
    };
    await assert.rejects(createQueue(queueObject()), (err: unknown) => {
      assert.ok(err instanceof Error && !(err instanceof QueueExistsError));
      assert.match(err.message, /does not answer reads yet/);
      return true;
    });
    const obs = await driver.observe(queueObject(), ctx);
    assert.equal(obs.exists && obs.ownership, "owned");
    assert.equal(fake.mutations().length, 1);
  });

  it("adopts by writing the ownership tags", async () => {
    fake.queues.set("orders", { attributes: {}, tags: { team: "x" } });
    const obs = await driver.observe(queueObject(), ctx);
    assert.ok(obs.exists && obs.ownership === "foreign");
    const changes = await reconcile(queueObject(), obs);
    assert.equal(fake.queues.get("orders")?.tags[OWNERSHIP_TAGS.uid], UID);
    assert.ok(
      changes.some((c) => c.description.includes(OWNERSHIP_TAGS.uid)),
      changes.map((c) => c.description).join("; "),
    );
    const again = await driver.observe(queueObject(), ctx);
    assert.equal(again.exists && again.ownership, "owned");
  });

  it("adopts by tagging the queue before it changes anything else", async () => {
    // A policy confined to queues carrying the managed-by tag allows SetQueueAttributes only then.
    fake.queues.set("orders", { attributes: { VisibilityTimeout: "5" }, tags: {} });
    const obs = await driver.observe(queueObject(), ctx);
    assert.ok(obs.exists && obs.ownership === "foreign");
    fake.calls.length = 0;
    await reconcile(queueObject(), obs);
    assert.deepEqual(
      fake.calls.map((c) => c.op),
      ["TagQueue", "SetQueueAttributes"],
    );
    const tagged = (fake.calls[0]?.input.Tags ?? {}) as Record<string, string>;
    assert.equal(tagged[OWNERSHIP_TAGS.managedBy], "kubeprovisioner");
  });

  it("makes no mutating call when the queue matches the spec", async () => {
    const obj = queueObject({ tags: { env: "prod" } });
    await createQueue(obj);
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    fake.calls.length = 0;
    assert.deepEqual(await reconcile(obj, obs), []);
    assert.deepEqual(fake.calls, []);
  });

  it("repairs only the attributes and tags that drifted", async () => {
    const obj = queueObject({ tags: { env: "prod" } });
    await createQueue(obj);
    const q = fake.queues.get("orders");
    assert.ok(q);
    q.attributes.VisibilityTimeout = "5";
    q.tags.env = "dev";
    q.tags.extra = "1";
    q.tags["aws:managed"] = "1";
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    fake.calls.length = 0;
    const changes = await reconcile(obj, obs);
    assert.deepEqual(
      changes.map((c) => [c.setting, c.description]),
      [
        ["tags", "tags: set env"],
        ["tags", "tags: removed extra"],
        ["visibilityTimeoutSeconds", "VisibilityTimeout 5 -> 30"],
      ],
    );
    assert.deepEqual(
      fake.calls.map((c) => [c.op, c.input.Attributes ?? c.input.Tags ?? c.input.TagKeys]),
      [
        ["TagQueue", { env: "prod" }],
        ["UntagQueue", ["extra"]],
        ["SetQueueAttributes", { VisibilityTimeout: "30" }],
      ],
    );
    assert.equal(q.tags.env, "prod");
    assert.equal(q.tags["aws:managed"], "1");
    const repaired = await driver.observe(obj, ctx);
    assert.ok(repaired.exists);
    assert.equal(repaired.resource.attributes.VisibilityTimeout, "30");
    assert.deepEqual(repaired.resource.tags, q.tags);
    // In sync now: a second pass changes nothing.
    fake.calls.length = 0;
    assert.deepEqual(await reconcile(obj, repaired), []);
    assert.deepEqual(fake.calls, []);
  });

  it("plans each difference as a change, without writing, and applying it calls exactly the plan's actions", async () => {
    const obj = queueObject({
      tags: { env: "prod" },
      deadLetterQueue: { targetArn: "arn:aws:sqs:eu-west-1:123456789012:dlq", maxReceiveCount: 4 },
    });
    await createQueue(obj);
    const q = fake.queues.get("orders");
    assert.ok(q);
    q.attributes.VisibilityTimeout = "5";
    q.attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: "arn:aws:sqs:eu-west-1:123456789012:dlq",
      maxReceiveCount: 2,
    });
    q.tags.env = "dev";
    q.tags.extra = "1";
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    fake.calls.length = 0;
    const set = await driver.plan(obj, obs, ctx, refsOf(obj));
    assert.equal(fake.calls.length, 0, "a plan of an observed queue makes no call");
    assert.deepEqual(
      set.changes.map((c) => [c.path, c.observed, c.desired, c.actions, c.disruption, c.group]),
      [
        ["spec.tags.env", "dev", "prod", ["sqs:TagQueue"], "none", "tags"],
        ["spec.tags.extra", "1", undefined, ["sqs:UntagQueue"], "none", "tags"],
        ["spec.visibilityTimeoutSeconds", 5, 30, ["sqs:SetQueueAttributes"], "none", "attributes"],
        [
          "spec.deadLetterQueue",
          { targetArn: "arn:aws:sqs:eu-west-1:123456789012:dlq", maxReceiveCount: 2 },
          { targetArn: "arn:aws:sqs:eu-west-1:123456789012:dlq", maxReceiveCount: 4 },
          ["sqs:SetQueueAttributes"],
          "none",
          "attributes",
        ],
      ],
    );
    await applyChangeSet(set, ctx);
    assert.deepEqual(
      fake.mutations().map((op) => `sqs:${op}`),
      [...new Set(set.changes.flatMap((c) => c.actions))],
    );
    const written = fake.calls.find((c) => c.op === "SetQueueAttributes");
    assert.deepEqual(Object.keys(written?.input.Attributes ?? {}), ["VisibilityTimeout", "RedrivePolicy"]);
    const again = await driver.observe(obj, ctx);
    assert.ok(again.exists);
    assert.deepEqual(
      (await driver.plan(obj, again, ctx, refsOf(obj))).changes,
      [],
      "the second plan is empty",
    );
  });

  it("plans nothing for a queue in sync, and reads nothing beyond the observation", async () => {
    const obj = queueObject({ tags: { env: "prod" }, delaySeconds: 0, encryption: { sqsManaged: true } });
    await createQueue(obj);
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    fake.calls.length = 0;
    assert.deepEqual((await driver.plan(obj, obs, ctx, refsOf(obj))).changes, []);
    assert.deepEqual(fake.calls, []);
  });

  it("writes only the tag changes it is given: the ownership tags alone of an adoption", async () => {
    fake.queues.set("orders", { attributes: { VisibilityTimeout: "5" }, tags: { team: "x" } });
    const obj = queueObject({ tags: { env: "prod" } });
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists && obs.ownership === "foreign");
    const set = await driver.plan(obj, obs, ctx, refsOf(obj));
    assert.deepEqual(
      set.changes.filter((c) => c.ownership === true).map((c) => c.path),
      Object.values(OWNERSHIP_TAGS)
        .sort()
        .map((k) => `tags["${k}"]`),
    );
    fake.calls.length = 0;
    await applyChangeSet(set, ctx, (c) => c.ownership === true);
    assert.deepEqual(fake.mutations(), ["TagQueue"]);
    assert.deepEqual(
      Object.keys((fake.calls[0]?.input.Tags ?? {}) as Record<string, string>).sort(),
      Object.values(OWNERSHIP_TAGS).sort(),
    );
    assert.deepEqual(fake.queues.get("orders")?.attributes.VisibilityTimeout, "5");
    assert.equal(fake.queues.get("orders")?.tags.team, "x");
    assert.equal(fake.queues.get("orders")?.tags.env, undefined);
  });

  it("names what create calls: CreateQueue with its tags, and nothing after for a plain queue", async () => {
    const obj = queueObject({ tags: { env: "prod" } });
    assert.deepEqual(driver.createActions(obj, refsOf(obj)), ["sqs:CreateQueue", "sqs:TagQueue"]);
    await createQueue(obj);
    assert.deepEqual(fake.mutations(), ["CreateQueue"]);
    assert.ok(
      Object.keys(fake.calls[0]?.input.tags ?? {}).length > 0,
      "CreateQueue carries tags: sqs:TagQueue",
    );
  });

  it("resolves no reference to a queue that is not there: neither a create nor its actions can be had", () => {
    const obj = queueObject({ deadLetterQueue: { queueRef: { name: "dlq" }, maxReceiveCount: 3 } });
    assert.throws(() => refsOf(obj), DependencyNotReadyError);
    assert.deepEqual(fake.calls, []);
  });

  it("deletes its own queue", async () => {
    const view = await createQueue(queueObject());
    const obj = queueObject({}, { queueUrl: view.url });
    assert.deepEqual(await driver.delete(obj, await driver.observe(obj, deleting), deleting), { done: true });
    assert.equal(fake.queues.size, 0);
    assert.deepEqual(fake.mutations(), ["CreateQueue", "DeleteQueue"]);
  });

  it("leaves a queue that is not its own and counts deletion as done", async () => {
    fake.queues.set("orders", { attributes: {}, tags: { [OWNERSHIP_TAGS.uid]: "someone-else" } });
    assert.deepEqual(
      await driver.delete(queueObject(), await driver.observe(queueObject(), deleting), deleting),
      {
        done: true,
        leftInPlace: "the queue in AWS is not owned by this object and was left in place",
      },
    );
    assert.equal(fake.queues.size, 1);
    assert.deepEqual(fake.mutations(), []);
  });

  it("counts a queue that is already gone as deleted, also when it vanishes mid-delete", async () => {
    assert.deepEqual(
      await driver.delete(queueObject(), await driver.observe(queueObject(), deleting), deleting),
      {
        done: true,
      },
    );
    await createQueue(queueObject());
    const original = fake.send.bind(fake);
    fake.send = async (cmd) => {
      if (cmd instanceof DeleteQueueCommand) fake.queues.clear();
      return original(cmd);
    };
    assert.deepEqual(
      await driver.delete(queueObject(), await driver.observe(queueObject(), deleting), deleting),
      {
        done: true,
      },
    );
  });

  it("rethrows failures other than not-found", async () => {
    fake.send = async () => {
      throw new AwsError({
        kind: "throttled",
        code: "RequestThrottled",
        service: "sqs",
        operation: "GetQueueUrl",
        message: "slow down",
      });
    };
    await assert.rejects(
      driver.observe(queueObject(), ctx),
      (err: unknown) => err instanceof AwsError && err.kind === "throttled",
    );
  });

  it("is always ready, and keeps a recorded ARN when SQS reports none", () => {
    const { status, readiness: r } = driver.describe({ url: "u", arn: "", attributes: {}, tags: {} });
    assert.deepEqual([r.ready, r.pending, r.reason], [true, false, "Available"]);
    assert.deepEqual(status, { queueUrl: "u", state: "Available" });
    assert.equal(recordedIdOf(queueObject({}, { queueUrl: "" }), SQS_QUEUE_TRAITS.idField), undefined);
  });
});
