/**
 * The SqsQueue reconciler and queues it did not create: a foreign queue is refused (NotOwned,
 * terminal, no hot loop) until the object asks to adopt it; a crash between CreateQueue and the
 * status write leaves exactly one queue; a queue retained by an earlier object of the same name
 * is not silently taken over by a new one.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { startMoto, type Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";

const NS = "sqs-ownership";
const BASE = `/apis/compute.cloud.com/v1/namespaces/${NS}/sqsqueues`;
const MUTATING = ["CreateQueue", "SetQueueAttributes", "TagQueue", "UntagQueue", "DeleteQueue"];
const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

interface Cond {
  type: string;
  status: string;
  reason: string;
}
interface Obj {
  metadata: { uid: string };
  status?: { queueUrl?: string; createToken?: string; createAttempt?: number; conditions?: Cond[] };
}

describe("SqsQueue reconciler: ownership and crashes", () => {
  let cp: ControlPlane;
  let moto: Moto;
  let proxy: AwsProxy;
  let op: OperatorProcess;
  let sqs: SQSClient;
  let runs = 0;
  const launch = async (): Promise<OperatorProcess> =>
    startOperator({
      kubeconfig: cp.kubeconfigPath,
      awsEnv: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: cp.dir,
      args: ["--leader-elect=false", "--poll-interval=2s"],
      name: `operator-${++runs}`,
    });

  before(async () => {
    [cp, moto] = await Promise.all([startControlPlane({ installCRDs: true }), startMoto()]);
    proxy = await startAwsProxy(moto.endpoint);
    sqs = new SQSClient({
      region: "us-east-1",
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "t", secretAccessKey: "t" },
    });
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    op = await launch();
  });
  after(async () => {
    sqs?.destroy();
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
      spec: { region: "us-east-1", queueName: name, ...spec },
    });
    assert.equal(res.status, 201, res.text);
  }
  async function get(name: string): Promise<Obj | undefined> {
    const res = await cp.request("GET", `${BASE}/${name}`);
    return res.status === 404 ? undefined : (res.body as Obj);
  }
  const patch = (name: string, body: unknown) =>
    cp.request("PATCH", `${BASE}/${name}`, body, "application/merge-patch+json");
  const cond = (o: Obj | undefined, type: string): Cond | undefined =>
    o?.status?.conditions?.find((c) => c.type === type);
  async function waitUntil(
    name: string,
    what: string,
    pred: (o: Obj | undefined) => boolean,
  ): Promise<Obj | undefined> {
    let last: Obj | undefined;
    await waitFor(`${name}: ${what}`, async () => pred((last = await get(name))), 30_000, 150);
    return last;
  }
  async function hasEvent(name: string, type: string, reason: string): Promise<boolean> {
    const res = await cp.request(
      "GET",
      `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return (res.body as { items: { type: string; reason: string }[] }).items.some(
      (e) => e.type === type && e.reason === reason,
    );
  }
  async function queue(queueName: string) {
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }))).QueueUrl;
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
    const tags = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
    return { url: url ?? "", attributes: attrs.Attributes ?? {}, tags: tags.Tags ?? {} };
  }
  const reconciles = (): Promise<number> =>
    op.metric("controller_runtime_reconcile_total", { controller: "sqsqueue" });
  async function writes(): Promise<number> {
    let n = 0;
    for (const method of WRITES) n += await op.metric("rest_client_requests_total", { method });
    return n;
  }

  it("refuses a foreign queue as NotOwned without retrying, then adopts it when asked", async () => {
    await sqs.send(
      new CreateQueueCommand({
        QueueName: "legacy",
        Attributes: { VisibilityTimeout: "10" },
        tags: { team: "x" },
      }),
    );
    await create("legacy", {});
    const refused = await waitUntil("legacy", "NotOwned", (o) => cond(o, "Ready")?.reason === "NotOwned");
    assert.equal(cond(refused, "Ready")?.status, "False");
    assert.equal(cond(refused, "Synced")?.reason, "NotOwned");
    await waitFor("NotOwned event", () => hasEvent("legacy", "Warning", "NotOwned"), 10_000);

    // A terminal error: over 10 s (five poll periods) the key is not retried and nothing is written.
    const [r0, w0] = [await reconciles(), await writes()];
    const mutations = MUTATING.map((m) => proxy.count(m));
    await delay(10_000);
    const extra = (await reconciles()) - r0;
    assert.ok(extra <= 1, `reconciled ${extra} more times`);
    assert.equal(await writes(), w0, "Kubernetes writes");
    assert.deepEqual(
      MUTATING.map((m) => proxy.count(m)),
      mutations,
    );
    const untouched = await queue("legacy");
    assert.deepEqual(untouched.tags, { team: "x" });
    assert.equal(untouched.attributes.VisibilityTimeout, "10");

    assert.equal(
      (await patch("legacy", { spec: { adoptExisting: true, tags: { env: "prod" } } })).status,
      200,
    );
    const adopted = await waitUntil("legacy", "adopted", (o) => cond(o, "Ready")?.status === "True");
    const q = await queue("legacy");
    assert.equal(q.tags[OWNERSHIP_TAGS.uid], adopted?.metadata.uid);
    assert.equal(q.tags.env, "prod");
    assert.equal("team" in q.tags, false, "tags are authoritative after adoption");
    assert.equal(q.attributes.VisibilityTimeout, "30");
    assert.ok(await hasEvent("legacy", "Normal", "Adopted"));

    // Adopted means managed: deleting the object deletes the queue.
    await cp.request("DELETE", `${BASE}/legacy`);
    await waitUntil("legacy", "object gone", (o) => o === undefined);
    await assert.rejects(queue("legacy"), { name: "QueueDoesNotExist" });
  });

  it("leaves exactly one queue after a crash between CreateQueue and the status write", async () => {
    const creates = proxy.count("CreateQueue");
    const crashed = op;
    proxy.onResponse("CreateQueue", () => {
      crashed.kill();
      return "drop";
    });
    await create("crashy", {});
    await crashed.process.exited;
    const orphan = await get("crashy");
    assert.equal(
      orphan?.status?.createToken,
      `${orphan?.metadata.uid}-1`,
      "token recorded before the create",
    );
    assert.equal(orphan?.status?.queueUrl, undefined, "the create was never recorded");
    assert.equal((await queue("crashy")).tags[OWNERSHIP_TAGS.uid], orphan?.metadata.uid);

    op = await launch();
    const obj = await waitUntil("crashy", "Ready after restart", (o) => cond(o, "Ready")?.status === "True");
    assert.equal(proxy.count("CreateQueue"), creates + 1, "no second CreateQueue");
    const listed = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "crashy" }));
    assert.equal(listed.QueueUrls?.length, 1);
    assert.equal(obj?.status?.queueUrl, (await queue("crashy")).url);
    assert.equal(obj?.status?.createAttempt, 1);
  });

  it("does not hand a queue retained by a deleted object to a new object of the same name", async () => {
    await create("reused", {});
    const first = await waitUntil("reused", "Ready", (o) => cond(o, "Ready")?.status === "True");
    assert.equal((await patch("reused", { spec: { deletionPolicy: "Retain" } })).status, 200);
    await cp.request("DELETE", `${BASE}/reused`);
    await waitUntil("reused", "object gone", (o) => o === undefined);
    await create("reused", {});
    const second = await waitUntil("reused", "NotOwned", (o) => cond(o, "Ready")?.reason === "NotOwned");
    assert.notEqual(second?.metadata.uid, first?.metadata.uid);
    assert.equal((await queue("reused")).tags[OWNERSHIP_TAGS.uid], first?.metadata.uid);
  });
});
