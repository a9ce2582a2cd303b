import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Filter, Instance } from "@aws-sdk/client-ec2";
import { FakeClock, flushMicrotasks } from "../../runtime/testing/fake-clock.ts";
import { FilterBatcher, matchesFilters } from "./filter-batcher.ts";

const UID = "kubeprovisioner.io/uid";
const instance = (id: string, uid: string, state = "running"): Instance => ({
  InstanceId: id,
  State: { Name: state as "running" },
  Tags: [
    { Key: UID, Value: uid },
    { Key: "team", Value: "a" },
  ],
});
const FLEET = [instance("i-1", "u1"), instance("i-2", "u2"), instance("i-3", "u3", "terminated")];
const owned = (uid: string): Filter[] => [
  { Name: `tag:${UID}`, Values: [uid] },
  { Name: "instance-state-name", Values: ["pending", "running"] },
];

/** EC2 answering from FLEET by the same rule, recording every call's filters. */
function setup(opts: { max?: number } = {}) {
  const clock = new FakeClock();
  const calls: Filter[][] = [];
  let fail: Error | undefined;
  const batcher = new FilterBatcher({
    clock,
    ...(opts.max !== undefined ? { maxLookupsPerCall: opts.max } : {}),
    describe: async (filters) => {
      calls.push(filters);
      await Promise.resolve();
      if (fail !== undefined) throw fail;
      return FLEET.filter((i) => matchesFilters(i, filters));
    },
  });
  return { clock, calls, batcher, failWith: (e: Error) => (fail = e) };
}

describe("FilterBatcher", () => {
  it("merges lookups of one window into one call and gives each its own instances", async () => {
    const { clock, calls, batcher } = setup();
    const a = batcher.find(owned("u1"));
    const b = batcher.find(owned("u2"));
    const c = batcher.find(owned("u3"));
    await clock.advance(10);
    const ids = async (p: Promise<Instance[]>) => (await p).map((i) => i.InstanceId);
    assert.deepEqual(await ids(a), ["i-1"]);
    assert.deepEqual(await ids(b), ["i-2"]);
    assert.deepEqual(await ids(c), [], "a terminated instance does not match the state filter");
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.find((f) => f.Name === `tag:${UID}`)?.Values, ["u1", "u2", "u3"]);
  });

  it("keeps lookups of different filter names apart and sends a full batch at once", async () => {
    const { clock, calls, batcher } = setup({ max: 2 });
    const a = batcher.find(owned("u1"));
    const b = batcher.find(owned("u2"));
    await flushMicrotasks();
    assert.equal(calls.length, 1, "two lookups fill the batch: no wait for the window");
    const named = batcher.find([{ Name: "tag:team", Values: ["a"] }]);
    await clock.advance(10);
    assert.equal((await named).length, 3);
    assert.equal(calls.length, 2);
    assert.equal((await a).length + (await b).length, 2);
  });

  it("sends a lookup with a wildcard or another filter name alone, unchanged", async () => {
    const { calls, batcher } = setup();
    const wildcard: Filter[] = [{ Name: `tag:${UID}`, Values: ["u*"] }];
    await batcher.find(wildcard).catch(() => undefined);
    await batcher.find([{ Name: "instance-id", Values: ["i-1"] }]).catch(() => undefined);
    assert.deepEqual(calls, [wildcard, [{ Name: "instance-id", Values: ["i-1"] }]]);
  });

  it("fails every lookup of a failed call, and an aborted lookup with its reason", async () => {
    const { clock, batcher, failWith } = setup();
    failWith(new Error("RequestLimitExceeded"));
    const ctl = new AbortController();
    const a = batcher.find(owned("u1"));
    const b = batcher.find(owned("u2"), ctl.signal);
    ctl.abort(new Error("stopped"));
    await assert.rejects(b, /stopped/);
    const failed = assert.rejects(a, /RequestLimitExceeded/);
    await clock.advance(10);
    await failed;
  });
});
