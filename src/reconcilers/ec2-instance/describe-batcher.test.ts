import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import { FakeClock, flushMicrotasks } from "../../runtime/testing/fake-clock.ts";
import { DescribeBatcher, type DescribePageInput, type DescribePageOutput } from "./describe-batcher.ts";

/** A DescribeInstances stand-in over a fixed set of instances, recording every page request. */
function fakeEc2(known: Instance[], opts: { pageSize?: number } = {}) {
  const requests: DescribePageInput[] = [];
  const byId = new Map(known.map((i) => [i.InstanceId ?? "", i]));
  let fail: Error | undefined;
  return {
    requests,
    failWith(err: Error) {
      fail = err;
    },
    async describe(input: DescribePageInput): Promise<DescribePageOutput> {
      requests.push(structuredClone(input));
      if (fail !== undefined) throw fail;
      const filter = input.Filters.find((f) => f.Name === "instance-id");
      const matches = (filter?.Values ?? []).flatMap((id) => {
        const i = byId.get(id);
        return i === undefined ? [] : [i];
      });
      const size = Math.min(opts.pageSize ?? input.MaxResults, input.MaxResults);
      const start = input.NextToken === undefined ? 0 : Number(input.NextToken);
      // Copies, as the SDK gives: later changes to `known` are not seen through old answers.
      const page = structuredClone(matches.slice(start, start + size));
      const next = start + size < matches.length ? String(start + size) : undefined;
      // EC2 groups instances in reservations; two per reservation here.
      const reservations = [];
      for (let k = 0; k < page.length; k += 2) reservations.push({ Instances: page.slice(k, k + 2) });
      return { Reservations: reservations, ...(next !== undefined ? { NextToken: next } : {}) };
    },
  };
}

const instance = (n: number, state = "running"): Instance => ({
  InstanceId: `i-${n.toString(16).padStart(17, "0")}`,
  State: { Name: state as "running" },
});

