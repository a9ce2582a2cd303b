import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { AwsError, type AwsErrorKind } from "../../aws/errors.ts";
import { OWNERSHIP_TAGS } from "../../api/v1/index.ts";
import { silentLogger } from "../../runtime/logging.ts";
import type { DriverContext } from "../common/driver.ts";
import { QueueExistsError, SqsQueueDriver, type ManagedSqsQueue } from "./driver.ts";

const UID = "0b6f3b5e-6a43-4e43-9a2b-1f0d2c3e4f5a";
const MUTATING = new Set(["CreateQueue", "SetQueueAttributes", "TagQueue", "UntagQueue", "DeleteQueue"]);

interface FakeQueue {
  attributes: Record<string, string>;
  tags: Record<string, string>;
}

/**
 * SQS in memory, per region, answering the commands the driver sends the way SQS does
 * (including CreateQueue returning an existing queue's URL when the attributes match).
 */
class FakeSqs {
  readonly queues = new Map<string, FakeQueue>();
  readonly calls: { op: string; input: Record<string, unknown> }[] = [];
  readonly region: string;
  constructor(region: string) {
    this.region = region;
  }
  url(name: string): string {
    return `https://sqs.${this.region}.amazonaws.com/123456789012/${name}`;
  }
  mutations(): string[] {
    return this.calls.map((c) => c.op).filter((op) => MUTATING.has(op));
  }
  #fail(kind: AwsErrorKind, code: string, operation: string): never {
    throw new AwsError({
      kind,
      code,
      service: "sqs",
      operation,
      message: `SQS ${operation} failed with ${code}`,
    });
  }
  #byUrl(url: unknown, op: string): FakeQueue {
    const name = String(url).split("/").pop() ?? "";
    const q = String(url) === this.url(name) ? this.queues.get(name) : undefined;
    return q ?? this.#fail("not-found", "QueueDoesNotExist", op);
  }
  async send(cmd: { input: Record<string, unknown> }): Promise<unknown> {
    const input = cmd.input;
    const op = cmd.constructor.name.replace(/Command$/, "");
    this.calls.push({ op, input });
    await Promise.resolve();
    if (cmd instanceof CreateQueueCommand) {
      const name = cmd.input.QueueName ?? "";
      const attrs = cmd.input.Attributes ?? {};
      const existing = this.queues.get(name);
      if (existing !== undefined) {
        for (const [k, v] of Object.entries(attrs)) {
          if (existing.attributes[k] !== v) this.#fail("conflict", "QueueNameExists", op);
        }
        return { QueueUrl: this.url(name) };
      }
      this.queues.set(name, {
        attributes: {
          QueueArn: `arn:aws:sqs:${this.region}:123456789012:${name}`,
          DelaySeconds: "0",
          ...attrs,
        },
        tags: { ...(cmd.input.tags ?? {}) },
      });
      return { QueueUrl: this.url(name) };
    }
    if (cmd instanceof GetQueueUrlCommand) {
      const name = cmd.input.QueueName ?? "";
      if (!this.queues.has(name)) this.#fail("not-found", "QueueDoesNotExist", op);
      return { QueueUrl: this.url(name) };
    }
    if (cmd instanceof GetQueueAttributesCommand)
      return { Attributes: { ...this.#byUrl(input.QueueUrl, op).attributes } };
    if (cmd instanceof ListQueueTagsCommand) return { Tags: { ...this.#byUrl(input.QueueUrl, op).tags } };
    if (cmd instanceof SetQueueAttributesCommand) {
      Object.assign(this.#byUrl(input.QueueUrl, op).attributes, cmd.input.Attributes);
      return {};
    }
    if (cmd instanceof TagQueueCommand) {
      Object.assign(this.#byUrl(input.QueueUrl, op).tags, cmd.input.Tags);
      return {};
    }
    if (cmd instanceof UntagQueueCommand) {
      const q = this.#byUrl(input.QueueUrl, op);
      for (const k of cmd.input.TagKeys ?? []) delete q.tags[k];
      return {};
    }
    if (cmd instanceof DeleteQueueCommand) {
      const q = this.#byUrl(input.QueueUrl, op);
      for (const [name, v] of this.queues) if (v === q) this.queues.delete(name);
      return {};
    }
    throw new Error(`unexpected command ${op}`);
  }
}

function queueObject(
  spec: Partial<ManagedSqsQueue["spec"]> = {},
  status?: ManagedSqsQueue["status"],
): ManagedSqsQueue {
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
      deletionPolicy: "Delete",
      adoptExisting: false,
      onDeletedOutOfBand: "Recreate",
      ...spec,
    },
    ...(status !== undefined ? { status } : {}),
  };
}

const ctx: DriverContext = { logger: silentLogger, signal: new AbortController().signal };

describe("SqsQueueDriver", () => {
  let fake: FakeSqs;
  let driver: SqsQueueDriver;
  beforeEach(() => {
    fake = new FakeSqs("eu-west-1");
    driver = new SqsQueueDriver({
      aws: {
        sqs: (region: string) => {
          assert.equal(region, "eu-west-1");
          return fake as unknown as SQSClient;
        },
      },
    });
  });

  it("observes a missing queue as absent without mutating anything", async () => {
    assert.deepEqual(await driver.observe(queueObject(), ctx), { exists: false });
    assert.deepEqual(fake.mutations(), []);
  });

  it("creates the queue with its attributes and ownership tags in one call", async () => {
    const view = await driver.create(queueObject({ tags: { env: "prod" } }), "tok", ctx);
    const create = fake.calls.find((c) => c.op === "CreateQueue");
    assert.deepEqual(create?.input.Attributes, { VisibilityTimeout: "30", MessageRetentionPeriod: "345600" });
    const tags = create?.input.tags as Record<string, string>;
    assert.equal(tags.env, "prod");
    assert.equal(tags[OWNERSHIP_TAGS.uid], UID);
    assert.equal(tags[OWNERSHIP_TAGS.kind], "SqsQueue");
    assert.equal(tags[OWNERSHIP_TAGS.namespace], "shop");
    assert.equal(view.url, fake.url("orders"));
    assert.equal(view.arn, "arn:aws:sqs:eu-west-1:123456789012:orders");
    assert.deepEqual(driver.status(queueObject(), view), {
      queueUrl: fake.url("orders"),
      queueArn: "arn:aws:sqs:eu-west-1:123456789012:orders",
      state: "Available",
    });
  });

  it("creates a FIFO queue with FifoQueue=true", async () => {
    await driver.create(queueObject({ queueName: "orders.fifo", fifo: true }), "tok", ctx);
    assert.equal(fake.queues.get("orders.fifo")?.attributes.FifoQueue, "true");
  });

  it("observes its own queue by the recorded URL, without GetQueueUrl", async () => {
    const view = await driver.create(queueObject(), "tok", ctx);
    fake.calls.length = 0;
    const obs = await driver.observe(queueObject({}, { queueUrl: view.url }), ctx);
    assert.equal(obs.exists && obs.ownership, "owned");
    assert.deepEqual(fake.calls.map((c) => c.op).sort(), ["GetQueueAttributes", "ListQueueTags"]);
  });

  it("finds its own queue by name after a crash lost the URL, so no second create happens", async () => {
    await driver.create(queueObject(), "tok", ctx);
    const obs = await driver.observe(queueObject({}, { createToken: `${UID}-1`, createAttempt: 1 }), ctx);
    assert.equal(obs.exists && obs.ownership, "owned");
  });

  it("reports a recorded queue that is gone as absent, after checking the name once", async () => {
    const view = await driver.create(queueObject(), "tok", ctx);
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
    await assert.rejects(driver.create(queueObject(), "tok", ctx), QueueExistsError);
  });

  it("never claims an existing queue on create: identical attributes, but not our UID tag", async () => {
    fake.queues.set("orders", {
      attributes: { VisibilityTimeout: "30", MessageRetentionPeriod: "345600" },
      tags: { team: "x" },
    });
    await assert.rejects(driver.create(queueObject(), "tok", ctx), QueueExistsError);
    assert.deepEqual(fake.queues.get("orders")?.tags, { team: "x" });
  });

  it("retries instead of recording a new queue that does not answer reads yet", async () => {
    const original = fake.send.bind(fake);
    let hidden = 1;
    fake.send = async (cmd) => {
      if (cmd instanceof GetQueueAttributesCommand && hidden-- > 0) {
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
    await assert.rejects(driver.create(queueObject(), "tok", ctx), (err: unknown) => {
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
    assert.ok(obs.exists);
    const adopted = await driver.adopt(queueObject(), obs.resource, ctx);
    assert.equal(fake.queues.get("orders")?.tags[OWNERSHIP_TAGS.uid], UID);
    assert.equal(adopted.tags[OWNERSHIP_TAGS.uid], UID);
    assert.equal((await driver.observe(queueObject(), ctx)).exists, true);
  });

  it("makes no mutating call when the queue matches the spec", async () => {
    const obj = queueObject({ tags: { env: "prod" } });
    const view = await driver.create(obj, "tok", ctx);
    fake.calls.length = 0;
    const synced = await driver.sync(obj, view, ctx);
    assert.deepEqual(synced.changes, []);
    assert.equal(synced.resource, view);
    assert.deepEqual(fake.calls, []);
  });

  it("repairs only the attributes and tags that drifted", async () => {
    const obj = queueObject({ tags: { env: "prod" } });
    await driver.create(obj, "tok", ctx);
    const q = fake.queues.get("orders");
    assert.ok(q);
    q.attributes.VisibilityTimeout = "5";
    q.tags.env = "dev";
    q.tags.extra = "1";
    q.tags["aws:managed"] = "1";
    const obs = await driver.observe(obj, ctx);
    assert.ok(obs.exists);
    fake.calls.length = 0;
    const synced = await driver.sync(obj, obs.resource, ctx);
    assert.deepEqual(synced.changes, [
      { setting: "visibilityTimeoutSeconds", description: "VisibilityTimeout 5 -> 30" },
      { setting: "tags", description: "tags set: env" },
      { setting: "tags", description: "tags removed: extra" },
    ]);
    assert.deepEqual(
      fake.calls.map((c) => [c.op, c.input.Attributes ?? c.input.Tags ?? c.input.TagKeys]),
      [
        ["SetQueueAttributes", { VisibilityTimeout: "30" }],
        ["TagQueue", { env: "prod" }],
        ["UntagQueue", ["extra"]],
      ],
    );
    assert.equal(q.tags.env, "prod");
    assert.equal(q.tags["aws:managed"], "1");
    assert.equal(synced.resource.attributes.VisibilityTimeout, "30");
    assert.deepEqual(synced.resource.tags, q.tags);
    // In sync now: a second pass changes nothing.
    fake.calls.length = 0;
    assert.deepEqual((await driver.sync(obj, synced.resource, ctx)).changes, []);
    assert.deepEqual(fake.calls, []);
  });

  it("deletes its own queue", async () => {
    const view = await driver.create(queueObject(), "tok", ctx);
    assert.deepEqual(await driver.delete(queueObject({}, { queueUrl: view.url }), ctx), { done: true });
    assert.equal(fake.queues.size, 0);
    assert.deepEqual(fake.mutations(), ["CreateQueue", "DeleteQueue"]);
  });

  it("leaves a queue that is not its own and counts deletion as done", async () => {
    fake.queues.set("orders", { attributes: {}, tags: { [OWNERSHIP_TAGS.uid]: "someone-else" } });
    assert.deepEqual(await driver.delete(queueObject(), ctx), {
      done: true,
      leftInPlace: "the queue in AWS is not owned by this object and was left in place",
    });
    assert.equal(fake.queues.size, 1);
    assert.deepEqual(fake.mutations(), []);
  });

  it("counts a queue that is already gone as deleted, also when it vanishes mid-delete", async () => {
    assert.deepEqual(await driver.delete(queueObject(), ctx), { done: true });
    await driver.create(queueObject(), "tok", ctx);
    const original = fake.send.bind(fake);
    fake.send = async (cmd) => {
      if (cmd instanceof DeleteQueueCommand) fake.queues.clear();
      return original(cmd);
    };
    assert.deepEqual(await driver.delete(queueObject(), ctx), { done: true });
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

  it("is always ready and clears its identifiers when the queue is gone", () => {
    const r = driver.readiness({ url: "u", arn: "", attributes: {}, tags: {} });
    assert.deepEqual([r.ready, r.pending, r.reason], [true, false, "Available"]);
    assert.deepEqual(driver.clearedStatus(), { queueUrl: undefined, queueArn: undefined, state: undefined });
    assert.equal(driver.recordedId(queueObject({}, { queueUrl: "" })), undefined);
  });
});
