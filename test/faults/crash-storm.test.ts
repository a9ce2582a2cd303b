/**
 * Crash storm: objects of the three kinds in three regions, the operator SIGKILLed again and again
 * while they are created and while they are deleted, including kills inside the window between an
 * AWS create and the status write that records it (the proxy holds the create's response, the
 * operator is killed, then the response is released to a dead connection). Seen from outside:
 * every object ends Ready with exactly one AWS resource, no AWS resource lacks its object, and
 * once every object is deleted no object (so no finalizer) and no AWS resource is left.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import type { OperatorProcess } from "../support/operator.ts";
import { Fleet, plan } from "./fleet.ts";
import { seededRandom, seed } from "./random.ts";
import { record, sized } from "./results.ts";

const SIZES = sized({
  full: { objects: 210, createKills: 36, deleteKills: 14, heldEvery: 3 },
  reduced: { objects: 12, createKills: 3, deleteKills: 1, heldEvery: 2 },
});
const ARGS = ["--leader-elect=false", "--poll-interval=10s", "--max-concurrent-reconciles=8"];
const CREATES = ["RunInstances", "CreateBucket", "CreateQueue"] as const;

describe("crash storm: SIGKILLs during creates, inside the create window, and during deletes", () => {
  const fleet = new Fleet();
  before(() => fleet.start());
  after(() => fleet.stop());

  it("ends with every object Ready and one AWS resource each, and nothing left after deletion", async () => {
    const random = seededRandom(seed);
    const objs = plan("storm", SIZES.objects);
    // Every life of the creation phase creates a batch (each batch holds all three kinds), so a
    // held create always has a create of its operation to catch.
    const batchSize = Math.ceil(objs.length / SIZES.createKills);
    let kills = 0;
    let heldKills = 0;
    const heldByOp: Record<string, number> = {};
    let creates = 0;
    let lastKill = 0;

    /** Runs one operator life: started, then killed at a random moment or inside a held create. */
    const life = async (
      held: (typeof CREATES)[number] | undefined,
      work: () => Promise<void>,
    ): Promise<void> => {
      const op: OperatorProcess = await fleet.startOperator(ARGS);
      let fired = false;
      if (held !== undefined) {
        fleet.proxy.onResponse(held, async () => {
          fired = true;
          op.kill();
          await op.process.exited;
          return "deliver" as const; // released, to a connection that is gone
        });
      }
      await work();
      if (held !== undefined) {
        const deadline = Date.now() + 20_000;
        while (!fired && Date.now() < deadline && op.process.proc.exitCode === null) await delay(50);
        fleet.proxy.onResponse(held, () => "deliver");
      }
      if (fired) {
        heldKills += 1;
        heldByOp[held ?? ""] = (heldByOp[held ?? ""] ?? 0) + 1;
      } else {
        await delay(200 + random() * 2300);
        op.kill();
      }
      await op.process.exited;
      kills += 1;
      lastKill = performance.now();
    };

    const t0 = performance.now();
    for (let k = 0; k < SIZES.createKills; k++) {
      const held =
        k % SIZES.heldEvery === 1 ? CREATES[Math.floor(k / SIZES.heldEvery) % CREATES.length] : undefined;
      await life(held, async () => {
        const batch = objs.slice(creates, creates + batchSize);
        creates += batch.length;
        await fleet.createAll(batch);
      });
    }
    assert.equal(creates, objs.length, "every object was created during the storm");
    const storm = performance.now() - t0;

    await fleet.startOperator(ARGS);
    await fleet.waitReady(objs, sized({ full: 600_000, reduced: 120_000 }));
    const converge = performance.now() - lastKill;
    const census = await fleet.census();
    assert.deepEqual(census.notReady, []);
    assert.deepEqual(census.duplicates, [], "exactly one AWS resource per object, ever");
    assert.deepEqual(census.missing, []);
    assert.deepEqual(census.orphans, [], "no AWS resource without its object");
    assert.equal(census.objects, objs.length);
    const calls = Object.fromEntries(CREATES.map((c) => [c, fleet.proxy.count(c)]));
    const last = fleet.operators.at(-1);
    await last?.stop();

    await fleet.deleteAll(objs);
    for (let k = 0; k < SIZES.deleteKills; k++) await life(undefined, async () => {});
    await fleet.startOperator(ARGS);
    await fleet.waitNoObjects(sized({ full: 600_000, reduced: 120_000 }));
    const drain = performance.now() - lastKill;
    const leaks = await fleet.liveResources();
    assert.deepEqual(
      leaks.map((r) => `${r.kind} ${r.id}`),
      [],
      "no AWS resource left after deleting every object",
    );
    assert.ok(kills >= SIZES.createKills + SIZES.deleteKills);
    assert.ok(heldKills >= 1, "at least one kill inside a held create");

    record(
      "crash-storm",
      { ...SIZES, regions: 3, seed },
      {
        kills,
        killsInsideCreateWindow: heldKills,
        ...Object.fromEntries(Object.entries(heldByOp).map(([op, n]) => [`heldKills.${op}`, n])),
        stormSeconds: Math.round(storm / 1000),
        convergeAfterLastKillSeconds: Math.round(converge / 1000),
        deletionAfterLastKillSeconds: Math.round(drain / 1000),
        ...Object.fromEntries(Object.entries(calls).map(([op, n]) => [`calls.${op}`, n])),
        duplicates: census.duplicates.length,
        orphans: census.orphans.length,
        notReady: census.notReady.length,
        leakedAfterDeletion: leaks.length,
      },
    );
  });
});