describe("DescribeBatcher", () => {
  it("answers N lookups made within the window with one call", async () => {
    const clock = new FakeClock();
    const all = Array.from({ length: 50 }, (_, n) => instance(n));
    const ec2 = fakeEc2(all);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock, windowMs: 10 });
    const lookups = all.map((i) => batcher.get(i.InstanceId ?? ""));
    await flushMicrotasks();
    assert.equal(ec2.requests.length, 0, "nothing is sent before the window closes");
    await clock.advance(10);
    const got = await Promise.all(lookups);
    assert.equal(ec2.requests.length, 1);
    assert.deepEqual(
      got.map((i) => i?.InstanceId),
      all.map((i) => i.InstanceId),
    );
    const filter = ec2.requests[0]?.Filters[0];
    assert.equal(filter?.Name, "instance-id", "filters by instance-id, never InstanceIds");
    assert.equal(filter?.Values?.length, 50);
    assert.equal(batcher.calls, 1);
  });

  it("gives each caller its own instance, and undefined for an unknown ID without failing the batch", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1), instance(2, "terminated")]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const a = batcher.get(instance(1).InstanceId ?? "");
    const b = batcher.get(instance(2).InstanceId ?? "");
    const missing = batcher.get(instance(99).InstanceId ?? "");
    await clock.advance(10);
    assert.equal((await a)?.State?.Name, "running");
    assert.equal((await b)?.State?.Name, "terminated", "terminated instances are returned as they are");
    assert.equal(await missing, undefined);
    assert.equal(ec2.requests.length, 1);
  });

  it("sends an ID asked for twice in one window once and answers both callers", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(7)]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const id = instance(7).InstanceId ?? "";
    const [x, y] = [batcher.get(id), batcher.get(id)];
    await clock.advance(10);
    assert.equal((await x)?.InstanceId, id);
    assert.equal((await y)?.InstanceId, id);
    assert.deepEqual(ec2.requests[0]?.Filters[0]?.Values, [id]);
  });

  it("splits 2500 lookups into 3 calls of at most 1000 IDs, sending full batches without waiting", async () => {
    const clock = new FakeClock();
    const all = Array.from({ length: 2500 }, (_, n) => instance(n));
    const ec2 = fakeEc2(all);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock, windowMs: 10 });
    const lookups = all.map((i) => batcher.get(i.InstanceId ?? ""));
    await flushMicrotasks();
    assert.equal(ec2.requests.length, 2, "two full batches leave at once");
    assert.equal(batcher.pending, 500);
    await clock.advance(10);
    const got = await Promise.all(lookups);
    assert.equal(ec2.requests.length, 3);
    assert.deepEqual(
      ec2.requests.map((r) => r.Filters[0]?.Values?.length),
      [1000, 1000, 500],
    );
    assert.ok(ec2.requests.every((r) => r.MaxResults === 1000));
    assert.equal(got.filter((i) => i !== undefined).length, 2500);
  });

  it("follows NextToken until the last page", async () => {
    const clock = new FakeClock();
    const all = Array.from({ length: 25 }, (_, n) => instance(n));
    const ec2 = fakeEc2(all, { pageSize: 10 });
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const lookups = all.map((i) => batcher.get(i.InstanceId ?? ""));
    await clock.advance(10);
    const got = await Promise.all(lookups);
    assert.equal(got.filter((i) => i !== undefined).length, 25);
    assert.deepEqual(
      ec2.requests.map((r) => r.NextToken),
      [undefined, "10", "20"],
    );
    assert.equal(batcher.calls, 3);
  });

  it("rejects every caller of a failed batch with the call's error", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1), instance(2)]);
    const boom = new Error("RequestLimitExceeded");
    ec2.failWith(boom);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const settled = Promise.allSettled([1, 2, 3].map((n) => batcher.get(instance(n).InstanceId ?? "")));
    await clock.advance(10);
    const results = await settled;
    assert.equal(ec2.requests.length, 1);
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.equal(r.status === "rejected" ? r.reason : undefined, boom);
    }
  });

  it("starts a new batch for lookups made while one is in flight", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1), instance(2)]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batcher = new DescribeBatcher({
      describe: async (input) => {
        await gate;
        return ec2.describe(input);
      },
      clock,
    });
    const first = batcher.get(instance(1).InstanceId ?? "");
    await clock.advance(10);
    const second = batcher.get(instance(2).InstanceId ?? "");
    await clock.advance(10);
    release();
    assert.equal((await first)?.InstanceId, instance(1).InstanceId);
    assert.equal((await second)?.InstanceId, instance(2).InstanceId);
    assert.deepEqual(
      ec2.requests.map((r) => r.Filters[0]?.Values),
      [[instance(1).InstanceId], [instance(2).InstanceId]],
    );
  });

  it("rejects an aborted caller at once and drops its ID when no one else wants it", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1), instance(2)]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const ac = new AbortController();
    const aborted = batcher.get(instance(1).InstanceId ?? "", { signal: ac.signal });
    const kept = batcher.get(instance(2).InstanceId ?? "");
    ac.abort(new Error("shutting down"));
    await assert.rejects(aborted, /shutting down/);
    await clock.advance(10);
    assert.equal((await kept)?.InstanceId, instance(2).InstanceId);
    assert.deepEqual(ec2.requests[0]?.Filters[0]?.Values, [instance(2).InstanceId]);
  });

  it("sends nothing and leaves no timer when the only caller aborts", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1)]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    const ac = new AbortController();
    const p = batcher.get(instance(1).InstanceId ?? "", { signal: ac.signal });
    ac.abort(new Error("gone"));
    await assert.rejects(p, /gone/);
    assert.equal(clock.pendingTimers(), 0);
    await clock.advance(100);
    assert.equal(ec2.requests.length, 0);
  });

  it("rejects an already aborted signal without queueing", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    await assert.rejects(batcher.get("i-1", { signal: AbortSignal.abort(new Error("early")) }), /early/);
    assert.equal(batcher.pending, 0);
    assert.equal(clock.pendingTimers(), 0);
  });

  it("stops paginating when the endpoint repeats a token", async () => {
    const clock = new FakeClock();
    let n = 0;
    const batcher = new DescribeBatcher({
      clock,
      describe: async () => {
        n += 1;
        return { Reservations: [{ Instances: [instance(1)] }], NextToken: "same" };
      },
    });
    const p = batcher.get(instance(1).InstanceId ?? "");
    await clock.advance(10);
    assert.equal((await p)?.InstanceId, instance(1).InstanceId);
    assert.equal(n, 2);
  });

  it("rejects nonsensical options", () => {
    const describe = async (): Promise<DescribePageOutput> => ({});
    assert.throws(() => new DescribeBatcher({ describe, maxIdsPerCall: 1001 }), RangeError);
    assert.throws(() => new DescribeBatcher({ describe, maxIdsPerCall: 0 }), RangeError);
    assert.throws(() => new DescribeBatcher({ describe, windowMs: -1 }), RangeError);
  });
});

