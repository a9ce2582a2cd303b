/**
 * The program's entry points under a Node.js older than package.json's `engines` and under the
 * current one, run as real processes: the tsc output (`node dist/main.js`, npm's bin) and the
 * esbuild bundle (the image's entry point). The old Node refuses with one line naming both
 * versions and exit 2; the current one runs main, also through a symbolic link (npm's bin link).
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { bundle } from "../../hack/bundle.ts";
import { REQUIRED_NODE } from "../../src/node-version.ts";
import { oldNode } from "../support/old-node.ts";
import { repoRoot, trackTempDir } from "../support/process.ts";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(node: string, script: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [script, ...args], { stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the program on an unsupported and on the current Node.js", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "kubeprovisioner-node-"));
  trackTempDir(dir);
  // tsc's output, as `make build` writes it, beside the package.json and node_modules it reads;
  // kept between runs under the checks' cache with tsc's build info, so that a run emits only
  // what changed since the last (a full emit costs about 14 s of CPU).
  const built = path.join(repoRoot, "node_modules/.cache/kubeprovisioner/node-version");
  const tscMain = path.join(built, "dist", "main.js");
  const bundled = path.join(dir, "kubeprovisioner.mjs");
  const old = oldNode();

  before(async () => {
    execFileSync(
      process.execPath,
      [
        path.join(repoRoot, "node_modules/typescript/bin/tsc"),
        "-p",
        "tsconfig.build.json",
        "--outDir",
        path.dirname(tscMain),
        "--incremental",
        "--tsBuildInfoFile",
        path.join(built, "tsconfig.build.tsbuildinfo"),
      ],
      { cwd: repoRoot, stdio: "inherit" },
    );
    for (const f of ["node_modules", "package.json"]) {
      rmSync(path.join(built, f), { force: true });
      symlinkSync(path.join(repoRoot, f), path.join(built, f));
    }
    await bundle(bundled);
  });

  for (const [what, script] of [
    ["dist/main.js", tscMain],
    ["the bundle", bundled],
  ] as const) {
    it(`${what} under Node.js ${old.version} prints one line naming both versions and exits 2`, async () => {
      for (const args of [["--help"], ["--version"], []]) {
        const r = await run(old.node, script, args);
        assert.equal(r.code, 2, `exit code of ${args.join(" ")}; stderr: ${r.stderr}`);
        assert.equal(r.stdout, "");
        assert.deepEqual(
          r.stderr.split("\n").filter((l) => l !== ""),
          [`kubeprovisioner needs Node.js ${REQUIRED_NODE}; this is Node.js ${old.version}`],
        );
      }
    });

    it(`${what} under Node.js ${process.version} runs, also through a symbolic link`, async () => {
      const link = path.join(dir, `link-${path.basename(script)}`);
      symlinkSync(script, link);
      for (const s of [script, link]) {
        const help = await run(process.execPath, s, ["--help"]);
        assert.equal(help.code, 0, help.stderr);
        assert.match(help.stdout, /^Usage: kubeprovisioner \[flags\]/);
        const bad = await run(process.execPath, s, ["--sync-period=soon"]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, /^kubeprovisioner: invalid value "soon" for --sync-period: /);
      }
    });
  }
});
