/**
 * What the README and docs/ say about the repository is what the repository has: every path a
 * page cites exists (or is a build output the build makes, or a file the user writes that git
 * ignores), every link and anchor resolves, every `make` target exists, the bundle is described
 * with the layout hack/bundle.ts writes and the Dockerfile copies, and the README's layout and
 * documentation index are complete. docs-facts.test.ts checks the names, counts and versions the
 * pages state. Reads files only: no process, no network.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { anchors, codeBlocks, PAGES, paragraphs, prose, read, repoEntries } from "./pages.ts";

const ENTRIES = repoEntries();

/** Files at the repository root that pages cite by name. */
const ROOT_FILES = [
  "Makefile",
  "Dockerfile",
  "package.json",
  "package-lock.json",
  "README.md",
  "BENCHMARKS.md",
  "CHANGELOG.md",
  ".dockerignore",
  "tsconfig.json",
  "tsconfig.build.json",
  "eslint.config.js",
];
const ROOT_DIRS = ["src", "test", "hack", "config", "charts", "docs", "bench", "dist", "bin"];

/** The bundle's layout as hack/bundle.ts writes it: the entry point and the folder of its chunks. */
function bundleLayout(): { entry: string; chunks: string } {
  const source = read("hack/bundle.ts");
  const entry = /outfile = join\(root, "([^"]+)"\)/.exec(source)?.[1];
  const chunks = /export const CHUNK_DIR = "([^"]+)"/.exec(source)?.[1];
  assert.ok(entry !== undefined && chunks !== undefined, "hack/bundle.ts names its outfile and CHUNK_DIR");
  return { entry, chunks: `${path.posix.dirname(entry)}/${chunks}` };
}

/** What the build writes under dist/: tsc's output of src/, the bundle and `make release`'s folder. */
function isBuildOutput(p: string): boolean {
  const { entry, chunks } = bundleLayout();
  const release = /export const RELEASE_DIR = "([^"]+)"/.exec(read("hack/release.ts"))?.[1];
  if (release !== undefined && (p === release || p.startsWith(`${release}/`))) return true;
  if (p === "dist" || p === entry || p === chunks || p.startsWith(`${chunks}/`)) return true;
  if (p === entry.replace(/\.mjs$/, ".meta.json")) return true;
  const compiled = /^dist\/(.+)\.js$/.exec(p)?.[1];
  return compiled !== undefined && ENTRIES.has(`src/${compiled}.ts`);
}

/** The tools hack/tools.sh links into bin/. */
const LINKED_TOOLS = new Set(
  [...read("hack/tools.sh").matchAll(/\blink "[^"]+" "?([a-z$][\w$-]*)"?/g)].map((m) => m[1] ?? ""),
);

/** A file the user writes that git ignores where it lives (a .gitignore beside it names it). */
function isUserFile(p: string): boolean {
  const dir = path.posix.dirname(p);
  if (!ENTRIES.has(`${dir}/.gitignore`)) return false;
  return read(`${dir}/.gitignore`)
    .split("\n")
    .some((l) => l.trim() === path.posix.basename(p));
}

/** A cited path as a regular expression: `<x>` and `XXXX` any name, `*`, `**` and `{a,b}` globs. */
function pathPattern(cited: string): RegExp {
  const escape = (t: string): string => t.replace(/[.+?^$()|[\]\\]/g, "\\$&");
  const re = cited
    .split(/(<[^>]*>|\*\*\/?|\*|\{[^}]*\}|X{4,})/)
    .map((part, i) => {
      if (i % 2 === 0) return escape(part);
      if (part.startsWith("**")) return ".*";
      if (part === "*") return "[^/]*";
      if (part.startsWith("{")) return `(?:${part.slice(1, -1).split(",").map(escape).join("|")})`;
      return "[^/]+";
    })
    .join("");
  return new RegExp(`^${re}$`);
}

