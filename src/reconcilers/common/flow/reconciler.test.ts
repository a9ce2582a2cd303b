import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { Registry } from "prom-client";
import {
  FINALIZER,
  getCondition,
  PAUSED_ANNOTATION,
  POLL_INTERVAL_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
} from "../../../api/v1/index.ts";
import { AwsError, NoPermitYetError } from "../../../aws/errors.ts";
import { currentPollScope } from "../../../aws/poll-scope.ts";
import { RateBudget } from "../../../aws/rate-budget.ts";
import { TerminalError, type ReconcileContext } from "../../../runtime/controller/reconciler.ts";
import type { EventRecorder } from "../../../runtime/events/recorder.ts";
import { ApiError } from "../../../runtime/kube/errors.ts";
import { DelayingQueue } from "../../../runtime/workqueue/index.ts";
import { silentLogger } from "../../../runtime/logging.ts";
import { FakeClock } from "../../../runtime/testing/fake-clock.ts";
import { changeSetOf, refusedChange, type Change } from "../changes.ts";
import {
  blocked,
  DependencyNotReadyError,
  type FlowFacts,
  InvalidSpecError,
  type DeleteOutcome,
  type ManagedObject,
  type Observation,
  type ResourceDriver,
} from "../driver.ts";
import {
  ManagedResourceReconciler,
  type ManagedObjectClient,
  type ManagedReconcilerOptions,
} from "./reconciler.ts";
import { DriftRepairMetrics, MANAGED_METRIC_NAMES } from "../metrics.ts";
import { fixedConnector } from "./connector.ts";
import type { KindTraits } from "../kind-traits.ts";
import type { ForeignClaim, OwnerDirectory, OwnerLiveness } from "../ownership.ts";
import { widgetObject, widgetResource } from "../testing/widget.ts";

const unmanaged: ForeignClaim = { owner: undefined, managedByOperator: false, adoptable: true };
/** An observation of resource `x`, foreign for `claim`. */
const foreignX = (claim: ForeignClaim): Observation<Res> => ({
  exists: true,
  resource: { id: "x", state: "ready" },
  ownership: "foreign",
  foreign: claim,
});
/** The install's grant to every namespace (`--adoption=enabled`). */
const ADOPTION_GRANTED = { policy: "enabled", namespaces: [] } as const;
const ownedByOther: ForeignClaim = {
  owner: { uid: "uid-9", namespace: "other", name: "w", kind: "Widget" },
  managedByOperator: true,
  adoptable: true,
};

interface Widget extends ManagedObject {
  status?: ManagedObject["status"] & { widgetId?: string };
}
interface Res {
  id: string;
  state: string;
}

const resource = widgetResource;
const req = { namespace: "ns", name: "w" };

function widget(over: Partial<Widget["spec"]> = {}, status?: Widget["status"], deleting = false): Widget {
  return widgetObject<Widget>({
    metadata: {
      namespace: "ns",
      name: "w",
      uid: "uid-1",
      generation: 3,
      resourceVersion: "10",
      finalizers: [FINALIZER],
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: over,
    status,
  });
}

/** Records every call in order; the object lives in `stored` (what the API server and cache hold). */
class Fakes {
  log: string[] = [];
  events: string[] = [];
  stored: Widget | undefined;
  observation: Observation<Res> = { exists: false };
  deleteOutcome: DeleteOutcome | Error = { done: true };
  ownerLiveness: OwnerLiveness = "gone";
  owners: OwnerDirectory = { liveness: () => this.ownerLiveness };
  createError: Error | undefined;
  syncChanges: Change[] = [];
  /** The changes the flow applied, in order. */
  applied: Change[] = [];
  /** What the kind's references step resolves an object's references to. */
  references: (obj: Widget) => undefined = () => undefined;

  client: ManagedObjectClient<Widget> = {
    get: () => (this.stored ? (Object.freeze(structuredClone(this.stored)) as Widget) : undefined),
    addFinalizer: async (obj) => {
      this.log.push("addFinalizer");
      const w = structuredClone(obj as Widget);
      this.stored = { ...w, metadata: { ...w.metadata, finalizers: [FINALIZER] } };
      return structuredClone(this.stored);
    },
    removeFinalizer: async () => {
      this.log.push("removeFinalizer");
      this.stored = undefined;
      return undefined;
    },
    updateStatus: async (obj) => {
      this.log.push(`updateStatus:${obj.status?.createToken ?? ""}`);
      this.stored = structuredClone(obj);
      return structuredClone(obj);
    },
  };

  traits: KindTraits<Widget> = { noun: "widget", driftSettings: ["tags", "size"], idField: "widgetId" };

  driver: ResourceDriver<Widget, Res> = {
    observe: async () => {
      this.log.push("observe");
      return this.observation;
    },
    create: async (_o, token) => {
      this.log.push(`create:${token}`);
      if (this.createError) throw this.createError;
      const r = { id: "wid-1", state: "ready" };
      this.observation = { exists: true, resource: r, ownership: "owned" };
      return r;
    },
    // Adoption is an update of a foreign resource: the log tells the two apart.
    plan: async (_o, observed) => {
      this.log.push(observed.ownership === "foreign" ? "adopt" : "sync");
      const groups = new Map<string, Change[]>();
      for (const c of this.syncChanges) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
      return changeSetOf(
        [...groups].map(([group, changes]) => [
          changes,
          async (subset: readonly Change[]) => {
            this.log.push(`apply:${group}`);
            this.applied.push(...subset);
          },
        ]),
      );
    },
    createActions: () => ["widget:CreateWidget"],
    describe: (r) => ({
      status: { widgetId: r.id, state: r.state },
      readiness: {
        ready: r.state === "ready",
        pending: r.state === "pending",
        reason: "Pending",
        message: r.state,
      },
    }),
    observed: (r) => ({ tags: { id: r.id } }),
    delete: async (_o, observed) => {
      this.log.push(`delete:${observed.exists ? "found" : "absent"}`);
      if (this.deleteOutcome instanceof Error) throw this.deleteOutcome;
      return this.deleteOutcome;
    },
  };

  recorder: EventRecorder = {
    event: (_o, type, reason) => {
      this.events.push(`${type}:${reason}`);
    },
  };
}

/** A change of `setting` the widget's plan lists, applied in a group of its own. */
function drift(setting: string, description: string, extra: Partial<Change> = {}): Change {
  return {
    path: `spec.${setting}`,
    setting,
    actions: [`widget:Put${setting}`],
    disruption: "none",
    description,
    group: setting,
    ...extra,
  };
}

/** A change of `setting` the widget's plan refuses (not changed in place). */
function refused(setting: string, description: string): Change {
  return refusedChange({
    path: `spec.${setting}`,
    setting,
    description,
    refusal: { reason: "DriftNotRepaired", message: description },
  });
}

/** The flow over the fakes of `f`, with `opts` replacing any of its options. */
/** The series of counter `name` in `registry`, as `kind/setting` → value. */
async function countsBySetting(registry: Registry, name: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await registry.getSingleMetric(name)?.get())?.values ?? [])
    out[`${String(v.labels.kind)}/${String(v.labels.setting)}`] = v.value;
  return out;
}

function reconcilerFor(
  f: Fakes,
  opts: Partial<ManagedReconcilerOptions<Widget, Res>> = {},
): ManagedResourceReconciler<Widget, Res> {
  return new ManagedResourceReconciler<Widget, Res>({
    resource,
    client: f.client,
    connector: fixedConnector(f.driver, f.traits),
    references: (obj) => f.references(obj),
    recorder: f.recorder,
    clock: new FakeClock(),
    owners: f.owners,
    ...opts,
  });
}

const ctx: ReconcileContext = {
  logger: silentLogger,
  signal: new AbortController().signal,
  reconcileId: "r",
};

function throttled(): AwsError {
  return new AwsError({
    kind: "throttled",
    code: "RequestLimitExceeded",
    service: "ec2",
    operation: "RunInstances",
    message: "slow down",
  });
}

const statusWrites = (f: Fakes): number => f.log.filter((l) => l.startsWith("updateStatus")).length;

