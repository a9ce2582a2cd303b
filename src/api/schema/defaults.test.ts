import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JSONSchemaProps } from "./openapi.ts";
import { withDefaults } from "./defaults.ts";

const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    a: { type: "string", default: "x" },
    b: { type: "object", properties: { c: { type: "integer", default: 3 } } },
    d: { type: "object", default: {}, properties: { e: { type: "boolean", default: true } } },
    list: { type: "array", items: { type: "object", properties: { f: { type: "string", default: "g" } } } },
    map: {
      type: "object",
      additionalProperties: { type: "object", properties: { h: { type: "integer", default: 1 } } },
    },
    n: { type: "string", default: "dflt" },
    keep: { type: "string", nullable: true, default: "k" },
  },
};

describe("withDefaults", () => {
  it("fills absent properties where the parent is present, defaults of defaults, list items and map values", () => {
    assert.deepEqual(
      withDefaults(schema, { list: [{}, { f: "mine" }], map: { one: {} }, n: null, keep: null, extra: 1 }),
      {
        a: "x",
        d: { e: true },
        list: [{ f: "g" }, { f: "mine" }],
        map: { one: { h: 1 } },
        n: "dflt",
        keep: null,
        extra: 1,
      },
    );
  });

  it("leaves an absent parent absent and a given value as given", () => {
    const rest = { d: { e: true }, n: "dflt", keep: "k" };
    assert.deepEqual(withDefaults(schema, { a: "y", b: { c: 7 } }), { a: "y", b: { c: 7 }, ...rest });
    assert.deepEqual(withDefaults(schema, { b: {} }), { a: "x", b: { c: 3 }, ...rest });
  });
});
