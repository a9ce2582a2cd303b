/**
 * `spec.driftPolicy` and `spec.changePolicy` on SqsQueues, against the real API server and the
 * test AWS. The operator reads a change-event queue and polls every hour, so a reconcile comes
 * only from what the test does: a spec edit, a `compute.cloud.com/reconcile-requested-at` or
 * `compute.cloud.com/approved-changes` annotation, or a CloudTrail-shaped event put into the
 * queue. Every AWS write the operator makes is read from the proxy's log, per queue.
 *
 * - driftPolicy Report: out-of-band changes are left as they are over three reconciles (0
 *   mutating calls); status.drift lists each path with desired, observed and since; Drifted=True;
 *   one Warning Event per newly drifted path, never repeated; the kubeprovisioner_drifted_paths
 *   gauge counts them; a change event's caller, call and time are recorded on the entry it
 *   explains. Switching to Repair repairs with exactly the writes the drift needs, and the drift
 *   record, condition and gauge go.
 * - changePolicy Approve, an edit: held (0 mutating calls over two reconciles) with the plan and
 *   its hash in status.pendingChanges, ChangesPending=True and Synced=False; an approval of a
 *   plan that the spec or AWS has since moved, whether or not the operator has shown the new plan
 *   yet, is refused (StaleApproval) with the new plan shown and nothing applied; approving the
 *   current hash makes exactly the calls the plan lists, and nothing is pending.
 * - changePolicy Approve, a creation: nothing is created (Ready=False AwaitingApproval, the plan
 *   is the spec with the create's actions) until approved; then the queue is created with exactly
 *   the calls the plan listed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CreateQueueCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
} from "@aws-sdk/client-sqs";
import { APPROVED_CHANGES_ANNOTATION, RECONCILE_REQUESTED_AT_ANNOTATION } from "../../src/api/v1/index.ts";
import { cloudTrailEvent } from "../../src/change-events/testing/events.ts";
import { callsOf } from "../../src/reconcilers/common/kind.ts";
import { sqsQueueKind } from "../../src/reconcilers/sqs-queue/index.ts";
import { waitFor } from "../support/process.ts";
import { cond, ready, type Cond, type KubeEvent } from "../support/reconciler-env.ts";
import { SqsEnv, type QueueObj } from "./reconciler-sqs-fixture.ts";

const NS = "change-policy";
/** moto's default account, the operator's own. */
const OWN = "123456789012";
const REGION = "us-east-1";
const DRIFTED_PATHS = "kubeprovisioner_drifted_paths";

const env = new SqsEnv(NS, ["--poll-interval=10m"], { proxy: { resources: true } });
const mutating = new Set(env.kind.mutating);

/** The mutating SQS calls about queue `name` the proxy has logged since it had logged `from` calls. */
const writesOf = (name: string, from: number): string[] =>
  env.proxy.calls
    .slice(from)
    .filter((c) => c.resource === name && mutating.has(c.operation))
    .map((c) => c.operation);

/**
 * The IAM actions that the SQS calls `operations` need, by the kind's IAM table, in the table's
 * order per call (CreateQueue, which carries the operator's tags, needs sqs:TagQueue too).
 */
const actionsOf = (operations: readonly string[]): string[] => [
  ...new Set(
    operations.flatMap((op) => sqsQueueKind.iam.filter((a) => callsOf(a).includes(op)).map((a) => a.action)),
  ),
];

/** [status, reason] of condition `type` of `o`. */
const state = (o: QueueObj | undefined, type: string): [string | undefined, string | undefined] => {
  const c: Cond | undefined = cond(o, type);
  return [c?.status, c?.reason];
};

/** The Events about object `name` with `reason`. */
const eventsOf = async (name: string, reason: string): Promise<KubeEvent[]> =>
  (await env.events(name)).filter((e) => e.reason === reason);

let requests = 0;
/** Asks for one reconcile of `name` now, and returns the object once the reconcile echoed the request. */
async function reconcileNow(name: string): Promise<QueueObj> {
  const at = `${new Date().toISOString()}#${++requests}`;
  await env.patch(name, { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: at } } });
  return (await env.waitUntil(
    name,
    `the reconcile request ${at} handled`,
    (o) => o?.status?.lastHandledReconcileAt === at,
  )) as QueueObj;
}

/** Approves the plan `hash` of `name`. */
const approve = (name: string, hash: string): Promise<QueueObj> =>
  env.patch(name, { metadata: { annotations: { [APPROVED_CHANGES_ANNOTATION]: hash } } });