describe("ManagedResourceReconciler", () => {
  let f: Fakes;
  let r: ManagedResourceReconciler<Widget, Res>;
  let clock: FakeClock;
  beforeEach(() => {
    f = new Fakes();
    clock = new FakeClock();
    r = reconcilerFor(f, { pollIntervalMs: 60_000, clock });
  });

  it("does nothing for an object that is gone", async () => {
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, []);
  });

  it("adds the finalizer first, records the token before the create, then reports Ready", async () => {
    f.stored = widget();
    f.stored.metadata.finalizers = [];
    const res = await r.reconcile(req, ctx);
    assert.deepEqual(f.log, [
      "addFinalizer",
      "observe",
      "updateStatus:uid-1-1",
      "create:uid-1-1",
      "updateStatus:uid-1-1",
    ]);
    assert.deepEqual(res, { requeueAfter: 60_000, poll: true });
    const st = f.stored?.status;
    assert.equal(st?.widgetId, "wid-1");
    assert.equal(st?.createAttempt, 1);
    assert.equal(st?.observedGeneration, 3);
    assert.equal(getCondition(st?.conditions, "Ready")?.status, "True");
    assert.equal(getCondition(st?.conditions, "Ready")?.observedGeneration, 3);
    assert.equal(getCondition(st?.conditions, "Synced")?.status, "True");
    assert.deepEqual(f.events, ["Normal:Created"]);
  });

  it("makes no write and no create on a second reconcile of an unchanged object", async () => {
    f.stored = widget();
    await r.reconcile(req, ctx);
    f.log = [];
    f.events = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "sync"]);
    assert.deepEqual(f.events, []);
  });

  it("reports repaired drift in one Updated Event and counts each repaired setting once", async () => {
    const registry = new Registry();
    const messages: string[] = [];
    const counted = reconcilerFor(f, {
      recorder: {
        event: (o, type, reason, message) => {
          messages.push(message);
          f.recorder.event(o, type, reason, message);
        },
      },
      driftRepairs: new DriftRepairMetrics(registry, "Widget", f.traits.driftSettings),
    });
    const repairs = (): Promise<Record<string, number>> =>
      countsBySetting(registry, MANAGED_METRIC_NAMES.driftRepairs);
    f.stored = widget();
    await counted.reconcile(req, ctx);
    assert.deepEqual(await repairs(), { "Widget/tags": 0, "Widget/size": 0 }, "every setting starts at 0");

    f.events = [];
    f.syncChanges = [
      drift("tags", "set tag a"),
      drift("tags", "removed tag b"),
      drift("size", "size 1 -> 2"),
    ];
    await counted.reconcile(req, ctx);
    assert.deepEqual(f.events, ["Normal:Updated"]);
    assert.equal(messages.at(-1), "repaired drift: set tag a; removed tag b; size 1 -> 2");
    assert.deepEqual(await repairs(), { "Widget/tags": 1, "Widget/size": 1 });

    f.syncChanges = [];
    await counted.reconcile(req, ctx);
    assert.deepEqual(await repairs(), { "Widget/tags": 1, "Widget/size": 1 }, "no drift, no count");
  });

  it("reports drift left as it is with Synced=False DriftNotRepaired, one Warning and one count per new report", async () => {
    const registry = new Registry();
    const messages: string[] = [];
    const counted = reconcilerFor(f, {
      recorder: {
        event: (o, type, reason, message) => {
          messages.push(message);
          f.recorder.event(o, type, reason, message);
        },
      },
      driftRepairs: new DriftRepairMetrics(registry, "Widget", f.traits.driftSettings, ["disk"]),
    });
    const reports = (): Promise<Record<string, number>> =>
      countsBySetting(registry, MANAGED_METRIC_NAMES.driftReports);
    f.stored = widget();
    await counted.reconcile(req, ctx);
    assert.deepEqual(await reports(), { "Widget/disk": 0 }, "every reported setting starts at 0");

    f.events = [];
    f.syncChanges = [
      drift("tags", "set tag a"),
      refused("disk", "disk /dev/sdf: 20 GiB in the spec, 30 GiB"),
    ];
    await counted.reconcile(req, ctx);
    assert.deepEqual(f.events, ["Normal:Updated", "Warning:DriftNotRepaired"]);
    assert.equal(messages.at(-2), "repaired drift: set tag a", "the report is not a repair");
    const message =
      "drift not repaired (these settings are not changed in place): disk /dev/sdf: 20 GiB in the spec, 30 GiB";
    assert.equal(messages.at(-1), message);
    const synced = getCondition(f.stored.status?.conditions, "Synced");
    assert.deepEqual(
      [synced?.status, synced?.reason, synced?.message],
      ["False", "DriftNotRepaired", message],
    );
    assert.equal(
      getCondition(f.stored.status?.conditions, "Ready")?.status,
      "True",
      "the resource is usable",
    );
    assert.deepEqual(await reports(), { "Widget/disk": 1 });

    // The same drift on the next poll: nothing written, no Event, not counted again.
    f.syncChanges = [refused("disk", "disk /dev/sdf: 20 GiB in the spec, 30 GiB")];
    f.events = [];
    f.log = [];
    await counted.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "sync"]);
    assert.deepEqual(f.events, []);
    assert.deepEqual(await reports(), { "Widget/disk": 1 });

    // Gone: Synced is True again.
    f.syncChanges = [];
    await counted.reconcile(req, ctx);
    assert.equal(getCondition(f.stored.status?.conditions, "Synced")?.status, "True");
    assert.deepEqual(f.events, []);
  });

  it("reuses the recorded token after a crash between the token write and the create", async () => {
    f.stored = widget({}, { createToken: "uid-1-1", createAttempt: 1 });
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("create:uid-1-1"));
  });

  it("refuses a foreign resource unless asked to adopt it", async () => {
    r = reconcilerFor(f, { adoption: ADOPTION_GRANTED });
    f.stored = widget();
    f.observation = foreignX(unmanaged);
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "NotOwned");
    assert.deepEqual(f.events, ["Warning:NotOwned"]);
    assert.ok(!f.log.includes("adopt"));

    f.stored = widget({ adoptExisting: true }, f.stored?.status);
    f.events = [];
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("adopt"));
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
    assert.deepEqual(f.events, ["Normal:Adopted"]);
  });

  it("never adopts a resource another live object owns, even when asked; adopts once that owner is gone", async () => {
    r = reconcilerFor(f, { adoption: ADOPTION_GRANTED });
    f.stored = widget({ adoptExisting: true });
    f.ownerLiveness = "live";
    f.observation = foreignX(ownedByOther);
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    const refused = getCondition(f.stored?.status?.conditions, "Ready");
    assert.equal(refused?.reason, "OwnedByAnotherObject");
    assert.match(refused?.message ?? "", /Widget other\/w/);
    assert.deepEqual(f.events, ["Warning:OwnedByAnotherObject"]);
    assert.ok(!f.log.includes("adopt") && !f.log.includes("sync"), f.log.join(","));

    f.ownerLiveness = "gone";
    f.events = [];
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("adopt"));
    assert.deepEqual(f.events, ["Normal:Adopted"]);
  });

  it("without a grant refuses what it did not leave itself, with no AWS call, and takes back what its namespace left", async () => {
    f.stored = widget({ adoptExisting: true });
    for (const claim of [unmanaged, ownedByOther]) {
      f.observation = foreignX(claim);
      f.log = [];
      f.events = [];
      await assert.rejects(r.reconcile(req, ctx), TerminalError);
      const refused = getCondition(f.stored?.status?.conditions, "Ready");
      assert.deepEqual([refused?.status, refused?.reason], ["False", "AdoptionNotAllowed"]);
      assert.match(refused?.message ?? "", /--adoption=enabled .*--adoption-namespaces=ns/);
      assert.deepEqual(f.events, ["Warning:AdoptionNotAllowed"]);
      assert.deepEqual(f.log, ["observe", "updateStatus:"], "observed, nothing adopted");
    }

    f.observation = foreignX({
      ...ownedByOther,
      owner: { uid: "uid-9", namespace: "ns", name: "old", kind: "Widget" },
    });
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("adopt"));
  });

  it("adopts with the install's grant only in the namespaces it lists", async () => {
    f.stored = widget({ adoptExisting: true });
    f.observation = foreignX(unmanaged);
    r = reconcilerFor(f, { adoption: { policy: "disabled", namespaces: ["other"] } });
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "AdoptionNotAllowed");
    r = reconcilerFor(f, { adoption: { policy: "disabled", namespaces: ["other", "ns"] } });
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("adopt"));
  });

  it("lets the AwsAccount the object uses decide, whatever the install grants", async () => {
    const through = (adoption: "Allowed" | "Disallowed") =>
      reconcilerFor(f, {
        adoption: ADOPTION_GRANTED,
        connector: {
          traits: f.traits,
          connect: async () => ({
            driver: f.driver,
            account: {
              name: "tenant",
              accountId: "111111111111",
              adoption,
              aws: { client: () => assert.fail("unused") },
            },
          }),
        },
      });
    f.stored = widget({ adoptExisting: true });
    f.observation = foreignX(unmanaged);
    await assert.rejects(through("Disallowed").reconcile(req, ctx), TerminalError);
    const refused = getCondition(f.stored?.status?.conditions, "Ready");
    assert.equal(refused?.reason, "AdoptionNotAllowed");
    assert.match(refused?.message ?? "", /AwsAccount tenant.*spec\.adoption: Allowed/);
    assert.ok(!f.log.includes("adopt"));
    await through("Allowed").reconcile(req, ctx);
    assert.ok(f.log.includes("adopt"));
  });

  it("records when the token was written, and renews that time only for a create retried much later", async () => {
    const clock = new FakeClock(Date.parse("2026-03-01T10:00:00Z"));
    r = reconcilerFor(f, { clock });
    f.stored = widget();
    f.createError = new Error("create failed");
    await assert.rejects(r.reconcile(req, ctx));
    assert.equal(f.stored?.status?.createRequestedAt, "2026-03-01T10:00:00.000Z");
    f.log = [];
    await clock.advance(60_000);
    await assert.rejects(r.reconcile(req, ctx));
    assert.deepEqual(f.log, ["observe", "create:uid-1-1"], "a prompt retry writes nothing before the create");
    f.log = [];
    await clock.advance(5 * 60_000);
    await assert.rejects(r.reconcile(req, ctx));
    assert.deepEqual(f.log, ["observe", "updateStatus:uid-1-1", "create:uid-1-1"]);
    assert.equal(f.stored?.status?.createRequestedAt, "2026-03-01T10:06:00.000Z");
    assert.equal(f.stored?.status?.createToken, "uid-1-1", "the token itself is kept");
  });

  it("dates a create in flight from its own request, also when it follows a terminal failure and a spec fix", async () => {
    for (const fixedAfterMs of [60_000, 10 * 60_000]) {
      f = new Fakes();
      const clock = new FakeClock(Date.parse("2026-03-01T10:00:00Z"));
      r = reconcilerFor(f, { clock });
      f.stored = widget();
      f.createError = new InvalidSpecError("BadSpec", "the spec cannot work");
      await assert.rejects(r.reconcile(req, ctx), TerminalError);
      await clock.advance(fixedAfterMs);
      // The spec is fixed; the create is sent again and the operator stops before it answers.
      const fixedAt = clock.now();
      f.stored = { ...f.stored!, metadata: { ...f.stored!.metadata, generation: 4 } };
      f.createError = throttled();
      await assert.rejects(r.reconcile(req, ctx));
      assert.ok(f.log.filter((l) => l.startsWith("create:")).length === 2, "the create was sent again");
      let seen: number | undefined;
      f.driver.observe = async (_o, c) => {
        seen = c.flow.createStartedAt;
        return { exists: false };
      };
      await clock.advance(1000);
      await r.reconcile(req, ctx).catch(() => undefined);
      assert.equal(seen, fixedAt, `the create fixed after ${fixedAfterMs} ms began when it was sent`);
    }
  });

  it("recreates a resource deleted out of band with the next token, or only reports it", async () => {
    f.stored = widget({}, { widgetId: "wid-0", createToken: "uid-1-1", createAttempt: 1 });
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("create:uid-1-2"));
    assert.equal(f.stored?.status?.createAttempt, 2);
    assert.deepEqual(f.events, ["Warning:DeletedOutOfBand", "Normal:Created"]);

    f = new Fakes();
    r = reconcilerFor(f);
    f.stored = widget(
      { onDeletedOutOfBand: "Report" },
      { widgetId: "wid-0", createToken: "uid-1-1", createAttempt: 1 },
    );
    await r.reconcile(req, ctx);
    assert.ok(!f.log.some((l) => l.startsWith("create")));
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "DeletedOutOfBand");
    assert.equal(f.stored?.status?.state, "Missing");
  });

  it("warns about a reported out-of-band deletion once, not on every poll", async () => {
    f.stored = widget(
      { onDeletedOutOfBand: "Report" },
      { widgetId: "wid-0", createToken: "uid-1-1", createAttempt: 1 },
    );
    await r.reconcile(req, ctx);
    assert.deepEqual(f.events, ["Warning:DeletedOutOfBand"]);
    f.log = [];
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000 });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000 });
    assert.deepEqual(f.events, ["Warning:DeletedOutOfBand"]);
    assert.deepEqual(f.log, ["observe", "observe"]);
  });

  it("polls a resource in transition with doubling intervals", async () => {
    f.stored = widget();
    f.observation = { exists: true, resource: { id: "wid-1", state: "pending" }, ownership: "owned" };
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 2000 });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 4000 });
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
  });

  it("caps the transition poll at 30 s and starts at 2 s again once the resource settled", async () => {
    f.stored = widget();
    const pending = {
      exists: true,
      resource: { id: "wid-1", state: "pending" },
      ownership: "owned",
    } as const;
    f.observation = pending;
    const polls: unknown[] = [];
    for (let i = 0; i < 7; i++) polls.push(await r.reconcile(req, ctx));
    assert.deepEqual(
      polls.map((p) => (p as { requeueAfter?: number }).requeueAfter),
      [2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000],
    );
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
    f.observation = pending;
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 2000 }, "the next transition starts short");
  });

  it("takes the transition poll curve from its options", async () => {
    const tuned = new ManagedResourceReconciler({
      resource,
      client: f.client,
      connector: fixedConnector(f.driver, f.traits),
      references: () => undefined,
      recorder: f.recorder,
      clock: new FakeClock(),
      owners: f.owners,
      pollIntervalMs: 60_000,
      pendingInitialMs: 500,
      pendingMaxMs: 1_500,
    });
    f.stored = widget();
    f.observation = { exists: true, resource: { id: "wid-1", state: "pending" }, ownership: "owned" };
    assert.deepEqual(await tuned.reconcile(req, ctx), { requeueAfter: 500 });
    assert.deepEqual(await tuned.reconcile(req, ctx), { requeueAfter: 1_000 });
    assert.deepEqual(await tuned.reconcile(req, ctx), { requeueAfter: 1_500 });
  });

  it("puts steady polls on the period grid when the driver aligns polls, never polls in transition", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 20)); // 20 s past a minute
    const aligned = reconcilerFor(f, {
      connector: fixedConnector(f.driver, { ...f.traits, alignPolls: true }),
      clock,
      pollIntervalMs: 60_000,
    });
    f.stored = widget();
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    assert.deepEqual(
      await aligned.reconcile(req, ctx),
      { requeueAfter: 40_000, poll: true },
      "to the next minute",
    );
    await clock.advance(40_000);
    assert.deepEqual(
      await aligned.reconcile(req, ctx),
      { requeueAfter: 60_000, poll: true },
      "on the grid: a full period",
    );
    await clock.advance(45_000);
    assert.deepEqual(
      await aligned.reconcile(req, ctx),
      { requeueAfter: 75_000, poll: true },
      "at least half a period away",
    );
    f.observation = { exists: true, resource: { id: "wid-1", state: "pending" }, ownership: "owned" };
    assert.deepEqual(await aligned.reconcile(req, ctx), { requeueAfter: 2000 });
  });

  it("says so when deletion left a resource that is not the object's own", async () => {
    f.stored = widget({}, undefined, true);
    f.deleteOutcome = {
      done: true,
      leftInPlace: "the widget is not owned by this object and was left in place",
    };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.events, ["Normal:Released"]);
    assert.equal(f.log.at(-1), "removeFinalizer");
  });

  it("observes once per deletion pass and hands that observation to the driver's delete", async () => {
    f.stored = widget({}, { widgetId: "wid-1" }, true);
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    f.deleteOutcome = { done: false, message: "terminating" };
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log.slice(0, 2), ["observe", "delete:found"]);
    f.log = [];
    f.observation = { exists: false };
    f.deleteOutcome = { done: true };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, ["observe", "delete:absent", "removeFinalizer"]);
  });

  it("neither creates nor takes the resource for deleted while one may still appear", async () => {
    f.stored = widget({}, { widgetId: "wid-0", createToken: "uid-1-1", createAttempt: 1 });
    f.observation = { exists: false, appearing: "wid-0 was created moments ago and is not listed yet" };
    // An expected wait, not an error: looked at again on the transition curve (2 s, 4 s, ...).
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 2000 });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 4000 });
    assert.ok(!f.log.some((l) => l.startsWith("create")), f.log.join(","));
    assert.deepEqual(f.events, []);
    assert.equal(statusWrites(f), 0, "nothing is recorded on the object");
  });

  it("clears every field the driver describes, and only those, before recreating", async () => {
    f.stored = widget({}, { widgetId: "wid-0", state: "gone", createToken: "uid-1-1", createAttempt: 1 });
    f.createError = new Error("create failed");
    await assert.rejects(r.reconcile(req, ctx));
    const st = f.stored?.status;
    assert.equal(st?.widgetId, undefined);
    assert.equal(st?.state, undefined);
    assert.equal(st?.createToken, "uid-1-2");
    assert.equal(st?.createAttempt, 2);
  });

  it("leaves AWS alone and releases the object under deletionPolicy Retain", async () => {
    f.stored = widget({ deletionPolicy: "Retain" }, undefined, true);
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, ["removeFinalizer"]);
    assert.deepEqual(f.events, ["Normal:Retained"]);
  });

  it("polls a deletion in progress, then releases the finalizer", async () => {
    f.stored = widget({}, { widgetId: "wid-1" }, true);
    f.deleteOutcome = { done: false, state: "shutting-down", message: "terminating" };
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 2000 });
    assert.equal(f.stored?.status?.state, "shutting-down");
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "Deleting");
    f.deleteOutcome = { done: true };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.equal(f.log.at(-1), "removeFinalizer");
  });

  it("reports a blocked deletion and looks again with a bounded backoff (not terminal)", async () => {
    f.stored = widget({}, { widgetId: "wid-1" }, true);
    f.deleteOutcome = blocked("BucketNotEmpty", "the bucket holds 1 object");
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 5000 });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 10_000 });
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "BucketNotEmpty");
    assert.deepEqual(f.events, ["Warning:BucketNotEmpty", "Warning:BucketNotEmpty"]);
    assert.ok(!f.log.includes("removeFinalizer"));
    f.deleteOutcome = { done: true };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.equal(f.log.at(-1), "removeFinalizer");
  });

  it("turns a terminal AWS error into a TerminalError with a stable condition and one Warning", async () => {
    f.stored = widget();
    f.createError = new AwsError({
      kind: "terminal",
      code: "InvalidAMIID.NotFound",
      service: "ec2",
      operation: "RunInstances",
      message: "The AMI does not exist",
    });
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    const ready = getCondition(f.stored?.status?.conditions, "Ready");
    assert.equal(ready?.reason, "InvalidAMIID_NotFound");
    assert.equal(ready?.message, "RunInstances: The AMI does not exist");
    assert.deepEqual(f.events, ["Warning:InvalidAMIID_NotFound"]);
    const writes = f.log.filter((l) => l.startsWith("updateStatus")).length;
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(
      f.log.filter((l) => l.startsWith("updateStatus")).length,
      writes,
      "the same failure writes nothing new",
    );
  });

  it("looks again at an AccessDenied on the access backoff, with its reason and advice, until a reconcile succeeds", async () => {
    f.stored = widget();
    r = reconcilerFor(f, {
      pollIntervalMs: 60_000,
      clock,
      iam: [{ action: "iam:PassRole", calls: ["RunInstances"] }, { action: "ec2:RunInstances" }],
    });
    f.createError = new AwsError({
      kind: "terminal",
      code: "UnauthorizedOperation",
      service: "ec2",
      operation: "RunInstances",
      message: "EC2 RunInstances failed with UnauthorizedOperation: not authorized",
      access: "denied",
    });
    const delays: unknown[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await r.reconcile(req, ctx);
      delays.push(res);
      await clock.advance(res.requeueAfter ?? 0);
    }
    const min = 60_000;
    assert.deepEqual(
      delays,
      [1, 2, 4, 8, 16, 32, 60].map((m) => ({ requeueAfter: m * min })),
      "the poll period doubling up to an hour, never a TerminalError",
    );
    const ready = getCondition(f.stored?.status?.conditions, "Ready");
    assert.equal(ready?.reason, "UnauthorizedOperation");
    assert.match(
      ready?.message ?? "",
      /^RunInstances: EC2 RunInstances failed with UnauthorizedOperation: not authorized; /,
    );
    assert.match(
      ready?.message ?? "",
      /the operator's IAM role needs ec2:RunInstances: config\/iam\/policy\.json allows it/,
    );
    assert.match(ready?.message ?? "", /tried again after 1m0s, then at doubling intervals up to 1h0m0s/);
    assert.equal(f.events.length, 7);
    assert.ok(f.events.every((e) => e === "Warning:UnauthorizedOperation"));

    f.createError = undefined; // IAM fixed: nothing about the object changed
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
    f.stored = widget(); // the same key, created anew
    f.observation = { exists: false };
    f.createError = new AwsError({
      kind: "terminal",
      code: "AccessDenied",
      service: "ec2",
      operation: "RunInstances",
      message: "x",
      access: "denied",
    });
    assert.deepEqual(
      await r.reconcile(req, ctx),
      { requeueAfter: min },
      "a new failure starts the curve afresh",
    );
  });

  it("keeps every step of the access backoff when a poll already due or an event comes between its retries", async () => {
    // The controller's queue over the fake clock: a key already waiting for an earlier time keeps
    // it, and a key added while it is being reconciled is reconciled again right after.
    const queue = new DelayingQueue<string>({ clock });
    const key = "ns/w";
    let denied = false;
    let whileRunning: (() => void) | undefined;
    const observe = f.driver.observe;
    f.driver.observe = async (o, c) => {
      whileRunning?.();
      whileRunning = undefined;
      if (denied) {
        throw new AwsError({
          kind: "terminal",
          code: "AccessDenied",
          service: "ec2",
          operation: "DescribeInstances",
          message: "EC2 DescribeInstances failed with AccessDenied: not authorized",
          access: "denied",
        });
      }
      return await observe(o, c);
    };
    r = reconcilerFor(f, { pollIntervalMs: 5000, clock });
    f.stored = widget();
    const start = clock.now();
    /** Each reconcile, as `<seconds since the start>:<seconds of its requeue>`. */
    const looks: string[] = [];
    /** Takes the key the queue hands out and reconciles it, as a worker does. */
    const work = async (): Promise<void> => {
      const got = await queue.get();
      assert.deepEqual(got, { item: key, shutdown: false });
      const res = await r.reconcile(req, ctx);
      looks.push(`${(clock.now() - start) / 1000}:${(res.requeueAfter ?? 0) / 1000}`);
      if (res.requeueAfter !== undefined) queue.addAfter(key, res.requeueAfter);
      queue.done(key);
    };
    /** Moves the clock to the key's next due time and reconciles it while it is ready. */
    const tick = async (): Promise<void> => {
      const due = clock.nextDue();
      assert.ok(due !== undefined, "a reconcile is scheduled");
      await clock.advance(due - clock.now());
      while (queue.len() > 0) await work();
    };

    queue.add(key);
    await work(); // 0 s: created and Ready; its steady poll is due at 5 s
    denied = true; // IAM no longer allows a call every reconcile makes
    await clock.advance(4000);
    queue.add(key); // 4 s: a spec change
    await work(); // refused: retried after 5 s, and the poll at 5 s stays due
    await tick(); // 5 s: the poll, refused before its retry: no step
    whileRunning = () => queue.add(key); // an event arrives during the next reconcile
    await tick(); // 9 s: the retry, the next step; the event's reconcile right after it: no step
    await tick(); // 19 s
    await tick(); // 39 s
    await clock.advance(11_000);
    denied = false; // 50 s: IAM allows the call again
    await tick(); // 79 s: the retry the ladder scheduled finds it allowed
    assert.deepEqual(looks, ["0:5", "4:5", "5:4", "9:10", "9:10", "19:20", "39:40", "79:5"]);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
  });

  it("looks again shortly, without an error, when a write meets a newer version (stale cache)", async () => {
    f.stored = widget();
    f.client.updateStatus = async () => {
      throw new ApiError({ status: 409, reason: "Conflict", message: "the object has been modified" });
    };
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 1000 });
    assert.ok(!f.log.some((l) => l.startsWith("create")), "nothing is created on a stale read");
  });

  it("rethrows retryable AWS errors for a rate-limited retry without touching the object while a retry can heal them", async () => {
    f.stored = widget();
    f.createError = throttled();
    const isRetry = (err: unknown): boolean => err instanceof AwsError && !(err instanceof TerminalError);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    const writes = statusWrites(f);
    assert.equal(writes, 1, "only the token, before the create");
    // Many quick failures are not enough, nor is a long time with one failure at each end.
    for (let i = 0; i < 5; i++) await assert.rejects(r.reconcile(req, ctx), isRetry);
    await clock.advance(29_000);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    assert.equal(statusWrites(f), writes);
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced"), undefined);
    // A success ends the streak: the next failure starts counting afresh.
    f.createError = undefined;
    await r.reconcile(req, ctx);
    const healed = statusWrites(f);
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    f.driver.plan = async () => {
      throw throttled();
    };
    await clock.advance(60_000);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    await clock.advance(60_000);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    assert.equal(statusWrites(f), healed, "two failures, however far apart, are not yet reported");
    assert.deepEqual(f.events, ["Normal:Created"]);
  });

  it("gives the worker back until the booked slot when the rate budget deferred the create", async () => {
    f.stored = widget();
    f.createError = new NoPermitYetError("ec2", "RunInstances", "RunInstances", 4500);
    // However often it is deferred, and for however long, it is never a failure on the object.
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 4500 });
      await clock.advance(10_000);
    }
    assert.deepEqual(
      f.log.filter((l) => l.startsWith("updateStatus")),
      ["updateStatus:uid-1-1"],
      "the token only",
    );
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced"), undefined);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.reason, "Creating");
    assert.deepEqual(f.events, []);
    f.createError = undefined;
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
    assert.equal(f.log.filter((l) => l === "create:uid-1-1").length, 6, "the same token each time");
    assert.equal(f.log.filter((l) => l === "observe").length, 1, "an unchanged object is not observed again");
  });

  it("observes again before a deferred create once the object changed or the slot is long past", async () => {
    f.stored = widget();
    f.createError = new NoPermitYetError("ec2", "RunInstances", "RunInstances", 1000);
    await r.reconcile(req, ctx);
    if (f.stored !== undefined) f.stored.metadata.resourceVersion = "11";
    await r.reconcile(req, ctx);
    assert.deepEqual(
      f.log.filter((l) => l === "observe" || l.startsWith("create")),
      ["observe", "create:uid-1-1", "observe", "create:uid-1-1"],
    );
    await clock.advance(1000 + 30_001);
    await r.reconcile(req, ctx);
    assert.equal(f.log.filter((l) => l === "observe").length, 3, "too late to resume without looking");
  });

  it("records a retryable failure once it persists (3 failed reconciles over 30 s), and clears it on success", async () => {
    f.stored = widget();
    f.createError = throttled();
    const isRetry = (err: unknown): boolean => err instanceof AwsError && !(err instanceof TerminalError);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    await clock.advance(10_000);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    await clock.advance(20_000);
    const before = statusWrites(f);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    assert.equal(statusWrites(f), before + 1);
    const synced = getCondition(f.stored?.status?.conditions, "Synced");
    assert.equal(synced?.status, "False");
    assert.equal(synced?.reason, "RequestLimitExceeded");
    // Once recorded, the same failure again writes nothing new.
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    assert.equal(statusWrites(f), before + 1);
    assert.deepEqual(f.events, []);
    f.createError = undefined;
    await r.reconcile(req, ctx);
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced")?.status, "True");
  });

  it("does not carry a failure streak over a terminal error or the object's removal", async () => {
    f.stored = widget();
    f.createError = throttled();
    const isRetry = (err: unknown): boolean => err instanceof AwsError && !(err instanceof TerminalError);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    const kept = f.stored;
    f.stored = undefined;
    assert.deepEqual(await r.reconcile(req, ctx), {});
    f.stored = kept;
    await clock.advance(30_000);
    const before = statusWrites(f);
    await assert.rejects(r.reconcile(req, ctx), isRetry);
    assert.equal(statusWrites(f), before, "the streak started again after the object was gone");
  });
});

