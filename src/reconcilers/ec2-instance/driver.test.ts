import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance, RunInstancesCommandInput, TerminateInstancesCommandInput } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec, Ec2InstanceStatus } from "../../api/v1/index.ts";
import { ownershipTags } from "../../aws/ownership.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import type { DeleteOutcome, Observation } from "../common/driver.ts";
import { context, contextFor } from "../common/testing/context.ts";
import { Ec2InstanceDriver } from "./driver.ts";
import type { Ec2InstanceObject } from "./model.ts";
import { described, planAndApply } from "./testing/apply.ts";
import { FakeEc2 } from "./testing/fake-ec2.ts";

const spec: Ec2InstanceSpec = {
  instanceType: "t3.micro",
  desiredState: "running",
  amiId: "ami-1e749f67",
  region: "eu-west-1",
  tags: { team: "web" },
  managementPolicy: "Full",
  deletionPolicy: "Delete",
  adoptExisting: false,
  onDeletedOutOfBand: "Recreate",
  driftPolicy: "Repair",
  changePolicy: "Auto",
};

function object(
  name: string,
  status: Ec2InstanceStatus = {},
  over: Partial<Ec2InstanceSpec> = {},
): Ec2InstanceObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "Ec2Instance",
    metadata: { name, namespace: "default", uid: `uid-${name}`, generation: 1 },
    spec: { ...spec, ...over },
    status,
  };
}

const owner = (name: string) => ({ uid: `uid-${name}`, namespace: "default", name, kind: "Ec2Instance" });
/** A context for calls that do not depend on the flow (create). */
const ctx = context();
/** The context the flow gives the driver for `obj`. */
const ctxOf = (obj: Ec2InstanceObject) => contextFor(obj, "instanceId");
/** An observation of an instance of the object's own. */
const owned = (resource: Instance): Observation<Instance> & { exists: true } => ({
  exists: true,
  resource,
  ownership: "owned",
});
/** A deletion pass of `obj` as the flow makes it: observe the object being deleted, then delete. */
async function remove(driver: Ec2InstanceDriver, obj: Ec2InstanceObject): Promise<DeleteOutcome> {
  const doomed = { ...obj, metadata: { ...obj.metadata, deletionTimestamp: "2025-01-01T00:00:00Z" } };
  const ctx = ctxOf(doomed);
  return driver.delete(doomed, await driver.observe(doomed, ctx), ctx);
}

function setup() {
  const clock = new FakeClock(Date.parse("2025-01-01T00:00:00Z"));
  const ec2 = new FakeEc2(() => clock.now());
  const driver = new Ec2InstanceDriver({ aws: ec2.source(), clock, visibilityGraceMs: 60_000 });
  /** Runs `fn` while stepping the clock past each batch window it meets (lookups by ID, by tag). */
  const run = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    const settled = p.then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    void settled.then(() => (done = true));
    for (let i = 0; i < 10 && !done; i++) await clock.advance(10);
    const r = await settled;
    if (!r.ok) throw r.e;
    return r.v;
  };
  return { clock, ec2, driver, run };
}

