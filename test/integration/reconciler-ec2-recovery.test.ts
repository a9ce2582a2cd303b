/**
 * The Ec2Instance reconciler when things go wrong, end to end against a real kube-apiserver and
 * moto: a terminal AWS error that must not hot-loop, an instance left behind by another object
 * (NotOwned, then adopted), the operator killed between RunInstances and the status write, and
 * 20 instances polled together through batched DescribeInstances calls.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { ready } from "../support/reconciler-env.ts";
import { Ec2Env, FLEET, tagMap } from "./reconciler-ec2-fixture.ts";
import { within } from "../support/process.ts";

describe("Ec2Instance reconciler: failures, adoption, crash safety, batching", () => {
  const f = new Ec2Env({ ns: "ec2-recovery", operatorArgs: ["--max-concurrent-reconciles=20"] }).hooks();

  it("reports an AMI that EC2 rejects as a terminal error without hot-looping, and retries on a new generation", async () => {
    const ami = "ami-0123456789abcdef0";
    await f.create("bad-ami", { amiId: ami, storage: { rootVolume: { size: 8 } } });
    const failed = await f.waitUntil(
      "bad-ami",
      "terminal failure",
      (o) => ready(o)?.reason === "InvalidAMIID_NotFound",
    );
    assert.match(ready(failed)?.message ?? "", new RegExp(ami));
    await f.waitEvent("bad-ami", "Warning", "InvalidAMIID_NotFound"); // Events are written asynchronously, after the status
    await f.waitPolls(1); // the metronome is running before anything is counted
    const [reconciles, retried] = [f.reconcilesOf("bad-ami"), await f.retriedErrors()];
    const lookups = f.proxy.count("DescribeImages");
    // Measuring that nothing happens needs time to pass: a hot loop would reconcile hundreds of
    // times in five poll periods (per-key backoff starts at 5 ms), a poll every 2 s five times.
    // The failed reconcile's own status writes (the token, then the failure) may still each
    // enqueue one more reconcile, which fails the same way and writes nothing.
    await f.waitPolls(5);
    const extra = f.reconcilesOf("bad-ami") - reconciles;
    assert.ok(extra <= 2, `reconciles in five poll periods: ${extra}`);
    assert.equal(await f.retriedErrors(), retried, "no error was retried with backoff");
    assert.ok(f.proxy.count("DescribeImages") - lookups <= 2);
    assert.equal(f.proxy.count("RunInstances"), 0, "nothing was launched");

    await f.patch("bad-ami", { spec: { tags: { retry: "1" } } });
    await f.waitUntil(
      "bad-ami",
      "retried at generation 2",
      (o) => ready(o)?.reason === "InvalidAMIID_NotFound" && o?.status?.observedGeneration === 2,
    );
    assert.ok(f.proxy.count("DescribeImages") > lookups);
    await f.delete("bad-ami");
    await f.waitGone("bad-ami");
  });

  it("refuses an instance left behind by an earlier object of the same name until adoptExisting is set", async () => {
    const first = await f.create("legacy", { deletionPolicy: "Retain", tags: { app: "old" } });
    const kept = await f.waitReady("legacy");
    const id = kept.status?.instanceId ?? "";
    await f.delete("legacy");
    await f.waitGone("legacy");
    const launches = f.proxy.count("RunInstances");

    const second = await f.create("legacy", { tags: { app: "new" } });
    assert.notEqual(second.metadata.uid, first.metadata.uid);
    const refused = await f.waitUntil("legacy", "NotOwned", (o) => ready(o)?.reason === "NotOwned");
    assert.equal(refused?.status?.instanceId, undefined);
    await f.waitEvent("legacy", "Warning", "NotOwned"); // Events are written asynchronously, after the status
    assert.equal(
      tagMap((await f.instance(id))?.Tags)[OWNERSHIP_TAGS.uid],
      first.metadata.uid,
      "left untouched",
    );

    await f.patch("legacy", { spec: { adoptExisting: true } });
    const adopted = await f.waitReady("legacy");
    assert.equal(adopted.status?.instanceId, id);
    const tags = tagMap((await f.instance(id))?.Tags);
    assert.equal(tags[OWNERSHIP_TAGS.uid], second.metadata.uid);
    assert.equal(tags.app, "new");
    await f.waitEvent("legacy", "Normal", "Adopted"); // Events are written asynchronously, after the status
    assert.equal(f.proxy.count("RunInstances"), launches, "adopted, not launched");

    await f.delete("legacy");
    await f.waitGone("legacy");
    assert.equal(
      (await f.instance(id))?.State?.Name,
      "terminated",
      "an adopted instance is deleted like an owned one",
    );
  });

  it("leaves exactly one instance when the operator dies between RunInstances and the status write", async () => {
    const launches = f.proxy.count("RunInstances");
    f.proxy.onResponse("RunInstances", () => {
      f.op.kill();
      return "drop";
    });
    const created = await f.create("crash");
    await within("the killed operator to exit", f.op.process.exited);
    const mid = await f.get("crash");
    assert.ok(mid?.status?.createToken !== undefined, "the token was recorded before the launch");
    assert.equal(mid?.status?.instanceId, undefined, "the launch's answer never arrived");
    assert.equal((await f.instancesOf(created.metadata.uid)).length, 1, "the launch happened in EC2");

    await f.startOperator();
    const obj = await f.waitReady("crash");
    const all = await f.instancesOf(created.metadata.uid);
    assert.equal(all.length, 1, "exactly one instance, terminated ones included");
    assert.equal(all[0]?.InstanceId, obj.status?.instanceId);
    assert.equal(all[0]?.ClientToken, obj.status?.createToken);
    assert.equal(obj.status?.createAttempt, 1);
    assert.equal(
      f.proxy.count("RunInstances"),
      launches + 1,
      "found by its ownership tag, not launched again",
    );
  });

  it(`polls ${FLEET} instances with far fewer DescribeInstances calls than instances`, async () => {
    const names = Array.from({ length: FLEET }, (_, i) => `fleet-${i}`);
    await Promise.all(names.map((n) => f.create(n, { tags: { fleet: "a" } })));
    for (const n of names) await f.waitReady(n, 60_000);
    // Right after the launches the EC2 rate budget (20 calls/s) is spent and the stale-cache
    // reconciles that follow each status write run one by one; then every poll lands on the
    // poll-period grid. Watch windows of one round each (a reconcile per instance, plus "crash")
    // until three in a row cost the same.
    const mutations = f.mutations();
    const { reconciles, describes, seen } = await f.pollRounds(names.length + 1);
    console.log(
      `batched polling: ${reconciles} reconciles of ${FLEET} instances -> ${describes} DescribeInstances calls ` +
        `(all windows: ${seen})`,
    );
    assert.ok(
      describes * 7 <= reconciles,
      `${describes} DescribeInstances calls for ${reconciles} reconciles`,
    );
    assert.deepEqual(f.mutations(), mutations, "polling mutated nothing");

    const ids = await Promise.all(names.map(async (n) => (await f.get(n))?.status?.instanceId ?? ""));
    await Promise.all(names.map((n) => f.delete(n)));
    for (const n of names) await f.waitGone(n, 60_000);
    for (const id of ids) assert.equal((await f.instance(id))?.State?.Name, "terminated");
  });
});