describe("ManagedResourceReconciler: the connector", () => {
  it("reconciles with the driver the connector returns and records the account ID in status", async () => {
    const f = new Fakes();
    f.stored = widget();
    const connected: string[] = [];
    const r = reconcilerFor(f, {
      connector: {
        traits: f.traits,
        connect: async (obj) => {
          connected.push(obj.metadata.name ?? "");
          return {
            driver: f.driver,
            account: {
              name: "team-a",
              accountId: "111111111111",
              aws: { client: () => assert.fail("unused") },
            },
          };
        },
      },
    });
    await r.reconcile(req, ctx);
    assert.deepEqual(connected, ["w"]);
    assert.equal(f.stored?.status?.accountId, "111111111111");
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
  });

  it("reports an account the connector refuses like any terminal failure, before the finalizer", async () => {
    const f = new Fakes();
    f.stored = widget();
    f.stored.metadata.finalizers = [];
    const r = reconcilerFor(f, {
      connector: {
        traits: f.traits,
        connect: async () => {
          throw new InvalidSpecError("AccountNotAllowed", "the namespace may not use AwsAccount team-a");
        },
      },
    });
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.ok(!f.log.includes("addFinalizer"), f.log.join(","));
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced")?.reason, "AccountNotAllowed");
    assert.deepEqual(f.events, ["Warning:AccountNotAllowed"]);
  });
});