describe("Ec2InstanceDriver.observe", () => {
  it("finds an observe-only object's instance by spec.instanceId alone, whoever's it is", async () => {
    const { ec2, driver, run } = setup();
    const theirs = ec2.add({ tags: { team: "ops" } });
    ec2.add({ tags: ownershipTags(owner("a")) }); // this object's by tag, but not the one named
    const obj = object("a", {}, { managementPolicy: "ObserveOnly", instanceId: theirs.InstanceId });
    const obs = await run(driver.observe(obj, ctxOf(obj)));
    assert.ok(obs.exists);
    assert.equal(obs.resource.InstanceId, theirs.InstanceId);
    assert.equal(obs.ownership, "foreign");
    assert.deepEqual(driver.observed(obs.resource).tags, { team: "ops" });
    assert.equal(ec2.count("DescribeInstances"), 1, "one lookup by ID, no tag search");
    const gone = ec2.add({ State: { Name: "terminated" } });
    const missing = object("a", {}, { managementPolicy: "ObserveOnly", instanceId: gone.InstanceId });
    assert.deepEqual(await run(driver.observe(missing, ctxOf(missing))), { exists: false });
    const unknown = object("a", {}, { managementPolicy: "ObserveOnly", instanceId: "i-0123456789abcdef0" });
    assert.deepEqual(await run(driver.observe(unknown, ctxOf(unknown))), { exists: false });
  });

  it("offers a managed object the instance its spec.instanceId names for adoption, recorded or not", async () => {
    const { ec2, driver, run } = setup();
    const named = ec2.add({ tags: {} });
    const obj = object("a", { instanceId: named.InstanceId }, { instanceId: named.InstanceId });
    const obs = await run(driver.observe(obj, ctxOf(obj)));
    assert.ok(obs.exists && obs.ownership === "foreign");
    assert.equal(obs.foreign.adoptable, true);
    // Recorded in status alone, the same instance is never adoptable.
    const recordedOnly = object("a", { instanceId: named.InstanceId });
    const seen = await run(driver.observe(recordedOnly, ctxOf(recordedOnly)));
    assert.ok(seen.exists && seen.ownership === "foreign");
    assert.equal(seen.foreign.adoptable, false);
  });

  it("looks recorded instances of several objects up with one shared DescribeInstances call", async () => {
    const { ec2, driver, run } = setup();
    const objs = ["a", "b", "c"].map((n) => {
      const i = ec2.add({ tags: ownershipTags(owner(n)) });
      return object(n, { instanceId: i.InstanceId });
    });
    const seen = await run(Promise.all(objs.map((o) => driver.observe(o, ctxOf(o)))));
    assert.equal(ec2.count("DescribeInstances"), 1);
    for (const [k, obs] of seen.entries()) {
      assert.ok(obs.exists);
      assert.equal(obs.ownership, "owned");
      assert.equal(obs.resource.InstanceId, objs[k]?.status?.instanceId);
    }
  });

  it("takes a recorded instance not yet listed shortly after its launch as not visible, never as absent", async () => {
    const { clock, ec2, driver, run } = setup();
    const i = ec2.add({ tags: ownershipTags(owner("a")) });
    ec2.hidden.add(i.InstanceId ?? "");
    const launchTime = new Date(clock.now() - 5_000).toISOString();
    const obj = object("a", { instanceId: i.InstanceId, launchTime });
    assert.deepEqual(await run(driver.observe(obj, ctxOf(obj))), {
      exists: false,
      appearing: `instance ${i.InstanceId} was launched moments ago and is not listed by DescribeInstances yet`,
    });
    const old = object("a", {
      instanceId: i.InstanceId,
      launchTime: new Date(clock.now() - 120_000).toISOString(),
    });
    assert.deepEqual(await run(driver.observe(old, ctxOf(old))), { exists: false });
  });

  it("counts a terminated recorded instance as absent, unless another live one carries the UID", async () => {
    const { ec2, driver, run } = setup();
    const gone = ec2.add({ State: { Name: "terminated" }, tags: ownershipTags(owner("a")) });
    const obj = object("a", { instanceId: gone.InstanceId, launchTime: new Date().toISOString() });
    assert.deepEqual(await run(driver.observe(obj, ctxOf(obj))), { exists: false });
    const other = ec2.add({ tags: ownershipTags(owner("a")) });
    const obs = await run(driver.observe(obj, ctxOf(obj)));
    assert.ok(obs.exists);
    assert.equal(obs.resource.InstanceId, other.InstanceId);
  });

  it("finds an instance whose launch answer was lost by its UID tag, preferring the recorded token", async () => {
    const { ec2, driver, run } = setup();
    ec2.add({ tags: ownershipTags(owner("a")), ClientToken: "uid-a-1" });
    const second = ec2.add({ tags: ownershipTags(owner("a")), ClientToken: "uid-a-2" });
    const obs = await run(
      driver.observe(
        object("a", { createToken: "uid-a-2", createAttempt: 2 }),
        ctxOf(object("a", { createToken: "uid-a-2", createAttempt: 2 })),
      ),
    );
    assert.ok(obs.exists);
    assert.equal(obs.ownership, "owned");
    assert.equal(obs.resource.InstanceId, second.InstanceId);
  });

  it("reports an instance named for this object under another UID as foreign, ignoring ones shutting down", async () => {
    const { ec2, driver, run } = setup();
    const left = { ...owner("a"), uid: "uid-of-a-deleted-object" };
    ec2.add({ State: { Name: "shutting-down" }, tags: ownershipTags(left) });
    assert.deepEqual(await run(driver.observe(object("a"), ctxOf(object("a")))), { exists: false });
    const retained = ec2.add({ State: { Name: "stopped" }, tags: ownershipTags(left) });
    const obs = await run(driver.observe(object("a"), ctxOf(object("a"))));
    assert.ok(obs.exists);
    assert.equal(obs.ownership, "foreign");
    assert.equal(obs.resource.InstanceId, retained.InstanceId);
  });

  it("reports a recorded instance whose UID tag now names another object as foreign", async () => {
    const { ec2, driver, run } = setup();
    const i = ec2.add({ tags: ownershipTags({ ...owner("a"), uid: "someone-else" }) });
    const obs = await run(
      driver.observe(
        object("a", { instanceId: i.InstanceId }),
        ctxOf(object("a", { instanceId: i.InstanceId })),
      ),
    );
    assert.ok(obs.exists);
    assert.equal(obs.ownership, "foreign");
  });
  it("treats a recorded instance without this object's UID tag as foreign and never adoptable", async () => {
    const { ec2, driver, run } = setup();
    const unmanaged = ec2.add({ tags: { Name: "payroll-db" } });
    const obj = object("a", { instanceId: unmanaged.InstanceId });
    const obs = await run(driver.observe(obj, ctxOf(obj)));
    assert.ok(obs.exists && obs.ownership === "foreign");
    assert.deepEqual(obs.foreign, { owner: undefined, managedByOperator: false, adoptable: false });
    assert.deepEqual(
      await run(remove(driver, obj)),
      {
        done: true,
        leftInPlace: `instance ${unmanaged.InstanceId} is not owned by this object and was left in place`,
      },
      "nothing of this object to delete: the foreign instance is released, not reported deleted",
    );
    assert.equal(ec2.count("TerminateInstances"), 0);
    assert.equal(ec2.count("CreateTags") + ec2.count("DeleteTags"), 0);
  });
});

