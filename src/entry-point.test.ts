import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { isEntryPoint } from "./entry-point.ts";

describe("isEntryPoint", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "entry-point-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, "main.js");
  writeFileSync(script, "");
  const url = pathToFileURL(script).href;

  it("holds for the script Node was started with, directly or through a symbolic link", () => {
    assert.equal(isEntryPoint(url, script), true);
    const link = path.join(dir, "kubeprovisioner");
    symlinkSync(script, link);
    assert.equal(isEntryPoint(url, link), true);
    assert.equal(isEntryPoint(url, path.relative(process.cwd(), script)), true);
  });

  it("does not hold for an imported module, a missing script or no script", () => {
    const other = path.join(dir, "other.js");
    writeFileSync(other, "");
    assert.equal(isEntryPoint(url, other), false);
    assert.equal(isEntryPoint(url, path.join(dir, "missing.js")), false);
    assert.equal(isEntryPoint(url, undefined), false);
    assert.equal(isEntryPoint(url, ""), false);
  });
});
