import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { Registry } from "prom-client";
import { AwsError } from "../../aws/errors.ts";
import type { SweptTags } from "../../aws/tag-sweep.ts";
import type { TagMap } from "../../aws/ownership.ts";
import { createLogger } from "../../runtime/logging.ts";
import { FakeClock } from "../../runtime/testing/fake-clock.ts";
import type { ManagedObject } from "./driver.ts";
import { isSteadyPoll, TAG_SNAPSHOT_METRIC_NAMES, TagSnapshots } from "./tag-snapshots.ts";

const MIN = 60_000;
const POLL = 5 * MIN;
const WINDOW = 60 * MIN;
const A = "arn:aws:s3:::a";
const B = "arn:aws:s3:::b";

describe("TagSnapshots", () => {
  let clock: FakeClock;
  let registry: Registry;
  let answer: Map<string, TagMap>;
  let sweeps: number;
  let fail: unknown;
  /** While set, a sweep waits for it. */
  let gate: Promise<void> | undefined;
  let warnings: string[];
  let snaps: TagSnapshots;

  beforeEach(() => {
    clock = new FakeClock(1_800_000_000_000);
    registry = new Registry();
    answer = new Map([
      [A, { owner: "a" }],
      [B, { owner: "b" }],
    ]);
    sweeps = 0;
    fail = undefined;
    gate = undefined;
    warnings = [];
    const logger = createLogger({
      level: "warn",
      destination: { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) },
    });
    snaps = new TagSnapshots({
      kind: "S3Bucket",
      sweep: async (): Promise<SweptTags> => {
        sweeps++;
        if (gate !== undefined) await gate;
        if (fail !== undefined) throw fail;
        return new Map(answer);
      },
      clock,
      maxAgeMs: POLL,
      windowMs: WINDOW,
      logger,
      registry,
    });
  });

  /** A lookup as a poll makes it, after any first sweep it started has ended. */
  const look = async (region: string, arn: string, incarnation?: string) => {
    const first = await snaps.lookup(region, arn, incarnation);
    if (first.source === "snapshot" || first.reason !== "sweeping") return first;
    await snaps.idle();
    return snaps.lookup(region, arn, incarnation);
  };

  const reads = async (outcome: string): Promise<number> => {
    const m = await registry.getSingleMetric(TAG_SNAPSHOT_METRIC_NAMES.reads)?.get();
    return m?.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };

  it("reads directly a resource never read directly (the first poll after a start), without a sweep", async () => {
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "due" });
    assert.equal(sweeps, 0);
    assert.equal(await reads("due"), 1);
  });

  it("answers from one sweep per region and poll period, shared by every resource, and never waits for one", async () => {
    snaps.noteDirect(A);
    snaps.noteDirect(B);
    // No snapshot yet: the polls read directly while the first sweep runs.
    assert.deepEqual(await Promise.all([snaps.lookup("eu-west-1", A), snaps.lookup("eu-west-1", B)]), [
      { source: "direct", reason: "sweeping" },
      { source: "direct", reason: "sweeping" },
    ]);
    await snaps.idle();
    assert.equal(sweeps, 1);
    assert.deepEqual(await snaps.lookup("eu-west-1", A), { source: "snapshot", tags: { owner: "a" } });
    assert.deepEqual(await snaps.lookup("eu-west-1", B), { source: "snapshot", tags: { owner: "b" } });
    await clock.advance(POLL - 1);
    await snaps.lookup("eu-west-1", A);
    assert.equal(sweeps, 1, "still younger than the poll period");
    await clock.advance(1);
    answer.set(A, { owner: "changed" });
    // The next sweep starts; until it ends, the last answer serves.
    assert.deepEqual(await snaps.lookup("eu-west-1", A), { source: "snapshot", tags: { owner: "a" } });
    await snaps.idle();
    assert.equal(sweeps, 2);
    assert.deepEqual(await snaps.lookup("eu-west-1", A), { source: "snapshot", tags: { owner: "changed" } });
    snaps.noteDirect("arn:aws:s3:::c");
    await look("us-east-1", "arn:aws:s3:::c");
    assert.equal(sweeps, 3, "another region has its own snapshot");
    assert.equal(await reads("snapshot"), 5);
    assert.equal(await reads("sweeping"), 3);
  });

  it("serves the last answer while the next sweep runs, until it is a window old", async () => {
    snaps.noteDirect(A);
    await look("eu-west-1", A);
    let release: () => void = () => undefined;
    gate = new Promise<void>((resolve) => (release = resolve));
    await clock.advance(POLL);
    assert.equal(
      (await snaps.lookup("eu-west-1", A)).source,
      "snapshot",
      "the last answer, while the next is read",
    );
    await clock.advance(WINDOW - POLL - 1);
    snaps.noteDirect(A); // its direct read, due by now
    assert.equal((await snaps.lookup("eu-west-1", A)).source, "snapshot");
    await clock.advance(1);
    assert.deepEqual(await snaps.lookup("eu-west-1", A), { source: "direct", reason: "sweeping" });
    assert.equal(sweeps, 2, "one sweep in flight, not one per poll");
    release();
    await snaps.idle();
    assert.equal((await snaps.lookup("eu-west-1", A)).source, "snapshot");
  });

  it("waits a poll period after a sweep ends before the next, however long the sweep took", async () => {
    snaps.noteDirect(A);
    const slow = new TagSnapshots({
      kind: "SqsQueue",
      sweep: async () => {
        sweeps++;
        await clock.advance(2 * POLL); // a sweep longer than the period
        return new Map(answer);
      },
      clock,
      maxAgeMs: POLL,
      windowMs: 10 * POLL,
      logger: createLogger({ level: "silent" }),
      registry,
    });
    slow.noteDirect(A);
    await slow.lookup("eu-west-1", A);
    await slow.idle();
    assert.equal((await slow.lookup("eu-west-1", A)).source, "snapshot");
    assert.equal(sweeps, 1, "not stale on arrival");
    await clock.advance(POLL);
    await slow.lookup("eu-west-1", A);
    assert.equal(sweeps, 2);
    await slow.idle();
  });

  it("reads directly a resource the snapshot does not name", async () => {
    snaps.noteDirect("arn:aws:s3:::gone");
    assert.deepEqual(await look("eu-west-1", "arn:aws:s3:::gone"), {
      source: "direct",
      reason: "absent",
    });
    assert.equal(await reads("absent"), 1);
  });

  it("never answers within the window after the operator's own tag write", async () => {
    snaps.noteDirect(A);
    await clock.advance(MIN);
    snaps.noteWrite(A);
    snaps.noteDirect(A); // the poll after the write read it directly
    await clock.advance(WINDOW - 1);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "own-write" });
    await clock.advance(1);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "due" });
    snaps.noteDirect(A); // the direct read that poll made
    assert.equal((await look("eu-west-1", A)).source, "snapshot");
  });

  it("never answers from a snapshot whose sweep began within the window after the write", async () => {
    snaps.noteWrite(A);
    await clock.advance(WINDOW - 2 * MIN);
    snaps.noteDirect(A);
    snaps.noteDirect(B);
    assert.equal((await look("eu-west-1", B)).source, "snapshot"); // the sweep begins now
    await clock.advance(3 * MIN); // the write is now a window old, the snapshot is not a poll period old
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "own-write" });
    assert.equal(sweeps, 1);
  });

  it("reads every resource directly at least once per window, however fresh the snapshot", async () => {
    snaps.noteDirect(A);
    await clock.advance(WINDOW - 1);
    assert.equal((await look("eu-west-1", A)).source, "snapshot");
    await clock.advance(1);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "due" });
  });

  it("reads directly a resource created anew since its last direct read", async () => {
    snaps.noteDirect(A, "1700000000");
    assert.equal((await look("eu-west-1", A, "1700000000")).source, "snapshot");
    assert.deepEqual(await look("eu-west-1", A, "1800000000"), {
      source: "direct",
      reason: "recreated",
    });
  });

  it("reads directly after a direct read contradicted the snapshot", async () => {
    snaps.noteDirect(A);
    snaps.distrust(A);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "due" });
  });

  it("leaves the poll period to direct reads when a sweep fails, and sweeps again in the next one", async () => {
    snaps.noteDirect(A);
    fail = new AwsError({
      kind: "throttled",
      code: "ThrottledException",
      service: "tagging",
      operation: "GetResources",
      message: "slow down",
    });
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "unavailable" });
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "unavailable" });
    assert.equal(sweeps, 1);
    fail = undefined;
    await clock.advance(POLL);
    assert.equal((await look("eu-west-1", A)).source, "snapshot");
    assert.equal(sweeps, 2);
    assert.deepEqual(warnings, []);
  });

  it("falls back to direct reads for a window on AccessDenied, with one warning", async () => {
    snaps.noteDirect(A);
    fail = new AwsError({
      kind: "terminal",
      code: "AccessDeniedException",
      service: "tagging",
      operation: "GetResources",
      message: "no",
    });
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "denied" });
    await clock.advance(POLL);
    snaps.noteDirect(A);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "denied" });
    assert.equal(sweeps, 1, "not tried again within the window");
    await clock.advance(WINDOW);
    snaps.noteDirect(A);
    assert.deepEqual(await look("eu-west-1", A), { source: "direct", reason: "denied" });
    assert.equal(sweeps, 2);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? "", /tag:GetResources/);
    const m = await registry.getSingleMetric(TAG_SNAPSHOT_METRIC_NAMES.sweeps)?.get();
    assert.equal(m?.values.find((v) => v.labels.result === "denied")?.value, 2);
    assert.equal(await reads("denied"), 3);
  });
});

describe("isSteadyPoll", () => {
  const managed = { spec: { managementPolicy: "Full" } } as Pick<ManagedObject, "spec">;
  const settled = {
    deleting: false,
    settled: true,
    create: undefined,
    createStartedAt: undefined,
    poll: true,
  };

  it("holds for a settled, managed object that no change event named", () => {
    assert.equal(isSteadyPoll(managed, settled), true);
  });

  it("does not hold while unsettled, deleting, hinted by an event, or observe-only", () => {
    assert.equal(isSteadyPoll(managed, { ...settled, settled: false }), false);
    assert.equal(isSteadyPoll(managed, { ...settled, poll: false }), false);
    assert.equal(isSteadyPoll(managed, { ...settled, deleting: true }), false);
    assert.equal(isSteadyPoll(managed, { ...settled, changeHinted: true }), false);
    assert.equal(
      isSteadyPoll({ spec: { managementPolicy: "ObserveOnly" } } as Pick<ManagedObject, "spec">, settled),
      false,
    );
  });
});