describe("Ec2InstanceDriver.observe with the snapshot", () => {
  /** An object whose instance is recorded and Ready for its generation: polled in steady state. */
  const settled = (name: string, instanceId: string | undefined, ready = "True"): Ec2InstanceObject =>
    object(name, {
      instanceId,
      conditions: [
        {
          type: "Ready",
          status: ready === "True" ? "True" : "False",
          reason: ready === "True" ? "Available" : "Pending",
          message: "",
          observedGeneration: 1,
          lastTransitionTime: "2025-01-01T00:00:00Z",
        },
      ],
    });

  /** A driver polling every 60 s (snapshot age 15 s), and `objs` settled instances in the fake. */
  function fleet(n: number) {
    const env = setup();
    const driver = new Ec2InstanceDriver({ aws: env.ec2.source(), clock: env.clock, pollIntervalMs: 60_000 });
    const objs = Array.from({ length: n }, (_, k) => {
      const i = env.ec2.add({ tags: ownershipTags(owner(`o${k}`)) });
      return settled(`o${k}`, i.InstanceId);
    });
    const byId = (): number => env.ec2.calls.filter((c) => c.op === "DescribeInstances").length;
    return { ...env, driver, objs, byId };
  }

  it("answers a round of sequential steady polls with one call once the IDs are known", async () => {
    const { clock, driver, objs, byId, run } = fleet(50);
    for (const o of objs) assert.ok((await run(driver.observe(o, ctxOf(o)))).exists);
    const firstRound = byId();
    assert.ok(firstRound <= 50);
    for (let round = 0; round < 3; round++) {
      await clock.advance(60_000);
      const before = byId();
      for (const o of objs) {
        const obs = await run(driver.observe(o, ctxOf(o)));
        assert.ok(obs.exists);
        assert.equal(obs.resource.InstanceId, o.status?.instanceId);
      }
      assert.equal(byId() - before, 1, `round ${round}: one call for 50 sequential polls`);
    }
  });

  it("answers an object polled more often than the operator from a snapshot at most half its own period old", async () => {
    const { clock, driver, objs, byId, run } = fleet(1);
    const [a] = objs as [Ec2InstanceObject];
    const own = (period: number | undefined) => ({
      ...ctxOf(a),
      flow: { ...ctxOf(a).flow, pollIntervalMs: period },
    });
    await run(driver.observe(a, own(10_000)));
    await clock.advance(6_000);
    let before = byId();
    await run(driver.observe(a, own(60_000)));
    assert.equal(byId(), before, "6 s old: within the operator's 15 s");
    await clock.advance(6_000); // the snapshot's answer is now 12 s old
    before = byId();
    await run(driver.observe(a, own(10_000)));
    assert.equal(byId() - before, 1, "12 s old: past half of its own 10 s period, read fresh");
    await clock.advance(4_000);
    before = byId();
    await run(driver.observe(a, own(10_000)));
    assert.equal(byId(), before, "4 s old: within half of 10 s");
  });

  it("reads fresh for creation, transitions, a new generation and deletion", async () => {
    const { driver, objs, byId, run, ec2 } = fleet(2);
    const [a, b] = objs as [Ec2InstanceObject, Ec2InstanceObject];
    await run(driver.observe(a, ctxOf(a)));
    await run(driver.observe(b, ctxOf(b))); // both now in the snapshot
    const id = b.status?.instanceId;
    const unsettled = [
      settled("o1", id, "False"),
      { ...b, metadata: { ...b.metadata, generation: 2 } },
      { ...b, metadata: { ...b.metadata, deletionTimestamp: "2025-01-01T00:00:00Z" } },
    ];
    for (const o of unsettled) {
      const before = byId();
      await run(driver.observe(o, ctxOf(o)));
      assert.equal(byId() - before, 1, "a fresh read");
    }
    const before = byId();
    await run(driver.observe(b, ctxOf(b)));
    assert.equal(byId(), before, "the settled object is answered from the snapshot");
    assert.equal(ec2.count("TerminateInstances"), 0);
  });

  it("confirms 'not listed' in the snapshot with a fresh read instead of reporting the instance deleted", async () => {
    const { clock, driver, objs, byId, run, ec2 } = fleet(2);
    const [a, b] = objs as [Ec2InstanceObject, Ec2InstanceObject];
    const idB = b.status?.instanceId ?? "";
    await run(driver.observe(b, ctxOf(b)));
    ec2.hidden.add(idB); // a listing that misses it (eventual consistency)
    await run(driver.observe(a, ctxOf(a))); // its call prefetches b and records "not listed"
    ec2.hidden.clear();
    const before = byId();
    const obs = await run(driver.observe(b, ctxOf(b)));
    assert.ok(obs.exists, "present: the fresh read lists it");
    assert.equal(obs.resource.InstanceId, idB);
    assert.equal(byId() - before, 1);

    // Terminated in the snapshot: also confirmed fresh (and then it really is gone).
    (ec2.instances.get(idB) ?? {}).State = { Name: "terminated" };
    await clock.advance(16_000);
    await run(driver.observe(a, ctxOf(a))); // stale for a: its call records b as terminated
    const calls = byId();
    assert.deepEqual(await run(driver.observe(b, ctxOf(b))), { exists: false });
    assert.ok(byId() > calls, "absence was read fresh");
  });

  it("reads fresh after repairing tags, so the repair is not made twice", async () => {
    const { driver, objs, run, ec2 } = fleet(1);
    const [a] = objs as [Ec2InstanceObject];
    const id = a.status?.instanceId ?? "";
    ec2.add({ InstanceId: id, tags: { ...ownershipTags(owner("o0")), stray: "x" } });
    const seen = await run(driver.observe(a, ctxOf(a)));
    assert.ok(seen.exists);
    assert.ok((await run(planAndApply(driver, a, owned(seen.resource), ctxOf(a)))).applied.length > 0);
    const again = await run(driver.observe(a, ctxOf(a)));
    assert.ok(again.exists);
    assert.deepEqual((await run(driver.plan(a, owned(again.resource), ctxOf(a)))).changes, []);
    assert.equal(ec2.count("CreateTags") + ec2.count("DeleteTags"), 2, "one repair");
  });

  it("rejects nonsensical snapshot options", () => {
    const { ec2, clock } = setup();
    const aws = ec2.source();
    assert.throws(() => new Ec2InstanceDriver({ aws, clock, pollIntervalMs: 0 }), RangeError);
    assert.throws(() => new Ec2InstanceDriver({ aws, clock, snapshotMaxAgeMs: -1 }), RangeError);
    assert.throws(() => new Ec2InstanceDriver({ aws, clock, trackMs: -1 }), RangeError);
  });
});

