/**
 * The image's build context, as .dockerignore selects it, holds exactly what the Dockerfile's
 * build stage copies: every COPY source is there (a missing one fails `docker build`), and
 * nothing else is (no tests, no tools, no secrets).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { buildContextFiles } from "../support/image.ts";
import { repoRoot } from "../support/process.ts";

/** The sources of every COPY that reads the build context (not `--from` another stage). */
function contextSources(): string[] {
  const out: string[] = [];
  for (const line of readFileSync(path.join(repoRoot, "Dockerfile"), "utf8").split("\n")) {
    const m = /^COPY\s+(.*)$/.exec(line.trim());
    if (!m?.[1]) continue;
    const words = m[1].split(/\s+/);
    if (words.some((w) => w.startsWith("--from="))) continue;
    const args = words.filter((w) => !w.startsWith("--"));
    out.push(...args.slice(0, -1).map((s) => s.replace(/^\.\//, "").replace(/\/$/, "")));
  }
  return out;
}

describe("the image's build context", () => {
  const files = buildContextFiles();
  const sources = contextSources();

  it("holds every file and folder the Dockerfile copies", () => {
    assert.ok(sources.includes("hack/bundle.ts"), "the build stage copies the bundler");
    for (const src of sources) {
      assert.ok(
        files.includes(src) || files.some((f) => f.startsWith(`${src}/`)),
        `${src} is in the build context (.dockerignore)`,
      );
    }
  });

  it("holds nothing the Dockerfile does not copy, and no tests", () => {
    for (const f of files) {
      assert.ok(
        sources.some((src) => f === src || f.startsWith(`${src}/`)),
        `${f} is read by a COPY`,
      );
      assert.doesNotMatch(f, /\.test\.ts$/);
    }
  });
});
