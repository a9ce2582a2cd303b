/**
 * Events written by the recorder to a real API server, attached to a custom object.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { API_VERSION } from "../../src/api/v1/group.ts";
import { EventBroadcaster, type EventSubject } from "../../src/runtime/events/recorder.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";

interface CoreEvent {
  metadata: { name: string; namespace: string };
  involvedObject: {
    apiVersion: string;
    kind: string;
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
  };
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string };
  reportingComponent: string;
}

describe("Event recorder against the API server", () => {
  let cp: ControlPlane;
  let bucket: EventSubject;

  before(async () => {
    cp = await startControlPlane({ installCRDs: true });
    const created = await cp.request("POST", "/apis/compute.cloud.com/v1/namespaces/default/s3buckets", {
      apiVersion: API_VERSION,
      kind: "S3Bucket",
      metadata: { name: "assets" },
      spec: { bucketName: "kubeprovisioner-events-test", region: "us-east-1" },
    });
    assert.equal(created.status, 201, created.text);
    bucket = created.body as EventSubject;
  });
  after(async () => {
    await cp?.stop();
  });

  async function eventsOf(uid: string): Promise<CoreEvent[]> {
    const res = await cp.request(
      "GET",
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.uid=${uid}`)}`,
    );
    assert.equal(res.status, 200, res.text);
    return (res.body as { items: CoreEvent[] }).items;
  }

  it("aggregates 10 identical events into one Event object with count 10", async () => {
    const rest = RestClient.fromKubeConfig(cp.kubeConfig(), { registry: new Registry() });
    const broadcaster = new EventBroadcaster({ client: rest, registry: new Registry() });
    const recorder = broadcaster.recorderFor("s3bucket-controller");
    for (let i = 0; i < 10; i++)
      recorder.event(bucket, "Warning", "CreateFailed", "BucketAlreadyExists: the name is taken");
    recorder.event(bucket, "Normal", "Created", "bucket created");
    await broadcaster.flush();

    const events = await eventsOf(bucket.metadata.uid ?? "");
    assert.equal(events.length, 2);
    const failed = events.find((e) => e.reason === "CreateFailed");
    assert.ok(failed !== undefined);
    assert.equal(failed.count, 10);
    assert.equal(failed.type, "Warning");
    assert.equal(failed.source.component, "s3bucket-controller");
    assert.equal(failed.reportingComponent, "s3bucket-controller");
    assert.deepEqual(failed.involvedObject, {
      apiVersion: API_VERSION,
      kind: "S3Bucket",
      name: "assets",
      namespace: "default",
      uid: bucket.metadata.uid,
      resourceVersion: bucket.metadata.resourceVersion,
    });
    assert.ok(Date.parse(failed.lastTimestamp) >= Date.parse(failed.firstTimestamp));
    assert.equal(events.find((e) => e.reason === "Created")?.count, 1);

    // kubectl describe shows them on the object.
    const { stdout } = await cp.kubectl(["describe", "s3bucket", "assets", "-n", "default"]);
    assert.match(stdout, /Warning\s+CreateFailed\s+.*\(x10 over/);
  });
});
