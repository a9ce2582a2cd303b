/**
 * The `compute.cloud.com/paused: "true"` annotation on every kind, against the real API server
 * and moto. The operator polls every 10 minutes here, so every reconcile the test sees comes from
 * a change of the object. A paused object makes not a single AWS call (the counting proxy sees
 * none, whatever the object's spec edits), gets no finalizer and reports Synced=False, reason
 * Paused, with a Normal Event; removing the annotation resumes at once (the predicate lets that
 * metadata-only change through) with one reconcile; a deletion while paused keeps the object and
 * its finalizer and says so, and proceeds once the annotation is removed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FINALIZER, PAUSED_ANNOTATION } from "../../src/api/v1/index.ts";
import { waitFor } from "../support/process.ts";
import { cond, KindObjects, ready, type KubeObj } from "../support/reconciler-env.ts";
import { Ec2Env, type Ec2Obj } from "./reconciler-ec2-fixture.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "paused";

describe("the paused annotation on every kind", () => {
  const env = new SqsEnv(NS, ["--poll-interval=10m"]).hooks();
  const s3 = new S3Env(NS);
  const ec2 = new Ec2Env({ ns: NS });

  /** Every AWS call the proxy has forwarded so far, of any service. */
  const awsCalls = (): number => env.proxy.calls.length;
  const synced = (o: KubeObj | undefined): string | undefined => cond(o, "Synced")?.reason;
  /** Synced=False Paused for the object's current generation. */
  const pausedNow = (o: KubeObj | undefined): boolean =>
    cond(o, "Synced")?.status === "False" &&
    synced(o) === "Paused" &&
    cond(o, "Synced")?.observedGeneration === o?.metadata.generation;
  const pause = (value: string | null) => ({ metadata: { annotations: { [PAUSED_ANNOTATION]: value } } });

  interface KindCase {
    readonly kind: string;
    readonly objects: () => KindObjects<KubeObj>;
    readonly spec: Record<string, unknown>;
    /** Whether the object's resource exists in AWS (asked of moto directly, not counted). */
    readonly exists: (o: KubeObj) => Promise<boolean>;
  }
  const cases: KindCase[] = [
    {
      kind: "SqsQueue",
      objects: () => env.objects as KindObjects<KubeObj>,
      spec: { region: "us-east-1", queueName: "paused-queue" },
      exists: () => env.queueExists("paused-queue"),
    },
    {
      kind: "S3Bucket",
      objects: () => new KindObjects<KubeObj>(env.cp, s3.kind, NS),
      spec: { region: "us-east-1", bucketName: "paused-bucket" },
      exists: () => s3.attachTo(env).bucketExists("paused-bucket"),
    },
    {
      kind: "Ec2Instance",
      objects: () => new KindObjects<KubeObj>(env.cp, ec2.kind, NS),
      spec: { region: "us-east-1", instanceType: "t3.micro", amiId: "ami-1e749f67" },
      exists: async (o) => {
        const id = (o as Ec2Obj).status?.instanceId;
        if (id === undefined) return false;
        const state = (await ec2.attachTo(env).instance(id))?.State?.Name;
        return state !== undefined && state !== "terminated";
      },
    },
  ];

  for (const c of cases) {
    it(`${c.kind}: no AWS call and no finalizer while paused, one reconcile to resume, deletion waits`, async () => {
      const objs = c.objects();
      const name = `paused-${c.kind.toLowerCase()}`;
      const calls = awsCalls();
      const res = await env.cp.request("POST", objs.base, {
        apiVersion: "compute.cloud.com/v1",
        kind: c.kind,
        metadata: { name, annotations: { [PAUSED_ANNOTATION]: "true" } },
        spec: c.spec,
      });
      assert.equal(res.status, 201, res.text);
      const created = await objs.waitUntil(name, "Synced=False Paused", pausedNow);
      assert.match(
        cond(created, "Synced")?.message ?? "",
        /compute\.cloud\.com\/paused annotation is "true"/,
      );
      assert.equal(ready(created), undefined, "nothing is known of the resource yet");
      assert.deepEqual(created?.metadata.finalizers ?? [], [], "no finalizer while paused");
      await objs.waitEvent(name, "Normal", "Paused");

      // A spec edit while paused is reconciled (the condition follows the generation), still without AWS.
      const edited = await objs.patch(name, { spec: { tags: { team: "payments" } } });
      await objs.waitUntil(
        name,
        "Paused for the edited generation",
        (o) => pausedNow(o) && o?.metadata.generation === edited.metadata.generation,
      );
      assert.equal(awsCalls(), calls, "AWS calls while paused");

      // Removing the annotation resumes at once, though the next poll is 10 minutes away.
      await objs.patch(name, pause(null));
      const resumed = await objs.waitUntil(
        name,
        "Ready and Synced after the resume",
        (o) => ready(o)?.status === "True" && synced(o) === "ReconcileSuccess",
        60_000,
      );
      assert.ok(resumed?.metadata.finalizers?.includes(FINALIZER), "the finalizer once resumed");
      assert.ok(await c.exists(resumed as KubeObj), "the resource was created once resumed");

      // Pausing a Ready object keeps Ready as it was; resuming it takes one reconcile, which repairs nothing.
      await objs.patch(name, pause("true"));
      const again = await objs.waitUntil(name, "paused again", pausedNow);
      assert.equal(ready(again)?.status, "True", "Ready stays what was last observed");
      // A poll the object booked before the pause may still come while paused: that reconcile ends
      // without a requeue, so only reconciles that requeue (the managed flow's) are counted.
      const managedReconciles = (): number =>
        env.op
          .logLines()
          .filter(
            (l) =>
              l.name === name && l.namespace === NS && l.msg === "reconcile done, requeueing after delay",
          ).length;
      const before = managedReconciles();
      const mutations = [...env.kind.mutating, ...s3.kind.mutating, ...ec2.kind.mutating].map((op) =>
        env.proxy.count(op),
      );
      await objs.patch(name, pause(null));
      await objs.waitUntil(name, "Synced again", (o) => synced(o) === "ReconcileSuccess");
      await waitFor("the resume's reconcile logged", async () => managedReconciles() > before, 10_000, 50);
      assert.equal(managedReconciles(), before + 1, "one reconcile resumes the object");
      assert.deepEqual(
        [...env.kind.mutating, ...s3.kind.mutating, ...ec2.kind.mutating].map((op) => env.proxy.count(op)),
        mutations,
        "no mutating AWS call: nothing drifted while paused",
      );

      // A deletion while paused waits with its finalizer, and says so.
      await objs.patch(name, pause("true"));
      await objs.waitUntil(name, "paused before the deletion", pausedNow);
      const quiet = awsCalls();
      await objs.delete(name);
      const waiting = await objs.waitUntil(name, "the deletion waits", (o) =>
        /^the deletion waits: /.test(cond(o, "Synced")?.message ?? ""),
      );
      assert.ok(waiting?.metadata.finalizers?.includes(FINALIZER), "the finalizer stays while paused");
      await waitFor(
        "an Event saying the deletion waits",
        async () =>
          (await objs.events(name)).some(
            (e) => e.reason === "Paused" && e.message.startsWith("the deletion waits"),
          ),
        15_000,
        150,
      );
      assert.equal(awsCalls(), quiet, "AWS calls while a paused deletion waits");
      assert.ok(await c.exists(waiting as KubeObj), "the resource is still there");

      await objs.patch(name, pause(null));
      await objs.waitGone(name, 60_000);
      assert.equal(await c.exists(waiting as KubeObj), false, "deleted once resumed");
    });
  }
});