describe("Ec2InstanceDriver.create, adoption and plan", () => {
  it("launches with the token and ownership tags, asking DescribeImages once per AMI and region", async () => {
    const { ec2, driver, run } = setup();
    const sized = { storage: { rootVolume: { size: 12 } } };
    const first = await run(driver.create(object("a", {}, sized), "uid-a-1", ctx));
    await run(driver.create(object("b", {}, sized), "uid-b-1", ctx));
    assert.equal(ec2.count("DescribeImages"), 1);
    assert.equal(ec2.count("RunInstances"), 2);
    const input = ec2.calls.find((c) => c.op === "RunInstances")?.input as RunInstancesCommandInput;
    assert.equal(input.ClientToken, "uid-a-1");
    assert.equal(input.BlockDeviceMappings?.[0]?.DeviceName, "/dev/sda1");
    assert.equal(ec2.tagsOf(first.InstanceId ?? "")["compute.cloud.com/uid"], "uid-a");
    assert.equal(ec2.tagsOf(first.InstanceId ?? "")["team"], "web");
  });

  it("does not ask the AMI when the spec names the root device or leaves the root alone", async () => {
    const { ec2, driver, run } = setup();
    await run(
      driver.create(
        object("a", {}, { storage: { rootVolume: { size: 12, deviceName: "/dev/xvda" } } }),
        "t1",
        ctx,
      ),
    );
    await run(driver.create(object("b"), "t2", ctx));
    assert.equal(ec2.count("DescribeImages"), 0);
  });

  it("plans nothing when the tags match, and one CreateTags and one DeleteTags to repair drift", async () => {
    const { ec2, driver, run } = setup();
    const obj = object("a");
    const i = ec2.add({ tags: { ...ownershipTags(owner("a")), team: "web" } });
    const clean = await run(driver.plan(obj, owned(structuredClone(i)), ctxOf(obj)));
    assert.deepEqual(clean.changes, []);
    assert.equal(ec2.calls.length, 0);

    ec2.add({
      InstanceId: i.InstanceId,
      tags: { ...ownershipTags(owner("a")), team: "ops", extra: "x", "aws:x": "y" },
    });
    const current = () => owned(structuredClone(ec2.instances.get(i.InstanceId ?? "") ?? {}));
    const drifted = await run(planAndApply(driver, obj, current(), ctxOf(obj)));
    assert.deepEqual(drifted.set.changes, [
      {
        path: "spec.tags.team",
        key: "team",
        setting: "tags",
        observed: "ops",
        desired: "web",
        actions: ["ec2:CreateTags"],
        disruption: "none",
        description: "tags: set team",
        group: "tags",
      },
      {
        path: "spec.tags.extra",
        key: "extra",
        setting: "tags",
        observed: "x",
        desired: undefined,
        actions: ["ec2:DeleteTags"],
        disruption: "none",
        description: "tags: removed extra",
        group: "tags",
      },
    ]);
    assert.equal(ec2.count("CreateTags"), 1);
    assert.equal(ec2.count("DeleteTags"), 1);
    assert.deepEqual(ec2.tagsOf(i.InstanceId ?? ""), {
      ...ownershipTags(owner("a")),
      team: "web",
      "aws:x": "y",
    });
    const again = await run(driver.plan(obj, current(), ctxOf(obj)));
    assert.deepEqual(again.changes, [], "the repair left the instance in sync");
  });

  it("adopts by writing this object's ownership tags over the old owner's", async () => {
    const { ec2, driver, run } = setup();
    const i = ec2.add({ tags: ownershipTags({ ...owner("a"), uid: "old" }) });
    const obs = await run(driver.observe(object("a"), ctxOf(object("a"))));
    assert.ok(obs.exists && obs.ownership === "foreign");
    const { set } = await run(planAndApply(driver, object("a"), obs, ctxOf(object("a"))));
    assert.equal(ec2.tagsOf(i.InstanceId ?? "")["compute.cloud.com/uid"], "uid-a");
    const uid = set.changes.find((c) => c.key === "compute.cloud.com/uid");
    assert.deepEqual(
      [uid?.path, uid?.observed, uid?.desired, uid?.ownership],
      ['tags["compute.cloud.com/uid"]', "old", "uid-a", true],
    );
    const after = await run(driver.observe(object("a"), ctxOf(object("a"))));
    assert.equal(after.exists && after.ownership, "owned");
  });

  it("lists RunInstances, which tags at launch, as the actions of a create", () => {
    const { driver } = setup();
    assert.deepEqual(driver.createActions(object("a")), ["ec2:RunInstances", "ec2:CreateTags"]);
  });
});

