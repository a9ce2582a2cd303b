/**
 * A chart-only release (`make release RELEASE_IMAGE=none RELEASE_CLI=none`, docs/release.md) needs
 * Node, git and helm, nothing of the test toolchain: `make -n` shows the tools the target would
 * install, and hack/release.ts runs with a PATH that holds only node and git (helm comes from bin/).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { repoRoot, trackTempDir } from "../support/process.ts";
import { CHART_DIR } from "./helm.ts";

const execFileP = promisify(execFile);

/** The environment without the variables a calling make passes down. */
function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"]) delete env[k];
  return env;
}

/** The tools `hack/tools.sh` would install in the recipes `make -n release <vars>` prints. */
async function toolsOfRelease(vars: string[]): Promise<{ tools: string[]; lines: string[] }> {
  const { stdout } = await execFileP("make", ["-n", "release", ...vars], { cwd: repoRoot, env: plainEnv() });
  const lines = stdout.split("\n").filter((l) => l.trim() !== "");
  const tools = lines
    .flatMap((l) =>
      [...l.matchAll(/hack\/tools\.sh((?: [a-z-]+)+)/g)].flatMap((m) => (m[1] ?? "").trim().split(" ")),
    )
    .sort();
  return { tools: [...new Set(tools)], lines };
}

describe("a chart-only release", () => {
  it("make release RELEASE_IMAGE=none asks for Node and helm alone", async () => {
    const { tools, lines } = await toolsOfRelease(["RELEASE_IMAGE=none"]);
    assert.deepEqual(tools, ["helm", "node"], lines.join("\n"));
    assert.ok(lines.includes("node hack/release.ts"), lines.join("\n"));
    assert.ok(!lines.some((l) => /\bmake\b.*\btools\b/.test(l)), lines.join("\n"));
  });

  it("make release with an image asks for helm and the image builder (node-tools), not the test tools", async () => {
    const { tools, lines } = await toolsOfRelease([]);
    assert.deepEqual(tools, ["helm", "node", "node-tools"], lines.join("\n"));
  });

  it("hack/release.ts packages the chart with only node and git on PATH", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "kp-release-chart-"));
    trackTempDir(dir);
    const bin = path.join(dir, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, path.join(bin, "node"));
    const git = (await execFileP("bash", ["-c", "command -v git"])).stdout.trim();
    symlinkSync(git, path.join(bin, "git"));
    const out = path.join(dir, "release");
    const res = await execFileP(process.execPath, [path.join(repoRoot, "hack/release.ts")], {
      cwd: repoRoot,
      env: plainEnv({ PATH: bin, RELEASE_IMAGE: "none", RELEASE_CLI: "none", RELEASE_DIR: out }),
    });
    const chart = parseYaml(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8")) as { version: string };
    assert.deepEqual(
      readdirSync(out).sort(),
      ["SHA256SUMS", `kubeprovisioner-${chart.version}.tgz`],
      res.stdout,
    );
  });
});
