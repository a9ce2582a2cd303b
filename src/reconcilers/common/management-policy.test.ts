import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { observedView, observeOnlyFieldsCleared, observesOnly } from "./management-policy.ts";
import type { Description } from "./driver.ts";
import { widgetObject } from "./testing/widget.ts";

interface WidgetStatus {
  widgetId?: string;
  state?: string;
  widgetUp?: boolean;
}
const driver = {
  describe: (r: { id: string; up: boolean }): Description<WidgetStatus> => ({
    status: { widgetId: r.id, state: r.up ? "Up" : "Down" },
    readiness: { ready: r.up, pending: !r.up, reason: "Down", message: `widget ${r.id}` },
  }),
  observed: (r: { id: string; up: boolean }) => ({ tags: { Name: r.id }, status: { widgetUp: r.up } }),
};

const widget = widgetObject({ metadata: { name: "w" }, spec: { region: "eu-west-1" } });

describe("management policy", () => {
  it("observes only with ObserveOnly; Full and an absent policy manage", () => {
    const obj = (managementPolicy?: "Full" | "ObserveOnly") =>
      widgetObject({ metadata: { name: "w" }, spec: managementPolicy ? { managementPolicy } : {} });
    assert.equal(observesOnly(obj("ObserveOnly")), true);
    assert.equal(observesOnly(obj("Full")), false);
    assert.equal(observesOnly(obj()), false);
  });

  it("reports an existing resource as described with what it observes, Ready whatever its state", () => {
    for (const up of [true, false]) {
      assert.deepEqual(
        observedView(
          { exists: true, resource: { id: "a", up }, ownership: "owned" },
          widget,
          driver,
          "widget",
        ),
        {
          clear: false,
          status: { widgetId: "a", state: up ? "Up" : "Down", widgetUp: up, observedTags: { Name: "a" } },
          ready: {
            status: "True",
            reason: "Available",
            message: "the widget exists in eu-west-1; the operator only observes it",
          },
        },
      );
    }
  });

  it("reports a missing resource as NotFound, clearing what was described", () => {
    assert.deepEqual(observedView({ exists: false }, widget, driver, "widget"), {
      clear: true,
      status: { state: "NotFound" },
      ready: {
        status: "False",
        reason: "NotFound",
        message: "the widget named in the spec does not exist in eu-west-1",
      },
    });
  });

  it("clears on a managed object the tags and every field the driver reports for observe-only ones", () => {
    assert.deepEqual(observeOnlyFieldsCleared({ observedFields: ["widgetUp"] }), {
      observedTags: undefined,
      widgetUp: undefined,
    });
    assert.deepEqual(observeOnlyFieldsCleared({}), { observedTags: undefined });
  });
});
