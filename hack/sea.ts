// The operator program as one executable per platform, for users without Node.js: Node's single
// executable applications (SEA). `make release` (hack/release.ts) archives them with a krew
// plugin manifest; `node hack/sea.ts [DIR]` builds the one of this machine into DIR (default
// dist/cli) to try it.
//
// How an executable is made:
//
//   1. The script: the image's bundle (hack/bundle.ts: tree-shaken ES modules, an entry point and
//      the chunks it imports on demand) bundled once more by esbuild into one CommonJS file. Node 24
//      runs a SEA's embedded script as CommonJS only, and the script cannot load files beside it;
//      the chunks become functions of the one file that run when their import() does, so the
//      executable, too, evaluates an AWS service's client only when it is used. import.meta.url is
//      the file's URL: inside an executable, the executable's.
//   2. The preparation blob: `node --experimental-sea-config` of the pinned Node.js (NODE_VERSION
//      in hack/versions.env; a blob runs only in a node of the version that made it), holding the
//      script and package.json as the asset "package.json". No code cache and no snapshot: those
//      are specific to the platform that made them, the blob as it is runs on every platform.
//   3. The executable: the target platform's node binary of the same version from the npm
//      registry (the package node-<os>-<x64|arm64>, the one hack/tools.sh installs Node from), with
//      the blob injected by postject (a devDependency; Node 24 has no `--build-sea` of its own).
//      A darwin binary is signed: its signature is removed before the injection and an ad hoc one
//      made after, with Apple's codesign. No tool on Linux does both, so darwin executables are
//      built on macOS only; elsewhere they are left out with the reason (docs/release.md).
//   4. The checks: the SEA fuse is set and the blob is in the file; an executable of this machine's
//      platform is also run, as `kubeprovisioner --version` and as `kubectl-kp --version` found
//      through PATH, and must print the version. A target that fails a check fails the build:
//      no archive is written for it.
//   5. The archive: kubeprovisioner-cli-<version>-<os>-<arch>.tar.gz holding the executable
//      `kubeprovisioner` (mode 0755, owner 0, the commit's time), written here as a plain ustar
//      file so it is the same on every build machine and extracts with krew, which takes regular
//      files and folders only (no links). kubectl finds it as a plugin under the name kubectl-kp:
//      krew makes that link itself (`bin` of the manifest); by hand, `ln -s kubeprovisioner
//      kubectl-kp`. The program does not depend on the name it runs under.
//
// Steps 3 and 5 write the same bytes for the same node binary, blob and time, so their results are
// kept in the tool cache by the inputs' sha256 (the few most recently used); the checks of step 4
// run on every build all the same.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGzip } from "node:zlib";
import { build } from "esbuild";
import { stringify as stringifyYaml } from "yaml";
import { toolCache } from "../test/support/image.ts";
import { repoRoot } from "../test/support/process.ts";
import { versions } from "../test/support/tools.ts";
import { bundle } from "./bundle.ts";
import { ReleaseError, sha256File } from "./release-files.ts";

const execFileP = promisify(execFile);

/** A platform an executable is built for, named as Go, krew and container platforms name them. */
export interface Target {
  readonly os: "linux" | "darwin";
  readonly arch: "amd64" | "arm64";
}

/** Every platform `make release` builds for, where it can (see the module comment). */
export const TARGETS: readonly Target[] = [
  { os: "linux", arch: "amd64" },
  { os: "linux", arch: "arm64" },
  { os: "darwin", arch: "amd64" },
  { os: "darwin", arch: "arm64" },
];

/** `linux-amd64`. */
export const targetName = (t: Target): string => `${t.os}-${t.arch}`;

/** Node.js's name of an architecture (the npm package's suffix and `process.arch`). */
const nodeArch = (t: Target): string => (t.arch === "amd64" ? "x64" : t.arch);