/** The drifted-paths gauge of SqsQueues, once it reads `n`. */
const waitDriftedPaths = (n: number): Promise<void> =>
  waitFor(
    `${DRIFTED_PATHS}{kind="SqsQueue"} at ${n}`,
    async () => (await env.op.metric(DRIFTED_PATHS, { kind: "SqsQueue" })) === n,
    15_000,
    100,
  );

let eventsUrl = "";

describe("driftPolicy and changePolicy", { concurrency: true }, () => {
  before(async () => {
    await env.start();
    await env.op.stop();
    eventsUrl =
      (await env.sqs().send(new CreateQueueCommand({ QueueName: "kp-change-events" }))).QueueUrl ?? "";
    await env.startOperator([`--change-events=${eventsUrl}`, "--poll-interval-with-events=1h"]);
    await waitFor(
      "the change-event queue read",
      async () =>
        (await env.op.metric("kubeprovisioner_change_events_queue_healthy", { queue: eventsUrl })) === 1,
      20_000,
      100,
    );
  });
  after(() => env.stop());

  it("reports drift under Report without repairing it, with who made it, and repairs once switched to Repair", async () => {
    const name = "drift-report";
    await env.create(name, { driftPolicy: "Report", visibilityTimeoutSeconds: 45, tags: { team: "a" } });
    await env.waitReady(name);
    const { url } = await env.queue(name);
    const mark = env.proxy.calls.length;

    // A setting changed out of band: listed, not repaired.
    await env
      .sqs()
      .send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "99" } }));
    const changedAt = Date.now();
    let obj = await reconcileNow(name);
    const visibility = {
      path: "spec.visibilityTimeoutSeconds",
      desired: 45,
      observed: 99,
      since: obj.status?.drift?.[0]?.since ?? "",
    };
    assert.deepEqual(obj.status?.drift, [visibility]);
    const since = Date.parse(visibility.since);
    assert.ok(since >= changedAt && since <= Date.now(), `first seen at ${visibility.since}`);
    assert.deepEqual(state(obj, "Drifted"), ["True", "DriftDetected"]);
    assert.match(
      cond(obj, "Drifted")?.message ?? "",
      /^1 path\(s\) differ .*: spec\.visibilityTimeoutSeconds$/,
    );
    assert.deepEqual(state(obj, "Synced"), ["True", "ReconcileSuccess"]);
    assert.deepEqual(state(obj, "Ready"), ["True", "Available"]);
    await env.waitEvent(name, "Warning", "DriftDetected");
    await waitDriftedPaths(1);

    // A tag added out of band, heard through its CloudTrail event: the entry says who, how and when.
    await env.sqs().send(new TagQueueCommand({ QueueUrl: url, Tags: { "out-of-band": "yes" } }));
    const eventTime = new Date(Math.floor(Date.now() / 1000) * 1000);
    await env.sqs().send(
      new SendMessageCommand({
        QueueUrl: eventsUrl,
        MessageBody: JSON.stringify(
          cloudTrailEvent({
            eventSource: "sqs.amazonaws.com",
            eventName: "TagQueue",
            requestParameters: {
              queueUrl: `https://sqs.${REGION}.amazonaws.com/${OWN}/${name}`,
              tags: { "out-of-band": "yes" },
            },
            account: OWN,
            region: REGION,
            caller: { roleName: "Operations", sessionName: "alice@example.com" },
            time: eventTime,
          }),
        ),
      }),
    );
    obj = (await env.waitUntil(name, "the tag listed", (o) => o?.status?.drift?.length === 2)) as QueueObj;
    const tag = obj.status?.drift?.find((d) => d.path === "spec.tags.out-of-band");
    assert.deepEqual(tag, {
      path: "spec.tags.out-of-band",
      observed: "yes",
      since: tag?.since,
      changedBy: `arn:aws:sts::${OWN}:assumed-role/Operations/alice@example.com`,
      changeEvent: "TagQueue",
      changedAt: eventTime.toISOString(),
    });
    assert.ok(Date.parse(tag?.since ?? "") > since, `the tag first seen at ${tag?.since}`);
    assert.deepEqual(
      obj.status?.drift?.find((d) => d.path === visibility.path),
      visibility,
      "the earlier entry as it was: first seen then, and no event explained it",
    );
    assert.match(
      cond(obj, "Drifted")?.message ?? "",
      /^2 path\(s\) differ .*: spec\.tags\.out-of-band, spec\.visibilityTimeoutSeconds$/,
    );
    await waitFor(
      "the tag's DriftDetected Event",
      async () => (await eventsOf(name, "DriftDetected")).length === 2,
      15_000,
      150,
    );
    const tagEvent = (await eventsOf(name, "DriftDetected")).find((e) => e.message.startsWith("spec.tags."));
    assert.equal(
      tagEvent?.message,
      `spec.tags.out-of-band drifted: desired (none), observed "yes" (changed by ` +
        `arn:aws:sts::${OWN}:assumed-role/Operations/alice@example.com with TagQueue); reported, ` +
        "not repaired (driftPolicy Report)",
    );
    await waitDriftedPaths(2);

    // A third reconcile: the same record, still no write.
    obj = await reconcileNow(name);
    assert.deepEqual(obj.status?.drift?.map((d) => d.path).sort(), [
      "spec.tags.out-of-band",
      "spec.visibilityTimeoutSeconds",
    ]);
    assert.deepEqual(
      obj.status?.drift?.find((d) => d.path === visibility.path),
      visibility,
    );
    assert.deepEqual(writesOf(name, mark), [], "no AWS write over three reconciles under Report");
    assert.deepEqual((await env.queue(name)).tags["out-of-band"], "yes");
    assert.equal((await env.queue(name)).attributes.VisibilityTimeout, "99");

    // Switching to Repair repairs: the tag removed, then the attribute set, and the record goes.
    const repairMark = env.proxy.calls.length;
    const generation = (await env.patch(name, { spec: { driftPolicy: "Repair" } })).metadata.generation;
    obj = (await env.waitUntil(
      name,
      "repaired",
      (o) => o?.status?.observedGeneration === generation && cond(o, "Drifted") === undefined,
    )) as QueueObj;
    assert.equal(obj.status?.drift, undefined);
    assert.deepEqual(state(obj, "Synced"), ["True", "ReconcileSuccess"]);
    assert.deepEqual(writesOf(name, repairMark), ["UntagQueue", "SetQueueAttributes"]);
    const repaired = await env.queue(name);
    assert.equal(repaired.attributes.VisibilityTimeout, "45");
    assert.equal(repaired.tags["out-of-band"], undefined);
    await env.waitEvent(name, "Normal", "Updated");
    // Events are written in order by one worker: the Updated Event came after any of the
    // reconciles before it could have repeated a DriftDetected Event.
    const detected = await eventsOf(name, "DriftDetected");
    assert.deepEqual(
      detected.map((e) => [e.type, e.message.slice(0, e.message.indexOf(" ")), e.count ?? 1]).sort(),
      [
        ["Warning", "spec.tags.out-of-band", 1],
        ["Warning", "spec.visibilityTimeoutSeconds", 1],
      ],
      "one Event per newly drifted path, none repeated",
    );
    await waitDriftedPaths(0);
  });

  it("holds an edit under Approve until its hash is approved, and refuses a stale approval", async () => {
    const name = "approve-edit";
    await env.create(name, { visibilityTimeoutSeconds: 30 });
    await env.waitReady(name);
    const mark = env.proxy.calls.length;

    // Approve with nothing to apply: nothing pending.
    let generation = (await env.patch(name, { spec: { changePolicy: "Approve" } })).metadata.generation;
    let obj = (await env.waitUntil(
      name,
      "reconciled under Approve",
      (o) => o?.status?.observedGeneration === generation,
    )) as QueueObj;
    assert.deepEqual(state(obj, "ChangesPending"), ["False", "NoChangesPending"]);
    assert.equal(obj.status?.pendingChanges, undefined);

    // An edit: held, with the plan in status.
    generation = (await env.patch(name, { spec: { visibilityTimeoutSeconds: 60 } })).metadata.generation;
    obj = (await env.waitUntil(
      name,
      "the edit held",
      (o) => o?.status?.observedGeneration === generation && cond(o, "ChangesPending")?.status === "True",
    )) as QueueObj;
    const first = obj.status?.pendingChanges;
    assert.match(first?.hash ?? "", /^[0-9a-f]{16}$/);
    assert.deepEqual(first, {
      hash: first?.hash,
      changes: [
        {
          path: "spec.visibilityTimeoutSeconds",
          observed: 30,
          desired: 60,
          actions: ["sqs:SetQueueAttributes"],
          disruption: "none",
        },
      ],
      total: 1,
      restarts: 0,
      refused: 0,
    });
    assert.deepEqual(state(obj, "ChangesPending"), ["True", "AwaitingApproval"]);
    assert.deepEqual(state(obj, "Synced"), ["False", "AwaitingApproval"]);
    assert.equal(
      cond(obj, "ChangesPending")?.message,
      `1 change(s) wait for approval: set the annotation ${APPROVED_CHANGES_ANNOTATION} to ${first?.hash} ` +
        "to apply the plan in status.pendingChanges",
    );
    assert.deepEqual(state(obj, "Ready"), ["True", "Available"]);
    await env.waitEvent(name, "Normal", "AwaitingApproval");
    obj = await reconcileNow(name);
    assert.equal(obj.status?.pendingChanges?.hash, first?.hash, "the same plan, the same hash");
    assert.deepEqual(writesOf(name, mark), [], "nothing applied over two reconciles");

    // The spec moved as the plan was approved: refused, and the new plan shown.
    generation = (
      await env.patch(name, {
        metadata: { annotations: { [APPROVED_CHANGES_ANNOTATION]: first?.hash } },
        spec: { visibilityTimeoutSeconds: 90 },
      })
    ).metadata.generation;
    obj = (await env.waitUntil(
      name,
      "the approval refused",
      (o) =>
        o?.status?.observedGeneration === generation && cond(o, "ChangesPending")?.reason === "StaleApproval",
    )) as QueueObj;
    const second = obj.status?.pendingChanges;
    assert.ok(second !== undefined && second.hash !== first?.hash, "a new hash");
    assert.deepEqual(
      second.changes?.map((c) => [c.path, c.observed, c.desired]),
      [["spec.visibilityTimeoutSeconds", 30, 90]],
    );
    assert.deepEqual(state(obj, "Synced"), ["False", "StaleApproval"]);
    assert.match(
      cond(obj, "ChangesPending")?.message ?? "",
      new RegExp(`^the approved plan ${first?.hash} is stale .*approve the new plan ${second.hash} `),
    );
    await env.waitEvent(name, "Warning", "StaleApproval");
    assert.deepEqual(writesOf(name, mark), []);

    // AWS moved as the plan was approved: refused again, the plan now starts from what AWS has.
    const { url } = await env.queue(name);
    await env
      .sqs()
      .send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "45" } }));
    await approve(name, second.hash);
    obj = (await env.waitUntil(
      name,
      "the approval refused again",
      (o) => o?.status?.pendingChanges?.hash !== second.hash,
    )) as QueueObj;
    const third = obj.status?.pendingChanges;
    assert.deepEqual(state(obj, "ChangesPending"), ["True", "StaleApproval"]);
    assert.deepEqual(
      third?.changes?.map((c) => [c.path, c.observed, c.desired, c.actions]),
      [["spec.visibilityTimeoutSeconds", 45, 90, ["sqs:SetQueueAttributes"]]],
    );
    assert.deepEqual(writesOf(name, mark), []);

    // Approving the current plan applies exactly the calls it lists, once.
    const applyMark = env.proxy.calls.length;
    await approve(name, third?.hash ?? "");
    obj = (await env.waitUntil(
      name,
      "the approved plan applied",
      (o) => cond(o, "ChangesPending")?.status === "False",
    )) as QueueObj;
    assert.deepEqual(writesOf(name, applyMark), ["SetQueueAttributes"], "one call");
    assert.deepEqual(
      actionsOf(writesOf(name, applyMark)),
      third?.changes?.flatMap((c) => c.actions ?? []),
      "the plan's actions",
    );
    assert.deepEqual(state(obj, "ChangesPending"), ["False", "NoChangesPending"]);
    assert.equal(cond(obj, "ChangesPending")?.message, `applied the approved changes ${third?.hash}`);
    assert.equal(obj.status?.pendingChanges, undefined);
    assert.deepEqual(state(obj, "Synced"), ["True", "ReconcileSuccess"]);
    assert.equal((await env.queue(name)).attributes.VisibilityTimeout, "90");
    await env.waitEvent(name, "Normal", "ChangesApproved");
    await env.waitEvent(name, "Normal", "Updated");

    // In sync, the approval left in place: nothing more is written.
    obj = await reconcileNow(name);
    assert.deepEqual(state(obj, "ChangesPending"), ["False", "NoChangesPending"]);
    assert.deepEqual(writesOf(name, applyMark), ["SetQueueAttributes"]);

    // A plan approved after the operator has shown the next one (the spec moved again): refused.
    const heldMark = env.proxy.calls.length;
    const held = async (seconds: number): Promise<string> => {
      const g = (await env.patch(name, { spec: { visibilityTimeoutSeconds: seconds } })).metadata.generation;
      const o = await env.waitUntil(
        name,
        `the edit to ${seconds} held`,
        (x) => x?.status?.observedGeneration === g && x?.status?.pendingChanges !== undefined,
      );
      return o?.status?.pendingChanges?.hash ?? "";
    };
    const fourth = await held(120);
    const fifth = await held(150);
    assert.notEqual(fifth, fourth);
    const at = `${new Date().toISOString()}#${++requests}`;
    await env.patch(name, {
      metadata: {
        annotations: { [APPROVED_CHANGES_ANNOTATION]: fourth, [RECONCILE_REQUESTED_AT_ANNOTATION]: at },
      },
    });
    obj = (await env.waitUntil(
      name,
      "the late approval handled",
      (o) => o?.status?.lastHandledReconcileAt === at,
    )) as QueueObj;
    assert.equal(obj.status?.pendingChanges?.hash, fifth, "the current plan shown");
    assert.deepEqual(writesOf(name, heldMark), [], "nothing applied");
    assert.deepEqual(state(obj, "ChangesPending"), ["True", "StaleApproval"]);
  });

  it("holds a creation under Approve until approved, then creates with the listed calls", async () => {
    const name = "approve-create";
    const mark = env.proxy.calls.length;
    await env.create(name, { changePolicy: "Approve", visibilityTimeoutSeconds: 45, tags: { team: "a" } });
    let obj = (await env.waitUntil(
      name,
      "the creation held (or made)",
      (o) => cond(o, "ChangesPending") !== undefined || ready(o) !== undefined,
    )) as QueueObj;
    assert.deepEqual(state(obj, "Ready"), ["False", "AwaitingApproval"]);
    assert.deepEqual(state(obj, "Synced"), ["False", "AwaitingApproval"]);
    assert.deepEqual(state(obj, "ChangesPending"), ["True", "AwaitingApproval"]);
    const pending = obj.status?.pendingChanges;
    assert.equal(pending?.changes?.length, 1);
    const [create] = pending?.changes ?? [];
    assert.equal(create?.path, "spec");
    assert.equal(create?.disruption, "none");
    assert.ok(create?.actions?.includes("sqs:CreateQueue"), `actions ${JSON.stringify(create?.actions)}`);
    assert.equal(create?.observed, undefined);
    assert.deepEqual(
      (create?.desired as Record<string, unknown> | undefined)?.queueName,
      name,
      "the spec to create",
    );
    await env.waitEvent(name, "Normal", "AwaitingApproval");
    obj = await reconcileNow(name);
    assert.equal(obj.status?.pendingChanges?.hash, pending?.hash);
    assert.equal(obj.status?.createToken, undefined, "no create intent recorded");
    assert.deepEqual(writesOf(name, mark), [], "no CreateQueue, nor any other write");
    assert.equal(await env.queueExists(name), false);

    const approved = env.proxy.calls.length;
    await approve(name, pending?.hash ?? "");
    const created = await env.waitReady(name);
    const calls = writesOf(name, approved);
    assert.ok(calls.includes("CreateQueue"), calls.join(", "));
    assert.deepEqual(actionsOf(calls), create?.actions, "the actions the plan listed");
    assert.equal(created.status?.pendingChanges, undefined);
    assert.deepEqual(state(created, "Synced"), ["True", "ReconcileSuccess"]);
    assert.equal(ready(created)?.reason, "Available");
    const queue = await env.queue(name);
    assert.equal(queue.attributes.VisibilityTimeout, "45");
    assert.equal(queue.tags.team, "a");
    await env.waitEvent(name, "Normal", "ChangesApproved");
    await env.waitEvent(name, "Normal", "Created");

    // The next reconcile finds the queue as the spec says: nothing pending, nothing written.
    obj = await reconcileNow(name);
    assert.deepEqual(state(obj, "ChangesPending"), ["False", "NoChangesPending"]);
    assert.deepEqual(writesOf(name, approved), calls);
    assert.deepEqual(
      state(created, "ChangesPending"),
      ["False", "NoChangesPending"],
      "the condition as the creation left it: under Approve it is there, False",
    );
  });
});