describe("ManagedResourceReconciler: the references step", () => {
  let f: Fakes;
  beforeEach(() => {
    f = new Fakes();
    f.stored = widget();
  });
  /** The flow over `f` with a driver whose references are a string, logging what it is handed. */
  const withRefs = (resolve: (obj: Widget) => string): ManagedResourceReconciler<Widget, Res, string> => {
    const driver: ResourceDriver<Widget, Res, string> = {
      ...f.driver,
      create: async (o, token, c, refs) => {
        f.log.push(`refs:${refs}`);
        return await f.driver.create(o, token, c, undefined);
      },
      plan: async (o, observed, c, refs) => {
        f.log.push(`refs:${refs}`);
        return await f.driver.plan(o, observed, c, undefined);
      },
      createActions: (o, refs) => [`widget:CreateWidget:${refs}`],
    };
    return new ManagedResourceReconciler<Widget, Res, string>({
      resource,
      client: f.client,
      connector: fixedConnector(driver, f.traits),
      references: (obj) => {
        f.log.push("resolve");
        return resolve(obj);
      },
      recorder: f.recorder,
      clock: new FakeClock(),
      owners: f.owners,
    });
  };

  it("resolves once per reconcile, before observing, and hands the result to create and plan", async () => {
    const r = withRefs(() => "arn:dlq");
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, [
      "resolve",
      "observe",
      "updateStatus:uid-1-1",
      "refs:arn:dlq",
      "create:uid-1-1",
      "updateStatus:uid-1-1",
    ]);
    f.log = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["resolve", "observe", "refs:arn:dlq", "sync"]);
  });

  it("hands the result to createActions for a create held for approval", async () => {
    f.stored = widget({ changePolicy: "Approve" });
    await withRefs(() => "arn:dlq").reconcile(req, ctx);
    assert.deepEqual(f.log, ["resolve", "observe", "updateStatus:"]);
    assert.deepEqual(
      f.stored?.status?.pendingChanges?.changes?.flatMap((c) => c.actions),
      ["widget:CreateWidget:arn:dlq"],
    );
  });

  it("waits for a reference that is not ready before a call to AWS, and fails on one that can never serve", async () => {
    let error: Error = new DependencyNotReadyError("DeadLetterQueueNotReady", "waiting for the queue dlq");
    const r = withRefs(() => {
      throw error;
    });
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["resolve", "updateStatus:"]);
    const ready = getCondition(f.stored?.status?.conditions, "Ready");
    assert.deepEqual([ready?.status, ready?.reason], ["False", "DeadLetterQueueNotReady"]);
    f.log = [];
    error = new InvalidSpecError("DeadLetterQueueMismatch", "a queue cannot be its own dead-letter queue");
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.deepEqual(f.log, ["resolve", "updateStatus:"]);
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced")?.reason, "DeadLetterQueueMismatch");
  });

  it("resolves nothing for an object that only observes or is being deleted", async () => {
    const r = withRefs(() => assert.fail("resolved"));
    f.stored = widget({ managementPolicy: "ObserveOnly" });
    f.stored.metadata.finalizers = [];
    await r.reconcile(req, ctx);
    f.stored = widget({}, undefined, true);
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "updateStatus:", "observe", "delete:found", "removeFinalizer"]);
  });
});

