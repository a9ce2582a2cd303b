import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  formatTime,
  getCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
  type ConditionUpdate,
} from "./conditions.ts";

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const T1 = T0 + 60_000;

const readyTrue: ConditionUpdate = {
  type: "Ready",
  status: "True",
  reason: "Available",
  message: "instance is running",
  observedGeneration: 1,
};

describe("formatTime", () => {
  it("formats whole seconds in UTC like metav1.Time", () => {
    assert.equal(formatTime(T0), "2025-01-02T03:04:05Z");
    assert.equal(formatTime(new Date(T0)), "2025-01-02T03:04:05Z");
  });
});

describe("setCondition", () => {
  it("appends a new condition with lastTransitionTime set to now", () => {
    const out = setCondition(undefined, readyTrue, T0);
    assert.deepEqual(out, [{ ...readyTrue, lastTransitionTime: "2025-01-02T03:04:05Z" }]);
  });

  it("keeps lastTransitionTime when the status does not change", () => {
    const first = setCondition([], readyTrue, T0);
    const second = setCondition(first, { ...readyTrue, message: "still running", observedGeneration: 2 }, T1);
    assert.equal(second[0]?.lastTransitionTime, "2025-01-02T03:04:05Z");
    assert.equal(second[0]?.message, "still running");
    assert.equal(second[0]?.observedGeneration, 2);
  });

  it("moves lastTransitionTime when the status changes", () => {
    const first = setCondition([], readyTrue, T0);
    const second = setCondition(first, { ...readyTrue, status: "False", reason: "Stopped" }, T1);
    assert.equal(second[0]?.lastTransitionTime, "2025-01-02T03:05:05Z");
    assert.equal(second[0]?.status, "False");
  });

  it("yields deep-equal lists when the same values are set again, so status writes can be skipped", () => {
    const first = setCondition(setCondition([], readyTrue, T0), { ...readyTrue, type: "Synced" }, T0);
    const again = setCondition(setCondition(first, readyTrue, T1), { ...readyTrue, type: "Synced" }, T1);
    assert.deepEqual(again, first);
  });

  it("keeps the position of an existing condition and appends new ones", () => {
    const list = setCondition(setCondition([], readyTrue, T0), { ...readyTrue, type: "Synced" }, T0);
    const updated = setCondition(list, { ...readyTrue, status: "False" }, T1);
    assert.deepEqual(
      updated.map((c) => c.type),
      ["Ready", "Synced"],
    );
  });

  it("never modifies the input list or its conditions", () => {
    const input: readonly Condition[] = Object.freeze([
      Object.freeze({ ...readyTrue, lastTransitionTime: "2024-01-01T00:00:00Z" }),
    ]);
    const out = setCondition(input, { ...readyTrue, status: "False" }, T0);
    assert.notEqual(out, input);
    assert.equal(input[0]?.status, "True");
    assert.equal(out[0]?.status, "False");
  });

  it("drops observedGeneration when the update does not carry one", () => {
    const first = setCondition([], readyTrue, T0);
    const { observedGeneration: _, ...withoutGeneration } = readyTrue;
    const out = setCondition(first, withoutGeneration, T1);
    assert.equal("observedGeneration" in (out[0] ?? {}), false);
  });
});

describe("getCondition and friends", () => {
  const list = setCondition(
    setCondition([], readyTrue, T0),
    { ...readyTrue, type: "Synced", status: "False" },
    T0,
  );

  it("finds a condition by type", () => {
    assert.equal(getCondition(list, "Synced")?.status, "False");
    assert.equal(getCondition(list, "Missing"), undefined);
    assert.equal(getCondition(undefined, "Ready"), undefined);
  });

  it("tells whether a condition is True", () => {
    assert.equal(isConditionTrue(list, "Ready"), true);
    assert.equal(isConditionTrue(list, "Synced"), false);
    assert.equal(isConditionTrue(undefined, "Ready"), false);
  });

  it("removes a condition without modifying the input", () => {
    const out = removeCondition(list, "Ready");
    assert.deepEqual(
      out.map((c) => c.type),
      ["Synced"],
    );
    assert.equal(list.length, 2);
  });
});