describe("Ec2InstanceDriver run state", () => {
  /** Observes `obj` and plans and applies its changes as the flow does; returns what happened. */
  async function reconcile(
    driver: Ec2InstanceDriver,
    run: ReturnType<typeof setup>["run"],
    obj: Ec2InstanceObject,
  ) {
    const obs = await run(driver.observe(obj, ctxOf(obj)));
    assert.ok(obs.exists);
    const { applied, refused } = await run(planAndApply(driver, obj, obs, ctxOf(obj)));
    return {
      instance: obs.resource,
      changes: described(applied),
      refused,
      readiness: driver.describe(obs.resource, obj).readiness,
    };
  }
  const mutating = (ec2: FakeEc2): string[] =>
    ec2.calls.filter((c) => c.op !== "DescribeInstances").map((c) => c.op);

  it("stops an instance for desiredState stopped, polls it while stopping, and calls it Ready once stopped", async () => {
    const { ec2, driver, run } = setup();
    const i = ec2.add({ InstanceType: "t3.micro", tags: { ...ownershipTags(owner("a")), team: "web" } });
    const obj = object("a", { instanceId: i.InstanceId }, { desiredState: "stopped" });
    const first = await reconcile(driver, run, obj);
    assert.deepEqual(first.changes, [
      { setting: "desiredState", description: "desiredState: stopped (stopping the instance)" },
    ]);
    assert.deepEqual([first.readiness.ready, first.readiness.pending], [false, true]);
    const stopping = await reconcile(driver, run, obj);
    assert.equal(stopping.instance.State?.Name, "stopping", "read fresh after the stop");
    assert.deepEqual(stopping.changes, [], "nothing is sent while the instance is stopping");
    assert.equal(stopping.readiness.pending, true);
    ec2.settle(i.InstanceId ?? "");
    const stopped = await reconcile(driver, run, obj);
    assert.deepEqual(stopped.changes, []);
    assert.deepEqual([stopped.readiness.ready, stopped.readiness.reason], [true, "Stopped"]);
    assert.deepEqual(mutating(ec2), ["StopInstances"], "stopped once, never re-sent");
  });

  it("starts an instance stopped out of band while desiredState is running", async () => {
    const { ec2, driver, run } = setup();
    const i = ec2.add({ State: { Name: "stopped" }, tags: { ...ownershipTags(owner("a")), team: "web" } });
    const obj = object("a", { instanceId: i.InstanceId });
    const r = await reconcile(driver, run, obj);
    assert.deepEqual(
      r.changes.map((c) => c.setting),
      ["desiredState"],
    );
    assert.deepEqual([r.readiness.ready, r.readiness.pending, r.readiness.reason], [false, true, "Starting"]);
    assert.equal(ec2.instances.get(i.InstanceId ?? "")?.State?.Name, "pending");
    assert.deepEqual((await reconcile(driver, run, obj)).changes, [], "not started twice while pending");
    assert.deepEqual(mutating(ec2), ["StartInstances"]);
  });

  it("refuses a type change on a running instance without restartForUpdate and touches nothing", async () => {
    const { ec2, driver, run } = setup();
    // Tag drift too: RestartRequired touches nothing at all until the spec changes.
    const i = ec2.add({ InstanceType: "t3.micro", tags: { ...ownershipTags(owner("a")), team: "ops" } });
    const obj = object("a", { instanceId: i.InstanceId }, { instanceType: "t3.large" });
    const r = await reconcile(driver, run, obj);
    assert.deepEqual(r.changes, []);
    assert.deepEqual(
      r.refused.map((c) => [c.path, c.refusal?.reason, c.refusal?.holdsAll]),
      [["spec.instanceType", "RestartRequired", true]],
    );
    assert.match(
      r.refused[0]?.refusal?.message ?? "",
      /instanceType t3\.micro -> t3\.large needs the instance stopped/,
    );
    assert.equal(r.readiness.ready, true, "the running instance stays Ready");
    assert.deepEqual(mutating(ec2), []);
  });

  it("restarts for a type change with restartForUpdate, one step per reconcile, and survives a new driver midway", async () => {
    const { clock, ec2, driver, run } = setup();
    const i = ec2.add({ InstanceType: "t3.micro", tags: { ...ownershipTags(owner("a")), team: "web" } });
    const id = i.InstanceId ?? "";
    const obj = object("a", { instanceId: id }, { instanceType: "t3.large", restartForUpdate: true });
    const stop = await reconcile(driver, run, obj);
    assert.deepEqual(
      stop.changes.map((c) => c.setting),
      ["instanceType"],
    );
    assert.deepEqual([stop.readiness.ready, stop.readiness.reason], [false, "Restarting"]);
    assert.deepEqual((await reconcile(driver, run, obj)).changes, [], "waits while stopping");
    ec2.settle(id);
    // The operator restarted while the instance was stopping: a new driver knows nothing of the
    // sequence and continues from what EC2 reports.
    const fresh = new Ec2InstanceDriver({ aws: ec2.source(), clock, visibilityGraceMs: 60_000 });
    const modify = await reconcile(fresh, run, obj);
    assert.deepEqual(
      modify.changes.map((c) => c.setting),
      ["instanceType", "desiredState"],
    );
    assert.equal(ec2.instances.get(id)?.InstanceType, "t3.large");
    assert.equal(ec2.instances.get(id)?.State?.Name, "pending");
    ec2.settle(id);
    const done = await reconcile(fresh, run, obj);
    assert.deepEqual(done.changes, []);
    assert.deepEqual([done.readiness.ready, done.readiness.reason], [true, "Running"]);
    assert.deepEqual(mutating(ec2), ["StopInstances", "ModifyInstanceAttribute", "StartInstances"]);
    const modified = ec2.calls.find((c) => c.op === "ModifyInstanceAttribute");
    assert.deepEqual(modified?.input, { InstanceId: id, InstanceType: { Value: "t3.large" } });
  });

  it("changes the type of a stopped instance without starting it when desiredState is stopped", async () => {
    const { ec2, driver, run } = setup();
    const i = ec2.add({
      State: { Name: "stopped" },
      InstanceType: "t3.micro",
      tags: { ...ownershipTags(owner("a")), team: "web" },
    });
    const obj = object(
      "a",
      { instanceId: i.InstanceId },
      { instanceType: "t3.small", desiredState: "stopped" },
    );
    const r = await reconcile(driver, run, obj);
    assert.deepEqual(r.changes, [
      { setting: "instanceType", description: "instanceType: t3.small (was t3.micro)" },
    ]);
    assert.equal(r.readiness.ready, true);
    assert.deepEqual((await reconcile(driver, run, obj)).changes, []);
    assert.deepEqual(mutating(ec2), ["ModifyInstanceAttribute"]);
  });

  it("launches an instance for desiredState stopped and stops it once it runs", async () => {
    const { ec2, driver, run } = setup();
    const obj = object("a", {}, { desiredState: "stopped" });
    const launched = await run(driver.create(obj, "uid-a-1", ctx));
    assert.equal(driver.describe(launched, obj).readiness.pending, true);
    const recorded = object("a", { instanceId: launched.InstanceId }, { desiredState: "stopped" });
    assert.deepEqual((await reconcile(driver, run, recorded)).changes, [], "pending: nothing sent yet");
    ec2.settle(launched.InstanceId ?? "");
    assert.deepEqual(
      (await reconcile(driver, run, recorded)).changes.map((c) => c.setting),
      ["desiredState"],
    );
    assert.deepEqual(mutating(ec2), ["RunInstances", "StopInstances"]);
  });
});