describe("ManagedResourceReconciler: the outputs hook", () => {
  const owned: Observation<Res> = {
    exists: true,
    resource: { id: "wid-1", state: "ready" },
    ownership: "owned",
  };
  const CONFLICT =
    "ConfigMap out exists and is not this object's (it has no controller); it is left as it is";

  function setup(answer: () => string | undefined): {
    f: Fakes;
    r: ManagedResourceReconciler<Widget, Res>;
    seen: { widgetId: string | undefined; reported: boolean }[];
  } {
    const f = new Fakes();
    f.stored = widget({ writeOutputsTo: { configMapName: "out" } }, { widgetId: "wid-1" });
    f.observation = owned;
    const seen: { widgetId: string | undefined; reported: boolean }[] = [];
    const r = reconcilerFor(f, {
      outputs: {
        sync: async (obj, c) => {
          f.log.push("outputs");
          seen.push({ widgetId: obj.status?.widgetId, reported: c.conflictReported });
          const message = answer();
          return message === undefined ? undefined : { reason: "OutputConflict", message };
        },
      },
    });
    return { f, r, seen };
  }

  it("writes the outputs after describing the resource and before the status write", async () => {
    const { f, r, seen } = setup(() => undefined);
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "sync", "outputs", "updateStatus:"]);
    assert.deepEqual(seen, [{ widgetId: "wid-1", reported: false }]);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
  });

  it("reports a conflict as Ready=False and Synced=False with one Warning Event, then writes nothing while it lasts", async () => {
    let conflict: string | undefined = CONFLICT;
    const { f, r, seen } = setup(() => conflict);
    await r.reconcile(req, ctx);
    for (const type of ["Ready", "Synced"]) {
      const c = getCondition(f.stored?.status?.conditions, type);
      assert.deepEqual([c?.status, c?.reason, c?.message], ["False", "OutputConflict", CONFLICT], type);
    }
    assert.deepEqual(f.events, ["Warning:OutputConflict"]);

    const writes = statusWrites(f);
    await r.reconcile(req, ctx);
    assert.equal(statusWrites(f), writes, "no status write");
    assert.deepEqual(f.events, ["Warning:OutputConflict"], "no second Event");
    assert.deepEqual(
      seen.map((s) => s.reported),
      [false, true],
    );

    conflict = undefined;
    await r.reconcile(req, ctx);
    assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True");
    assert.equal(getCondition(f.stored?.status?.conditions, "Synced")?.reason, "ReconcileSuccess");
  });

  it("leaves the status unwritten when writing the outputs fails, and hands the error to the controller", async () => {
    const { f, r } = setup(() => {
      throw new ApiError({
        status: 500,
        reason: "InternalError",
        message: "etcd",
        method: "PUT",
        path: "/api/v1/x",
      });
    });
    await assert.rejects(r.reconcile(req, ctx), ApiError);
    assert.equal(statusWrites(f), 0);
  });
});

describe("ManagedResourceReconciler with managementPolicy ObserveOnly", () => {
  let f: Fakes;
  let r: ManagedResourceReconciler<Widget, Res>;
  beforeEach(() => {
    f = new Fakes();
    r = reconcilerFor(f, { pollIntervalMs: 60_000 });
    // A release keeps the object (it is not being deleted): the finalizer goes, the object stays.
    f.client.removeFinalizer = async (obj) => {
      f.log.push("removeFinalizer");
      const w = structuredClone(obj as Widget);
      f.stored = { ...w, metadata: { ...w.metadata, finalizers: [] } };
      return structuredClone(f.stored);
    };
  });
  const observeOnly = (status?: Widget["status"], deleting = false): Widget => {
    const w = widget({ managementPolicy: "ObserveOnly" }, status, deleting);
    w.metadata.finalizers = [];
    return w;
  };

  it("only observes an existing resource and reports it with its tags, Ready=True", async () => {
    f.stored = observeOnly();
    f.observation = foreignX(unmanaged);
    const res = await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "updateStatus:"]);
    assert.deepEqual(res, { requeueAfter: 60_000, poll: true });
    const st = f.stored.status;
    assert.equal(st?.widgetId, "x");
    assert.deepEqual(st?.observedTags, { id: "x" });
    assert.equal(getCondition(st?.conditions, "Ready")?.status, "True");
    assert.equal(getCondition(st?.conditions, "Synced")?.status, "True");
    assert.deepEqual(f.events, []);
    f.log = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe"], "an unchanged resource writes nothing");
  });

  it("never adopts, even with adoptExisting, nor refuses a resource another object owns", async () => {
    f.stored = widget({ managementPolicy: "ObserveOnly", adoptExisting: true });
    f.stored.metadata.finalizers = [];
    f.ownerLiveness = "live";
    f.observation = foreignX(ownedByOther);
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "updateStatus:"]);
    assert.equal(getCondition(f.stored.status?.conditions, "Ready")?.status, "True");
  });

  it("reports NotFound for a missing resource, clearing what was described, and never creates", async () => {
    f.stored = observeOnly({ widgetId: "x", state: "ready", observedTags: { a: "b" } });
    f.observation = { exists: false };
    const res = await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "updateStatus:"]);
    assert.deepEqual(res, { requeueAfter: 60_000, poll: true });
    const st = f.stored.status;
    assert.equal(st?.widgetId, undefined);
    assert.equal(st?.observedTags, undefined);
    assert.equal(st?.state, "NotFound");
    const ready = getCondition(st?.conditions, "Ready");
    assert.deepEqual([ready?.status, ready?.reason], ["False", "NotFound"]);
    assert.deepEqual(f.events, []);
  });

  it("is Ready at the steady poll whatever state the resource is in", async () => {
    f.stored = observeOnly();
    f.observation = { exists: true, resource: { id: "x", state: "pending" }, ownership: "owned" };
    const res = await r.reconcile(req, ctx);
    assert.deepEqual(res, { requeueAfter: 60_000, poll: true });
    assert.equal(f.stored.status?.state, "pending");
    assert.equal(getCondition(f.stored.status?.conditions, "Ready")?.status, "True");
  });

  it("releases a finalizer left from Full without deleting, then observes", async () => {
    f.stored = widget({ managementPolicy: "ObserveOnly" }, { widgetId: "x" });
    f.observation = { exists: true, resource: { id: "x", state: "ready" }, ownership: "owned" };
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["removeFinalizer", "observe", "updateStatus:"]);
    assert.deepEqual(f.events, ["Normal:Released"]);
    assert.deepEqual(f.stored.metadata.finalizers, []);
  });

  it("releases the finalizer of an object being deleted and touches nothing in AWS", async () => {
    f.stored = widget({ managementPolicy: "ObserveOnly" }, { widgetId: "x" }, true);
    f.client.removeFinalizer = async () => {
      f.log.push("removeFinalizer");
      f.stored = undefined;
      return undefined;
    };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, ["removeFinalizer"]);
    assert.deepEqual(f.events, ["Normal:Released"]);
  });

  it("does nothing for an object being deleted without the finalizer", async () => {
    f.stored = observeOnly({ widgetId: "x" }, true);
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, []);
  });

  it("writes the outputs of a resource that exists, never of a missing one", async () => {
    const synced: (string | undefined)[] = [];
    const withOutputs = reconcilerFor(f, {
      pollIntervalMs: 60_000,
      outputs: {
        sync: async (obj) => {
          f.log.push("outputs");
          synced.push(obj.status?.widgetId);
          return undefined;
        },
      },
    });
    f.stored = observeOnly();
    f.observation = foreignX(unmanaged);
    await withOutputs.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "outputs", "updateStatus:"]);
    assert.deepEqual(synced, ["x"], "with the status just observed");
    f.log = [];
    f.observation = { exists: false };
    await withOutputs.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "updateStatus:"]);
  });

  it("takes the resource over under the adoption rules once switched to Full", async () => {
    f.stored = observeOnly({ widgetId: "x", observedTags: { id: "x" } });
    f.stored.spec.managementPolicy = "Full";
    f.stored.spec.adoptExisting = true;
    f.observation = foreignX(unmanaged);
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(
      getCondition(f.stored.status?.conditions, "Ready")?.reason,
      "AdoptionNotAllowed",
      "not granted",
    );
    assert.ok(!f.log.includes("adopt"));
    r = reconcilerFor(f, { pollIntervalMs: 60_000, adoption: ADOPTION_GRANTED });
    f.stored.spec.adoptExisting = false;
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(getCondition(f.stored.status?.conditions, "Ready")?.reason, "NotOwned");
    f.stored.spec.adoptExisting = true;
    f.log = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "adopt", "updateStatus:"]);
    assert.equal(f.stored.status?.observedTags, undefined, "a managed object reports no observed tags");
    assert.ok(f.events.includes("Normal:Adopted"));
  });
});

describe("ManagedResourceReconciler with the paused annotation", () => {
  const paused = (w: Widget): Widget => {
    w.metadata.annotations = { [PAUSED_ANNOTATION]: "true" };
    return w;
  };
  /** A connector that records each connection: a paused object is never connected. */
  const counting = (f: Fakes, connected: string[]): Partial<ManagedReconcilerOptions<Widget, Res>> => ({
    connector: {
      traits: f.traits,
      connect: async (obj) => {
        connected.push(obj.metadata.name ?? "");
        return { driver: f.driver, account: undefined };
      },
    },
  });

  it("connects nothing, adds no finalizer and reports Synced=False Paused with one Event", async () => {
    const f = new Fakes();
    const connected: string[] = [];
    const r = reconcilerFor(f, { pollIntervalMs: 60_000, ...counting(f, connected) });
    f.stored = paused(widget());
    f.stored.metadata.finalizers = [];
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, ["updateStatus:"]);
    assert.deepEqual(connected, []);
    const synced = getCondition(f.stored.status?.conditions, "Synced");
    assert.equal(synced?.status, "False");
    assert.equal(synced?.reason, "Paused");
    assert.equal(synced?.observedGeneration, 3);
    assert.match(synced?.message ?? "", /compute\.cloud\.com\/paused annotation is "true"/);
    assert.equal(getCondition(f.stored.status?.conditions, "Ready"), undefined);
    assert.deepEqual(f.events, ["Normal:Paused"]);
    assert.deepEqual(f.stored.metadata.finalizers, []);

    f.log = [];
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, [], "a second paused reconcile writes nothing");
    assert.deepEqual(f.events, ["Normal:Paused"]);
  });

  it("keeps Ready as it was and resumes with one observation once the annotation is gone", async () => {
    const f = new Fakes();
    const r = reconcilerFor(f, { pollIntervalMs: 60_000 });
    f.stored = widget();
    await r.reconcile(req, ctx);
    f.stored = paused(f.stored);
    f.log = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["updateStatus:uid-1-1"]);
    assert.equal(getCondition(f.stored.status?.conditions, "Ready")?.status, "True");
    f.stored.metadata.annotations = { [PAUSED_ANNOTATION]: "false" };
    f.log = [];
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
    assert.deepEqual(f.log, ["observe", "sync", "updateStatus:uid-1-1"]);
    assert.equal(getCondition(f.stored.status?.conditions, "Synced")?.reason, "ReconcileSuccess");
  });

  it("holds a deletion with its finalizer and says so, then deletes once resumed", async () => {
    const f = new Fakes();
    const r = reconcilerFor(f, { pollIntervalMs: 60_000 });
    f.stored = paused(widget({}, undefined, true));
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(f.log, ["updateStatus:"]);
    assert.deepEqual(f.stored.metadata.finalizers, [FINALIZER]);
    assert.match(
      getCondition(f.stored.status?.conditions, "Synced")?.message ?? "",
      /^the deletion waits: .*keeps its finalizer until the annotation is removed$/,
    );
    assert.deepEqual(f.events, ["Normal:Paused"]);
    f.stored.metadata.annotations = {};
    f.log = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.log, ["observe", "delete:found", "removeFinalizer"]);
  });
});

