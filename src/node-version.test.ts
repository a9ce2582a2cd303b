import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { minimumOf, nodeVersionRefusal, REQUIRED_NODE, satisfies } from "./node-version.ts";

const root = new URL("../", import.meta.url);

describe("the supported Node.js range", () => {
  it("is package.json's engines.node, the minimum hack/tools.sh installs against and the bundle's target", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
      engines: { node: string };
    };
    assert.equal(pkg.engines.node, REQUIRED_NODE);
    const [x, y] = minimumOf(REQUIRED_NODE);
    const pins = readFileSync(new URL("hack/versions.env", root), "utf8");
    assert.match(pins, new RegExp(`^NODE_MIN=${x}\\.${y}$`, "m"));
    assert.match(
      readFileSync(new URL("hack/bundle.ts", root), "utf8"),
      new RegExp(`target: "node${x}\\.${y}"`),
    );
  });

  it("admits the minimum and everything above it, refuses everything below", () => {
    for (const v of ["22.19.0", "v22.19.0", "22.20.1", "23.0.0", "24.22.3", "30.1.2"])
      assert.equal(satisfies(v, ">=22.19"), true, v);
    for (const v of ["22.18.9", "22.9.0", "20.20.2", "18.0.0", "v21.99.99", "0.12.0"])
      assert.equal(satisfies(v, ">=22.19"), false, v);
    assert.equal(satisfies("22.19.0", ">=22.19.1"), false);
    assert.equal(satisfies("22.19.1", ">=22.19.1"), true);
  });

  it("refuses with one line naming the found and the required version", () => {
    assert.equal(nodeVersionRefusal("kp", "24.22.3", ">=22.19"), undefined);
    assert.equal(
      nodeVersionRefusal("kp", "20.20.2", ">=22.19"),
      "kp needs Node.js >=22.19; this is Node.js v20.20.2",
    );
  });

  it("rejects a range or a version it cannot read instead of guessing", () => {
    assert.throws(() => minimumOf("^22.19"), /unsupported engines range/);
    assert.throws(() => minimumOf(">=22 <25"), /unsupported engines range/);
    assert.throws(() => satisfies("22.x", ">=22.19"), /not a Node.js version/);
  });
});
