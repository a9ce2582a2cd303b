import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { needsQuotes, toYaml, YAML_TRAPS } from "./yaml.ts";

describe("the YAML writer", () => {
  it("quotes every string a YAML 1.1 or 1.2 reader would read as another type", () => {
    for (const t of YAML_TRAPS) assert.equal(needsQuotes(t), true, t);
  });

  it("leaves plain the strings every reader reads as themselves", () => {
    for (const t of [
      "Version",
      "s3:GetObject",
      "arn:aws:s3:::b/*",
      "2012-10-17x",
      "v1.2",
      "NaN",
      "none",
      "1.2.3",
    ])
      assert.equal(needsQuotes(t), false, t);
  });

  it("refuses a mapping key << that kustomize would take for a merge", () => {
    assert.throws(() => toYaml({ "<<": 1 }), /mapping key <</);
  });

  it("writes documents both YAML 1.1 and 1.2 read back unchanged, keys included, with no %YAML directive", () => {
    const value = {
      list: [...YAML_TRAPS],
      map: Object.fromEntries(YAML_TRAPS.filter((t) => t !== "<<").map((t) => [t, t])),
      typed: { n: 5, f: 1.5, b: true, z: null, s: "text" },
    };
    const text = toYaml(value);
    assert.doesNotMatch(text, /^%/);
    assert.deepEqual(parse(text, { version: "1.2" }), value);
    assert.deepEqual(parse(text, { version: "1.1" }), value);
  });
});