describe("DescribeBatcher snapshot", () => {
  const id = (n: number): string => instance(n).InstanceId ?? "";
  const idsOf = (r: DescribePageInput | undefined): string[] =>
    r?.Filters.find((f) => f.Name === "instance-id")?.Values ?? [];

  /** A batcher remembering IDs for 10 min, and `ask`: one lookup, stepping the clock past the window. */
  function setup(known: Instance[], opts: { trackMs?: number } = {}) {
    const clock = new FakeClock();
    const ec2 = fakeEc2(known);
    const batcher = new DescribeBatcher({
      describe: ec2.describe,
      clock,
      trackMs: opts.trackMs ?? 600_000,
    });
    const ask = async (instanceId: string, maxAgeMs?: number): Promise<Instance | undefined> => {
      const p = batcher.get(instanceId, maxAgeMs !== undefined ? { maxAgeMs } : {});
      await clock.advance(10);
      return p;
    };
    return { clock, ec2, batcher, ask };
  }

  it("answers 1000 sequential steady lookups within the snapshot age with one call after the first", async () => {
    const all = Array.from({ length: 1000 }, (_, n) => instance(n));
    const { clock, ec2, batcher, ask } = setup(all);
    // Round 1: the IDs become known (one concurrent batch here).
    const first = all.map((i) => batcher.get(i.InstanceId ?? ""));
    await clock.advance(10);
    await Promise.all(first);
    assert.equal(batcher.tracked, 1000);
    await clock.advance(60_000); // a poll period later the snapshot is stale
    const before = ec2.requests.length;
    // Round 2: one lookup after another, as a single worker makes them (10 ms each: 10 s in all).
    for (const i of all) {
      const got = await ask(i.InstanceId ?? "", 15_000);
      assert.equal(got?.InstanceId, i.InstanceId);
    }
    assert.equal(ec2.requests.length - before, 1, "the first lookup's call fetched all 1000");
    assert.equal(idsOf(ec2.requests[before]).length, 1000);
    assert.equal(idsOf(ec2.requests[before])[0], id(0), "the asked ID leads its call");
  });

  it("makes a call for a snapshot entry older than maxAgeMs", async () => {
    const { clock, ec2, ask } = setup([instance(1), instance(2)]);
    await ask(id(1));
    await ask(id(2));
    assert.deepEqual(idsOf(ec2.requests[1]), [id(2), id(1)], "id 1 is prefetched with id 2");
    await ask(id(1), 5_000);
    assert.equal(ec2.requests.length, 2, "from the snapshot");
    await clock.advance(4_990);
    await ask(id(1), 5_000);
    assert.equal(ec2.requests.length, 2, "exactly maxAgeMs old is still accepted");
    await clock.advance(1);
    await ask(id(1), 5_000);
    assert.equal(ec2.requests.length, 3);
    assert.deepEqual(idsOf(ec2.requests[2]), [id(1), id(2)]);
  });

  it("always calls for a lookup without maxAgeMs, and stores what it sees", async () => {
    const live = instance(1);
    const { ec2, ask } = setup([live]);
    await ask(id(1));
    live.State = { Name: "stopping" };
    assert.equal((await ask(id(1), 60_000))?.State?.Name, "running", "the snapshot is what was seen");
    assert.equal((await ask(id(1)))?.State?.Name, "stopping", "a fresh lookup asks EC2");
    assert.equal(ec2.requests.length, 2);
    assert.equal((await ask(id(1), 60_000))?.State?.Name, "stopping", "the fresh answer is kept");
    assert.equal(ec2.requests.length, 2);
  });

  it("keeps 'not listed' in the snapshot and stops prefetching IDs that are gone", async () => {
    const { ec2, ask } = setup([instance(1), instance(2, "terminated")]);
    await ask(id(1));
    await ask(id(2));
    await ask(id(3));
    assert.deepEqual(idsOf(ec2.requests[2]), [id(3), id(1)], "terminated id 2 is not prefetched");
    await ask(id(1));
    assert.deepEqual(idsOf(ec2.requests[3]), [id(1)], "unlisted id 3 is not prefetched");
    assert.equal(await ask(id(3), 60_000), undefined, "not listed, from the snapshot");
    assert.equal((await ask(id(2), 60_000))?.State?.Name, "terminated", "from the snapshot");
    assert.equal(ec2.requests.length, 4);
  });

  it("fills calls up to 1000 IDs from 2500 remembered ones, most recently asked first", async () => {
    const all = Array.from({ length: 2500 }, (_, n) => instance(n));
    const { clock, ec2, batcher, ask } = setup(all);
    const round = all.map((i) => batcher.get(i.InstanceId ?? ""));
    await clock.advance(10);
    assert.equal((await Promise.all(round)).filter((i) => i !== undefined).length, 2500);
    assert.equal(batcher.tracked, 2500);
    for (const r of ec2.requests) {
      assert.ok(idsOf(r).length <= 1000);
      assert.equal(new Set(idsOf(r)).size, idsOf(r).length, "no ID twice in one call");
    }
    await clock.advance(60_000);
    const before = ec2.requests.length;
    await ask(id(0), 15_000);
    assert.equal(ec2.requests.length, before + 1);
    const sent = idsOf(ec2.requests[before]);
    assert.equal(sent.length, 1000);
    assert.deepEqual(sent.slice(0, 3), [id(0), id(2499), id(2498)]);
    assert.equal(sent.at(-1), id(1501));
    // What was prefetched is answered from the snapshot; what was not needs a call.
    await ask(id(1501), 15_000);
    assert.equal(ec2.requests.length, before + 1);
    await ask(id(1500), 15_000);
    assert.equal(ec2.requests.length, before + 2);
  });

  it("does not prefetch IDs not asked for within trackMs", async () => {
    const { clock, ec2, batcher, ask } = setup([instance(1), instance(2), instance(3)], { trackMs: 1_000 });
    await ask(id(1));
    await clock.advance(600);
    await ask(id(2));
    await clock.advance(600);
    await ask(id(3));
    assert.deepEqual(idsOf(ec2.requests[2]), [id(3), id(2)], "id 1 was last asked 1.2 s ago");
    assert.equal(batcher.tracked, 2);
  });

  it("remembers nothing and prefetches nothing without trackMs", async () => {
    const clock = new FakeClock();
    const ec2 = fakeEc2([instance(1), instance(2)]);
    const batcher = new DescribeBatcher({ describe: ec2.describe, clock });
    for (const n of [1, 2, 2]) {
      const p = batcher.get(id(n), { maxAgeMs: 60_000 });
      await clock.advance(10);
      await p;
    }
    assert.deepEqual(ec2.requests.map(idsOf), [[id(1)], [id(2)], [id(2)]]);
    assert.equal(batcher.tracked, 0);
  });

  it("drops an invalidated entry, also from a call that was in flight", async () => {
    const live = instance(1);
    const clock = new FakeClock();
    const ec2 = fakeEc2([live, instance(2)]);
    let release!: () => void;
    let gate: Promise<void> = Promise.resolve();
    const batcher = new DescribeBatcher({
      describe: async (input) => {
        const answer = ec2.describe(input);
        await gate;
        return answer;
      },
      clock,
      trackMs: 600_000,
    });
    const ask = async (n: number, maxAgeMs?: number): Promise<Instance | undefined> => {
      const p = batcher.get(id(n), maxAgeMs !== undefined ? { maxAgeMs } : {});
      await clock.advance(10);
      return p;
    };
    await ask(1);
    batcher.invalidate(id(1));
    await ask(1, 60_000);
    assert.equal(ec2.requests.length, 2, "no snapshot entry after invalidate");

    gate = new Promise<void>((r) => (release = r));
    const inFlight = batcher.get(id(2));
    await clock.advance(10); // the call (carrying id 1 too) has been answered by EC2, not returned
    live.State = { Name: "stopping" };
    batcher.invalidate(id(1));
    release();
    await inFlight;
    assert.equal((await ask(1, 60_000))?.State?.Name, "stopping", "the older answer was not kept");
    assert.equal(ec2.requests.length, 4);
  });

  it("rejects a negative trackMs", () => {
    const describe = async (): Promise<DescribePageOutput> => ({});
    assert.throws(() => new DescribeBatcher({ describe, trackMs: -1 }), RangeError);
  });
});
