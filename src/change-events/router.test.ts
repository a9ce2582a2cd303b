import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ec2InstanceChangeEvents } from "../reconcilers/ec2-instance/change-events.ts";
import { s3BucketChangeEvents } from "../reconcilers/s3-bucket/change-events.ts";
import { sqsQueueChangeEvents } from "../reconcilers/sqs-queue/change-events.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import { parseChangeEvent } from "./event.ts";
import type { ChangeEventNaming } from "./naming.ts";
import { isSupported, route, type RoutableKind } from "./router.ts";
import { cloudTrailEvent, createTagsParameters, ec2StateChange } from "./testing/events.ts";

const A = "111122223333";
const B = "444455556666";

function obj(
  name: string,
  spec: Record<string, unknown>,
  status: Record<string, unknown> = {},
): ManagedObject {
  return { metadata: { namespace: "ns", name }, spec, status } as unknown as ManagedObject;
}

function kindOf(kind: string, naming: ChangeEventNaming, objects: ManagedObject[]): RoutableKind {
  return {
    kind,
    naming,
    byName: (n) => objects.filter((o) => naming.namesOf(o).includes(n)),
  };
}

const buckets = [
  obj("b1", { bucketName: "bucket-1", region: "us-east-1" }, { accountId: A }),
  obj("b1-elsewhere", { bucketName: "bucket-1", region: "eu-west-1" }),
];
const queues = [
  obj("q-a", { queueName: "orders", region: "us-east-1" }, { accountId: A }),
  obj("q-b", { queueName: "orders", region: "us-east-1" }, { accountId: B }),
];
const instances = [
  obj("i1", { region: "us-east-1" }, { instanceId: "i-0aaa" }),
  obj("i2", { region: "us-east-1", instanceId: "i-0bbb" }),
];
const kinds = [
  kindOf("S3Bucket", s3BucketChangeEvents as unknown as ChangeEventNaming, buckets),
  kindOf("SqsQueue", sqsQueueChangeEvents as unknown as ChangeEventNaming, queues),
  kindOf("Ec2Instance", ec2InstanceChangeEvents as unknown as ChangeEventNaming, instances),
];
const keys = (body: Record<string, unknown>) =>
  route(parseChangeEvent(JSON.stringify(body)), kinds).map((r) => [
    r.kind.kind,
    r.requests.map((q) => q.name),
  ]);

describe("route", () => {
  it("finds a bucket by requestParameters.bucketName, in the event's region only", () => {
    const ev = cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "PutBucketTagging",
      requestParameters: { bucketName: "bucket-1", Host: "bucket-1.s3.amazonaws.com", tagging: "" },
      account: A,
      region: "us-east-1",
    });
    assert.deepEqual(keys(ev), [["S3Bucket", ["b1"]]]);
  });

  it("finds a queue by the name in requestParameters.queueUrl, in the event's account only", () => {
    const ev = cloudTrailEvent({
      eventSource: "sqs.amazonaws.com",
      eventName: "SetQueueAttributes",
      requestParameters: {
        queueUrl: `https://sqs.us-east-1.amazonaws.com/${B}/orders`,
        attributes: { VisibilityTimeout: "60" },
      },
      account: B,
      region: "us-east-1",
    });
    assert.deepEqual(keys(ev), [["SqsQueue", ["q-b"]]]);
  });

  it("finds instances by instancesSet, resourcesSet (instances only) and the state-change detail", () => {
    const stop = cloudTrailEvent({
      eventSource: "ec2.amazonaws.com",
      eventName: "StopInstances",
      requestParameters: {
        instancesSet: { items: [{ instanceId: "i-0aaa" }, { instanceId: "i-0bbb" }] },
        force: false,
      },
      account: A,
      region: "us-east-1",
    });
    assert.deepEqual(keys(stop), [["Ec2Instance", ["i1", "i2"]]]);
    const tags = cloudTrailEvent({
      eventSource: "ec2.amazonaws.com",
      eventName: "CreateTags",
      requestParameters: createTagsParameters(["vol-0123", "i-0bbb"], { team: "x" }),
      account: A,
      region: "us-east-1",
    });
    assert.deepEqual(keys(tags), [["Ec2Instance", ["i2"]]]);
    assert.deepEqual(
      keys(ec2StateChange({ instanceId: "i-0aaa", state: "stopped", account: A, region: "us-east-1" })),
      [["Ec2Instance", ["i1"]]],
    );
  });

  it("routes an event without an account (some emulators leave it out) by region and name alone", () => {
    const ev = cloudTrailEvent({
      eventSource: "sqs.amazonaws.com",
      eventName: "TagQueue",
      requestParameters: { queueUrl: `https://sqs.us-east-1.amazonaws.com/${A}/orders`, tags: { a: "b" } },
      account: A,
      region: "us-east-1",
    });
    delete ev.account;
    assert.deepEqual(keys(ev), [["SqsQueue", ["q-a", "q-b"]]]);
  });

  it("concerns nobody for a resource no object owns, and tells unsupported events apart", () => {
    const ev = cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "DeleteBucket",
      requestParameters: { bucketName: "someone-elses" },
      account: A,
      region: "us-east-1",
    });
    assert.deepEqual(keys(ev), []);
    assert.equal(isSupported(parseChangeEvent(JSON.stringify(ev)), kinds), true);
    const lambda = { ...ev, detail: { ...(ev.detail as object), eventSource: "lambda.amazonaws.com" } };
    assert.equal(isSupported(parseChangeEvent(JSON.stringify(lambda)), kinds), false);
  });
});