describe("ManagedResourceReconciler with the timing annotations", () => {
  const owned: Observation<Res> = {
    exists: true,
    resource: { id: "wid-1", state: "ready" },
    ownership: "owned",
  };
  /** Fakes whose driver records the flow facts of each observation, over a Ready object. */
  function timing(clock = new FakeClock(), opts: Partial<ManagedReconcilerOptions<Widget, Res>> = {}) {
    const f = new Fakes();
    const flows: FlowFacts[] = [];
    const observe = f.driver.observe;
    f.driver.observe = async (o, c) => {
      flows.push(c.flow);
      return observe(o, c);
    };
    const r = reconcilerFor(f, { pollIntervalMs: 60_000, clock, ...opts });
    f.stored = widget();
    f.observation = owned;
    return { f, r, flows };
  }
  const annotate = (f: Fakes, annotations: Record<string, string>): void => {
    assert.ok(f.stored);
    f.stored.metadata.annotations = annotations;
  };
  const pollCondition = (f: Fakes) => getCondition(f.stored?.status?.conditions, "PollIntervalValid");
  const pollCtx: ReconcileContext = { ...ctx, cause: "poll" };

  it("polls at the object's poll-interval annotation, before the operator's and the change events' period, and says so", async () => {
    const { f, r, flows } = timing(new FakeClock(), { pollIntervalFor: () => 3_600_000 });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 3_600_000, poll: true });
    assert.equal(pollCondition(f), undefined, "no condition without the annotation");
    assert.equal(flows.at(-1)?.pollIntervalMs, 3_600_000);

    annotate(f, { [POLL_INTERVAL_ANNOTATION]: "10s" });
    f.log = [];
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 10_000, poll: true });
    assert.equal(flows.at(-1)?.pollIntervalMs, 10_000, "the driver is told the object's period");
    assert.deepEqual(
      [
        pollCondition(f)?.status,
        pollCondition(f)?.reason,
        pollCondition(f)?.message,
        pollCondition(f)?.observedGeneration,
      ],
      [
        "True",
        "PollIntervalSet",
        "polled every 10s, as the compute.cloud.com/poll-interval annotation says",
        3,
      ],
    );
    assert.deepEqual(f.log, ["observe", "sync", "updateStatus:"], "one status write records it");
    assert.deepEqual(f.events, []);

    f.log = [];
    annotate(f, { [POLL_INTERVAL_ANNOTATION]: "24h" });
    assert.deepEqual(
      await r.reconcile(req, ctx),
      { requeueAfter: 86_400_000, poll: true },
      "the upper bound",
    );
    annotate(f, { [POLL_INTERVAL_ANNOTATION]: "1h30m" });
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 5_400_000, poll: true });
    assert.match(pollCondition(f)?.message ?? "", /^polled every 1h30m0s,/);

    annotate(f, {});
    assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 3_600_000, poll: true });
    assert.equal(pollCondition(f), undefined, "removed with the annotation");
  });

  it("puts an aligned object's polls on the grid of its own period", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 23)); // 3 s past a multiple of 10 s
    const { f } = timing(clock);
    const aligned = reconcilerFor(f, {
      connector: fixedConnector(f.driver, { ...f.traits, alignPolls: true }),
      clock,
      pollIntervalMs: 60_000,
    });
    annotate(f, { [POLL_INTERVAL_ANNOTATION]: "10s" });
    assert.deepEqual(
      await aligned.reconcile(req, ctx),
      { requeueAfter: 7_000, poll: true },
      "to the next 10 s",
    );
    await clock.advance(7_000);
    assert.deepEqual(await aligned.reconcile(req, ctx), { requeueAfter: 10_000, poll: true });
    await clock.advance(14_000);
    assert.deepEqual(
      await aligned.reconcile(req, ctx),
      { requeueAfter: 6_000, poll: true },
      "at least 5 s away",
    );
  });

  for (const [value, problem] of [
    ["5s", "is shorter than 10s"],
    ["9.999s", "is shorter than 10s"],
    ["-1m", "is shorter than 10s"],
    ["0", "is shorter than 10s"],
    ["24h0m1s", "is longer than 24h"],
    ["2d", "is not a duration (a number and a unit, as in 30s, 10m or 1h30m)"],
    ["300", "is not a duration (a number and a unit, as in 30s, 10m or 1h30m)"],
    ["", "is not a duration (a number and a unit, as in 30s, 10m or 1h30m)"],
  ] as const) {
    it(`keeps the operator's interval for poll-interval "${value}", with PollIntervalValid=False and one Warning, and reconciles as ever`, async () => {
      const messages: string[] = [];
      const { f, r } = timing(new FakeClock(), {
        recorder: {
          event: (o, type, reason, message) => {
            messages.push(message);
            f.recorder.event(o, type, reason, message);
          },
        },
      });
      annotate(f, { [POLL_INTERVAL_ANNOTATION]: value });
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
      const message =
        `the compute.cloud.com/poll-interval annotation "${value}" ${problem}: it takes a duration ` +
        "from 10s to 24h; the operator's poll interval applies";
      assert.deepEqual(
        [pollCondition(f)?.status, pollCondition(f)?.reason, pollCondition(f)?.message],
        ["False", "InvalidPollInterval", message],
      );
      assert.equal(getCondition(f.stored?.status?.conditions, "Ready")?.status, "True", "the rest goes on");
      assert.equal(getCondition(f.stored?.status?.conditions, "Synced")?.status, "True");
      assert.deepEqual(f.events, ["Warning:InvalidPollInterval"]);
      assert.equal(messages.at(-1), message);

      // The same value on the next poll: nothing written, no Event.
      f.log = [];
      assert.deepEqual(await r.reconcile(req, pollCtx), { requeueAfter: 60_000, poll: true });
      assert.deepEqual(f.log, ["observe", "sync"]);
      assert.deepEqual(f.events, ["Warning:InvalidPollInterval"]);

      // A valid value clears it.
      annotate(f, { [POLL_INTERVAL_ANNOTATION]: "10m" });
      assert.deepEqual(await r.reconcile(req, ctx), { requeueAfter: 600_000, poll: true });
      assert.equal(pollCondition(f)?.status, "True");
      assert.deepEqual(f.events, ["Warning:InvalidPollInterval"]);
    });
  }

  it("quotes at most 64 characters of a refused value", async () => {
    const { f, r } = timing();
    annotate(f, { [POLL_INTERVAL_ANNOTATION]: "x".repeat(5000) });
    await r.reconcile(req, ctx);
    assert.match(
      pollCondition(f)?.message ?? "",
      new RegExp(`annotation "${"x".repeat(64)}\\.\\.\\." is not a duration`),
    );
  });

  it("reports an invalid poll-interval of a paused object too, without connecting it", async () => {
    const { f, r, flows } = timing();
    annotate(f, { [PAUSED_ANNOTATION]: "true", [POLL_INTERVAL_ANNOTATION]: "1s" });
    assert.deepEqual(await r.reconcile(req, ctx), {});
    assert.deepEqual(flows, []);
    assert.equal(pollCondition(f)?.reason, "InvalidPollInterval");
    assert.deepEqual(f.events, ["Normal:Paused", "Warning:InvalidPollInterval"]);
  });

  it("handles a reconcile request once: as work that observes afresh, echoed in status", async () => {
    const { f, r, flows } = timing();
    await r.reconcile(req, ctx);
    assert.equal(f.stored?.status?.lastHandledReconcileAt, undefined);

    // A steady poll of the converged object.
    await r.reconcile(req, pollCtx);
    assert.equal(flows.at(-1)?.poll, true);
    assert.equal(flows.at(-1)?.changeHinted, undefined);

    annotate(f, { [RECONCILE_REQUESTED_AT_ANNOTATION]: "2026-12-07T02:00:00Z" });
    f.log = [];
    // Even when the controller takes it for a poll (a replay after a restart), it is work.
    assert.deepEqual(await r.reconcile(req, pollCtx), { requeueAfter: 60_000, poll: true });
    assert.equal(flows.at(-1)?.poll, undefined, "real work, not a poll");
    assert.equal(flows.at(-1)?.changeHinted, true, "observed afresh, never from a snapshot");
    assert.equal(f.stored?.status?.lastHandledReconcileAt, "2026-12-07T02:00:00Z");
    assert.deepEqual(f.log, ["observe", "sync", "updateStatus:"], "written once, through the status");

    // Handled: the next reconcile is a plain poll again and writes nothing.
    f.log = [];
    await r.reconcile(req, pollCtx);
    assert.equal(flows.at(-1)?.poll, true);
    assert.equal(flows.at(-1)?.changeHinted, undefined);
    assert.deepEqual(f.log, ["observe", "sync"]);

    // A new value is a new request; the echo stays when the annotation goes.
    annotate(f, { [RECONCILE_REQUESTED_AT_ANNOTATION]: "again" });
    await r.reconcile(req, ctx);
    assert.equal(f.stored?.status?.lastHandledReconcileAt, "again");
    annotate(f, {});
    await r.reconcile(req, ctx);
    assert.equal(f.stored?.status?.lastHandledReconcileAt, "again");
    assert.deepEqual(f.events, []);
  });

  it("keeps the echo when a recreate clears what the driver described", async () => {
    const { f, r } = timing();
    annotate(f, { [RECONCILE_REQUESTED_AT_ANNOTATION]: "now" });
    await r.reconcile(req, ctx);
    f.observation = { exists: false };
    annotate(f, {});
    await r.reconcile(req, ctx);
    assert.ok(
      f.log.some((l) => l.startsWith("create:")),
      f.log.join(","),
    );
    assert.equal(f.stored?.status?.lastHandledReconcileAt, "now");
  });

  it("leaves a request to a paused object for the resume", async () => {
    const { f, r, flows } = timing();
    await r.reconcile(req, ctx);
    annotate(f, { [PAUSED_ANNOTATION]: "true", [RECONCILE_REQUESTED_AT_ANNOTATION]: "t1" });
    await r.reconcile(req, ctx);
    assert.equal(f.stored?.status?.lastHandledReconcileAt, undefined, "nothing was observed");
    annotate(f, { [RECONCILE_REQUESTED_AT_ANNOTATION]: "t1" });
    await r.reconcile(req, pollCtx);
    assert.equal(flows.at(-1)?.changeHinted, true);
    assert.equal(f.stored?.status?.lastHandledReconcileAt, "t1");
  });
});