/** Why `cited` (relative to the repository root) names nothing, or undefined when it does. */
function pathProblem(cited: string): string | undefined {
  const p = cited.replace(/\/+$/, "");
  if (p.startsWith("dist/") || p === "dist") return isBuildOutput(p) ? undefined : "no build writes it";
  if (p.startsWith("bin/")) return LINKED_TOOLS.has(p.slice(4)) ? undefined : "make tools links no such tool";
  if (p === "bin") return undefined;
  if (ENTRIES.has(p) || isUserFile(p)) return undefined;
  if (/[<*{]|X{4}/.test(p)) {
    const re = pathPattern(p);
    return [...ENTRIES].some((e) => re.test(e)) ? undefined : "matches no file";
  }
  return "does not exist";
}

/** The repository paths a piece of text names: words starting with a root folder or naming a root file. */
function citedPaths(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[\s`"'()[\];|]+/)) {
    const w = raw
      .replace(/^(?:file:\/\/|[A-Z_]+=|--[a-z-]+=)/, "")
      .replace(/^\.\//, "")
      .replace(/[.:,]+$/, "")
      .replace(/#.*$/, "");
    if (w.includes("...") || w.includes("…")) continue;
    const top = w.split("/")[0] ?? "";
    if ((ROOT_DIRS.includes(top) && w.includes("/")) || ROOT_FILES.includes(w)) out.push(w);
  }
  return out;
}

/** The `make` targets a page runs: in backticks (`make x`) and at the start of a command line. */
function makeTargets(text: string): string[] {
  const spans = [...prose(text).matchAll(/`make ([a-z][a-z0-9-]*)[^`]*`/g)].map((m) => m[1] ?? "");
  const lines = codeBlocks(text)
    .filter((b) => ["sh", "bash", "console", ""].includes(b.lang))
    .flatMap((b) => [...b.text.matchAll(/(?:^|&&|;|\|\|)\s*(?:\$ )?make ([a-z][a-z0-9-]*)/gm)])
    .map((m) => m[1] ?? "");
  return [...spans, ...lines];
}

describe("the docs cite what the repository has", () => {
  it("every repository path a page names exists, is a build output, or is the user's git-ignored file", () => {
    const problems: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"]) {
      const text = read(page);
      const spans = [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "");
      const code = codeBlocks(text).map((b) => b.text);
      for (const cited of new Set([...spans, ...code].flatMap(citedPaths))) {
        const problem = pathProblem(cited);
        if (problem !== undefined) problems.push(`${page}: ${cited} ${problem}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every file a page names by its name alone is a file of the repository, or one the page has the user write", () => {
    const problems: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"]) {
      const text = read(page);
      for (const m of prose(text).matchAll(/`([\w./-]+\.(?:ts|tpl|json|ya?ml|sh|mjs|js))`/g)) {
        const name = m[1] ?? "";
        if (ROOT_DIRS.includes(name.split("/")[0] ?? "") || ROOT_FILES.includes(name)) continue;
        const written = text.includes(`file://${name}`) || text.includes(`cat > ${name}`);
        if (!written && ![...ENTRIES].some((e) => e === name || e.endsWith(`/${name}`)))
          problems.push(`${page}: ${name} is no file of the repository`);
      }
    }
    assert.deepEqual([...new Set(problems)], []);
  });

  it("every relative link resolves, and so does its anchor", () => {
    const problems: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"]) {
      for (const m of prose(read(page))
        .replace(/`[^`\n]*`/g, "")
        .matchAll(/\]\(([^)\s]*)\)/g)) {
        const link = m[1] ?? "";
        if (/^[a-z]+:/.test(link)) continue;
        const [file = "", anchor] = link.split("#");
        const target =
          file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
        if (pathProblem(target) !== undefined) {
          problems.push(`${page}: link ${link}: ${target} does not exist`);
          continue;
        }
        if (anchor !== undefined && target.endsWith(".md") && !anchors(read(target)).has(anchor))
          problems.push(`${page}: link ${link}: ${target} has no heading #${anchor}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every make target a page runs is one of the Makefile's", () => {
    const targets = new Set([...read("Makefile").matchAll(/^([a-zA-Z0-9_-]+):/gm)].map((m) => m[1]));
    const problems: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"])
      for (const t of makeTargets(read(page))) if (!targets.has(t)) problems.push(`${page}: make ${t}`);
    assert.deepEqual(problems, []);
  });
});

describe("the docs name every target the Makefile documents", () => {
  it("each target with a help line (`## ...`) is run somewhere in the README, docs/ or BENCHMARKS.md", () => {
    const documented = [...read("Makefile").matchAll(/^([a-zA-Z0-9_-]+):.*?## /gm)].map((m) => m[1] ?? "");
    assert.ok(documented.includes("release") && documented.includes("test"));
    const named = new Set([...PAGES, "BENCHMARKS.md"].flatMap((p) => makeTargets(read(p))));
    assert.deepEqual(
      documented.filter((t) => !named.has(t)),
      [],
    );
  });
});

describe("the docs describe the build as it is", () => {
  it("the Dockerfile copies the bundle hack/bundle.ts writes: the entry point and its chunks", () => {
    const { entry, chunks } = bundleLayout();
    const copied = [...read("Dockerfile").matchAll(/^COPY --from=build .* \/src\/(dist\/\S+) /gm)].map(
      (m) => m[1],
    );
    assert.deepEqual(copied.sort(), [chunks, entry].sort());
    assert.match(read("Dockerfile"), new RegExp(`ENTRYPOINT \\[.*"/app/${entry}"\\]`));
  });

  it("a paragraph that names the bundle's entry point also names its chunks", () => {
    const { entry, chunks } = bundleLayout();
    const problems: string[] = [];
    for (const page of PAGES)
      for (const p of paragraphs(read(page)))
        if (p.includes(entry) && !p.includes(path.posix.basename(chunks)))
          problems.push(`${page}: "${p.slice(0, 100)}..." names ${entry} without ${chunks}`);
    assert.deepEqual(problems, []);
  });
});

/** The entries of the README's "Repository layout" tree, as repository paths. */
function layoutEntries(): string[] {
  const section = /## Repository layout\n([\s\S]*?)\n## /.exec(read("README.md"))?.[1] ?? "";
  const block = codeBlocks(section)[0]?.text ?? "";
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of block.split("\n")) {
    const m = /^( *)(\S+)/.exec(line);
    if (m === null) continue;
    const depth = (m[1] ?? "").length / 2;
    // A description continued on the next line is indented past the tree.
    if (!Number.isInteger(depth) || depth > stack.length) continue;
    stack.length = depth;
    const name = (m[2] ?? "").replace(/\/$/, "");
    out.push([...stack, name].join("/"));
    if ((m[2] ?? "").endsWith("/")) stack.push(name);
  }
  return out;
}

describe("the README's maps of the repository are complete and true", () => {
  it("every entry of the repository layout exists, and every folder of the root, src/ and test/ is in it", () => {
    const listed = layoutEntries();
    assert.ok(listed.includes("src/runtime/workqueue"), `layout parsed: ${listed.join(", ")}`);
    const missing = listed.filter((e) => !ENTRIES.has(e)).map((e) => `${e} is listed but does not exist`);
    const folders = [...ENTRIES].filter(
      (e) =>
        /^(?:[a-z][\w-]*|src\/[\w-]+|test\/[\w-]+)$/.test(e) && !ROOT_FILES.includes(e) && !/\.\w+$/.test(e),
    );
    for (const f of folders)
      if (!listed.some((l) => l === f || l.startsWith(`${f}/`)) && ENTRIES.has(`${f}`) && !LEFT_OUT.has(f))
        missing.push(`${f} is not in the layout`);
    assert.deepEqual(missing, []);
  });

  it("every page of docs/ is linked from the README's Documentation section", () => {
    const section = /## Documentation\n([\s\S]*?)\n## /.exec(read("README.md"))?.[1] ?? "";
    const linked = new Set([...section.matchAll(/\]\(([^)#]+)/g)].map((m) => m[1]));
    assert.deepEqual(
      PAGES.filter((p) => p.startsWith("docs/") && !linked.has(p)),
      [],
    );
  });
});

/** Folders the layout leaves out: build output and tool links, git-ignored. */
const LEFT_OUT = new Set(["node_modules", "dist", "bin"]);
