/**
 * The program's commands (src/cli: `kubeprovisioner plan`) load only when one runs, so the
 * operator's idle memory holds none of their code: in the bundle the image runs
 * (hack/bundle.ts), no file that the entry point loads at start (the files it imports
 * statically, directly or through others) holds a module of src/cli, and the entry point imports
 * each command of src/main.ts's COMMANDS dynamically, as a chunk of its own. A static import of
 * src/cli on the operator's path fails here.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import type { Metafile } from "esbuild";
import { bundle } from "../../hack/bundle.ts";
import { repoRoot, trackTempDir } from "../support/process.ts";

/** The modules of the commands. */
const COMMAND_MODULES = /^src\/cli\//;
/** The entry point's source. */
const ENTRY = "src/main.ts";

/** The output file whose entry point is the input `input`. */
function outputOf(meta: Metafile, input: string): string | undefined {
  return Object.keys(meta.outputs).find((f) => meta.outputs[f]?.entryPoint === input);
}

/** The output files loaded with the entry point: it and what it imports statically, transitively. */
export function loadedAtStart(meta: Metafile): Set<string> {
  const entry = outputOf(meta, ENTRY);
  assert.ok(entry !== undefined, `the bundle has an output for ${ENTRY}`);
  const seen = new Set<string>();
  const todo = [entry];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    if (seen.has(f)) continue;
    seen.add(f);
    for (const i of meta.outputs[f]?.imports ?? [])
      if (i.kind === "import-statement" && !i.external && meta.outputs[i.path] !== undefined)
        todo.push(i.path);
  }
  return seen;
}

/** The command modules that files loaded at start hold, as `file: module`. */
export function commandModulesAtStart(meta: Metafile): string[] {
  return [...loadedAtStart(meta)].flatMap((f) =>
    Object.keys(meta.outputs[f]?.inputs ?? {})
      .filter((i) => COMMAND_MODULES.test(i))
      .map((i) => `${f}: ${i}`),
  );
}

/** The modules src/main.ts loads with `import()` from src/cli, as inputs (`src/cli/plan.ts`). */
function commandImports(): string[] {
  const main = readFileSync(path.join(repoRoot, ENTRY), "utf8");
  return [...main.matchAll(/import\("\.\/(cli\/[^"]+)"\)/g)].map((m) => `src/${m[1]}`);
}

describe("the commands' code in the bundle", () => {
  let meta: Metafile;
  before(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-command-chunks-"));
    trackTempDir(dir);
    const entry = path.join(dir, "kubeprovisioner.mjs");
    await bundle(entry, { sourceMaps: false });
    meta = JSON.parse(readFileSync(entry.replace(/\.mjs$/, ".meta.json"), "utf8")) as Metafile;
  });

  it("is in no file the operator loads at start", () => {
    assert.ok(
      Object.values(meta.outputs).some((o) => Object.keys(o.inputs).some((i) => COMMAND_MODULES.test(i))),
      "the bundle holds the commands",
    );
    assert.deepEqual(commandModulesAtStart(meta), []);
  });

  it("is a chunk of its own per command, which the entry point imports dynamically", () => {
    const commands = commandImports();
    assert.ok(commands.includes("src/cli/plan.ts"), "src/main.ts imports plan with import()");
    const entry = outputOf(meta, ENTRY) ?? "";
    const dynamic = (meta.outputs[entry]?.imports ?? []).filter((i) => i.kind === "dynamic-import");
    for (const command of commands) {
      const chunk = outputOf(meta, command);
      assert.ok(chunk !== undefined, `${command} is a chunk of its own`);
      assert.ok(
        dynamic.some((i) => i.path === chunk),
        `the entry point imports ${command} dynamically`,
      );
    }
  });

  it("would be found in the files loaded at start if a static import took it there", () => {
    // The entry point's output as it is, with the first command's chunk imported statically.
    const entry = outputOf(meta, ENTRY) ?? "";
    const chunk = outputOf(meta, "src/cli/plan.ts") ?? "";
    const output = meta.outputs[entry];
    assert.ok(output !== undefined);
    const statically: Metafile = {
      ...meta,
      outputs: {
        ...meta.outputs,
        [entry]: { ...output, imports: [...output.imports, { path: chunk, kind: "import-statement" }] },
      },
    };
    assert.ok(commandModulesAtStart(statically).includes(`${chunk}: src/cli/plan.ts`));
  });
});
