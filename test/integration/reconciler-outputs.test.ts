/**
 * spec.writeOutputsTo end to end, on SqsQueues (the ConfigMap logic is shared by every kind; the
 * S3 and EC2 settings tests check their keys): the ConfigMap is written with the queue's
 * identifiers, labelled and owned by the queue; a no-op reconcile writes nothing; an edit, a lost
 * label or a deletion by someone else is repaired; a ConfigMap the queue does not own is never
 * touched (OutputConflict, a Warning Event, no write while it lasts) until it is gone; a renamed
 * configMapName deletes the old ConfigMap and a removed writeOutputsTo deletes the last one; with
 * kube-controller-manager's garbage collector running, deleting a queue deletes its ConfigMap.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { ready, type ServedConfigMap } from "../support/reconciler-env.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

/** Names `envFrom` turns into variables every shell can read. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL = "compute.cloud.com/managed-by";

describe("SqsQueue outputs: spec.writeOutputsTo", () => {
  const env = new SqsEnv("sqs-outputs", [], { controllers: ["garbagecollector"] }).hooks();
  const cmPath = (name: string): string => `/api/v1/namespaces/${env.ns}/configmaps/${name}`;
  let expected: Record<string, string> = {};

  it("writes the queue's identifiers into a ConfigMap owned by the queue, under keys envFrom takes", async () => {
    await env.create("orders", { queueName: "orders", writeOutputsTo: { configMapName: "orders-outputs" } });
    const obj = await env.waitReady("orders");
    expected = {
      QUEUE_NAME: "orders",
      QUEUE_URL: obj.status?.queueUrl ?? "",
      QUEUE_ARN: "arn:aws:sqs:us-east-1:123456789012:orders",
      QUEUE_REGION: "us-east-1",
    };
    const cm = await env.configMap("orders-outputs");
    assert.ok(cm, "the ConfigMap exists once the queue is Ready");
    assert.deepEqual(cm.data, expected);
    assert.equal((await env.queue("orders")).url, expected.QUEUE_URL);
    for (const key of Object.keys(cm.data ?? {})) assert.match(key, ENV_NAME);
    assert.equal(cm.metadata.labels?.[LABEL], "kubeprovisioner");
    assert.deepEqual(cm.metadata.ownerReferences, [
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
    const before = await env.configMap("orders-outputs");
    const writes = await env.kubeWrites();
    await env.patch("orders", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(3);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.equal(
      (await env.configMap("orders-outputs"))?.metadata.resourceVersion,
      before?.metadata.resourceVersion,
    );
  });

  it("puts back a ConfigMap someone edited, unlabelled or deleted", async () => {
    const intact = (cm: ServedConfigMap | undefined): boolean =>
      cm !== undefined &&
      cm.metadata.labels?.[LABEL] === "kubeprovisioner" &&
      isDeepStrictEqual(cm.data, expected);
    const edited = await env.cp.request(
      "PATCH",
      cmPath("orders-outputs"),
      { data: { QUEUE_URL: "https://elsewhere.example", EXTRA: "x" } },
      "application/merge-patch+json",
    );
    assert.equal(edited.status, 200, edited.text);
    await env.waitConfigMap("orders-outputs", "its data repaired", intact);

    // Unlabelled, it leaves the operator's cache: the create answers 409 and a GET shows it is ours.
    const unlabelled = await env.cp.request(
      "PATCH",
      cmPath("orders-outputs"),
      { metadata: { labels: { [LABEL]: null } }, data: { QUEUE_NAME: "renamed" } },
      "application/merge-patch+json",
    );
    assert.equal(unlabelled.status, 200, unlabelled.text);
    await env.waitConfigMap("orders-outputs", "its label and data repaired", intact);

    const old = await env.configMap("orders-outputs");
    const deleted = await env.cp.request("DELETE", cmPath("orders-outputs"));
    assert.equal(deleted.status, 200, deleted.text);
    const recreated = await env.waitConfigMap(
      "orders-outputs",
      "recreated",
      (cm) => intact(cm) && cm?.metadata.uid !== old?.metadata.uid,
    );
    assert.equal(recreated?.metadata.ownerReferences?.[0]?.name, "orders");
    assert.equal(ready(await env.get("orders"))?.status, "True");
  });

  it("never overwrites a ConfigMap it does not own, writes nothing while that lasts, and takes the name once it is free", async () => {
    const created = await env.cp.request("POST", `/api/v1/namespaces/${env.ns}/configmaps`, {
      metadata: { name: "shared" },
      data: { owner: "someone else" },
    });
    assert.equal(created.status, 201, created.text);
    const foreign = created.body as ServedConfigMap;
    await env.create("billing", { queueName: "billing", writeOutputsTo: { configMapName: "shared" } });
    const refused = await env.waitReason("billing", "OutputConflict");
    assert.equal(ready(refused)?.status, "False");
    assert.match(
      ready(refused)?.message ?? "",
      /^ConfigMap shared exists and is not this object's \(it has no controller\); it is left as it is/,
    );
    await env.waitEvent("billing", "Warning", "OutputConflict");
    assert.ok(await env.queueExists("billing"), "the queue itself is created");

    await env.waitPolls(1); // the metronome's own writes are done
    const writes = await env.kubeWrites();
    // Its own polls, not the metronome's: two poll periods of another object may hold one poll
    // of this one when the machine delays it.
    await env.waitReconcilesOf("billing", 2);
    assert.equal(await env.kubeWrites(), writes, "no Kubernetes write while the conflict lasts");
    const events = (await env.events("billing")).filter((e) => e.reason === "OutputConflict");
    assert.equal(events.length, 1);
    const untouched = await env.configMap("shared");
    assert.equal(
      untouched?.metadata.resourceVersion,
      foreign.metadata.resourceVersion,
      "the ConfigMap is untouched",
    );
    assert.deepEqual(untouched?.data, { owner: "someone else" });

    // Another queue's ConfigMap is refused in the same way, naming its controller.
    await env.create("audit", { queueName: "audit", writeOutputsTo: { configMapName: "orders-outputs" } });
    const taken = await env.waitReason("audit", "OutputConflict");
    assert.match(ready(taken)?.message ?? "", /\(it is controlled by SqsQueue orders\)/);
    assert.deepEqual((await env.configMap("orders-outputs"))?.data, expected);
    await env.delete("audit");
    await env.waitGone("audit");

    const freed = await env.cp.request("DELETE", cmPath("shared"));
    assert.equal(freed.status, 200, freed.text);
    const billing = await env.waitReady("billing");
    const cm = await env.configMap("shared");
    assert.equal(cm?.data?.QUEUE_NAME, "billing");
    assert.equal(cm?.metadata.ownerReferences?.[0]?.uid, billing.metadata.uid);
  });

  it("deletes the old ConfigMap when configMapName changes, and the last one when writeOutputsTo is removed", async () => {
    await env.patch("orders", { spec: { writeOutputsTo: { configMapName: "orders-env" } } });
    const renamed = await env.waitConfigMap("orders-env", "written", (cm) => cm !== undefined);
    assert.deepEqual(renamed?.data, expected);
    await env.waitConfigMap("orders-outputs", "deleted", (cm) => cm === undefined);

    await env.patch("orders", { spec: { writeOutputsTo: null } });
    await env.waitConfigMap("orders-env", "deleted", (cm) => cm === undefined);
    const obj = await env.waitUntil(
      "orders",
      "the removal reconciled",
      (o) => o?.status?.observedGeneration === o?.metadata.generation,
    );
    assert.equal(ready(obj)?.status, "True");
    assert.ok(await env.configMap("shared"), "another queue's ConfigMap stays");
  });

  it("leaves the ConfigMap to the garbage collector when the queue is deleted", async () => {
    const owner = await env.get("billing");
    assert.equal((await env.configMap("shared"))?.metadata.ownerReferences?.[0]?.uid, owner?.metadata.uid);
    await env.delete("billing");
    await env.waitGone("billing");
    assert.equal(await env.queueExists("billing"), false);
    await env.waitConfigMap("shared", "deleted by the garbage collector", (cm) => cm === undefined, 60_000);
  });
});
