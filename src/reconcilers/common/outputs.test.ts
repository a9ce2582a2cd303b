import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../../api/v1/index.ts";
import { CONTROLLER_UID_INDEX } from "../../runtime/cache/index.ts";
import {
  ConfigMapResource,
  conflictMessage,
  desiredConfigMap,
  desiredSecret,
  outputCacheIndexers,
  outputCacheNamespaces,
  outputCacheSelector,
  outputData,
  repairedConfigMap,
  repairedSecret,
  SecretResource,
  type ConfigMap,
} from "./outputs.ts";
import { widgetObject, widgetResource } from "./testing/widget.ts";

const owner = widgetObject({ metadata: { namespace: "apps", name: "orders", uid: "uid-1" } });

describe("outputs ConfigMap", () => {
  it("leaves out keys whose value is absent or empty", () => {
    assert.deepEqual(outputData({ A: "1", B: undefined, C: "", D: "x y" }), { A: "1", D: "x y" });
  });

  it("is created labelled, in the owner's namespace, with a controller reference to the owner", () => {
    const cm = desiredConfigMap(owner, "orders-outputs", { QUEUE_NAME: "orders" });
    assert.deepEqual(cm.metadata, {
      name: "orders-outputs",
      namespace: "apps",
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ownerReferences: [
        {
          apiVersion: "compute.cloud.com/v1",
          kind: "Widget",
          name: "orders",
          uid: "uid-1",
          controller: true,
        },
      ],
    });
    assert.deepEqual(cm.data, { QUEUE_NAME: "orders" });
  });

  it("needs no write when data and label are as wanted, whatever else the ConfigMap carries", () => {
    const cm: ConfigMap = {
      ...desiredConfigMap(owner, "o", { A: "1" }),
      metadata: {
        ...desiredConfigMap(owner, "o", {}).metadata,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, team: "x" },
        annotations: { note: "kept" },
        resourceVersion: "5",
      },
    };
    assert.equal(repairedConfigMap(Object.freeze(cm), { A: "1" }), undefined);
  });

  it("repairs changed, added and removed keys, binaryData and a lost label, keeping the rest", () => {
    const base = desiredConfigMap(owner, "o", {});
    const tampered: ConfigMap = {
      ...base,
      metadata: {
        ...base.metadata,
        labels: { team: "x" },
        annotations: { note: "kept" },
        resourceVersion: "5",
      },
      data: { A: "changed", EXTRA: "1" },
      binaryData: { B: "AAAA" },
    };
    const next = repairedConfigMap(tampered, { A: "1", C: "3" });
    assert.ok(next);
    assert.deepEqual(next.data, { A: "1", C: "3" });
    assert.equal(next.binaryData, undefined);
    assert.deepEqual(next.metadata.labels, { team: "x", [MANAGED_BY_LABEL]: MANAGED_BY_VALUE });
    assert.deepEqual(next.metadata.annotations, { note: "kept" });
    assert.equal(next.metadata.resourceVersion, "5", "the update is conditional on what was read");
    assert.deepEqual(tampered.data, { A: "changed", EXTRA: "1" }, "the input is not modified");
  });

  it("names whoever controls a conflicting ConfigMap", () => {
    const foreign = desiredConfigMap(
      widgetObject({ metadata: { namespace: "apps", name: "other", uid: "uid-2" } }),
      "shared",
      {},
    );
    assert.match(
      conflictMessage(foreign),
      /^ConfigMap shared exists and is not this object's \(it is controlled by Widget other\)/,
    );
    assert.match(
      conflictMessage({ metadata: { name: "shared" } }),
      /\(it has no controller\); it is left as it is/,
    );
  });

  it("restricts the ConfigMap informer to the operator's label and no other resource", () => {
    assert.equal(outputCacheSelector(ConfigMapResource), `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`);
    assert.equal(
      outputCacheSelector({ ...ConfigMapResource }),
      "compute.cloud.com/managed-by=kubeprovisioner",
    );
    assert.equal(outputCacheSelector(widgetResource), undefined);
    assert.equal(outputCacheSelector({ ...ConfigMapResource, group: "example.com" }), undefined);
  });

  it("indexes the ConfigMaps by their controller's UID, and nothing else", () => {
    const index = outputCacheIndexers(ConfigMapResource)?.[CONTROLLER_UID_INDEX];
    assert.ok(index);
    assert.deepEqual(index(desiredConfigMap(owner, "o", {})), ["uid-1"]);
    assert.deepEqual(index({ metadata: { name: "x" } }), []);
    assert.equal(outputCacheIndexers(widgetResource), undefined);
  });

  it("writes a Secret of type Opaque with the same keys, base64-encoded, and repairs it like a ConfigMap", () => {
    const secret = desiredSecret(owner, "orders-secret", {
      QUEUE_URL: "https://sqs.example/q",
      EMPTY_SAFE: "é",
    });
    assert.equal(secret.type, "Opaque");
    assert.deepEqual(secret.metadata, desiredConfigMap(owner, "orders-secret", {}).metadata);
    assert.deepEqual(secret.data, {
      QUEUE_URL: Buffer.from("https://sqs.example/q").toString("base64"),
      EMPTY_SAFE: Buffer.from("é").toString("base64"),
    });
    const stored = Object.freeze({ ...secret, metadata: { ...secret.metadata, resourceVersion: "3" } });
    assert.equal(repairedSecret(stored, { QUEUE_URL: "https://sqs.example/q", EMPTY_SAFE: "é" }), undefined);
    const next = repairedSecret(
      { ...stored, metadata: { ...stored.metadata, labels: {} }, stringData: { X: "1" } },
      { QUEUE_URL: "u" },
    );
    assert.deepEqual(next?.data, { QUEUE_URL: Buffer.from("u").toString("base64") });
    assert.equal(next?.stringData, undefined);
    assert.equal(next?.type, "Opaque", "the type is kept");
    assert.equal(next?.metadata.labels?.[MANAGED_BY_LABEL], MANAGED_BY_VALUE);
    assert.match(conflictMessage({ metadata: { name: "s" } }, "Secret"), /^Secret s exists .*secretName$/);
  });

  it("caches Secrets by the same label and index, and only in the namespaces it may write them in", () => {
    assert.equal(outputCacheSelector(SecretResource), `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`);
    assert.ok(outputCacheIndexers(SecretResource)?.[CONTROLLER_UID_INDEX]);
    assert.deepEqual(outputCacheNamespaces(SecretResource, ["apps"]), ["apps"]);
    assert.equal(outputCacheNamespaces(ConfigMapResource, ["apps"]), undefined);
    assert.equal(outputCacheNamespaces(widgetResource, ["apps"]), undefined);
  });
});
