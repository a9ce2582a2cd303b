/**
 * The CLI of `make release` (hack/release.ts, hack/sea.ts; docs/release.md, "The CLI without Node.js"):
 * this machine's platform built as a single executable application into its archive, run with no
 * Node.js on PATH, run by kubectl as the plugin `kp` the way krew installs it, listed in SHA256SUMS
 * and in a krew manifest of the shape krew accepts. A darwin platform, which needs Apple's
 * codesign, is left out with the reason, and a release of nothing but such platforms is refused.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { githubReleaseUrl } from "../../hack/release.ts";
import {
  archiveName,
  EXECUTABLE,
  hostTarget,
  KREW_MANIFEST,
  parseTargets,
  PLUGIN_EXECUTABLE,
  targetName,
  TARGETS,
} from "../../hack/sea.ts";
import { CommandError, repoRoot, runCommand, trackTempDir } from "../support/process.ts";
import { toolPath } from "../support/tools.ts";

const execFileP = promisify(execFile);

const version = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string })
  .version;
const RELEASE_URL = "https://downloads.example.test/kubeprovisioner/v{version}";
const DOWNLOADS = `https://downloads.example.test/kubeprovisioner/v${version}`;

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kp-release-cli-"));
  trackTempDir(dir);
  return dir;
}

/** hack/release.ts with `env`, chart and CLI only; never throws on a non-zero exit. */
async function release(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await runCommand(process.execPath, [path.join(repoRoot, "hack/release.ts")], {
      env: { ...process.env, RELEASE_IMAGE: "none", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
  }
}

const sha256 = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Runs `cmd` with `args` and `env`; resolves with its exit code and output. */
async function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP(cmd, args, { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** An environment with only `PATH`: no node, no npm, no Node options. */
const onlyPath = (dirs: string[]): NodeJS.ProcessEnv => ({ PATH: dirs.join(":"), HOME: os.tmpdir() });

describe("make release: the CLI as single executables", () => {
  const host = hostTarget();
  assert.ok(host !== undefined, `${process.platform}/${process.arch} builds a CLI`);
  const out = path.join(tempDir(), "release");
  const archive = path.join(out, archiveName(version, host));
  /** The archive extracted as krew does: its files into a folder of their own. */
  const store = path.join(tempDir(), "store");
  let released: { code: number; stdout: string; stderr: string };

  before(async () => {
    // This machine's platform and darwin-arm64, which Linux cannot sign.
    released = await release({
      RELEASE_DIR: out,
      RELEASE_CLI: `${targetName(host)},darwin-arm64`,
      RELEASE_URL,
    });
    assert.equal(released.code, 0, released.stderr);
    mkdirSync(store);
    await execFileP("tar", ["-xzf", archive, "-C", store]);
  });

  it("writes the archive, kp.yaml and SHA256SUMS, which sha256sum -c accepts", async () => {
    assert.deepEqual(
      readdirSync(out)
        .filter((f) => !f.endsWith(".tgz"))
        .sort(),
      ["SHA256SUMS", KREW_MANIFEST, archiveName(version, host)].sort(),
    );
    const lines = readFileSync(path.join(out, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    for (const f of [archiveName(version, host), KREW_MANIFEST])
      assert.ok(lines.includes(`${sha256(path.join(out, f))}  ${f}`), `SHA256SUMS lists ${f}`);
    const checked = await execFileP("sha256sum", ["-c", "SHA256SUMS"], { cwd: out });
    assert.match(checked.stdout, new RegExp(`^${archiveName(version, host)}: OK$`, "m"));
    assert.match(checked.stdout, /^kp\.yaml: OK$/m);
  });

  it("archives one executable, kubeprovisioner, mode 0755", async () => {
    const { stdout } = await execFileP("tar", ["-tvzf", archive]);
    const entries = stdout.trimEnd().split("\n");
    assert.equal(entries.length, 1, stdout);
    assert.match(entries[0] ?? "", new RegExp(`^-rwxr-xr-x root/root +\\d+ .* ${EXECUTABLE}$`));
    assert.equal(statSync(path.join(store, EXECUTABLE)).mode & 0o777, 0o755);
  });

  it("runs with no Node.js on PATH: --version, --help and plan --help", async () => {
    const exe = path.join(store, EXECUTABLE);
    const v = await run(exe, ["--version"], onlyPath(["/nonexistent"]));
    assert.deepEqual(v, { code: 0, stdout: `kubeprovisioner ${version}\n`, stderr: "" });
    const h = await run(exe, ["--help"], onlyPath(["/nonexistent"]));
    assert.equal(h.code, 0, h.stderr);
    assert.match(h.stdout, /^Usage: kubeprovisioner /);
    // The command's code is a chunk of the bundle, loaded only when it runs: here too.
    const p = await run(exe, ["plan", "--help"], onlyPath(["/nonexistent"]));
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /^Shows what kubeprovisioner would do for each object/);
    const bad = await run(exe, ["plan"], onlyPath(["/nonexistent"]));
    assert.deepEqual(
      [bad.code, bad.stderr],
      [1, "kubeprovisioner plan: give either -f FILE|DIR|- or --live\n"],
    );
  });

  it("runs as the kubectl plugin kp through a kubectl-kp link on PATH, as krew installs it", async () => {
    // krew's layout: the archive in a folder of its own, and in its bin folder on PATH a link
    // named kubectl-<plugin> to the manifest's `bin`.
    const manifest = parseYaml(readFileSync(path.join(out, KREW_MANIFEST), "utf8")) as KrewPlugin;
    const bin = path.join(tempDir(), "bin");
    mkdirSync(bin);
    const platform = manifest.spec.platforms[0];
    assert.ok(platform !== undefined);
    symlinkSync(path.join(store, platform.bin), path.join(bin, `kubectl-${manifest.metadata.name}`));
    const env = onlyPath([bin]);
    const listed = await run(toolPath("kubectl"), ["plugin", "list", "--name-only"], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${PLUGIN_EXECUTABLE}$`, "m"));
    const viaKubectl = await run(toolPath("kubectl"), ["kp", "--version"], env);
    assert.deepEqual(viaKubectl, { code: 0, stdout: `kubeprovisioner ${version}\n`, stderr: "" });
    // By its bare name, as a shell finds it on PATH: argv[0] is then `kubectl-kp`, no path.
    const bare = await run(PLUGIN_EXECUTABLE, ["--version"], env);
    assert.deepEqual(bare, { code: 0, stdout: `kubeprovisioner ${version}\n`, stderr: "" });
    const help = await run(toolPath("kubectl"), ["kp", "--help"], env);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: kubeprovisioner /);
    const planHelp = await run(toolPath("kubectl"), ["kp", "plan", "--help"], env);
    assert.equal(planHelp.code, 0, planHelp.stderr);
    assert.match(planHelp.stdout, /kubectl kp plan/);
  });

  it("writes a krew manifest that krew's validation accepts, with each archive's URL and sha256", () => {
    const manifest = parseYaml(readFileSync(path.join(out, KREW_MANIFEST), "utf8")) as KrewPlugin;
    assert.deepEqual(krewProblems(manifest), []);
    assert.equal(manifest.metadata.name, "kp");
    assert.equal(manifest.spec.version, `v${version}`);
    assert.deepEqual(
      manifest.spec.platforms.map((p) => ({ ...p })),
      [
        {
          selector: { matchLabels: { os: host.os, arch: host.arch } },
          uri: `${DOWNLOADS}/${archiveName(version, host)}`,
          sha256: sha256(archive),
          files: [{ from: EXECUTABLE, to: "." }],
          bin: EXECUTABLE,
        },
      ],
    );
    // Every file a platform's `files` takes and its `bin` are in the archive.
    for (const p of manifest.spec.platforms) {
      for (const f of p.files ?? []) assert.ok(existsSync(path.join(store, f.from)), f.from);
      assert.ok(existsSync(path.join(store, p.bin)), p.bin);
    }
    // A manifest that breaks krew's rules is caught.
    const broken = structuredClone(manifest);
    broken.spec.version = version;
    const first = broken.spec.platforms[0];
    assert.ok(first !== undefined);
    first.sha256 = first.sha256.toUpperCase();
    first.selector = { matchLabels: { os: host.os, cpu: host.arch } };
    assert.equal(krewProblems(broken).length, 3, krewProblems(broken).join("\n"));
  });

  it("leaves darwin out with the reason where it cannot be signed, and names it in SHA256SUMS", () => {
    assert.notEqual(process.platform, "darwin", "the test runs where darwin executables cannot be signed");
    const reason = /^# CLI: no darwin-arm64 executable: (.+)$/m.exec(
      readFileSync(path.join(out, "SHA256SUMS"), "utf8"),
    )?.[1];
    assert.ok(reason?.includes("Apple's codesign"), reason);
    assert.match(released.stdout, /^no darwin-arm64 executable: .*codesign/m);
  });

  it("refuses a release whose platforms none can be built, writing nothing", async () => {
    const none = path.join(tempDir(), "release");
    const res = await release({ RELEASE_DIR: none, RELEASE_CLI: "darwin-amd64,darwin-arm64", RELEASE_URL });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^release: no CLI executable could be built: .*codesign/m);
    assert.ok(!existsSync(none), "no output folder");
  });
});

describe("RELEASE_CLI and RELEASE_URL", () => {
  it("names all platforms, this machine's, none, or a list; an unknown name is refused", () => {
    assert.deepEqual(parseTargets("").map(targetName), TARGETS.map(targetName));
    assert.deepEqual(parseTargets("all").map(targetName), [
      "linux-amd64",
      "linux-arm64",
      "darwin-amd64",
      "darwin-arm64",
    ]);
    assert.deepEqual(parseTargets("none"), []);
    assert.deepEqual(parseTargets("host"), [hostTarget()]);
    assert.deepEqual(parseTargets("linux-arm64, linux-amd64,linux-arm64").map(targetName), [
      "linux-arm64",
      "linux-amd64",
    ]);
    assert.throws(() => parseTargets("linux-x64"), /RELEASE_CLI names "linux-x64": expected all, none, host/);
  });

  it("takes the download folder of the origin's GitHub release when RELEASE_URL is unset", () => {
    for (const remote of [
      "https://github.com/acme/kubeprovisioner.git",
      "https://github.com/acme/kubeprovisioner",
      "git@github.com:acme/kubeprovisioner.git",
      "ssh://git@github.com/acme/kubeprovisioner.git",
    ])
      assert.equal(
        githubReleaseUrl(remote, "1.2.3"),
        "https://github.com/acme/kubeprovisioner/releases/download/v1.2.3",
        remote,
      );
    for (const remote of ["", "https://gitlab.com/acme/kubeprovisioner.git", "/srv/git/kubeprovisioner"])
      assert.equal(githubReleaseUrl(remote, "1.2.3"), undefined, remote);
  });
});

/** A krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2), as far as these tests read it. */
interface KrewPlugin {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    version: string;
    shortDescription: string;
    platforms: {
      selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string }[] };
      uri: string;
      sha256: string;
      files?: { from: string; to: string }[];
      bin: string;
    }[];
  };
}

/**
 * What krew's validation of a plugin manifest (ValidatePlugin in krew's internal/index/validation)
 * refuses in `p`: one line per rule broken.
 */
function krewProblems(p: KrewPlugin): string[] {
  const problems: string[] = [];
  if (p.apiVersion !== "krew.googlecontainertools.github.com/v1alpha2")
    problems.push(`apiVersion ${p.apiVersion}`);
  if (p.kind !== "Plugin") problems.push(`kind ${p.kind}`);
  const forbidden = /^(?:CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])$/i;
  if (!/^[\w-]+$/.test(p.metadata.name) || forbidden.test(p.metadata.name))
    problems.push(`name ${p.metadata.name}`);
  if (p.spec.shortDescription === "" || /[\r\n]/.test(p.spec.shortDescription))
    problems.push("shortDescription");
  // krew's semver: a leading v, then major.minor.patch with an optional pre-release and build.
  if (!/^v(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[\w.-]+)?(?:\+[\w.-]+)?$/.test(p.spec.version))
    problems.push(`version ${p.spec.version}`);
  if (p.spec.platforms.length === 0) problems.push("no platforms");
  for (const [i, pl] of p.spec.platforms.entries()) {
    if (pl.uri === "") problems.push(`platform ${i}: uri`);
    if (!/^[a-f0-9]{64}$/.test(pl.sha256)) problems.push(`platform ${i}: sha256 ${pl.sha256}`);
    if (pl.bin === "") problems.push(`platform ${i}: bin`);
    if (
      pl.files !== undefined &&
      (pl.files.length === 0 || pl.files.some((f) => f.from === "" || f.to === ""))
    )
      problems.push(`platform ${i}: files`);
    const labels = pl.selector?.matchLabels;
    const exprs = pl.selector?.matchExpressions;
    if (pl.selector === undefined) problems.push(`platform ${i}: no selector`);
    else if ((labels === undefined || Object.keys(labels).length === 0) && (exprs ?? []).length === 0)
      problems.push(`platform ${i}: empty selector`);
    const keys = [...Object.keys(labels ?? {}), ...(exprs ?? []).map((e) => e.key)];
    for (const k of keys.filter((k) => k !== "os" && k !== "arch"))
      problems.push(`platform ${i}: selector key ${k}`);
  }
  return problems;
}
