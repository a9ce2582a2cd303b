import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { decodeVlq, linkedSourceMap, SourceMap } from "./source-map.ts";

// A hand-made map of a 5-line script:
//   line 0: no segment (a banner)
//   line 1: column 0 from ../src/a.ts, column 8 on from ../node_modules/@smithy/core/x.js
//   line 2: column 0 from ../src/a.ts again (source index -1 relative to the last)
//   line 3: no segment
//   line 4: column 5 is generated code with no source (a one-field segment)
const MAP = {
  version: 3,
  sources: ["../src/a.ts", "../node_modules/@smithy/core/x.js"],
  mappings: ";AAAA,QCAA;ADAA;;K",
};

describe("decodeVlq", () => {
  it("reads one- and two-digit numbers of either sign", () => {
    assert.deepEqual(decodeVlq("AAAA"), [0, 0, 0, 0]);
    assert.deepEqual(decodeVlq("CDQ"), [1, -1, 8]);
    assert.deepEqual(decodeVlq("gB"), [16]);
    assert.deepEqual(decodeVlq("2H3H"), [123, -123]);
  });

  it("refuses a character outside Base64 and a number cut short", () => {
    assert.throws(() => decodeVlq("A*"), /not a Base64 digit/);
    assert.throws(() => decodeVlq("g"), /ends inside a number/);
  });
});

describe("SourceMap.sourceAt", () => {
  const map = new SourceMap(MAP);

  it("names the source of the closest segment at or before the column", () => {
    assert.equal(map.sourceAt(1, 0), "../src/a.ts");
    assert.equal(map.sourceAt(1, 7), "../src/a.ts");
    assert.equal(map.sourceAt(1, 8), "../node_modules/@smithy/core/x.js");
    assert.equal(map.sourceAt(1, 500), "../node_modules/@smithy/core/x.js");
    assert.equal(map.sourceAt(2, 3), "../src/a.ts");
  });

  it("falls back to the last segment of an earlier line", () => {
    assert.equal(map.sourceAt(3, 0), "../src/a.ts");
    assert.equal(map.sourceAt(4, 4), "../src/a.ts");
    assert.equal(map.sourceAt(99, 0), undefined, "past the end: the last segment, which has no source");
  });

  it("gives no source before the first segment or for generated code", () => {
    assert.equal(map.sourceAt(0, 0), undefined);
    assert.equal(map.sourceAt(4, 5), undefined);
  });

  it("applies sourceRoot", () => {
    assert.equal(
      new SourceMap({ ...MAP, sourceRoot: "root" }).sourceAt(1, 9),
      "root/../node_modules/@smithy/core/x.js",
    );
  });

  it("refuses another version", () => {
    assert.throws(() => new SourceMap({ ...MAP, version: 2 }), /version 2/);
  });
});

describe("linkedSourceMap", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "source-map-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the map a script links to beside it", () => {
    writeFileSync(path.join(dir, "a.mjs"), "x();\n//# sourceMappingURL=a.mjs.map\n");
    writeFileSync(path.join(dir, "a.mjs.map"), JSON.stringify(MAP));
    assert.equal(linkedSourceMap(path.join(dir, "a.mjs"))?.sourceAt(1, 8), MAP.sources[1]);
  });

  it("reads a data: URL", () => {
    const b64 = Buffer.from(JSON.stringify(MAP)).toString("base64");
    writeFileSync(
      path.join(dir, "b.mjs"),
      `x();\n//# sourceMappingURL=data:application/json;base64,${b64}\n`,
    );
    assert.equal(linkedSourceMap(path.join(dir, "b.mjs"))?.sourceAt(2, 0), MAP.sources[0]);
  });

  it("gives none for a script without a link or with a missing map", () => {
    writeFileSync(path.join(dir, "c.mjs"), "x();\n");
    assert.equal(linkedSourceMap(path.join(dir, "c.mjs")), undefined);
    writeFileSync(path.join(dir, "d.mjs"), "x();\n//# sourceMappingURL=gone.map\n");
    assert.equal(linkedSourceMap(path.join(dir, "d.mjs")), undefined);
  });
});
