/**
 * Leader failover: three operator processes with leader election, each with its own client
 * identity (a client-certificate user), and the current leader SIGKILLed again and again during a
 * create storm (each killed process is replaced, so three keep running). From outside: each
 * takeover lands within LeaseDuration + RetryPeriod (plus scheduling slack); the API server's audit
 * log never shows two processes writing objects or Events in the same period; every object ends
 * Ready with exactly one AWS resource.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import type { OperatorProcess } from "../support/operator.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { isWrite, type AuditEvent } from "../support/audit.ts";
import { Fleet, plan, type FleetObject } from "./fleet.ts";
import { record, sized } from "./results.ts";

const SIZES = sized({
  full: { kills: 20, batch: 3, batchEveryMs: 2000 },
  reduced: { kills: 2, batch: 3, batchEveryMs: 1500 },
});
const LEASE = "kubeprovisioner-faults";
const LEASE_MS = 3000;
const RETRY_MS = 500;
/** Process scheduling on a shared 2-core machine and this test's 50 ms polling of the Lease. */
const SLACK_MS = 1000;

interface Member {
  user: string;
  op: OperatorProcess;
  identity: string;
}

/** Writes of objects and Events, in the order the API server received them, with the writer. */
function objectWrites(log: AuditEvent[], users: Set<string>): AuditEvent[] {
  return log
    .filter(
      (e) =>
        users.has(e.user.username) &&
        isWrite(e) &&
        (e.objectRef?.apiGroup === "compute.cloud.com" || e.objectRef?.resource === "events"),
    )
    .sort((a, b) => (a.requestReceivedTimestamp < b.requestReceivedTimestamp ? -1 : 1));
}

describe("leader failover: 3 processes, the leader SIGKILLed during a create storm", () => {
  const fleet = new Fleet({ auditLog: true });
  before(() => fleet.start());
  after(() => fleet.stop());

  it("hands over within the lease bound, never has two writers at once, and duplicates nothing", async () => {
    let started = 0;
    const members: Member[] = [];
    const startMember = async (): Promise<Member> => {
      const user = `operator-${++started}`;
      const op = await fleet.startOperator(
        [
          "--leader-elect",
          `--leader-election-namespace=${fleet.ns}`,
          `--leader-election-id=${LEASE}`,
          "--leader-election-lease-duration=3s",
          "--leader-election-renew-deadline=2s",
          "--leader-election-retry-period=500ms",
          "--poll-interval=10s",
          "--max-concurrent-reconciles=8",
        ],
        user,
      );
      const m = { user, op, identity: await op.identity() };
      members.push(m);
      return m;
    };
    const holder = async (): Promise<string | undefined> => {
      const res = await fleet.cp.request(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${fleet.ns}/leases/${LEASE}`,
      );
      return res.status === 200
        ? (res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity
        : undefined;
    };
    for (let i = 0; i < 3; i++) await startMember();
    await waitFor(
      "a leader",
      async () => {
        const h = await holder();
        return members.some((m) => m.identity === h);
      },
      WAIT_MS,
    );

    // The create storm runs until the last takeover.
    const objs: FleetObject[] = [];
    let storming = true;
    const storm = (async () => {
      for (let b = 0; storming; b++) {
        const batch = plan(`wave${b}`, SIZES.batch);
        await fleet.createAll(batch);
        objs.push(...batch);
        await delay(SIZES.batchEveryMs);
      }
    })();

    const takeovers: number[] = [];
    for (let k = 0; k < SIZES.kills; k++) {
      let leader: Member | undefined;
      await waitFor(
        "a live leader",
        async () => {
          const h = await holder();
          leader = members.find((m) => m.identity === h && m.op.process.proc.exitCode === null);
          return leader !== undefined;
        },
        WAIT_MS,
        50,
      );
      assert.ok(leader !== undefined);
      const dead = leader;
      // Let the new leader work for a moment (its caches synced, reconciles under way).
      await delay(1000 + Math.random() * 1500);
      const t0 = performance.now();
      dead.op.kill();
      const others = new Set(members.filter((m) => m !== dead).map((m) => m.identity));
      await waitFor("takeover", async () => others.has((await holder()) ?? ""), 3 * LEASE_MS, 50);
      takeovers.push(performance.now() - t0);
      await dead.op.process.exited;
      members.splice(members.indexOf(dead), 1);
      await startMember();
    }
    storming = false;
    await storm;

    await fleet.waitReady(objs, sized({ full: 300_000, reduced: 90_000 }));
    const census = await fleet.census();
    assert.deepEqual(census.duplicates, [], "no duplicate creates");
    assert.deepEqual(census.missing, []);
    assert.deepEqual(census.orphans, []);

    // The audit log: each writer's writes form one block, and a block ends before the next begins.
    const users = new Set(Array.from({ length: started }, (_, i) => `operator-${i + 1}`));
    const writes = objectWrites(fleet.auditLog(), users);
    const blocks: { user: string; first: string; last: string; writes: number }[] = [];
    for (const e of writes) {
      const cur = blocks.at(-1);
      if (cur?.user === e.user.username) {
        cur.writes += 1;
        if (e.stageTimestamp > cur.last) cur.last = e.stageTimestamp;
      } else
        blocks.push({
          user: e.user.username,
          first: e.requestReceivedTimestamp,
          last: e.stageTimestamp,
          writes: 1,
        });
    }
    const seen = new Set<string>();
    const interleaved: string[] = [];
    for (const b of blocks) {
      if (seen.has(b.user)) interleaved.push(b.user);
      seen.add(b.user);
    }
    const overlaps = blocks
      .slice(1)
      .filter((b, i) => (blocks[i]?.last ?? "") >= b.first)
      .map((b) => b.user);
    assert.deepEqual(interleaved, [], "a writer that was replaced never wrote again");
    assert.deepEqual(overlaps, [], "no two writers in the same period");
    assert.ok(blocks.length >= SIZES.kills, `${blocks.length} writer periods for ${SIZES.kills} kills`);

    const sorted = [...takeovers].sort((a, b) => a - b);
    const bound = LEASE_MS + RETRY_MS + SLACK_MS;
    record(
      "leader-failover",
      { ...SIZES, processes: 3, leaseMs: LEASE_MS, renewMs: 2000, retryMs: RETRY_MS },
      {
        kills: takeovers.length,
        objectsCreatedDuringStorm: objs.length,
        takeoverMsMin: Math.round(sorted[0] ?? 0),
        takeoverMsMedian: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
        takeoverMsMax: Math.round(sorted.at(-1) ?? 0),
        takeoverBoundMs: bound,
        auditedWrites: writes.length,
        writerPeriods: blocks.length,
        overlappingWriters: overlaps.length + interleaved.length,
        duplicates: census.duplicates.length,
        orphans: census.orphans.length,
      },
    );
    for (const t of takeovers) assert.ok(t <= bound, `takeover took ${Math.round(t)} ms (bound ${bound} ms)`);

    await fleet.deleteAll(objs);
    await fleet.waitNoObjects(sized({ full: 300_000, reduced: 90_000 }));
    assert.deepEqual(await fleet.liveResources(), []);
  });
});
