import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as s from "./builder.ts";

/** Compile-time equality of two types; `tsc` fails on the `true` literal when they differ. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_: T): void {}

const volume = s.object(
  {
    size: s.integer({ description: "size", required: true, minimum: 1 }),
    type: s.enumOf(["gp2", "gp3"], { description: "type", default: "gp3" }),
    encrypted: s.boolean({ description: "encrypted" }),
  },
  { description: "a volume" },
);

const spec = s.object(
  {
    name: s.string({ description: "name", required: true, maxLength: 10 }),
    volumes: s.array(volume, { description: "volumes", maxItems: 4 }),
    labels: s.record(s.string({ description: "value", maxLength: 5 }), {
      description: "labels",
      maxProperties: 3,
    }),
    when: s.dateTime({ description: "when" }),
    nested: s.object(
      { flag: s.boolean({ description: "flag", default: false }) },
      { description: "n", default: {} },
    ),
  },
  { description: "spec" },
);

describe("schema types", () => {
  it("infers served types with required and defaulted fields present", () => {
    type Served = s.Static<typeof spec>;
    assertType<
      Equal<
        Served,
        {
          name: string;
          nested: { flag: boolean };
          volumes?: { size: number; type: "gp2" | "gp3"; encrypted?: boolean }[];
          labels?: Record<string, string>;
          when?: string;
        }
      >
    >(true);
    const ok: Served = { name: "a", nested: { flag: true } };
    assert.equal(ok.nested.flag, true);
  });

  it("infers input types with only required fields present", () => {
    type In = s.Input<typeof spec>;
    assertType<
      Equal<
        In,
        {
          name: string;
          nested?: { flag?: boolean };
          volumes?: { size: number; type?: "gp2" | "gp3"; encrypted?: boolean }[];
          labels?: Record<string, string>;
          when?: string;
        }
      >
    >(true);
    // @ts-expect-error name is required
    const bad: In = {};
    assert.deepEqual(bad, {});
  });

  it("types defaults by the field type and emits a well-typed default as given", () => {
    // The two wrong defaults are compile errors (make lint fails if they compile).
    // @ts-expect-error a string default on an integer
    s.integer({ description: "x", default: "1" });
    // @ts-expect-error a value outside the enum
    s.enumOf(["a", "b"], { description: "x", default: "c" });
    const count = s.integer({ description: "x", default: 1 });
    const choice = s.enumOf(["a", "b"], { description: "x", default: "b" });
    assert.equal(count.node.default, 1);
    assert.equal(count.presence, "defaulted");
    assert.equal(choice.node.default, "b");
    assert.equal(choice.presence, "defaulted");
  });
});

describe("schema nodes", () => {
  it("lists required properties sorted and omits required when none", () => {
    assert.deepEqual(spec.node.required, ["name"]);
    assert.equal(volume.node.properties?.["type"]?.default, "gp3");
    assert.equal(
      s.object({ a: s.boolean({ description: "a" }) }, { description: "o" }).node.required,
      undefined,
    );
  });

  it("emits properties sorted by name and keys in canonical order", () => {
    assert.deepEqual(Object.keys(spec.node.properties ?? {}), [
      "labels",
      "name",
      "nested",
      "volumes",
      "when",
    ]);
    const str = s.string({
      validations: [s.immutable("frozen")],
      maxLength: 3,
      pattern: "^a$",
      description: "d",
      required: true,
    });
    assert.deepEqual(Object.keys(str.node), [
      "description",
      "type",
      "pattern",
      "maxLength",
      "x-kubernetes-validations",
    ]);
  });

  it("renders integers as int32 unless int64 is asked for", () => {
    assert.equal(s.integer({ description: "i" }).node.format, "int32");
    assert.equal(s.integer({ description: "i", format: "int64" }).node.format, "int64");
  });

  it("renders arrays as atomic lists by default and map lists with their keys", () => {
    assert.equal(spec.node.properties?.["volumes"]?.["x-kubernetes-list-type"], "atomic");
    const keyed = s.object(
      { id: s.string({ description: "id", required: true, maxLength: 3 }) },
      { description: "entry" },
    );
    const list = s.array(keyed, { description: "l", maxItems: 2, listType: "map", listMapKeys: ["id"] });
    assert.deepEqual(list.node["x-kubernetes-list-map-keys"], ["id"]);
    assert.equal(list.node.maxItems, 2);
  });

  it("renders maps as additionalProperties", () => {
    const labels = spec.node.properties?.["labels"];
    assert.equal(labels?.type, "object");
    assert.equal(labels?.additionalProperties?.maxLength, 5);
    assert.equal(labels?.maxProperties, 3);
  });

  it("builds immutability rules", () => {
    assert.deepEqual(s.immutable("m"), { rule: "self == oldSelf", message: "m" });
    const r = s.immutablePresence("keyPair", "m");
    assert.equal(r.fieldPath, ".keyPair");
    assert.match(r.rule, /^has\(self\.keyPair\) == has\(oldSelf\.keyPair\) && /);
    assert.throws(() => s.immutablePresence("a.b", "m"), s.SchemaError);
  });

  it("freezes schemas so a shared field cannot be changed by one user", () => {
    assert.ok(Object.isFrozen(spec));
    assert.ok(Object.isFrozen(spec.node));
  });
});

describe("schema errors", () => {
  it("rejects a missing description", () => {
    assert.throws(() => s.string({ description: " " }), /description/);
  });

  it("rejects a field that is both required and defaulted", () => {
    assert.throws(
      () => s.boolean({ description: "b", required: true, default: true }),
      /both required and defaulted/,
    );
  });

  it("rejects inverted bounds", () => {
    assert.throws(() => s.integer({ description: "i", minimum: 2, maximum: 1 }), /minimum > maximum/);
    assert.throws(() => s.string({ description: "t", minLength: 2, maxLength: 1 }), /minLength > maxLength/);
  });

  it("rejects duplicate enum values", () => {
    assert.throws(() => s.enumOf(["a", "a"], { description: "e" }), /duplicate/);
  });

  it("rejects map lists whose keys are not required", () => {
    const entry = s.object({ id: s.string({ description: "id", maxLength: 3 }) }, { description: "e" });
    assert.throws(
      () => s.array(entry, { description: "l", maxItems: 1, listType: "map", listMapKeys: ["id"] }),
      /must be required or defaulted/,
    );
    assert.throws(
      () => s.array(entry, { description: "l", maxItems: 1, listType: "map" }),
      /needs listMapKeys/,
    );
    assert.throws(
      () => s.array(entry, { description: "l", maxItems: 1, listType: "map", listMapKeys: ["nope"] }),
      /not a property/,
    );
    assert.throws(() => s.array(entry, { description: "l", maxItems: 1, listType: "set" }), /scalar items/);
  });

  it("rejects defaults JSON cannot carry", () => {
    assert.throws(() => s.integer({ description: "i", default: Number.NaN }), /not a JSON number/);
  });
});
