import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredTags, UID_TAG, type TagMap } from "../../aws/ownership.ts";
import {
  applyTagPlan,
  DEFAULT_TAG_POLICY,
  describeTagPlan,
  isEmptyPlan,
  isIgnoredTagKey,
  planTags,
  repairTags,
  tagsAfter,
  type TagPolicy,
  type TagWriter,
} from "./tags.ts";

const owner = { uid: "0b6c9a52", namespace: "team-a", name: "web", kind: "S3Bucket" };
const keepOthers: TagPolicy = { authoritative: false, ignoredPrefixes: ["aws:"] };

/** A writer recording its calls, in order. */
function recorder(kind: "increments" | "replace"): { calls: unknown[][]; writer: TagWriter } {
  const calls: unknown[][] = [];
  const writer: TagWriter =
    kind === "replace"
      ? { replace: async (t) => void calls.push(["replace", t]) }
      : {
          set: async (t) => void calls.push(["set", t]),
          remove: async (k) => void calls.push(["remove", k]),
        };
  return { calls, writer };
}

describe("planTags", () => {
  it("sets changed and missing keys and keeps tags other tools added when not authoritative", () => {
    const plan = planTags(
      { a: "1", b: "2", [UID_TAG]: "u" },
      { a: "1", b: "old", "aws:backup": "yes", cost: "x" },
      keepOthers,
    );
    assert.deepEqual(plan, { set: { b: "2", [UID_TAG]: "u" }, remove: [] });
  });

  it("never removes aws: keys, even when tags are authoritative", () => {
    const plan = planTags(
      { a: "1" },
      { a: "1", "aws:cloudformation:stack-name": "s", "AWS:x": "y", other: "z" },
      DEFAULT_TAG_POLICY,
    );
    assert.deepEqual(plan, { set: {}, remove: ["other"] });
    assert.equal(isIgnoredTagKey("aws:autoscaling:groupName", DEFAULT_TAG_POLICY), true);
    assert.equal(isIgnoredTagKey("team:aws", DEFAULT_TAG_POLICY), false);
  });

  it("removes stale reserved keys when foreign tags are kept", () => {
    const plan = planTags({ a: "1" }, { a: "1", foreign: "y", "compute.cloud.com/stale": "z" }, keepOthers);
    assert.deepEqual(plan, { set: {}, remove: ["compute.cloud.com/stale"] });
  });

  it("removes every extra key when tags are authoritative", () => {
    assert.deepEqual(planTags({ a: "1" }, { a: "1", foreign: "y" }, DEFAULT_TAG_POLICY).remove, ["foreign"]);
  });

  it("is empty when the resource already matches", () => {
    const want = desiredTags({ env: "prod" }, owner);
    assert.ok(isEmptyPlan(planTags(want, { ...want }, DEFAULT_TAG_POLICY)));
    assert.ok(!isEmptyPlan(planTags(want, {}, DEFAULT_TAG_POLICY)));
  });
});

describe("applyTagPlan", () => {
  const actual: TagMap = { a: "0", gone: "x", "aws:cf": "s" };
  const plan = planTags({ a: "1", b: "2" }, actual, DEFAULT_TAG_POLICY);

  it("sets before it removes, and reports the resulting tags", async () => {
    const { calls, writer } = recorder("increments");
    const after = await applyTagPlan(plan, actual, writer, DEFAULT_TAG_POLICY);
    assert.deepEqual(calls, [
      ["set", { a: "1", b: "2" }],
      ["remove", ["gone"]],
    ]);
    assert.deepEqual(after, { a: "1", "aws:cf": "s", b: "2" });
    assert.deepEqual(after, tagsAfter(actual, plan));
  });

  it("hands a replacing writer the whole set without the keys only AWS writes", async () => {
    const { calls, writer } = recorder("replace");
    await applyTagPlan(plan, actual, writer, DEFAULT_TAG_POLICY);
    assert.deepEqual(calls, [["replace", { a: "1", b: "2" }]]);
  });

  it("makes no call for an empty plan, and only the calls a plan needs", async () => {
    const { calls, writer } = recorder("increments");
    await applyTagPlan(
      planTags({ a: "1" }, { a: "1" }, DEFAULT_TAG_POLICY),
      { a: "1" },
      writer,
      DEFAULT_TAG_POLICY,
    );
    await applyTagPlan(planTags({}, { x: "1" }, DEFAULT_TAG_POLICY), { x: "1" }, writer, DEFAULT_TAG_POLICY);
    assert.deepEqual(calls, [["remove", ["x"]]]);
  });
});

describe("describeTagPlan and repairTags", () => {
  it("word a repair the same way for every kind", async () => {
    assert.equal(
      describeTagPlan({ set: { a: "1", b: "2" }, remove: ["other"] }),
      "tags: set a, b; removed other",
    );
    assert.equal(describeTagPlan({ set: {}, remove: ["x"] }), "tags: removed x");
    const { writer } = recorder("increments");
    assert.deepEqual(await repairTags({ a: "1" }, { a: "1" }, writer, DEFAULT_TAG_POLICY), {
      tags: { a: "1" },
      changes: [],
    });
    assert.deepEqual(await repairTags({ a: "1" }, {}, writer, DEFAULT_TAG_POLICY), {
      tags: { a: "1" },
      changes: [{ setting: "tags", description: "tags: set a" }],
    });
  });
});
