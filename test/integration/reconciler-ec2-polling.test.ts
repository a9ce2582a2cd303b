/**
 * Steady polling of many instances with the operator's default single worker: reconciles run one
 * after another, so their lookups never meet in a batch window; the batcher's snapshot (filled by
 * each call with every recently polled instance) answers them instead. End to end against a real
 * kube-apiserver and moto, counting DescribeInstances at the proxy.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ec2Env, FLEET } from "./reconciler-ec2-fixture.ts";

describe("Ec2Instance reconciler: polling with one worker", () => {
  const f = new Ec2Env({
    ns: "ec2-polling",
    operatorArgs: ["--max-concurrent-reconciles=1"],
  }).hooks();

  it(`polls ${FLEET} instances with a few DescribeInstances calls per round, not one per instance`, async () => {
    const names = Array.from({ length: FLEET }, (_, i) => `solo-${i}`);
    await Promise.all(names.map((n) => f.create(n, { tags: { fleet: "solo" } })));
    for (const n of names) await f.waitReady(n, 60_000);
    // After the launches the polls drift onto the 2 s grid; watch windows of one round each (a
    // reconcile per instance) until three in a row cost the same. Without the snapshot every
    // reconcile made its own call here (one per instance and round).
    const mutations = f.mutations();
    const { reconciles, describes, seen } = await f.pollRounds(names.length);
    console.log(
      `polling with one worker: ${reconciles} reconciles of ${FLEET} instances -> ${describes} DescribeInstances ` +
        `calls (all windows: ${seen})`,
    );
    assert.ok(
      describes * 5 <= reconciles,
      `${describes} DescribeInstances calls for ${reconciles} reconciles`,
    );
    assert.deepEqual(f.mutations(), mutations, "polling mutated nothing");

    const ids = await Promise.all(names.map(async (n) => (await f.get(n))?.status?.instanceId ?? ""));
    await Promise.all(names.map((n) => f.delete(n)));
    for (const n of names) await f.waitGone(n, 60_000);
    for (const id of ids) assert.equal((await f.instance(id))?.State?.Name, "terminated");
  });
});
