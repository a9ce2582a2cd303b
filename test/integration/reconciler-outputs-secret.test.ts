/**
 * spec.writeOutputsTo.secretName end to end, on SqsQueues (the Secret shares the ConfigMap's
 * logic and keys): with the operator allowed to write Secrets in the namespace
 * (`--output-secret-namespaces`), the Secret holds the same keys as the ConfigMap (base64 in
 * `data`, type Opaque), labelled and owned by the queue; a no-op reconcile writes nothing; an
 * edit, a lost label or a deletion by someone else is repaired through the watch; a Secret the
 * queue does not own is never touched (OutputConflict); a renamed secretName deletes the old
 * Secret and a removed one the last; the garbage collector deletes it with the queue. In a
 * namespace the operator may not write Secrets in, the queue reports OutputNotAllowed and no
 * Secret appears.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { ready, type ServedConfigMap } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "sqs-outputs-secret";
const LABEL = "compute.cloud.com/managed-by";

/** A Secret as served: the ConfigMap's metadata, its type and base64 data. */
type ServedSecret = Omit<ServedConfigMap, "data"> & { type?: string; data?: Record<string, string> };

const decoded = (s: ServedSecret | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));

describe("SqsQueue outputs: spec.writeOutputsTo.secretName", () => {
  const env = new SqsEnv(NS, [`--output-secret-namespaces=${NS}`], {
    controllers: ["garbagecollector"],
  }).hooks();
  const path = (name: string, ns = NS): string => `/api/v1/namespaces/${ns}/secrets/${name}`;
  const secret = async (name: string, ns = NS): Promise<ServedSecret | undefined> => {
    const res = await env.cp.request("GET", path(name, ns));
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as ServedSecret;
  };
  const waitSecret = async (
    name: string,
    what: string,
    pred: (s: ServedSecret | undefined) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<ServedSecret | undefined> => {
    let last: ServedSecret | undefined;
    await waitFor(`Secret ${name}: ${what}`, async () => pred((last = await secret(name))), timeoutMs, 150);
    return last;
  };
  let expected: Record<string, string> = {};
  const intact = (s: ServedSecret | undefined): boolean =>
    s !== undefined &&
    s.metadata.labels?.[LABEL] === "kubeprovisioner" &&
    isDeepStrictEqual(decoded(s), expected);

  it("writes the same keys as the ConfigMap into an Opaque Secret owned by the queue", async () => {
    await env.create("orders", {
      queueName: "orders",
      writeOutputsTo: { configMapName: "orders-outputs", secretName: "orders-secret" },
    });
    const obj = await env.waitReady("orders");
    const cm = await env.configMap("orders-outputs");
    expected = cm?.data ?? {};
    assert.equal(expected.QUEUE_URL, obj.status?.queueUrl);
    const s = await waitSecret("orders-secret", "written", (x) => x !== undefined);
    assert.equal(s?.type, "Opaque");
    assert.deepEqual(decoded(s), expected, "the Secret holds the ConfigMap's keys and values");
    assert.equal(s?.metadata.labels?.[LABEL], "kubeprovisioner");
    assert.deepEqual(s?.metadata.ownerReferences, [
      {
        apiVersion: "compute.cloud.com/v1",
        kind: "SqsQueue",
        name: "orders",
        uid: obj.metadata.uid,
        controller: true,
      },
    ]);
  });

  it("makes no Kubernetes write when nothing changed", async () => {
    await env.waitEvent("orders", "Normal", "Created");
    await env.waitReconciles(1);
    const before = await secret("orders-secret");
    const writes = await env.kubeWrites();
    await env.waitReconciles(3);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.equal((await secret("orders-secret"))?.metadata.resourceVersion, before?.metadata.resourceVersion);
  });

  it("puts back a Secret someone edited, unlabelled or deleted", async () => {
    const edited = await env.cp.request(
      "PATCH",
      path("orders-secret"),
      { stringData: { QUEUE_URL: "https://elsewhere.example", EXTRA: "x" } },
      "application/merge-patch+json",
    );
    assert.equal(edited.status, 200, edited.text);
    await waitSecret("orders-secret", "its data repaired", intact);

    // Unlabelled, it leaves the operator's cache: the create answers 409 and a GET shows it is ours.
    const unlabelled = await env.cp.request(
      "PATCH",
      path("orders-secret"),
      { metadata: { labels: { [LABEL]: null } }, stringData: { QUEUE_NAME: "renamed" } },
      "application/merge-patch+json",
    );
    assert.equal(unlabelled.status, 200, unlabelled.text);
    await waitSecret("orders-secret", "its label and data repaired", intact);

    const old = await secret("orders-secret");
    const deleted = await env.cp.request("DELETE", path("orders-secret"));
    assert.equal(deleted.status, 200, deleted.text);
    await waitSecret("orders-secret", "recreated", (s) => intact(s) && s?.metadata.uid !== old?.metadata.uid);
    assert.equal(ready(await env.get("orders"))?.status, "True");
  });

  it("never overwrites a Secret it does not own, and takes the name once it is free", async () => {
    const created = await env.cp.request("POST", `/api/v1/namespaces/${NS}/secrets`, {
      metadata: { name: "shared" },
      stringData: { password: "someone else's" },
    });
    assert.equal(created.status, 201, created.text);
    const foreign = created.body as ServedSecret;
    await env.create("billing", { queueName: "billing", writeOutputsTo: { secretName: "shared" } });
    const refused = await env.waitReason("billing", "OutputConflict");
    assert.equal(ready(refused)?.status, "False");
    assert.match(
      ready(refused)?.message ?? "",
      /^Secret shared exists and is not this object's \(it has no controller\); it is left as it is: .*secretName$/,
    );
    await env.waitEvent("billing", "Warning", "OutputConflict");
    assert.ok(await env.queueExists("billing"), "the queue itself is created");
    await env.waitReconciles(2);
    const untouched = await secret("shared");
    assert.equal(
      untouched?.metadata.resourceVersion,
      foreign.metadata.resourceVersion,
      "the Secret is untouched",
    );
    assert.deepEqual(decoded(untouched), { password: "someone else's" });

    const freed = await env.cp.request("DELETE", path("shared"));
    assert.equal(freed.status, 200, freed.text);
    const billing = await env.waitReady("billing");
    const s = await waitSecret("shared", "the queue's", (x) => decoded(x).QUEUE_NAME === "billing");
    assert.equal(s?.metadata.ownerReferences?.[0]?.uid, billing.metadata.uid);
  });

  it("deletes the old Secret when secretName changes, and the last one when it is removed", async () => {
    await env.patch("orders", {
      spec: { writeOutputsTo: { configMapName: null, secretName: "orders-env" } },
    });
    const renamed = await waitSecret("orders-env", "written", (s) => s !== undefined);
    assert.deepEqual(decoded(renamed), expected);
    await waitSecret("orders-secret", "deleted", (s) => s === undefined);
    await env.waitConfigMap("orders-outputs", "deleted with its configMapName", (cm) => cm === undefined);

    await env.patch("orders", { spec: { writeOutputsTo: null } });
    await waitSecret("orders-env", "deleted", (s) => s === undefined);
    assert.ok(await secret("shared"), "another queue's Secret stays");
  });

  it("reports OutputNotAllowed in a namespace where it may not write Secrets, and writes none there", async () => {
    const other = await env.objectsIn("outputs-elsewhere");
    await other.create("audit", { queueName: "audit", writeOutputsTo: { secretName: "audit-secret" } });
    const refused = await other.waitReason("audit", "OutputNotAllowed");
    assert.equal(ready(refused)?.status, "False");
    assert.match(ready(refused)?.message ?? "", /may not write Secrets in namespace outputs-elsewhere/);
    await other.waitEvent("audit", "Warning", "OutputNotAllowed");
    assert.ok(await env.queueExists("audit"), "the queue itself is created");
    assert.equal(await secret("audit-secret", "outputs-elsewhere"), undefined);
    await other.delete("audit");
    await other.waitGone("audit");
  });

  it("leaves the Secret to the garbage collector when the queue is deleted", async () => {
    const owner = await env.get("billing");
    assert.equal((await secret("shared"))?.metadata.ownerReferences?.[0]?.uid, owner?.metadata.uid);
    await env.delete("billing");
    await env.waitGone("billing");
    await waitSecret("shared", "deleted by the garbage collector", (s) => s === undefined, 60_000);
  });
});
