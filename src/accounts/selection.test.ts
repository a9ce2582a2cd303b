import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { namespaceAllowed, selectorMatches } from "./selection.ts";

const ns = (name: string, labels: Record<string, string> = {}) => ({ name, labels });

describe("namespaceAllowed", () => {
  it("allows no namespace when nothing is set", () => {
    assert.equal(namespaceAllowed({}, ns("team-a")), false);
    assert.equal(namespaceAllowed(undefined, ns("team-a")), false);
    assert.equal(namespaceAllowed({ names: [] }, ns("team-a")), false);
  });

  it("allows the listed names only", () => {
    const allowed = { names: ["team-a", "team-b"] };
    assert.equal(namespaceAllowed(allowed, ns("team-a")), true);
    assert.equal(namespaceAllowed(allowed, ns("team-c")), false);
  });

  it("allows the namespaces a selector matches, in addition to the names", () => {
    const allowed = { names: ["legacy"], selector: { matchLabels: { tenant: "a" } } };
    assert.equal(namespaceAllowed(allowed, ns("x", { tenant: "a" })), true);
    assert.equal(namespaceAllowed(allowed, ns("legacy")), true);
    assert.equal(namespaceAllowed(allowed, ns("y", { tenant: "b" })), false);
  });

  it("allows every namespace with an empty selector", () => {
    assert.equal(namespaceAllowed({ selector: {} }, ns("anything")), true);
  });
});

describe("selectorMatches", () => {
  const labels = { tenant: "a", tier: "prod" };
  it("requires every matchLabels entry", () => {
    assert.equal(selectorMatches({ matchLabels: { tenant: "a", tier: "prod" } }, labels), true);
    assert.equal(selectorMatches({ matchLabels: { tenant: "a", tier: "dev" } }, labels), false);
  });
  it("evaluates In, NotIn, Exists and DoesNotExist", () => {
    const m = (operator: "In" | "NotIn" | "Exists" | "DoesNotExist", key: string, values?: string[]) =>
      selectorMatches({ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }, labels);
    assert.equal(m("In", "tier", ["prod", "staging"]), true);
    assert.equal(m("In", "tier", ["dev"]), false);
    assert.equal(m("In", "missing", ["x"]), false);
    assert.equal(m("NotIn", "tier", ["dev"]), true);
    assert.equal(m("NotIn", "tier", ["prod"]), false);
    assert.equal(m("NotIn", "missing", ["prod"]), true);
    assert.equal(m("Exists", "tenant"), true);
    assert.equal(m("Exists", "missing"), false);
    assert.equal(m("DoesNotExist", "missing"), true);
    assert.equal(m("DoesNotExist", "tenant"), false);
  });
  it("needs matchLabels and expressions together", () => {
    assert.equal(
      selectorMatches(
        {
          matchLabels: { tenant: "a" },
          matchExpressions: [{ key: "tier", operator: "In", values: ["dev"] }],
        },
        labels,
      ),
      false,
    );
  });
});
