/**
 * The modules of src/ import one another without a cycle: no chain of imports leads from a module
 * back to itself. Type-only imports count too, since a type-only edge is how a value edge gets
 * added later unnoticed. Test files are left out (a test may import what it tests and its
 * fixtures freely).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../support/process.ts";

/** Every module of `dir` (relative to the repository), test files excluded. */
function modules(dir: string): string[] {
  return (readdirSync(path.join(repoRoot, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => path.join(dir, f));
}

/** The modules of the repository that `file` imports or re-exports from, by relative specifier. */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  const specifiers = text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*["'](\.[^"']+)["']/g);
  for (const m of specifiers) {
    const target = path.normalize(path.join(path.dirname(file), m[1] ?? ""));
    if (existsSync(path.join(repoRoot, target))) out.push(target);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g)) {
    const target = path.normalize(path.join(path.dirname(file), m[1] ?? ""));
    if (existsSync(path.join(repoRoot, target))) out.push(target);
  }
  return out;
}

/** The strongly connected components of more than one module (or a module importing itself). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, indices.get(w) ?? 0));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const scc: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indices.has(v)) visit(v);
  return found;
}

describe("the import graph of src/", () => {
  it("finds a cycle where there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    assert.deepEqual(cycles(graph), [["a", "b", "c"]]);
    assert.deepEqual(importsOf("src/x/y.ts", 'import type { A } from "../../package.json";\n'), [
      "package.json",
    ]);
  });

  it("has no cycle, type-only imports included", () => {
    const graph = new Map<string, string[]>();
    for (const file of modules("src")) {
      graph.set(file, importsOf(file, readFileSync(path.join(repoRoot, file), "utf8")));
    }
    assert.ok(graph.size > 100, `modules read: ${graph.size}`);
    assert.deepEqual(cycles(graph), []);
  });
});
