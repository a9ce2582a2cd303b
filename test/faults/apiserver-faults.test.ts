/**
 * API-server faults, with the operator talking to kube-apiserver through a TCP proxy: the API
 * server restarted (etcd keeps the data), the operator's connections (watches included) cut for a
 * while and dropped repeatedly, and history compacted away while the operator is cut off, so its
 * watches resume with 410 Gone and it must relist. Objects created and deleted around and during
 * each outage are all seen: created ones end Ready with one AWS resource, deleted ones end gone
 * with their AWS resource deleted. The audit log shows every accepted write of the operator to an
 * object carried the resourceVersion it was based on (a stale one gets 409, never applied).
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { isWrite } from "../support/audit.ts";
import { Fleet, plan, type FleetObject } from "./fleet.ts";
import { record, sized } from "./results.ts";

const SIZES = sized({
  full: { base: 60, perOutage: 15, outageSeconds: 15, drops: 10, allPhases: 1 },
  // The reduced pass keeps the restart and the compaction (410) outages, the two hardest.
  reduced: { base: 3, perOutage: 3, outageSeconds: 2, drops: 0, allPhases: 0 },
});
const USER = "kubeprovisioner-operator";

describe("API-server faults: restart, watch cuts, 410 Gone after compaction", () => {
  // No watch cache and a compaction every second: an old resourceVersion really expires.
  const fleet = new Fleet({
    apiServerFlags: ["--watch-cache=false", "--etcd-compaction-interval=1s"],
    kubeProxy: true,
    auditLog: true,
  });
  before(() => fleet.start());
  after(() => fleet.stop());

  it("sees every create and delete made around each outage and converges without duplicates", async () => {
    const base = plan("base", SIZES.base);
    const op = await fleet.startOperator(
      ["--leader-elect=false", "--poll-interval=10s", "--max-concurrent-reconciles=8"],
      USER,
    );
    const timeout = sized({ full: 300_000, reduced: 90_000 });
    await fleet.createAll(base);
    await fleet.waitReady(base, timeout);
    let live: FleetObject[] = [...base];
    const victims = (n: number): FleetObject[] => {
      const out = live.slice(0, n);
      live = live.slice(n);
      return out;
    };
    const recovery: Record<string, number> = {};
    /** After an outage: `created` Ready, `deleted` gone; the time it took. */
    const settle = async (name: string, created: FleetObject[], deleted: FleetObject[]): Promise<void> => {
      const t0 = performance.now();
      await fleet.waitReady(created, timeout);
      await fleet.waitNoneOf(deleted, timeout);
      recovery[name] = Math.round(performance.now() - t0);
      live.push(...created);
    };

    // 1. kube-apiserver restarted: objects created and deleted just before it stops, and just after it is back.
    {
      const before1 = plan("restart-a", SIZES.perOutage);
      const gone1 = victims(SIZES.perOutage);
      await fleet.createAll(before1);
      await fleet.deleteAll(gone1);
      await fleet.cp.stopApiServer();
      await delay(SIZES.outageSeconds * 1000);
      await fleet.cp.startApiServer();
      const after1 = plan("restart-b", SIZES.perOutage);
      const gone2 = victims(SIZES.perOutage);
      await fleet.createAll(after1);
      await fleet.deleteAll(gone2);
      await settle("apiServerRestart", [...before1, ...after1], [...gone1, ...gone2]);
    }

    // 2. The operator cut off from the API server (every connection dropped, new ones refused) while objects change.
    const kubeProxy = fleet.kubeProxy;
    assert.ok(kubeProxy !== undefined);
    if (SIZES.allPhases === 1) {
      await kubeProxy.cut();
      const made = plan("cut", SIZES.perOutage);
      const gone = victims(SIZES.perOutage);
      await fleet.createAll(made);
      await fleet.deleteAll(gone);
      await delay(SIZES.outageSeconds * 1000);
      await kubeProxy.listen();
      await settle("watchCut", made, gone);
    }

    // 3. Connections dropped again and again (reconnects allowed) during a create and delete burst.
    if (SIZES.allPhases === 1) {
      const made = plan("drops", SIZES.perOutage);
      const gone = victims(SIZES.perOutage);
      const burst = Promise.all([fleet.createAll(made, 2), fleet.deleteAll(gone, 2)]);
      for (let i = 0; i < SIZES.drops; i++) {
        kubeProxy.drop();
        await delay(500);
      }
      await burst;
      await settle("repeatedDrops", made, gone);
    }

    // 4. Cut off while history is compacted: the watches resume with 410 Gone and relist.
    const goneBefore = await op.metric("reflector_watch_ends_total", { reason: "gone" });
    const listsBefore = await op.metric("reflector_lists_total");
    {
      await kubeProxy.cut();
      const made = plan("compacted", SIZES.perOutage);
      const gone = victims(SIZES.perOutage);
      await fleet.createAll(made);
      await fleet.deleteAll(gone);
      await delay(Math.max(4, SIZES.outageSeconds) * 1000); // several compactions
      await kubeProxy.listen();
      await settle("compacted410", made, gone);
    }
    const gone410 = (await op.metric("reflector_watch_ends_total", { reason: "gone" })) - goneBefore;
    const relists = (await op.metric("reflector_lists_total")) - listsBefore;

    const census = await fleet.census();
    assert.deepEqual(census.notReady, []);
    assert.deepEqual(census.duplicates, [], "no duplicate creates");
    assert.deepEqual(census.missing, []);
    assert.deepEqual(census.orphans, [], "every deleted object's AWS resource is gone");
    assert.equal(census.objects, live.length);

    // Every write of the operator to an object said which version it was based on.
    const writes = fleet
      .auditLog()
      .filter((e) => e.user.username === USER && isWrite(e) && e.objectRef?.apiGroup === "compute.cloud.com");
    const accepted = writes.filter((e) => (e.responseStatus?.code ?? 0) < 300);
    const conflicts = writes.filter((e) => e.responseStatus?.code === 409).length;
    const unversioned = accepted.filter(
      (e) => e.verb !== "delete" && !(e.requestObject?.metadata?.resourceVersion ?? ""),
    );
    assert.ok(accepted.length > 0);
    assert.deepEqual(
      unversioned.map((e) => `${e.verb} ${e.objectRef?.name ?? ""}/${e.objectRef?.subresource ?? ""}`),
      [],
      "no write without a resourceVersion (a stale one would be applied)",
    );

    await fleet.deleteAll(live);
    const drain = await fleet.waitNoObjects(timeout);
    const leaks = await fleet.liveResources();
    assert.deepEqual(
      leaks.map((r) => `${r.kind} ${r.id}`),
      [],
    );
    assert.ok(gone410 > 0, "the watches met 410 Gone");
    assert.ok(relists > 0, "and relisted");

    record(
      "apiserver-faults",
      { ...SIZES, regions: 3, watchCache: "off", etcdCompactionInterval: "1s" },
      {
        ...Object.fromEntries(Object.entries(recovery).map(([k, ms]) => [`recoverySeconds.${k}`, ms / 1000])),
        watchEndsGone410: gone410,
        relists,
        operatorWritesToObjects: writes.length,
        acceptedWrites: accepted.length,
        conflicts409: conflicts,
        writesWithoutResourceVersion: unversioned.length,
        duplicates: census.duplicates.length,
        orphans: census.orphans.length,
        deleteSeconds: Math.round(drain / 1000),
        leakedAfterDeletion: leaks.length,
      },
    );
  });
});
