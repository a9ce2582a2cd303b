/**
 * `--controllers` end to end: the operator started with only the SqsQueue controller manages
 * queues and leaves the objects of the kinds left out alone: no finalizer, no status, no AWS call;
 * the Ec2Instance kind, which no running kind's objects name, gets no informer at all, while
 * S3Buckets (named by queues' allowS3Notifications) are only listed and watched. A bucket whose
 * notification names a queue by reference, under an operator that runs no SqsQueue controller,
 * says so in its condition instead of waiting for a queue that never becomes Ready.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FINALIZER } from "../../src/api/v1/index.ts";
import type { KubeObj } from "../support/reconciler-env.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "only-queues";

describe("--controllers", () => {
  const env = new SqsEnv(NS, ["--controllers=*,-ec2instance,-s3bucket"]).hooks();

  const create = async (plural: string, kind: string, name: string, spec: Record<string, unknown>) => {
    const res = await env.cp.request("POST", `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`, {
      apiVersion: "compute.cloud.com/v1",
      kind,
      metadata: { name },
      spec,
    });
    assert.equal(res.status, 201, res.text);
  };
  const get = async (plural: string, name: string): Promise<KubeObj> => {
    const res = await env.cp.request("GET", `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}/${name}`);
    assert.equal(res.status, 200, res.text);
    return res.body as KubeObj;
  };

  it("runs the kinds it names and leaves the others' objects alone, with no AWS call for them", async () => {
    await create("ec2instances", "Ec2Instance", "left-alone", {
      instanceType: "t3.micro",
      amiId: "ami-1e749f67",
      region: "us-east-1",
    });
    await create("s3buckets", "S3Bucket", "left-alone", { bucketName: "kp-left-alone", region: "us-east-1" });
    await env.create("managed", { queueName: "managed" });
    const queue = await env.waitReady("managed");
    assert.ok(queue.metadata.finalizers?.includes(FINALIZER));

    // Three poll periods of the operator later, the other kinds' objects are as they were made.
    await env.waitPolls(3);
    for (const plural of ["ec2instances", "s3buckets"]) {
      const o = await get(plural, "left-alone");
      assert.equal(o.metadata.finalizers, undefined, `${plural}: no finalizer`);
      assert.equal(o.status, undefined, `${plural}: no status`);
    }
    const services = new Set(env.proxy.calls.map((c) => c.service));
    assert.ok(services.has("sqs"), "the queues' calls went through the proxy");
    assert.equal(services.has("ec2"), false, "no EC2 call");
    assert.equal(services.has("s3"), false, "no S3 call");
    assert.equal(env.reconcilesOf("left-alone"), 0, "never reconciled");
  });

  it("builds no controller for a kind left out, and no informer for one that no running kind references", async () => {
    const workers = (controller: string) =>
      env.op.metric("controller_runtime_max_concurrent_reconciles", { controller });
    assert.equal(await workers("sqsqueue"), 16);
    assert.equal(await workers("ec2instance"), 0);
    assert.equal(await workers("s3bucket"), 0);
    const lists = (resource: string) => env.op.metric("reflector_list_requests_total", { resource });
    assert.ok((await lists("sqsqueues.compute.cloud.com")) > 0);
    assert.equal(await lists("ec2instances.compute.cloud.com"), 0, "no informer of Ec2Instances");
    // Queues name buckets (allowS3Notifications): their informer runs, read only.
    assert.ok((await lists("s3buckets.compute.cloud.com")) > 0);
  });
});

describe("--controllers: a reference to a kind that does not run", () => {
  const BUCKETS_ONLY = "only-buckets";
  const env = new S3Env(BUCKETS_ONLY, { operatorArgs: ["--controllers=s3bucket"] }).hooks();

  it("waits with ReferencedKindNotRunning, naming the switch and the way out, and creates nothing", async () => {
    // The queue object exists and allows the bucket, but no controller makes it Ready.
    const queue = await env.cp.request(
      "POST",
      `/apis/compute.cloud.com/v1/namespaces/${BUCKETS_ONLY}/sqsqueues`,
      {
        apiVersion: "compute.cloud.com/v1",
        kind: "SqsQueue",
        metadata: { name: "events" },
        spec: {
          queueName: "events",
          region: "us-east-1",
          allowS3Notifications: [{ bucketRef: { name: "uploads" } }],
        },
      },
    );
    assert.equal(queue.status, 201, queue.text);
    await env.create("uploads", {
      notifications: {
        queues: [{ id: "csv", events: ["s3:ObjectCreated:*"], queueRef: { name: "events" } }],
      },
    });
    const o = await env.waitReason("uploads", "ReferencedKindNotRunning");
    const ready = o.status?.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "False");
    assert.match(ready?.message ?? "", /notification csv: names the SqsQueue events/);
    assert.match(ready?.message ?? "", /controllers\.sqsQueue\.enabled/);
    assert.match(ready?.message ?? "", /name the queue by queueArn/);
    assert.equal(
      await env.bucketExists("uploads"),
      false,
      "nothing is created for a reference that cannot resolve",
    );
  });
});
