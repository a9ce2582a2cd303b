import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ManagedObject } from "../driver.ts";
import { widgetObject } from "../testing/widget.ts";
import { flowFacts } from "./facts.ts";

const ready = (status: "True" | "False", reason: string, generation = 2) => ({
  type: "Ready",
  status,
  reason,
  message: "",
  observedGeneration: generation,
  lastTransitionTime: "2026-01-01T00:00:00Z",
});

function obj(status: Record<string, unknown>, deleting = false): ManagedObject {
  return widgetObject({
    metadata: {
      name: "w",
      uid: "u",
      generation: 2,
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    status,
  });
}

describe("flowFacts", () => {
  it("is settled only with a recorded ID, Ready for the current generation, and no deletion", () => {
    assert.equal(flowFacts(obj({ id: "x", conditions: [ready("True", "Available")] }), "id").settled, true);
    assert.equal(flowFacts(obj({ id: "", conditions: [ready("True", "Available")] }), "id").settled, false);
    assert.equal(
      flowFacts(obj({ id: "x", conditions: [ready("True", "Available", 1)] }), "id").settled,
      false,
    );
    assert.equal(flowFacts(obj({ id: "x", conditions: [ready("False", "Pending")] }), "id").settled, false);
    const doomed = flowFacts(obj({ id: "x", conditions: [ready("True", "Available")] }, true), "id");
    assert.deepEqual([doomed.settled, doomed.deleting], [false, true]);
  });

  it("dates a create in flight from its recorded request, while Creating and no resource is recorded", () => {
    const creating = {
      createToken: "u-1",
      createRequestedAt: "2026-01-01T00:10:00.000Z",
      conditions: [ready("False", "Creating")],
    };
    assert.equal(
      flowFacts(obj(creating), "id").createStartedAt,
      Date.parse("2026-01-01T00:10:00Z"),
      "the request's time, not the condition's lastTransitionTime",
    );
    assert.equal(
      flowFacts(obj({ ...creating, conditions: [ready("False", "InvalidAMIID_NotFound")] }), "id")
        .createStartedAt,
      undefined,
      "a create that failed terminally is not in flight",
    );
    assert.equal(flowFacts(obj({ ...creating, id: "x" }), "id").createStartedAt, undefined);
    assert.equal(
      flowFacts(obj({ conditions: [ready("False", "Creating")] }), "id").createStartedAt,
      undefined,
    );
  });
});