describe("ManagedResourceReconciler polls", () => {
  const budget = new RateBudget({ ratePerSecond: 10, burst: 10, pollShare: 0.5, clock: new FakeClock() });
  const pollCtx: ReconcileContext = { ...ctx, cause: "poll" };
  const synced = (generation: number) => ({
    type: "Synced",
    status: "True" as const,
    reason: "ReconcileSuccess",
    message: "",
    lastTransitionTime: "2026-01-01T00:00:00Z",
    observedGeneration: generation,
  });
  const converged = (): Widget =>
    widget({}, { widgetId: "wid-1", state: "ready", observedGeneration: 3, conditions: [synced(3)] });

  /** Fakes whose driver draws `permits` from the budget through the scope, as the middleware does. */
  function polling(permits: number) {
    const f = new Fakes();
    const lanes: string[] = [];
    const observe = f.driver.observe;
    f.driver.observe = async (o, c) => {
      const scope = currentPollScope();
      lanes.push(scope === undefined ? "work" : "poll");
      scope?.drawn.set(budget, (scope.drawn.get(budget) ?? 0) + permits);
      return observe(o, c);
    };
    const polled: { group: unknown; key: string; intervalMs: number; drawn: number | undefined }[] = [];
    const forgotten: string[] = [];
    const scheduled: { group: unknown; key: string; intervalMs: number }[] = [];
    const polls = {
      expected: () => new Map(),
      polled: (group: unknown, key: string, intervalMs: number, drawn: ReadonlyMap<RateBudget, number>) =>
        polled.push({ group, key, intervalMs, drawn: drawn.get(budget) }),
      scheduled: (group: unknown, key: string, intervalMs: number) =>
        scheduled.push({ group, key, intervalMs }),
      forget: (kind: string, key: string) => forgotten.push(`${kind} ${key}`),
    };
    const r = reconcilerFor(f, { pollIntervalMs: 60_000, polls });
    f.stored = converged();
    f.observation = { exists: true, resource: { id: "wid-1", state: "ready" }, ownership: "owned" };
    return { f, r, lanes, polled, forgotten, scheduled };
  }

  it("runs a poll's AWS calls in the poll lane and reports what the complete poll drew", async () => {
    const p = polling(2);
    assert.deepEqual(await p.r.reconcile(req, pollCtx), { requeueAfter: 60_000, poll: true });
    assert.deepEqual(p.lanes, ["poll"]);
    assert.deepEqual(p.polled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 60_000, drawn: 2 },
    ]);
    assert.deepEqual(p.scheduled, []);
  });

  it("runs real work in the work lane and reports only that a poll is due", async () => {
    const p = polling(2);
    assert.deepEqual(await p.r.reconcile(req, ctx), { requeueAfter: 60_000, poll: true });
    assert.deepEqual(p.lanes, ["work"]);
    assert.deepEqual(p.polled, []);
    assert.deepEqual(p.scheduled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 60_000 },
    ]);
  });

  it("treats a poll of an object not reconciled at its generation as work", async () => {
    const p = polling(2);
    p.f.stored = widget({}, { widgetId: "wid-1", state: "ready", conditions: [synced(2)] });
    await p.r.reconcile(req, pollCtx);
    p.f.stored = widget({}, { widgetId: "wid-1", state: "ready" });
    await p.r.reconcile(req, pollCtx);
    assert.deepEqual(p.lanes, ["work", "work"]);
    assert.deepEqual(p.polled, []);
  });

  it("treats a poll an event hinted at as work", async () => {
    const p = polling(2);
    const hinted = reconcilerFor(p.f, { pollIntervalMs: 60_000, takeChangeHint: () => ({}) });
    await hinted.reconcile(req, pollCtx);
    assert.deepEqual(p.lanes, ["work"]);
  });

  it("keeps a deferred poll a poll, and lets a failed one throw (the controller retries it as work)", async () => {
    const p = polling(0);
    p.f.driver.observe = async () => {
      throw new NoPermitYetError("s3", "GetBucketTagging", "s3", 1500);
    };
    assert.deepEqual(await p.r.reconcile(req, pollCtx), { requeueAfter: 1500, poll: true });
    assert.deepEqual(p.polled, [], "a deferred poll is not a complete one");
    assert.deepEqual(p.scheduled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 60_000 },
    ]);
    p.f.driver.observe = async () => {
      throw throttled();
    };
    await assert.rejects(p.r.reconcile(req, pollCtx));
  });

  it("counts a converged object the controller's start enqueued as a poll due, before its reconcile runs", () => {
    const p = polling(2);
    p.r.pollQueued(req);
    assert.deepEqual(p.scheduled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 60_000 },
    ]);
    assert.deepEqual(p.lanes, [], "no reconcile ran");
  });

  it("does not count a replayed object that is gone, paused, being deleted or not reconciled at its generation, nor one whose account the cache cannot tell", () => {
    const p = polling(2);
    const replays: (Widget | undefined)[] = [
      undefined,
      { ...converged(), metadata: { ...converged().metadata, annotations: { [PAUSED_ANNOTATION]: "true" } } },
      widget({}, converged().status, true),
      widget({}, { widgetId: "wid-1", state: "ready", conditions: [synced(2)] }),
    ];
    for (const stored of replays) {
      p.f.stored = stored;
      p.r.pollQueued(req);
    }
    assert.deepEqual(p.scheduled, []);
    p.f.stored = converged();
    const unknown = reconcilerFor(p.f, {
      pollIntervalMs: 60_000,
      polls: {
        expected: () => new Map(),
        polled: () => {},
        scheduled: () => assert.fail("counted"),
        forget: () => {},
      },
      connector: { ...fixedConnector(p.f.driver, p.f.traits), accountNameOf: () => undefined },
    });
    unknown.pollQueued(req);
  });

  it("counts an object at its own poll interval", async () => {
    const p = polling(2);
    p.f.stored = converged();
    p.f.stored.metadata.annotations = { [POLL_INTERVAL_ANNOTATION]: "15s" };
    p.r.pollQueued(req);
    assert.deepEqual(await p.r.reconcile(req, pollCtx), { requeueAfter: 15_000, poll: true });
    assert.deepEqual(p.scheduled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 15_000 },
    ]);
    assert.deepEqual(p.polled, [
      { group: { kind: "Widget", account: "" }, key: "ns/w", intervalMs: 15_000, drawn: 2 },
    ]);
  });

  it("forgets an object's polls when it is gone", async () => {
    const p = polling(2);
    p.f.stored = undefined;
    await p.r.reconcile(req, ctx);
    assert.deepEqual(p.forgotten, ["Widget ns/w"]);
  });
});

/** What an earlier object of the same name and namespace left: adoptable on adoptExisting alone. */
const leftByThisObject: ForeignClaim = {
  owner: { uid: "uid-1", namespace: "ns", name: "w", kind: "Widget" },
  managedByOperator: true,
  adoptable: true,
};

/** The ownership tag change adopting a widget makes. */
const ownershipTag = drift("tags", "tags: set compute.cloud.com/uid", {
  path: "tags.uid",
  ownership: true,
  desired: "uid-1",
});

