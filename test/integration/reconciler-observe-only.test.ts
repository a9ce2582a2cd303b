/**
 * `spec.managementPolicy: ObserveOnly` on every kind, against the real API server and moto: an
 * observe-only object of a resource made outside the operator reports it (Ready, IDs, state,
 * tags) and follows out-of-band changes without repairing them; one naming a missing resource
 * reports NotFound; none holds a finalizer, deleting one is instant and leaves the resource, and
 * the counting proxy sees not a single mutating AWS call for them. ObserveOnly to Full goes
 * through the adoption rules; Full to ObserveOnly releases the resource without deleting it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateTagsCommand,
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  StopInstancesCommand,
} from "@aws-sdk/client-ec2";
import {
  CreateBucketCommand,
  HeadBucketCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
} from "@aws-sdk/client-sqs";
import { FINALIZER, OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { cond, KindObjects, type KubeObj } from "../support/reconciler-env.ts";
import { Ec2Env, tagMap, type Ec2Obj } from "./reconciler-ec2-fixture.ts";
import { S3Env, type BucketObj } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";
import { WAIT_MS } from "../support/process.ts";

const NS = "observe-only";
const OBSERVE = { managementPolicy: "ObserveOnly" } as const;

describe("managementPolicy ObserveOnly on every kind", () => {
  // The install grants this namespace adoption (none by default): switching to Full adopts.
  const env = new SqsEnv(NS, [`--adoption-namespaces=${NS}`]).hooks();
  // The other kinds' objects live in the same control plane, operator and proxy.
  const s3Kind = new S3Env(NS).kind;
  const ec2Kind = new Ec2Env({ ns: NS }).kind;
  const buckets = (): KindObjects<BucketObj> => new KindObjects<BucketObj>(env.cp, s3Kind, NS);
  const instances = (): KindObjects<Ec2Obj> => new KindObjects<Ec2Obj>(env.cp, ec2Kind, NS);
  const config = () => ({
    region: "us-east-1",
    endpoint: env.moto.endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  });
  const s3 = (): S3Client => new S3Client({ ...config(), forcePathStyle: true });
  const ec2 = (): EC2Client => new EC2Client(config());
  /** Every mutating call of any kind the proxy has seen, by operation. */
  const mutations = (): Record<string, number> =>
    Object.fromEntries(
      [...env.kind.mutating, ...s3Kind.mutating, ...ec2Kind.mutating].map((op) => [op, env.proxy.count(op)]),
    );
  const readyOf = (o: KubeObj | undefined): [string | undefined, string | undefined] => [
    cond(o, "Ready")?.status,
    cond(o, "Ready")?.reason,
  ];
  /** Ready for the current generation as a managed object: its finalizer, no observed tags. */
  const managedReady = (o: KubeObj | undefined): boolean =>
    cond(o, "Ready")?.status === "True" &&
    cond(o, "Ready")?.observedGeneration === o?.metadata.generation &&
    o?.metadata.finalizers?.includes(FINALIZER) === true &&
    o.status?.observedTags === undefined &&
    (o.kind !== "S3Bucket" || (o as BucketObj).status?.observedVersioning === undefined);
  const bucketExists = async (name: string): Promise<boolean> => {
    try {
      await s3().send(new HeadBucketCommand({ Bucket: name }));
      return true;
    } catch {
      return false;
    }
  };
  const instanceTags = async (id: string): Promise<Record<string, string>> => {
    const out = await ec2().send(new DescribeInstancesCommand({ InstanceIds: [id] }));
    return tagMap(out.Reservations?.[0]?.Instances?.[0]?.Tags);
  };
  const launch = async (tags: Record<string, string>): Promise<string> => {
    const out = await ec2().send(
      new RunInstancesCommand({
        ImageId: "ami-1e749f67",
        InstanceType: "t3.micro",
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [
          {
            ResourceType: "instance",
            Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
          },
        ],
      }),
    );
    const id = out.Instances?.[0]?.InstanceId;
    assert.ok(id !== undefined);
    return id;
  };

  it("reports existing and missing resources, follows out-of-band changes, and never mutates", async () => {
    await env.waitPolls(1); // the metronome queue exists before anything is counted
    await env.sqs().send(
      new CreateQueueCommand({
        QueueName: "seen-queue",
        Attributes: { VisibilityTimeout: "10" },
        tags: { team: "a" },
      }),
    );
    await s3().send(new CreateBucketCommand({ Bucket: "seen-bucket" }));
    await s3().send(
      new PutBucketTaggingCommand({
        Bucket: "seen-bucket",
        Tagging: { TagSet: [{ Key: "team", Value: "a" }] },
      }),
    );
    const instanceId = await launch({ team: "a" });
    const before = mutations();

    // Identity alone: no launch fields, and defaults that would matter to a managed object.
    const q = await env.create("seen", {
      ...OBSERVE,
      queueName: "seen-queue",
      writeOutputsTo: { configMapName: "seen-outputs" },
    });
    assert.deepEqual(q.metadata.finalizers ?? [], []);
    await buckets().create("seen", { ...OBSERVE, bucketName: "seen-bucket" });
    const res = await env.cp.request("POST", instances().base, {
      apiVersion: "compute.cloud.com/v1",
      kind: "Ec2Instance",
      metadata: { name: "seen" },
      spec: { ...OBSERVE, region: "us-east-1", instanceId },
    });
    assert.equal(res.status, 201, res.text);
    await env.create("missing", { ...OBSERVE, queueName: "missing-queue" });
    await buckets().create("missing", { ...OBSERVE, bucketName: "missing-bucket" });
    await instances().create("missing", { ...OBSERVE, instanceId: "i-0123456789abcdef0" });

    const queue = await env.waitReady("seen");
    assert.equal(queue.status?.queueUrl, (await env.queue("seen-queue")).url);
    assert.match(queue.status?.queueArn ?? "", /:seen-queue$/);
    assert.deepEqual(queue.status?.observedTags, { team: "a" });
    assert.equal(queue.status?.observedAttributes?.["VisibilityTimeout"], "10");
    assert.equal(queue.status?.observedAttributes?.["ApproximateNumberOfMessages"], undefined);
    const outputs = await env.cp.request("GET", `/api/v1/namespaces/${NS}/configmaps/seen-outputs`);
    assert.equal(outputs.status, 200, outputs.text);
    assert.equal(
      (outputs.body as { data?: Record<string, string> }).data?.["QUEUE_URL"],
      queue.status?.queueUrl,
    );
    const bucket = await buckets().waitReady("seen");
    assert.equal(bucket.status?.bucketArn, "arn:aws:s3:::seen-bucket");
    assert.deepEqual(bucket.status?.observedTags, { team: "a" });
    assert.equal(bucket.status?.observedVersioning, "Disabled");
    const instance = await instances().waitReady("seen");
    assert.equal(instance.status?.instanceId, instanceId);
    assert.equal(instance.status?.state, "running");
    assert.ok(instance.status?.privateIP);
    assert.deepEqual(instance.status?.observedTags, { team: "a" });
    for (const objects of [env.objects, buckets(), instances()] as KindObjects<KubeObj>[]) {
      const missing = await objects.waitUntil("missing", "NotFound", (o) => readyOf(o)[1] === "NotFound");
      assert.deepEqual(readyOf(missing), ["False", "NotFound"]);
      assert.equal(missing?.status?.state, "NotFound");
      assert.equal(cond(missing, "Synced")?.status, "True");
      const seen = await objects.get("seen");
      assert.deepEqual(seen?.metadata.finalizers ?? [], [], "no finalizer");
    }

    // Changes made in AWS show up in status and are not repaired.
    const url = (await env.sqs().send(new GetQueueUrlCommand({ QueueName: "seen-queue" }))).QueueUrl;
    await env.sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { team: "b" } }));
    await env
      .sqs()
      .send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "20" } }));
    await s3().send(
      new PutBucketVersioningCommand({
        Bucket: "seen-bucket",
        VersioningConfiguration: { Status: "Enabled" },
      }),
    );
    await s3().send(
      new PutBucketTaggingCommand({
        Bucket: "seen-bucket",
        Tagging: { TagSet: [{ Key: "team", Value: "b" }] },
      }),
    );
    await ec2().send(new CreateTagsCommand({ Resources: [instanceId], Tags: [{ Key: "team", Value: "b" }] }));
    await ec2().send(new StopInstancesCommand({ InstanceIds: [instanceId] }));
    await env.waitUntil(
      "seen",
      "new tags and attributes",
      (o) =>
        o?.status?.observedTags?.["team"] === "b" &&
        o.status.observedAttributes?.["VisibilityTimeout"] === "20",
    );
    await buckets().waitUntil(
      "seen",
      "new tags and versioning",
      (o) => o?.status?.observedTags?.["team"] === "b" && o.status.observedVersioning === "Enabled",
    );
    const stopped = await instances().waitUntil(
      "seen",
      "stopped",
      (o) => o?.status?.state === "stopped" && o.status.observedTags?.["team"] === "b",
      WAIT_MS,
    );
    assert.deepEqual(readyOf(stopped), ["True", "Available"], "it exists: Ready whatever its state");
    // A resource that appears is found; one that is never there stays NotFound.
    await env.sqs().send(new CreateQueueCommand({ QueueName: "missing-queue" }));
    await env.waitReady("missing");
    await env.waitPolls(2);

    // Deleting the objects is instant and leaves every resource in place.
    for (const objects of [env.objects, buckets(), instances()] as KindObjects<KubeObj>[]) {
      for (const name of ["seen", "missing"]) {
        await objects.delete(name);
        assert.equal(await objects.get(name), undefined, `${objects.kind.kind} ${name} went at once`);
      }
    }
    await env.waitPolls(1);
    assert.ok(await env.queueExists("seen-queue"));
    assert.ok(await env.queueExists("missing-queue"));
    assert.ok(await bucketExists("seen-bucket"));
    assert.deepEqual(mutations(), before, "not a single mutating AWS call");
    for (const read of ["DescribeInstances", "GetBucketTagging", "ListQueueTags"])
      assert.ok(env.proxy.count(read) > 0, `the objects were read through the proxy (${read})`);
    assert.deepEqual(await instanceTags(instanceId), { team: "b" }, "the instance carries no ownership tags");
  });

  it("takes a resource over under the adoption rules when switched to Full", async () => {
    await env.sqs().send(new CreateQueueCommand({ QueueName: "taken-queue", tags: { team: "a" } }));
    await env.create("taken", { ...OBSERVE, queueName: "taken-queue" });
    await env.waitReady("taken");
    await env.patch("taken", { spec: { managementPolicy: "Full" } });
    const refused = await env.waitReason("taken", "NotOwned");
    assert.deepEqual(readyOf(refused), ["False", "NotOwned"]);
    assert.deepEqual((await env.queue("taken-queue")).tags, { team: "a" }, "untouched while refused");
    await env.patch("taken", { spec: { adoptExisting: true, tags: { env: "prod" } } });
    const adopted = await env.waitUntil("taken", "adopted", managedReady);
    assert.equal(
      adopted?.status?.observedAttributes,
      undefined,
      "a managed object reports no observed attributes",
    );
    const tags = (await env.queue("taken-queue")).tags;
    assert.equal(tags[OWNERSHIP_TAGS.uid], adopted?.metadata.uid);
    assert.equal(tags["env"], "prod");
    await env.waitEvent("taken", "Normal", "Adopted");

    // EC2: the instance the spec names is taken over; the launch fields become required.
    const instanceId = await launch({ team: "a" });
    await instances().create("taken", { ...OBSERVE, instanceId, amiId: undefined, instanceType: undefined });
    await instances().waitReady("taken");
    const noLaunchFields = await instances().patchResponse("taken", {
      spec: { managementPolicy: "Full", adoptExisting: true },
    });
    assert.equal(noLaunchFields.status, 422, noLaunchFields.text);
    assert.match(noLaunchFields.text, /spec\.amiId: Required value/);
    await instances().patch("taken", {
      spec: {
        managementPolicy: "Full",
        adoptExisting: true,
        amiId: "ami-1e749f67",
        instanceType: "t3.micro",
      },
    });
    const ec2Adopted = await instances().waitUntil("taken", "adopted", managedReady, WAIT_MS);
    assert.equal(ec2Adopted?.status?.instanceId, instanceId);
    assert.equal((await instanceTags(instanceId))[OWNERSHIP_TAGS.uid], ec2Adopted?.metadata.uid);
  });

  it("releases a managed resource without deleting it when switched to ObserveOnly, and manages it again", async () => {
    await env.create("kept", { queueName: "kept-queue" });
    await buckets().create("kept", { bucketName: "kept-bucket" });
    const managed = await env.waitReady("kept");
    await buckets().waitReady("kept");
    assert.ok(managed.metadata.finalizers?.includes(FINALIZER));
    const uid = managed.metadata.uid;

    for (const objects of [env.objects, buckets()] as KindObjects<KubeObj>[]) {
      await objects.patch("kept", { spec: { managementPolicy: "ObserveOnly" } });
      const released = await objects.waitUntil(
        "kept",
        "released",
        (o) => (o?.metadata.finalizers ?? []).length === 0 && o?.status?.observedTags !== undefined,
      );
      assert.deepEqual(readyOf(released), ["True", "Available"]);
      await objects.waitEvent("kept", "Normal", "Released");
    }
    // The ownership tags stay: the object's own resource is its own again without adoptExisting.
    assert.equal((await env.queue("kept-queue")).tags[OWNERSHIP_TAGS.uid], uid);
    await env.patch("kept", { spec: { managementPolicy: "Full" } });
    const again = await env.waitUntil("kept", "managed again", managedReady);
    assert.equal(again?.spec.adoptExisting, false);
    await env.patch("kept", { spec: { managementPolicy: "ObserveOnly" } });
    await env.waitUntil("kept", "released again", (o) => (o?.metadata.finalizers ?? []).length === 0);

    const before = mutations();
    await env.delete("kept");
    await buckets().delete("kept");
    assert.equal(await env.get("kept"), undefined);
    assert.equal(await buckets().get("kept"), undefined);
    await env.waitPolls(1);
    assert.ok(await env.queueExists("kept-queue"), "the queue was left in AWS");
    assert.ok(await bucketExists("kept-bucket"), "the bucket was left in AWS");
    assert.deepEqual(mutations(), before);
  });

  it("costs an observe-only object no more AWS calls per poll than the same resource managed", async (t) => {
    // The two objects are measured alone on their services. Instances polled at about the same
    // time share one DescribeInstances (the describe batcher), so the instance the adoption test
    // took over, while it is polled, makes some of the calls counted here, as many as the phases
    // of the two objects' polls line up for.
    await instances().delete("taken");
    await instances().waitGone("taken", WAIT_MS);
    await s3().send(new CreateBucketCommand({ Bucket: "cost-bucket" }));
    const instanceId = await launch({ team: "a" });
    await buckets().create("cost-b", { ...OBSERVE, bucketName: "cost-bucket" });
    await instances().create("cost-i", { ...OBSERVE, instanceId });
    await buckets().waitReady("cost-b");
    await instances().waitReady("cost-i");
    /** S3 and EC2 calls per reconcile of the two objects over three steady polls of each. */
    const perReconcile = async (): Promise<{ s3: number; ec2: number }> => {
      await env.waitPolls(1); // the writes of the last change have settled
      const polls = 3;
      const [s3, ec2] = await Promise.all([
        env.callsOfReconciles("cost-b", polls, "s3"),
        env.callsOfReconciles("cost-i", polls, "ec2"),
      ]);
      return { s3: s3.length / polls, ec2: ec2.length / polls };
    };
    const observed = await perReconcile();
    await buckets().patch("cost-b", { spec: { managementPolicy: "Full", adoptExisting: true } });
    await instances().patch("cost-i", {
      spec: {
        managementPolicy: "Full",
        adoptExisting: true,
        amiId: "ami-1e749f67",
        instanceType: "t3.micro",
      },
    });
    await buckets().waitUntil("cost-b", "managed", managedReady);
    await instances().waitUntil("cost-i", "managed", managedReady, WAIT_MS);
    const managed = await perReconcile();
    t.diagnostic(
      `calls per reconcile: observed ${JSON.stringify(observed)}, managed ${JSON.stringify(managed)}`,
    );
    assert.ok(observed.s3 <= managed.s3, `S3 calls per poll: observed ${observed.s3}, managed ${managed.s3}`);
    assert.ok(
      observed.ec2 <= managed.ec2,
      `EC2 calls per poll: observed ${observed.ec2}, managed ${managed.ec2}`,
    );
    assert.ok(observed.s3 > 0, "an observe-only bucket is read on every poll");
  });
});
