/**
 * Leader election between real operator processes (the program under test) on a real API server,
 * with short timings: LeaseDuration 3 s, RenewDeadline 2 s, RetryPeriod 0.5 s.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { waitFor, within, WAIT_MS } from "../support/process.ts";
import { startOperator, type OperatorProcess as Operator } from "../support/operator.ts";
import { ensureNamespace, httpStatus, leaseHolder, leaseSpec } from "./manager-fixture.ts";

const NS = "kp-system";
const LEASE_MS = 3_000;
const RENEW_MS = 2_000;
const RETRY_MS = 500;
/** Allowance for process scheduling, API latency and this test's 25 ms polling. */
const SLACK_MS = 600;

function electionArgs(leaseName: string): string[] {
  return [
    "--leader-elect",
    `--leader-election-namespace=${NS}`,
    `--leader-election-id=${leaseName}`,
    "--leader-election-lease-duration=3s",
    "--leader-election-renew-deadline=2s",
    "--leader-election-retry-period=500ms",
    "--graceful-shutdown-timeout=5s",
  ];
}

/** Polls the Lease every 25 ms until `ok(holder)`; returns the time that took. */
async function timeUntilHolder(
  cp: ControlPlane,
  lease: string,
  ok: (holder: string | undefined) => boolean,
  timeoutMs: number,
): Promise<number> {
  const start = performance.now();
  await waitFor(`lease ${lease} holder`, async () => ok(await leaseHolder(cp, NS, lease)), timeoutMs, 25);
  return performance.now() - start;
}

describe("leader election between operator processes", () => {
  let cp: ControlPlane;
  const started: Operator[] = [];

  before(async () => {
    // The operator registers controllers for the three kinds: their caches sync only once the CRDs exist.
    cp = await startControlPlane({ installCRDs: true });
    await ensureNamespace(cp, NS);
  });
  after(async () => {
    await Promise.all(started.map((o) => o.process.stop(2_000)));
    await cp?.stop();
  });

  async function pair(lease: string): Promise<{ a: Operator; b: Operator; ids: Map<string, Operator> }> {
    const a = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: `${lease}-a`,
      args: electionArgs(lease),
      waitReady: false,
    });
    const b = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: `${lease}-b`,
      args: electionArgs(lease),
      waitReady: false,
    });
    started.push(a, b);
    const ids = new Map([
      [await a.identity(), a],
      [await b.identity(), b],
    ]);
    await timeUntilHolder(cp, lease, (h) => h !== undefined && ids.has(h), WAIT_MS);
    return { a, b, ids };
  }

  it("elects exactly one of two managers and keeps it while it renews", async () => {
    const { a, b, ids } = await pair("one-leader");
    const holder = await leaseHolder(cp, NS, "one-leader");
    const leader = ids.get(holder ?? "");
    assert.ok(leader !== undefined);
    // Over twelve renewals (two lease durations) the same process keeps it and the other never led.
    const renewals = new Set<string>();
    let other: string | undefined;
    await waitFor(
      "twelve renewals of the lease",
      async () => {
        const lease = await leaseSpec(cp, NS, "one-leader");
        if (lease?.holderIdentity !== holder) other = String(lease?.holderIdentity);
        if (lease?.renewTime !== undefined) renewals.add(lease.renewTime);
        return other !== undefined || renewals.size >= 12;
      },
      6 * LEASE_MS,
      50,
    );
    assert.equal(other, undefined, "the holder never changed");
    const leaders = [a, b].filter((o) => o.logLines().some((l) => l.msg === "acquired leader lease"));
    assert.deepEqual(
      leaders.map((o) => o.name),
      [leader.name],
    );
    // Both replicas are ready (caches run on followers too).
    assert.equal(await httpStatus(a.probePort, "/readyz"), 200);
    assert.equal(await httpStatus(b.probePort, "/readyz"), 200);
  });

  it("replaces a SIGKILLed leader within LeaseDuration + RetryPeriod", async () => {
    const { ids } = await pair("crash");
    const holder = (await leaseHolder(cp, NS, "crash")) ?? "";
    const leader = ids.get(holder);
    assert.ok(leader !== undefined);
    const follower = [...ids].find(([id]) => id !== holder);
    assert.ok(follower !== undefined);
    leader.signal("SIGKILL");
    const took = await timeUntilHolder(cp, "crash", (h) => h === follower[0], 3 * LEASE_MS);
    console.log(
      `takeover after SIGKILL: ${Math.round(took)} ms (LeaseDuration ${LEASE_MS} ms + RetryPeriod ${RETRY_MS} ms)`,
    );
    assert.ok(took <= LEASE_MS + RETRY_MS + SLACK_MS, `took ${Math.round(took)} ms`);
    assert.ok(took >= LEASE_MS - RETRY_MS - SLACK_MS, `took over too early: ${Math.round(took)} ms`);
    assert.equal(await within("the leader to exit", leader.process.exited), 137, "killed by SIGKILL");
  });

  it("hands over in under 2 s on SIGTERM, and the old leader exits 0", async () => {
    const { ids } = await pair("graceful");
    const holder = (await leaseHolder(cp, NS, "graceful")) ?? "";
    const leader = ids.get(holder);
    assert.ok(leader !== undefined);
    const follower = [...ids].find(([id]) => id !== holder);
    assert.ok(follower !== undefined);
    leader.signal("SIGTERM");
    const took = await timeUntilHolder(cp, "graceful", (h) => h === follower[0], 3 * LEASE_MS);
    console.log(`handover after SIGTERM: ${Math.round(took)} ms`);
    assert.ok(took < 2_000, `took ${Math.round(took)} ms`);
    assert.equal(await within("the leader to exit", leader.process.exited), 0);
    assert.ok(leader.logLines().some((l) => l.msg === "released leader lease"));
  });

  it("exits non-zero at once when another holder overwrites the lease", async () => {
    const op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: "overwritten",
      args: electionArgs("overwritten"),
      waitReady: false,
    });
    started.push(op);
    const id = await op.identity();
    await timeUntilHolder(cp, "overwritten", (h) => h === id, WAIT_MS);
    const path = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/overwritten`;
    const current = await cp.request("GET", path);
    const lease = current.body as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
    const put = await cp.request("PUT", path, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: "intruder", renewTime: now, acquireTime: now },
    });
    assert.equal(put.status, 200, put.text);
    const t0 = performance.now();
    const code = await within("the operator to exit", op.process.exited);
    const took = performance.now() - t0;
    console.log(`exit after the lease was taken: ${Math.round(took)} ms`);
    assert.equal(code, 1);
    assert.ok(took < RETRY_MS + RENEW_MS, `took ${Math.round(took)} ms`);
    assert.equal(
      await leaseHolder(cp, NS, "overwritten"),
      "intruder",
      "the lost leader never wrote the lease back",
    );
    assert.ok(op.logLines().some((l) => l.msg === "leader election lost; exiting at once"));
  });
});