/** The npm registry package with the node binary of a platform. */
export const nodePackage = (t: Target): string => `node-${t.os}-${nodeArch(t)}`;

/** This machine's platform, when it is one of {@link TARGETS}. */
export function hostTarget(): Target | undefined {
  return TARGETS.find((t) => t.os === process.platform && nodeArch(t) === process.arch);
}

/**
 * The platforms RELEASE_CLI names: `all` (or empty), `none`, `host` (this machine's), or a
 * comma-separated list of `<os>-<arch>` (`linux-amd64,linux-arm64`).
 */
export function parseTargets(spec: string | undefined): Target[] {
  const s = (spec ?? "").trim();
  if (s === "" || s === "all") return [...TARGETS];
  if (s === "none") return [];
  if (s === "host") {
    const host = hostTarget();
    if (host === undefined)
      throw new ReleaseError(
        `RELEASE_CLI=host: ${process.platform}/${process.arch} is not a platform the CLI is built for`,
      );
    return [host];
  }
  const out: Target[] = [];
  for (const name of s.split(",").map((n) => n.trim())) {
    const t = TARGETS.find((x) => targetName(x) === name);
    if (t === undefined)
      throw new ReleaseError(
        `RELEASE_CLI names ${JSON.stringify(name)}: expected all, none, host or some of ${TARGETS.map(targetName).join(", ")}`,
      );
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/** The archive of a platform's executable. */
export const archiveName = (version: string, t: Target): string =>
  `kubeprovisioner-cli-${version}-${targetName(t)}.tar.gz`;

/** The krew plugin manifest's file name: the plugin is `kp`, run as `kubectl kp`. */
export const KREW_MANIFEST = "kp.yaml";

/** The executable's name in the archive; krew links it as kubectl-kp. */
export const EXECUTABLE = "kubeprovisioner";

/** The name kubectl looks for on PATH for `kubectl kp`. */
export const PLUGIN_EXECUTABLE = "kubectl-kp";

/** The resource postject writes the blob to, and the fuse Node checks for it (Node's documented values). */
const BLOB_RESOURCE = "NODE_SEA_BLOB";
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const MACHO_SEGMENT = "NODE_SEA";

/** The pinned Node.js version of hack/versions.env, which every executable carries. */
export function nodeVersion(): string {
  const v = versions()["NODE_VERSION"];
  if (v === undefined) throw new ReleaseError("hack/versions.env has no NODE_VERSION");
  return v;
}

// ---- 1. the script ------------------------------------------------------------------------------

/** Builds the single CommonJS script of the executables into `dir`; returns its path. */
export async function seaScript(dir: string): Promise<string> {
  const split = join(dir, "bundle", "kubeprovisioner.mjs");
  await bundle(split, { sourceMaps: false });
  const script = join(dir, "kubeprovisioner.cjs");
  await build({
    entryPoints: [split],
    outfile: script,
    // The wrappers of the chunks name them by their path from here: the same on every build.
    absWorkingDir: dir,
    bundle: true,
    platform: "node",
    target: "node22.19",
    format: "cjs",
    define: { "import.meta.url": "__kpModuleUrl" },
    banner: { js: 'var __kpModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    minifyWhitespace: true,
    minifySyntax: true,
    charset: "ascii",
    legalComments: "eof",
    logLevel: "warning",
  });
  return script;
}

// ---- 2. the blob ----------------------------------------------------------------------------------

/**
 * Writes the preparation blob of `script` with the node binary `node`; returns its path. The blob
 * holds the script's path as the config gives it, so it is given from the script's folder: the
 * same in every build, and no path of the build machine in the executable.
 */
async function prepBlob(node: string, script: string): Promise<string> {
  const dir = dirname(script);
  const blob = join(dir, "sea-prep.blob");
  const config = join(dir, "sea-config.json");
  await writeFile(
    config,
    JSON.stringify({
      main: basename(script),
      output: basename(blob),
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
      assets: { "package.json": join(repoRoot, "package.json") },
    }),
  );
  await execFileP(node, ["--experimental-sea-config", config], { cwd: dir });
  return blob;
}

// ---- 3. the node binaries ---------------------------------------------------------------------------

/** Why a platform gets no executable, or the node binary to make it from. */
export type NodeBinary = { readonly file: string } | { readonly missing: string };

/**
 * The node binary of `t` at `version` from the npm registry, kept in the tool cache. Linux
 * amd64's is the one hack/tools.sh installs when it is there. `missing` says why there is none:
 * the registry has no such package version.
 */
export async function nodeBinary(t: Target, version: string, log: (l: string) => void): Promise<NodeBinary> {
  const pkg = nodePackage(t);
  if (t.os === "linux" && t.arch === "amd64") {
    const installed = join(toolCache(), `node-${version}`, "bin", "node");
    if (existsSync(installed)) return { file: installed };
  }
  const dir = join(toolCache(), `${pkg}-${version}`);
  const file = join(dir, "node");
  if (existsSync(file)) return { file };
  log(`npm pack ${pkg}@${version}`);
  await mkdir(toolCache(), { recursive: true });
  const work = await mkdtemp(join(toolCache(), `.${pkg}-`));
  try {
    try {
      await execFileP("npm", ["pack", "--loglevel=error", `${pkg}@${version}`], {
        cwd: work,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === "ENOENT")
        throw new ReleaseError("npm not found: the CLI's node binaries come from the npm registry");
      if (/\b(?:E404|ETARGET)\b/.test(e.stderr ?? ""))
        return { missing: `the npm registry has no ${pkg}@${version}` };
      throw new ReleaseError(
        `npm pack ${pkg}@${version} failed: ${(e.stderr ?? e.message).trim().split("\n").pop()}`,
      );
    }
    await execFileP("tar", ["-xzf", `${pkg}-${version}.tgz`, "package/bin/node"], { cwd: work });
    await mkdir(dir, { recursive: true });
    await rename(join(work, "package", "bin", "node"), file);
    return { file };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Whether `cmd` runs here. */
async function available(cmd: string, args: string[]): Promise<boolean> {
  try {
    await execFileP(cmd, args);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Why darwin executables cannot be signed on this machine, if they cannot. */
async function darwinSigningGap(): Promise<string | undefined> {
  if (process.platform === "darwin" && (await available("codesign", ["--help"]))) return undefined;
  return (
    "a darwin executable needs the node binary's signature removed before the blob is injected and an " +
    "ad hoc one made after, or macOS does not run it; that takes Apple's codesign, on macOS, and this " +
    "machine has none"
  );
}

// ---- 3. and 4. an executable ---------------------------------------------------------------------

const postjectCli = (): string => createRequire(import.meta.url).resolve("postject/dist/cli.js");

/** Injects `blob` into a copy of `node` at `out`, for platform `t`. */
async function inject(t: Target, node: string, blob: string, out: string): Promise<void> {
  await copyFile(node, out);
  await chmod(out, 0o755);
  if (t.os === "darwin") await execFileP("codesign", ["--remove-signature", out]);
  const args = [postjectCli(), out, BLOB_RESOURCE, blob, "--sentinel-fuse", SEA_FUSE];
  if (t.os === "darwin") args.push("--macho-segment-name", MACHO_SEGMENT);
  try {
    await execFileP(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new ReleaseError(
      `postject could not inject the blob into ${out}: ${e.stderr || e.stdout || e.message}`,
    );
  }
  if (t.os === "darwin") await execFileP("codesign", ["--sign", "-", out]);
}

/** The environment an executable is checked in: this one, without Node options meant for the build. */
function checkEnv(path: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: path };
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * The checks of step 4: throws, naming the executable, when the fuse is not set, the blob is not
 * in the file, or (on this machine's platform) it does not print `kubeprovisioner <version>` as
 * itself and as kubectl-kp.
 */
export async function checkExecutable(t: Target, exe: string, blob: string, version: string): Promise<void> {
  const bytes = await readFile(exe);
  if (!bytes.includes(`${SEA_FUSE}:1`))
    throw new ReleaseError(`${exe}: the SEA fuse is not set, the blob was not injected`);
  if (!bytes.includes(await readFile(blob)))
    throw new ReleaseError(`${exe}: the blob is not in the executable`);
  const host = hostTarget();
  if (host === undefined || targetName(host) !== targetName(t)) return;
  const want = `kubeprovisioner ${version}\n`;
  const dir = await mkdtemp(join(os.tmpdir(), "kp-sea-check-"));
  try {
    await symlink(exe, join(dir, PLUGIN_EXECUTABLE));
    for (const [cmd, what] of [
      [exe, exe],
      [PLUGIN_EXECUTABLE, `${PLUGIN_EXECUTABLE} (a link to it, found through PATH)`],
    ] as const) {
      let stdout: string;
      try {
        ({ stdout } = await execFileP(cmd, ["--version"], {
          env: checkEnv(`${dir}:${process.env.PATH ?? ""}`),
        }));
      } catch (err) {
        const e = err as Error & { stderr?: string };
        throw new ReleaseError(`${what} --version failed: ${(e.stderr || e.message).trim()}`);
      }
      if (stdout !== want)
        throw new ReleaseError(
          `${what} --version printed ${JSON.stringify(stdout)}, not ${JSON.stringify(want)}`,
        );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- 5. the archive ------------------------------------------------------------------------------

/** A ustar header of a regular file owned by root. */
function tarHeader(name: string, size: number, mode: number, mtime: number): Buffer {
  const h = Buffer.alloc(512);
  const octal = (n: number, width: number): string => `${n.toString(8).padStart(width - 1, "0")}\0`;
  h.write(name, 0, 100, "ascii");
  h.write(octal(mode, 8), 100, "ascii");
  h.write(octal(0, 8), 108, "ascii");
  h.write(octal(0, 8), 116, "ascii");
  h.write(octal(size, 12), 124, "ascii");
  h.write(octal(mtime, 12), 136, "ascii");
  h.write("        ", 148, "ascii");
  h.write("0", 156, "ascii");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  h.write("root", 265, "ascii");
  h.write("root", 297, "ascii");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return h;
}

/** Writes `out`: a gzip'd tar holding `exe` as {@link EXECUTABLE}, mode 0755, time `mtime` (seconds). */
export async function writeArchive(exe: string, out: string, mtime: number): Promise<void> {
  const size = (await stat(exe)).size;
  async function* entries(): AsyncGenerator<Buffer> {
    yield tarHeader(EXECUTABLE, size, 0o755, mtime);
    for await (const chunk of createReadStream(exe)) yield chunk as Buffer;
    yield Buffer.alloc((512 - (size % 512)) % 512);
    yield Buffer.alloc(1024);
  }
  await pipeline(entries, createGzip(), createWriteStream(out));
}

// ---- the krew manifest ---------------------------------------------------------------------------

/** A built archive: its platform, file name and sha256. */
export interface CliArchive {
  readonly target: Target;
  /** {@link targetName} of the target. */
  readonly platform: string;
  readonly file: string;
  readonly sha256: string;
}

/**
 * The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2) of the archives, each
 * downloaded from `<baseUrl>/<archive>`: `kubectl krew install --manifest=kp.yaml`.
 */
export function krewManifest(version: string, archives: readonly CliArchive[], baseUrl: string): string {
  const plugin = {
    apiVersion: "krew.googlecontainertools.github.com/v1alpha2",
    kind: "Plugin",
    metadata: { name: "kp" },
    spec: {
      version: `v${version}`,
      shortDescription: "Plan kubeprovisioner's changes to AWS before they are made",
      description:
        "The kubeprovisioner program as a kubectl plugin. `kubectl kp plan` shows, for Ec2Instance,\n" +
        "S3Bucket and SqsQueue objects (manifests not yet applied, or live objects), what the\n" +
        "kubeprovisioner operator would change in AWS: each change with its disruption, the changes\n" +
        "it refuses and why, and a summary. It reads Kubernetes and AWS and writes to neither.\n",
      caveats:
        "kubectl kp uses your kubeconfig and resolves AWS credentials as the operator does\n" +
        "(AwsAccount objects included): it needs read access to both.\n",
      platforms: archives.map((a) => ({
        selector: { matchLabels: { os: a.target.os, arch: a.target.arch } },
        uri: `${baseUrl.replace(/\/+$/, "")}/${basename(a.file)}`,
        sha256: a.sha256,
        files: [{ from: EXECUTABLE, to: "." }],
        bin: EXECUTABLE,
      })),
    },
  };
  return stringifyYaml(plugin, { lineWidth: 0 });
}

// ---- the whole step --------------------------------------------------------------------------------

/** What a CLI build made. */
export interface CliBuild {
  readonly archives: readonly CliArchive[];
  /** The platforms left out, each with the reason. */
  readonly skipped: readonly {
    readonly target: Target;
    readonly platform: string;
    readonly reason: string;
  }[];
  readonly nodeVersion: string;
}

/**
 * Builds the executables of `targets` and writes their archives into `out`. A linux platform that
 * cannot be built fails the build; a darwin one is left out with the reason (see the module
 * comment).
 */
export async function buildCli(opts: {
  version: string;
  /** Seconds since the epoch: the archives' file time. */
  mtime: number;
  out: string;
  targets: readonly Target[];
  log?: (line: string) => void;
}): Promise<CliBuild> {
  const log = opts.log ?? ((): void => undefined);
  const version = nodeVersion();
  const skipped: { target: Target; platform: string; reason: string }[] = [];
  const binaries: { target: Target; file: string }[] = [];
  const signingGap = opts.targets.some((t) => t.os === "darwin") ? await darwinSigningGap() : undefined;
  for (const t of opts.targets) {
    // Where a darwin executable cannot be signed, its node binary is not even fetched.
    const bin: NodeBinary =
      t.os === "darwin" && signingGap !== undefined
        ? { missing: signingGap }
        : await nodeBinary(t, version, log);
    if ("file" in bin) binaries.push({ target: t, file: bin.file });
    else if (t.os === "linux")
      throw new ReleaseError(`the ${targetName(t)} executable cannot be built: ${bin.missing}`);
    else skipped.push({ target: t, platform: targetName(t), reason: bin.missing });
  }
  if (binaries.length === 0) return { archives: [], skipped, nodeVersion: version };

  const work = await mkdtemp(join(os.tmpdir(), "kp-sea-"));
  try {
    log("the executables' script (hack/bundle.ts, then one CommonJS file)");
    const script = await seaScript(work);
    const blob = await prepBlob(await blobNode(binaries, version), script);
    const archives: CliArchive[] = [];
    for (const b of binaries) {
      log(`the ${targetName(b.target)} executable (${nodePackage(b.target)}@${version})`);
      const built = await executableOf(b.target, b.file, blob, opts.mtime, opts.version, log);
      const file = join(opts.out, archiveName(opts.version, b.target));
      await copyFile(built.archive, file);
      archives.push({
        target: b.target,
        platform: targetName(b.target),
        file,
        sha256: await sha256File(file),
      });
    }
    return { archives, skipped, nodeVersion: version };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** How many executables the cache keeps, the most recently used (each about 170 MiB with its archive). */
const CACHE_ENTRIES = 4;

/** What the cache key covers besides the inputs: the tools and steps that make an entry. */
const CACHE_RECIPE = (): string =>
  `postject ${(createRequire(import.meta.url)("postject/package.json") as { version: string }).version}, ustar+gzip 1`;

/**
 * The executable of `t` from `node` and `blob`, checked (step 4), and its archive (step 5): built,
 * or taken from the tool cache (sea/). Both are functions of their inputs alone (postject writes
 * the same bytes for the same node binary and blob, and the archive has a fixed header and
 * time), so the cache keeps them by the sha256 of the inputs; the checks run on every use.
 */
async function executableOf(
  t: Target,
  node: string,
  blob: string,
  mtime: number,
  version: string,
  log: (line: string) => void,
): Promise<{ exe: string; archive: string }> {
  const key = createHash("sha256")
    .update(
      `${CACHE_RECIPE()}\n${targetName(t)}\n${mtime}\n${await sha256File(node)}\n${await sha256File(blob)}\n`,
    )
    .digest("hex")
    .slice(0, 32);
  const root = join(toolCache(), "sea");
  const dir = join(root, key);
  const entry = (d: string): { exe: string; archive: string } => ({
    exe: join(d, EXECUTABLE),
    archive: join(d, `${EXECUTABLE}.tar.gz`),
  });
  if (existsSync(entry(dir).archive)) {
    log(`  from the cache (${dir})`);
    await checkExecutable(t, entry(dir).exe, blob, version);
    const now = new Date();
    await utimes(dir, now, now);
    return entry(dir);
  }
  await mkdir(root, { recursive: true });
  const tmp = await mkdtemp(join(root, `.${key}-`));
  try {
    await inject(t, node, blob, entry(tmp).exe);
    await checkExecutable(t, entry(tmp).exe, blob, version);
    await writeArchive(entry(tmp).exe, entry(tmp).archive, mtime);
    // A build of the same inputs that finished first is as good as this one.
    await rename(tmp, dir).catch((err: NodeJS.ErrnoException) => {
      if (!existsSync(entry(dir).archive)) throw err;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  const entries = await Promise.all(
    (await readdir(root))
      .filter((n) => !n.startsWith("."))
      .map(async (n) => ({ path: join(root, n), used: (await stat(join(root, n))).mtimeMs })),
  );
  for (const old of entries.sort((a, b) => b.used - a.used).slice(CACHE_ENTRIES))
    await rm(old.path, { recursive: true, force: true });
  return entry(dir);
}

/** A node of `version` that runs here, to make the blob with: this machine's target binary, else this process's node. */
async function blobNode(
  binaries: readonly { target: Target; file: string }[],
  version: string,
): Promise<string> {
  const host = hostTarget();
  const own = binaries.find((b) => host !== undefined && targetName(b.target) === targetName(host));
  if (own !== undefined) return own.file;
  if (host !== undefined) {
    const bin = await nodeBinary(host, version, () => undefined);
    if ("file" in bin) return bin.file;
  }
  if (process.versions.node === version) return process.execPath;
  throw new ReleaseError(
    `the blob must be made by Node.js ${version}, and neither the npm registry nor this process has it for ${process.platform}/${process.arch}`,
  );
}

if (import.meta.main) {
  const host = hostTarget();
  if (host === undefined) {
    console.error(`sea: ${process.platform}/${process.arch} is not a platform the CLI is built for`);
    process.exit(2);
  }
  const outDir = resolve(process.argv[2] ?? join(repoRoot, "dist/cli"));
  const pkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { version: string };
  await mkdir(outDir, { recursive: true });
  try {
    const { archives } = await buildCli({
      version: pkg.version,
      mtime: Math.floor(Date.now() / 1000),
      out: outDir,
      targets: [host],
      log: (l) => console.log(`  ${l}`),
    });
    for (const a of archives) {
      await execFileP("tar", ["-xzf", a.file, "-C", outDir]);
      await rm(a.file);
    }
    console.log(`sea: ${join(outDir, EXECUTABLE)}`);
  } catch (err) {
    console.error(`sea: ${(err as Error).message}`);
    process.exit(1);
  }
}
