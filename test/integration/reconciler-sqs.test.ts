/**
 * The SqsQueue reconciler end to end: the operator (`node src/main.ts`) against a real
 * kube-apiserver and moto, with every AWS call going through a counting proxy. Lifecycle:
 * create, a no-op second reconcile, drift repair, out-of-band deletion (Recreate and Report),
 * delete, Retain, and a FIFO queue outside us-east-1.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  SQSClient,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { startMoto, type Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";

const NS = "sqs-lifecycle";
const BASE = `/apis/compute.cloud.com/v1/namespaces/${NS}/sqsqueues`;
const MUTATING = ["CreateQueue", "SetQueueAttributes", "TagQueue", "UntagQueue", "DeleteQueue"];
const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

interface Cond {
  type: string;
  status: string;
  reason: string;
}
interface Obj {
  metadata: { resourceVersion: string; uid: string };
  status?: {
    queueUrl?: string;
    queueArn?: string;
    state?: string;
    createAttempt?: number;
    conditions?: Cond[];
  };
}

describe("SqsQueue reconciler: lifecycle", () => {
  let cp: ControlPlane;
  let moto: Moto;
  let proxy: AwsProxy;
  let op: OperatorProcess;
  const clients = new Map<string, SQSClient>();
  const sqs = (region = "us-east-1"): SQSClient => {
    let c = clients.get(region);
    if (c === undefined) {
      c = new SQSClient({
        region,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "t", secretAccessKey: "t" },
      });
      clients.set(region, c);
    }
    return c;
  };

  before(async () => {
    [cp, moto] = await Promise.all([startControlPlane({ installCRDs: true }), startMoto()]);
    proxy = await startAwsProxy(moto.endpoint);
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      awsEnv: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: cp.dir,
      args: ["--leader-elect=false", "--poll-interval=2s"],
    });
  });
  after(async () => {
    for (const c of clients.values()) c.destroy();
    await op?.stop();
    await proxy?.stop();
    await moto?.stop();
    await cp?.stop();
  });

  async function create(name: string, spec: Record<string, unknown>): Promise<void> {
    const res = await cp.request("POST", BASE, {
      apiVersion: "compute.cloud.com/v1",
      kind: "SqsQueue",
      metadata: { name },
      spec: { region: "us-east-1", ...spec },
    });
    assert.equal(res.status, 201, res.text);
  }
  async function get(name: string): Promise<Obj | undefined> {
    const res = await cp.request("GET", `${BASE}/${name}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as Obj;
  }
  async function patch(name: string, body: unknown): Promise<Obj> {
    const res = await cp.request("PATCH", `${BASE}/${name}`, body, "application/merge-patch+json");
    assert.equal(res.status, 200, res.text);
    return res.body as Obj;
  }
  const ready = (o: Obj | undefined): Cond | undefined =>
    o?.status?.conditions?.find((c) => c.type === "Ready");
  async function waitUntil(
    name: string,
    what: string,
    pred: (o: Obj | undefined) => boolean,
  ): Promise<Obj | undefined> {
    let last: Obj | undefined;
    await waitFor(`${name}: ${what}`, async () => pred((last = await get(name))), 30_000, 150);
    return last;
  }
  const waitReady = async (name: string): Promise<Obj> =>
    (await waitUntil(name, "Ready=True", (o) => ready(o)?.status === "True")) as Obj;
  async function events(name: string): Promise<{ type: string; reason: string; message: string }[]> {
    const res = await cp.request(
      "GET",
      `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return (res.body as { items: { type: string; reason: string; message: string }[] }).items;
  }
  const hasEvent = async (name: string, type: string, reason: string): Promise<boolean> =>
    (await events(name)).some((e) => e.type === type && e.reason === reason);
  async function queueExists(queueName: string, region = "us-east-1"): Promise<boolean> {
    try {
      await sqs(region).send(new GetQueueUrlCommand({ QueueName: queueName }));
      return true;
    } catch (err) {
      if ((err as Error).name === "QueueDoesNotExist") return false;
      throw err;
    }
  }
  async function queueState(queueName: string, region = "us-east-1") {
    const url = (await sqs(region).send(new GetQueueUrlCommand({ QueueName: queueName }))).QueueUrl;
    const attrs = await sqs(region).send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
    );
    const tags = await sqs(region).send(new ListQueueTagsCommand({ QueueUrl: url }));
    return { url: url ?? "", attributes: attrs.Attributes ?? {}, tags: tags.Tags ?? {} };
  }
  const reconciles = (): Promise<number> =>
    op.metric("controller_runtime_reconcile_total", { controller: "sqsqueue" });
  async function sum(names: string[], label: string, metric: string): Promise<number> {
    let n = 0;
    for (const v of names) n += await op.metric(metric, { [label]: v });
    return n;
  }
  /** Waits until the controller has reconciled at least `n` more times. */
  async function waitReconciles(n: number): Promise<void> {
    const start = await reconciles();
    await waitFor(`${n} more reconciles`, async () => (await reconciles()) >= start + n, 30_000, 100);
  }

  it("creates the queue and reports Ready with the status columns filled", async () => {
    await create("orders", { queueName: "orders", visibilityTimeoutSeconds: 45, tags: { env: "prod" } });
    const obj = await waitReady("orders");
    const q = await queueState("orders");
    assert.equal(obj.status?.queueUrl, q.url);
    assert.equal(obj.status?.queueArn, "arn:aws:sqs:us-east-1:123456789012:orders");
    assert.equal(obj.status?.state, "Available");
    assert.equal(obj.status?.createAttempt, 1);
    assert.equal(q.attributes.VisibilityTimeout, "45");
    assert.equal(q.attributes.MessageRetentionPeriod, "345600");
    assert.equal(q.tags.env, "prod");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], obj.metadata.uid);
    assert.equal(q.tags[OWNERSHIP_TAGS.kind], "SqsQueue");
    assert.equal(proxy.count("CreateQueue"), 1);
    const { stdout } = await cp.kubectl(["get", "sqsq", "orders", "-n", NS, "--no-headers"]);
    const cols = stdout.trim().split(/\s+/);
    assert.deepEqual(cols.slice(0, 4), ["orders", "orders", "Available", q.url]);
    assert.equal(cols[4], "True");
  });

  it("makes no Kubernetes write and no mutating AWS call when nothing changed", async () => {
    await waitReady("orders");
    await waitFor("Created event", () => hasEvent("orders", "Normal", "Created"), 10_000);
    await waitReconciles(1); // any write from the create has settled
    const writes = await sum(WRITES, "method", "rest_client_requests_total");
    const mutations = MUTATING.map((m) => proxy.count(m));
    const bumped = await patch("orders", { metadata: { annotations: { "test/bump": "1" } } });
    await waitReconciles(2);
    const after = await get("orders");
    assert.equal(after?.metadata.resourceVersion, bumped.metadata.resourceVersion, "the object was written");
    assert.equal(await sum(WRITES, "method", "rest_client_requests_total"), writes, "Kubernetes writes");
    assert.deepEqual(
      MUTATING.map((m) => proxy.count(m)),
      mutations,
      "mutating AWS calls",
    );
    assert.ok(proxy.count("GetQueueAttributes") > 0);
  });

  it("repairs attribute and tag drift, and applies spec changes", async () => {
    const { url } = await queueState("orders");
    await sqs().send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "5" } }),
    );
    await sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { rogue: "1", env: "dev" } }));
    await sqs().send(new UntagQueueCommand({ QueueUrl: url, TagKeys: [OWNERSHIP_TAGS.name] }));
    await waitFor(
      "drift repaired",
      async () => {
        const q = await queueState("orders");
        return (
          q.attributes.VisibilityTimeout === "45" &&
          q.tags.env === "prod" &&
          !("rogue" in q.tags) &&
          q.tags[OWNERSHIP_TAGS.name] === "orders"
        );
      },
      30_000,
      200,
    );
    assert.ok(await hasEvent("orders", "Normal", "Updated"));
    await patch("orders", { spec: { messageRetentionSeconds: 600, tags: { env: "prod", team: "a" } } });
    await waitFor(
      "spec change applied",
      async () => {
        const q = await queueState("orders");
        return q.attributes.MessageRetentionPeriod === "600" && q.tags.team === "a";
      },
      30_000,
      200,
    );
  });

  it("recreates a queue deleted out of band, with a Warning Event", async () => {
    const before = await waitReady("orders");
    await sqs().send(new DeleteQueueCommand({ QueueUrl: before.status?.queueUrl }));
    const obj = await waitUntil(
      "orders",
      "recreated",
      (o) => o?.status?.createAttempt === 2 && ready(o)?.status === "True",
    );
    assert.ok(await hasEvent("orders", "Warning", "DeletedOutOfBand"));
    const q = await queueState("orders");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], obj?.metadata.uid);
    assert.equal(q.attributes.MessageRetentionPeriod, "600");
  });

  it("only reports an out-of-band deletion when onDeletedOutOfBand is Report", async () => {
    await create("reported", { queueName: "reported", onDeletedOutOfBand: "Report" });
    const obj = await waitReady("reported");
    await sqs().send(new DeleteQueueCommand({ QueueUrl: obj.status?.queueUrl }));
    await waitUntil("reported", "DeletedOutOfBand", (o) => ready(o)?.reason === "DeletedOutOfBand");
    await waitFor("Warning event", () => hasEvent("reported", "Warning", "DeletedOutOfBand"), 10_000);
    await waitReconciles(1);
    const writes = await sum(WRITES, "method", "rest_client_requests_total");
    await waitReconciles(3); // several polls later: not recreated, and no repeated Event or status write
    assert.equal(await queueExists("reported"), false);
    assert.equal(await sum(WRITES, "method", "rest_client_requests_total"), writes, "Kubernetes writes");
    assert.equal((await get("reported"))?.status?.createAttempt, 1);
  });

  it("deletes the queue, then releases the object", async () => {
    await cp.request("DELETE", `${BASE}/reported`);
    const deletes = proxy.count("DeleteQueue");
    await cp.request("DELETE", `${BASE}/orders`);
    await waitUntil("orders", "object gone", (o) => o === undefined);
    assert.equal(await queueExists("orders"), false);
    assert.equal(proxy.count("DeleteQueue"), deletes + 1);
    await waitUntil("reported", "object gone", (o) => o === undefined);
  });

  it("leaves the queue in AWS with deletionPolicy Retain", async () => {
    await create("kept", { queueName: "kept", deletionPolicy: "Retain" });
    await waitReady("kept");
    const deletes = proxy.count("DeleteQueue");
    await cp.request("DELETE", `${BASE}/kept`);
    await waitUntil("kept", "object gone", (o) => o === undefined);
    assert.equal(await queueExists("kept"), true);
    assert.equal(proxy.count("DeleteQueue"), deletes);
  });

  it("creates a FIFO queue in a region other than us-east-1", async () => {
    const region = "ap-southeast-2";
    await create("fifo", { queueName: "events.fifo", fifo: true, region, visibilityTimeoutSeconds: 90 });
    const obj = await waitReady("fifo");
    assert.equal(obj.status?.queueArn, `arn:aws:sqs:${region}:123456789012:events.fifo`);
    const q = await queueState("events.fifo", region);
    assert.equal(q.attributes.FifoQueue, "true");
    assert.equal(q.attributes.VisibilityTimeout, "90");
    assert.equal(await queueExists("events.fifo", "us-east-1"), false);
    await cp.request("DELETE", `${BASE}/fifo`);
    await waitUntil("fifo", "object gone", (o) => o === undefined);
    assert.equal(await queueExists("events.fifo", region), false);
  });
});
