/**
 * Proves the test harness: a real API server that accepts a CRD and streams a watch event, and
 * a real AWS emulator that serves S3 and SQS to the SDK v3 clients.
 */
import { CreateBucketCommand, DeleteBucketCommand, ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, DeleteQueueCommand, ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import { request } from "node:https";
import { after, before, describe, it } from "node:test";
import { KubeConfigConnection } from "../../src/runtime/kube/connection.ts";
import { installTestCrd } from "../support/test-crd.ts";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";

describe("test harness", () => {
  let cp: ControlPlane;
  let moto: Moto;

  before(async () => {
    ({ cp, moto } = await startBackends({ installCRDs: true }));
  });
  after(async () => {
    await Promise.all([cp?.stop(), moto?.stop()]);
  });

  it("serves the pinned Kubernetes release", async () => {
    const res = await cp.request("GET", "/version");
    assert.equal(res.status, 200);
    assert.match((res.body as { gitVersion: string }).gitVersion, /^v1\.\d+\.\d+$/);
  });

  it("creates a namespace and a CRD, and streams a watch event for a custom object", async () => {
    const ns = await cp.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "smoke" },
    });
    assert.equal(ns.status, 201, ns.text);
    await installTestCrd(
      cp,
      { group: "smoke.example.com", version: "v1", plural: "widgets", kind: "Widget", namespaced: true },
      { spec: { size: { type: "integer" } } },
    );

    // Open a watch with the admin identity, then create an object and read the ADDED event.
    const connection = new KubeConfigConnection(cp.kubeConfig());
    const { headers, agent } = await connection.settings();
    const event = await new Promise<{ type: string; object: { metadata: { name: string } } }>(
      (resolve, reject) => {
        const req = request(
          new URL("/apis/smoke.example.com/v1/namespaces/smoke/widgets?watch=true", cp.server),
          { headers, agent, method: "GET" },
          (res) => {
            let buf = "";
            res.on("data", (chunk: Buffer) => {
              buf += chunk.toString("utf8");
              const nl = buf.indexOf("\n");
              if (nl >= 0) {
                resolve(JSON.parse(buf.slice(0, nl)));
                req.destroy();
              }
            });
            // The watch is open once headers arrive: create the object now.
            void cp
              .request("POST", "/apis/smoke.example.com/v1/namespaces/smoke/widgets", {
                apiVersion: "smoke.example.com/v1",
                kind: "Widget",
                metadata: { name: "w1" },
                spec: { size: 3 },
              })
              .then((r) => assert.equal(r.status, 201, r.text))
              .catch(reject);
          },
        );
        req.on("error", (e) => {
          if (!(e as NodeJS.ErrnoException).code?.includes("ECONNRESET")) reject(e);
        });
        req.end();
      },
    );
    connection.destroy();
    assert.equal(event.type, "ADDED", JSON.stringify(event));
    assert.equal(event.object.metadata.name, "w1");
  });

  it("issues a ServiceAccount token that RBAC then restricts", async () => {
    const connection = new KubeConfigConnection(await cp.tokenKubeConfig("default", "restricted"));
    const { headers, agent } = await connection.settings();
    const status = await new Promise<number>((resolve, reject) => {
      request(new URL("/api/v1/namespaces", cp.server), { headers, agent, method: "GET" }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on("error", reject)
        .end();
    });
    connection.destroy();
    assert.equal(status, 403);
  });

  it("serves S3 and SQS to the AWS SDK v3 clients", async () => {
    const cfg = {
      region: "us-east-1",
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    };
    const s3 = new S3Client({ ...cfg, forcePathStyle: true });
    const sqs = new SQSClient(cfg);
    await s3.send(new CreateBucketCommand({ Bucket: "smoke-bucket" }));
    const buckets = await s3.send(new ListBucketsCommand({}));
    assert.deepEqual(
      buckets.Buckets?.map((b) => b.Name),
      ["smoke-bucket"],
    );
    const q = await sqs.send(new CreateQueueCommand({ QueueName: "smoke-queue" }));
    assert.match(q.QueueUrl ?? "", /smoke-queue$/);
    await sqs.send(new DeleteQueueCommand({ QueueUrl: q.QueueUrl }));
    await s3.send(new DeleteBucketCommand({ Bucket: "smoke-bucket" }));
    assert.equal((await s3.send(new ListBucketsCommand({}))).Buckets?.length ?? 0, 0);
    assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls?.length ?? 0, 0);
    await moto.reset();
    s3.destroy();
    sqs.destroy();
  });
});