describe("Ec2InstanceDriver.delete", () => {
  it("terminates the recorded instance and any unrecorded one with its UID, never a foreign one", async () => {
    const { ec2, driver, run } = setup();
    const recorded = ec2.add({ tags: ownershipTags(owner("a")) });
    const lost = ec2.add({ State: { Name: "stopped" }, tags: ownershipTags(owner("a")) });
    const foreign = ec2.add({ tags: ownershipTags({ ...owner("a"), uid: "other" }) });
    const obj = object("a", { instanceId: recorded.InstanceId });

    const first = await run(remove(driver, obj));
    assert.equal(first.done, false);
    assert.equal(!first.done && first.blocked !== true ? first.state : undefined, "shutting-down");
    const terminated = ec2.calls.filter((c) => c.op === "TerminateInstances");
    assert.equal(terminated.length, 1);
    assert.deepEqual(
      (terminated[0]?.input as TerminateInstancesCommandInput).InstanceIds,
      [recorded.InstanceId, lost.InstanceId].sort(),
    );

    const second = await run(remove(driver, obj));
    assert.equal(second.done, false);
    assert.equal(ec2.count("TerminateInstances"), 1, "instances shutting down are not terminated again");

    for (const i of [recorded, lost])
      (ec2.instances.get(i.InstanceId ?? "") ?? {}).State = { Name: "terminated" };
    assert.deepEqual(await run(remove(driver, obj)), { done: true });
    assert.equal(ec2.instances.get(foreign.InstanceId ?? "")?.State?.Name, "running");
  });

  it("is done at once when nothing of the object exists", async () => {
    const { ec2, driver, run } = setup();
    assert.deepEqual(await run(remove(driver, object("a"))), { done: true });
    assert.equal(ec2.count("TerminateInstances"), 0);
  });

  it("waits, within the grace period, for a recorded instance not yet listed", async () => {
    const { clock, ec2, driver, run } = setup();
    const i = ec2.add({ tags: ownershipTags(owner("a")) });
    ec2.hidden.add(i.InstanceId ?? "");
    const fresh = object("a", {
      instanceId: i.InstanceId,
      launchTime: new Date(clock.now() - 1000).toISOString(),
    });
    assert.equal((await run(remove(driver, fresh))).done, false);
    ec2.hidden.clear();
    assert.equal((await run(remove(driver, fresh))).done, false);
    assert.equal(ec2.count("TerminateInstances"), 1, "terminated once it became visible");
  });

  it("waits for a launch whose instance ID was never recorded while it is recent", async () => {
    const { clock, driver, run } = setup();
    const creating = (ageMs: number): Ec2InstanceObject =>
      object("a", {
        createToken: "uid-a-1",
        createAttempt: 1,
        createRequestedAt: new Date(clock.now() - ageMs).toISOString(),
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "Creating",
            message: "creating the instance",
            observedGeneration: 1,
            lastTransitionTime: new Date(clock.now() - ageMs).toISOString(),
          },
        ],
      });
    assert.equal((await run(remove(driver, creating(1_000)))).done, false);
    assert.equal((await run(remove(driver, creating(600_000)))).done, true);
  });
});