describe("ManagedResourceReconciler with driftPolicy and changePolicy", () => {
  let f: Fakes;
  let r: ManagedResourceReconciler<Widget, Res>;
  let clock: FakeClock;
  let messages: string[];
  let hint: { caller?: string; eventName?: string; timeMs?: number } | undefined;
  const owned = (): Observation<Res> => ({
    exists: true,
    resource: { id: "wid-1", state: "ready" },
    ownership: "owned",
  });
  beforeEach(() => {
    f = new Fakes();
    clock = new FakeClock();
    messages = [];
    hint = undefined;
    r = reconcilerFor(f, {
      pollIntervalMs: 60_000,
      clock,
      takeChangeHint: () => {
        const h = hint;
        hint = undefined;
        return h;
      },
      recorder: {
        event: (o, type, reason, message) => {
          messages.push(message);
          f.recorder.event(o, type, reason, message);
        },
      },
    });
  });
  const condition = (type: string): [string | undefined, string | undefined] => {
    const c = getCondition(f.stored?.status?.conditions, type);
    return [c?.status, c?.reason];
  };

  it("under Report applies nothing, lists each drifted path once with who changed it, and repairs once switched to Repair", async () => {
    f.stored = widget({ driftPolicy: "Report" }, { widgetId: "wid-1" });
    f.observation = owned();
    f.syncChanges = [drift("size", "size 1 -> 2", { observed: 1, desired: 2 })];
    hint = {
      caller: "arn:aws:iam::123456789012:user/alice",
      eventName: "PutSize",
      timeMs: Date.parse("2026-12-01T10:00:00Z"),
    };
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 0, "no AWS write for drift under Report");
    assert.deepEqual(f.stored?.status?.drift, [
      {
        path: "spec.size",
        desired: 2,
        observed: 1,
        since: new Date(clock.now()).toISOString(),
        changedBy: "arn:aws:iam::123456789012:user/alice",
        changeEvent: "PutSize",
        changedAt: "2026-12-01T10:00:00.000Z",
      },
    ]);
    assert.deepEqual(condition("Drifted"), ["True", "DriftDetected"]);
    assert.deepEqual(condition("Synced"), ["True", "ReconcileSuccess"]);
    assert.deepEqual(f.events, ["Warning:DriftDetected"]);
    assert.match(
      messages[0] ?? "",
      /spec\.size drifted: desired 2, observed 1 \(changed by arn:aws:iam::123456789012:user\/alice with PutSize\)/,
    );

    // The same drift later: first-seen time and attribution kept, no write, no Event.
    const writes = statusWrites(f);
    f.events = [];
    await clock.advance(60_000);
    f.syncChanges = [
      drift("size", "size 1 -> 2", { observed: 1, desired: 2 }),
      drift("tags", "tags: set team", { path: "spec.tags.team", desired: "a" }),
    ];
    await r.reconcile(req, ctx);
    assert.deepEqual(f.events, ["Warning:DriftDetected"], "one Event for the newly drifted path only");
    assert.deepEqual(
      f.stored?.status?.drift?.map((d) => [d.path, d.since, d.changedBy]),
      [
        ["spec.size", new Date(clock.now() - 60_000).toISOString(), "arn:aws:iam::123456789012:user/alice"],
        ["spec.tags.team", new Date(clock.now()).toISOString(), undefined],
      ],
    );
    assert.equal(statusWrites(f), writes + 1);
    await r.reconcile(req, ctx);
    assert.equal(statusWrites(f), writes + 1, "an unchanged drift set writes nothing");

    // Switching to Repair repairs, and the drift record and condition go.
    f.stored = { ...f.stored, spec: { ...f.stored!.spec, driftPolicy: "Repair" } } as Widget;
    await r.reconcile(req, ctx);
    assert.deepEqual(
      f.applied.map((c) => c.path),
      ["spec.size", "spec.tags.team"],
    );
    assert.equal(f.stored?.status?.drift, undefined);
    assert.deepEqual(condition("Drifted"), [undefined, undefined]);
  });

  it("under Report reports in sync with Drifted=False, and adopting writes only the ownership changes", async () => {
    f.stored = widget({ driftPolicy: "Report", adoptExisting: true });
    f.observation = foreignX(leftByThisObject);
    f.syncChanges = [ownershipTag, drift("tags", "tags: set team", { path: "spec.tags.team", desired: "a" })];
    await r.reconcile(req, ctx);
    assert.deepEqual(
      f.applied.map((c) => c.path),
      ["tags.uid"],
    );
    assert.deepEqual(
      f.stored?.status?.drift?.map((d) => d.path),
      ["spec.tags.team"],
    );
    f.syncChanges = [];
    f.observation = owned();
    await r.reconcile(req, ctx);
    assert.deepEqual(condition("Drifted"), ["False", "NoDrift"]);
    assert.equal(f.stored?.status?.drift, undefined);
  });

  it("under Approve holds changes until the annotation carries their hash, refuses a stale one, and shows the new plan", async () => {
    f.stored = widget({ changePolicy: "Approve" }, { widgetId: "wid-1" });
    f.observation = owned();
    f.syncChanges = [drift("size", "size 1 -> 2", { observed: 1, desired: 2, disruption: "restart" })];
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 0);
    const pending = f.stored?.status?.pendingChanges;
    assert.ok(pending !== undefined);
    assert.match(pending.hash, /^[0-9a-f]{16}$/);
    assert.deepEqual(pending.changes, [
      { path: "spec.size", observed: 1, desired: 2, actions: ["widget:Putsize"], disruption: "restart" },
    ]);
    assert.deepEqual([pending.total, pending.restarts, pending.refused], [1, 1, 0]);
    assert.deepEqual(condition("ChangesPending"), ["True", "AwaitingApproval"]);
    assert.deepEqual(condition("Synced"), ["False", "AwaitingApproval"]);
    assert.deepEqual(f.events, ["Normal:AwaitingApproval"]);

    // The approved plan moved (AWS changed): refused as stale, nothing applied, the new plan shown.
    f.stored = {
      ...f.stored!,
      metadata: {
        ...f.stored!.metadata,
        annotations: { "compute.cloud.com/approved-changes": pending.hash },
      },
    };
    f.syncChanges = [drift("size", "size 3 -> 2", { observed: 3, desired: 2, disruption: "restart" })];
    f.events = [];
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 0);
    assert.deepEqual(condition("ChangesPending"), ["True", "StaleApproval"]);
    assert.deepEqual(f.events, ["Warning:StaleApproval"]);
    const next = f.stored?.status?.pendingChanges?.hash;
    assert.ok(next !== undefined && next !== pending.hash);

    // Approving the new plan applies exactly it.
    f.stored = {
      ...f.stored!,
      metadata: { ...f.stored!.metadata, annotations: { "compute.cloud.com/approved-changes": next } },
    };
    f.events = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(
      f.applied.map((c) => c.description),
      ["size 3 -> 2"],
    );
    assert.deepEqual(f.events, ["Normal:ChangesApproved", "Normal:Updated"]);
    assert.equal(f.stored?.status?.pendingChanges, undefined);
    assert.deepEqual(condition("ChangesPending"), ["False", "NoChangesPending"]);
    assert.deepEqual(condition("Synced"), ["True", "ReconcileSuccess"]);
  });

  it("under Approve refuses a late approval of a plan no longer shown, and takes no spent one for stale", async () => {
    f.stored = widget({ changePolicy: "Approve" }, { widgetId: "wid-1" });
    f.observation = owned();
    const annotate = (hash: string): void => {
      f.stored = {
        ...f.stored!,
        metadata: { ...f.stored!.metadata, annotations: { "compute.cloud.com/approved-changes": hash } },
      };
    };
    f.syncChanges = [drift("size", "size 1 -> 2", { observed: 1, desired: 2 })];
    await r.reconcile(req, ctx);
    const first = f.stored?.status?.pendingChanges?.hash ?? "";
    // The resource moves before anyone approves: the operator shows the new plan...
    f.syncChanges = [drift("size", "size 3 -> 2", { observed: 3, desired: 2 })];
    await r.reconcile(req, ctx);
    const second = f.stored?.status?.pendingChanges?.hash ?? "";
    assert.notEqual(second, first);
    assert.deepEqual(condition("ChangesPending"), ["True", "AwaitingApproval"]);
    // ...and then the first one is approved, late: refused, with a Warning, nothing applied.
    annotate(first);
    f.events = [];
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 0);
    assert.deepEqual(condition("ChangesPending"), ["True", "StaleApproval"]);
    assert.deepEqual(f.events, ["Warning:StaleApproval"]);
    // The shown plan approved: applied, and recorded as spent.
    annotate(second);
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 1);
    assert.equal(f.stored?.status?.appliedChanges, second);
    // New drift later, with the spent approval still on the object: waiting, not stale.
    f.syncChanges = [drift("size", "size 4 -> 2", { observed: 4, desired: 2 })];
    f.events = [];
    await r.reconcile(req, ctx);
    assert.deepEqual(condition("ChangesPending"), ["True", "AwaitingApproval"]);
    assert.deepEqual(f.events, ["Normal:AwaitingApproval"]);
  });

  it("under Approve holds a creation: the spec and the create's actions wait for approval", async () => {
    f.stored = widget({ changePolicy: "Approve" });
    await r.reconcile(req, ctx);
    assert.ok(!f.log.some((l) => l.startsWith("create:")), "nothing created before approval");
    const pending = f.stored?.status?.pendingChanges;
    assert.deepEqual(
      pending?.changes?.map((c) => [c.path, c.actions]),
      [["spec", ["widget:CreateWidget"]]],
    );
    assert.deepEqual(condition("Ready"), ["False", "AwaitingApproval"]);
    assert.equal(f.stored?.status?.createToken, undefined, "no create intent recorded");

    // The spec changes: a new plan with another hash.
    const first = pending?.hash ?? "";
    f.stored = { ...f.stored!, spec: { ...f.stored!.spec, tags: { team: "a" } } } as Widget;
    await r.reconcile(req, ctx);
    const second = f.stored?.status?.pendingChanges?.hash ?? "";
    assert.notEqual(second, first);

    f.stored = {
      ...f.stored!,
      metadata: { ...f.stored!.metadata, annotations: { "compute.cloud.com/approved-changes": second } },
    };
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("create:uid-1-1"));
    assert.equal(f.stored?.status?.pendingChanges, undefined);
    assert.deepEqual(condition("Ready"), ["True", "Available"]);
  });

  it("under Approve holds an adoption without recording the foreign resource in status", async () => {
    f.stored = widget({ changePolicy: "Approve", adoptExisting: true });
    f.observation = foreignX(leftByThisObject);
    f.syncChanges = [ownershipTag];
    await r.reconcile(req, ctx);
    assert.equal(f.applied.length, 0);
    assert.equal(f.stored?.status?.widgetId, undefined, "not recorded: the resource is not the object's yet");
    assert.deepEqual(condition("Ready"), ["False", "AwaitingApproval"]);
    assert.deepEqual(f.events, ["Normal:AwaitingApproval"], "no Adopted Event before the approval");
    const hash = f.stored?.status?.pendingChanges?.hash ?? "";
    f.stored = {
      ...f.stored!,
      metadata: { ...f.stored!.metadata, annotations: { "compute.cloud.com/approved-changes": hash } },
    };
    await r.reconcile(req, ctx);
    assert.deepEqual(
      f.applied.map((c) => c.path),
      ["tags.uid"],
    );
    assert.equal(f.stored?.status?.widgetId, "x");
    assert.deepEqual(condition("Ready"), ["True", "Available"]);
    assert.ok(f.events.includes("Normal:Adopted"));
  });

  it("keeps ChangesPending=False after an approved create", async () => {
    f.stored = widget({ changePolicy: "Approve" });
    await r.reconcile(req, ctx);
    const hash = f.stored?.status?.pendingChanges?.hash ?? "";
    f.stored = {
      ...f.stored!,
      metadata: { ...f.stored!.metadata, annotations: { "compute.cloud.com/approved-changes": hash } },
    };
    await r.reconcile(req, ctx);
    assert.ok(f.log.includes("create:uid-1-1"));
    assert.deepEqual(condition("ChangesPending"), ["False", "NoChangesPending"]);
  });

  it("applies nothing at all while a refused change holds the set back", async () => {
    f.stored = widget({}, { widgetId: "wid-1" });
    f.observation = owned();
    f.syncChanges = [
      drift("tags", "tags: set team"),
      refusedChange({
        path: "spec.size",
        setting: "size",
        description: "size needs a restart",
        refusal: {
          reason: "RestartRequired",
          message: "size needs a restart the spec does not allow",
          holdsAll: true,
        },
      }),
    ];
    await assert.rejects(r.reconcile(req, ctx), TerminalError);
    assert.equal(f.applied.length, 0);
    assert.deepEqual(condition("Synced"), ["False", "RestartRequired"]);
  });
});
