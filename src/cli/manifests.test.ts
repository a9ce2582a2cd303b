import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ManifestError, parseManifests, readManifests } from "./manifests.ts";

describe("parseManifests", () => {
  it("reads documents as YAML 1.1, skips empty ones and expands Lists", () => {
    const text = [
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {flag: yes}",
      "",
      "# only a comment",
      '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}}]}',
    ].join("\n---\n");
    const got = parseManifests(text, "f.yaml");
    assert.deepEqual(
      got.map((m) => [m.source, m.object.kind, (m.object.metadata as { name: string }).name]),
      [
        ["f.yaml (document 1)", "ConfigMap", "a"],
        ["f.yaml (document 4) item 1", "Secret", "b"],
      ],
    );
    assert.deepEqual(
      (got[0]?.object.data as Record<string, unknown>).flag,
      true,
      "yes is a boolean in YAML 1.1",
    );
  });

  it("refuses an object without apiVersion and kind, and text that is not YAML, naming the document", () => {
    assert.throws(
      () => parseManifests("metadata: {name: a}", "f.yaml"),
      /f\.yaml \(document 1\): an object needs apiVersion and kind/,
    );
    assert.throws(() => parseManifests("a: [", "f.yaml"), ManifestError);
    assert.throws(() => parseManifests("- 1\n- 2", "f.yaml"), /not an object/);
  });
});

describe("readManifests", () => {
  const dir = mkdtempSync(join(tmpdir(), "kp-manifests-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "b.yaml"), doc("b"));
  writeFileSync(
    join(dir, "a.json"),
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }),
  );
  writeFileSync(join(dir, "c.yml"), doc("c"));
  writeFileSync(join(dir, "notes.txt"), doc("skipped"));
  writeFileSync(join(dir, "sub", "d.yaml"), doc("d"));
  const names = async (paths: string[], recursive: boolean, stdin = ""): Promise<string[]> =>
    (await readManifests(paths, { recursive, stdin: async () => stdin })).map(
      (m) => (m.object.metadata as { name: string }).name,
    );

  it("reads a folder's .json, .yaml and .yml files in name order, subfolders only with -R", async () => {
    assert.deepEqual(await names([dir], false), ["a", "b", "c"]);
    assert.deepEqual(await names([dir], true), ["a", "b", "c", "d"]);
  });

  it("reads a named file whatever its name, and - from standard input", async () => {
    assert.deepEqual(await names([join(dir, "notes.txt"), "-"], false, doc("in")), ["skipped", "in"]);
  });

  it("says which path does not exist", async () => {
    await assert.rejects(
      readManifests([join(dir, "none")], { recursive: false, stdin: async () => "" }),
      /does not exist/,
    );
  });
});
