// `make release`: the artifacts of one release in dist/release/ (git-ignored), ready to publish
// with the commands of docs/release.md, which this script never runs:
//
//   kubeprovisioner-<chart version>.tgz          `helm package` of charts/kubeprovisioner
//   kubeprovisioner-image-<version>.oci.tar      the image built from the Dockerfile, an OCI archive
//   kubeprovisioner-cli-<version>-<os>-<arch>.tar.gz
//                                                the program as one executable (hack/sea.ts), for
//                                                linux-amd64, linux-arm64, and darwin where it can be
//                                                built (on macOS)
//   kp.yaml                                      the krew plugin manifest of those archives
//   SHA256SUMS                                   sha256 of each file (`sha256sum -c SHA256SUMS`), and
//                                                in its comments the image's manifest and config
//                                                digests and the platforms left out of the CLI
//
// The version is the chart's appVersion; package.json must carry the same, and CHANGELOG.md must
// have a section for it. RELEASE_IMAGE picks the image:
//
//   upstream (default)  the Dockerfile with its own base images, pulled from their registries. When
//                       a base image cannot be pulled, nothing is written and the script says so:
//                       a release image is never built from anything else.
//   standin             the image the tests build (stand-in base images made on this machine,
//                       test/support/image.ts), named -standin and marked in SHA256SUMS as not for
//                       publishing: for trying the release steps where no registry can be reached.
//   none                no image. The image code is not even loaded.
//
// RELEASE_CLI picks the executables: all (default), host (this machine's platform), none, or a
// list such as linux-amd64,linux-arm64. They need npm and the npm registry (the node binaries);
// with RELEASE_IMAGE=none and RELEASE_CLI=none the release needs Node, git and helm (bin/helm,
// else the helm on PATH) and nothing of the test toolchain.
//
// RELEASE_URL is where the archives are downloaded from once published (`{version}` stands for
// the version), which kp.yaml names; without it, the GitHub release of the `origin` remote
// (https://github.com/<owner>/<repo>/releases/download/v<version>), and with neither no kp.yaml
// is written.
//
// RELEASE_DIR changes the output folder; BUILD_BASE and RUNTIME_BASE the base images (the
// Dockerfile's build args). Any failure removes the output folder, so a folder that exists is a
// whole release.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import type { Buildah } from "../test/support/image.ts";
import { repoRoot } from "../test/support/process.ts";
import { toolPath } from "../test/support/tools.ts";
import { ReleaseError, sha256File } from "./release-files.ts";
import type { CliBuild, Target } from "./sea.ts";

const execFileP = promisify(execFile);

/** The output folder, relative to the repository root (dist/ is git-ignored). */
export const RELEASE_DIR = "dist/release";

/** The digest file's name. */
export const DIGEST_FILE = "SHA256SUMS";

/** RELEASE_CLI when the CLI is not built: nothing of it is loaded then (hack/sea.ts). */
export const NO_CLI = "none";

/** What the image step may do. */
export type ImageMode = "upstream" | "standin" | "none";

/** The versions and the source of a release. */
export interface ReleaseSource {
  /** The operator's version: the chart's appVersion, the image tag and the git tag `v<version>`. */
  readonly version: string;
  readonly chartVersion: string;
  readonly commit: string;
  /** Seconds since the epoch of the commit: the image's creation time. */
  readonly commitTime: number;
  /** Whether the work tree differs from the commit. */
  readonly dirty: boolean;
  /** Whether HEAD is the commit the tag `v<version>` names. */
  readonly tagged: boolean;
}

const git = async (...args: string[]): Promise<string> =>
  (await execFileP("git", args, { cwd: repoRoot })).stdout.trim();

/** Reads and checks the versions: Chart.yaml, package.json and CHANGELOG.md must agree. */
export async function releaseSource(): Promise<ReleaseSource> {
  const chart = parseYaml(readFileSync(join(repoRoot, "charts/kubeprovisioner/Chart.yaml"), "utf8")) as {
    version: string;
    appVersion: string;
  };
  const version = String(chart.appVersion);
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
  if (pkg.version !== version)
    throw new ReleaseError(
      `package.json says ${pkg.version}, charts/kubeprovisioner/Chart.yaml appVersion says ${version}: make them the same`,
    );
  const changelog = readFileSync(join(repoRoot, "CHANGELOG.md"), "utf8");
  if (!new RegExp(`^## \\[${version.replace(/\./g, "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m").test(changelog))
    throw new ReleaseError(
      `CHANGELOG.md has no section "## [${version}] - <date>": write the release notes first`,
    );
  const commit = await git("rev-parse", "HEAD");
  const tagCommit = await git("rev-parse", "--verify", "--quiet", `v${version}^{commit}`).catch(() => "");
  return {
    version,
    chartVersion: String(chart.version),
    commit,
    commitTime: Number(await git("show", "-s", "--format=%ct", "HEAD")),
    dirty: (await git("status", "--porcelain", "--untracked-files=no")) !== "",
    tagged: tagCommit === commit,
  };
}

/** The Dockerfile's base images: its ARG defaults, or BUILD_BASE / RUNTIME_BASE from the environment. */
export function baseImages(env: NodeJS.ProcessEnv = process.env): { build: string; runtime: string } {
  const dockerfile = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
  const args = new Map<string, string>();
  for (const m of dockerfile.matchAll(/^ARG ([A-Z_]+)=(\S+)$/gm))
    args.set(
      m[1] ?? "",
      (m[2] ?? "").replace(/\$\{([A-Z_]+)\}/g, (_, n: string) => args.get(n) ?? ""),
    );
  const pick = (name: string): string => {
    const value = env[name] || args.get(name);
    if (value === undefined) throw new ReleaseError(`the Dockerfile declares no ARG ${name}`);
    return value;
  };
  return { build: pick("BUILD_BASE"), runtime: pick("RUNTIME_BASE") };
}

/** The download folder of the GitHub release `v<version>` of a GitHub remote URL (https, ssh or scp form), if it is one. */
export function githubReleaseUrl(remote: string, version: string): string | undefined {
  const m = /^(?:https:\/\/|ssh:\/\/git@|git@)github\.com[:/]([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(
    remote.trim(),
  );
  return m === null ? undefined : `https://github.com/${m[1]}/${m[2]}/releases/download/v${version}`;
}

/**
 * Where the release's archives are downloaded from once published, for kp.yaml: RELEASE_URL with
 * `{version}` replaced, else the GitHub release of the `origin` remote, else undefined.
 */
export async function releaseUrl(
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const given = env.RELEASE_URL?.trim();
  if (given) return given.replaceAll("{version}", version).replace(/\/+$/, "");
  return githubReleaseUrl(await git("remote", "get-url", "origin").catch(() => ""), version);
}

/** A file of a tar archive, read with tar. */
async function tarEntry(archive: string, entry: string): Promise<string> {
  return (await execFileP("tar", ["-xOf", archive, entry], { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** The digests of the image in an OCI archive: its manifest's (what a registry serves) and its config's (the image ID). */
export async function ociDigests(archive: string): Promise<{ manifest: string; config: string }> {
  const index = JSON.parse(await tarEntry(archive, "index.json")) as { manifests: { digest: string }[] };
  const manifest = index.manifests[0]?.digest;
  if (index.manifests.length !== 1 || manifest === undefined)
    throw new ReleaseError(`${archive} holds ${index.manifests.length} manifests, not one`);
  const body = JSON.parse(await tarEntry(archive, `blobs/${manifest.replace(":", "/")}`)) as {
    config: { digest: string };
  };
  return { manifest, config: body.config.digest };
}

/** The image a release built. */
export interface ReleaseImage {
  readonly file: string;
  readonly ref: string;
  readonly manifest: string;
  readonly config: string;
  readonly bases: { build: string; runtime: string };
  readonly standin: boolean;
}

/** Pulls both base images, or says which one cannot be pulled and why a release needs it. */
async function pullBases(b: Buildah, bases: { build: string; runtime: string }): Promise<void> {
  for (const base of [bases.build, bases.runtime]) {
    try {
      await b.run(["pull", "--quiet", base]);
    } catch (err) {
      const reason = ((err as Error).message.split("\n").find((l) => /error/i.test(l)) ?? "").trim();
      throw new ReleaseError(
        `cannot pull the base image ${base}${reason === "" ? "" : ` (${reason})`}: a release image is built ` +
          "from the Dockerfile's own base images, so none was built and nothing was written. Run make release " +
          "where the registry can be reached, or RELEASE_IMAGE=standin to try the steps with the tests' " +
          "stand-in bases (never publish that image), or RELEASE_IMAGE=none for the chart alone.",
      );
    }
  }
}

/** Builds (upstream) or takes (standin) the image and writes it into `out` as an OCI archive. */
async function releaseImage(
  mode: Exclude<ImageMode, "none">,
  src: ReleaseSource,
  out: string,
  log: (line: string) => void,
): Promise<ReleaseImage> {
  // Loaded only for an image: a chart-only release (none) needs nothing of the image build.
  const { buildDockerfile, buildImage, imageBuildah } = await import("../test/support/image.ts");
  const b = imageBuildah(log);
  const ref = `localhost/kubeprovisioner:${src.version}`;
  let bases: { build: string; runtime: string };
  if (mode === "upstream") {
    bases = baseImages();
    await pullBases(b, bases);
    await buildDockerfile(b, ref, [
      "--timestamp",
      String(src.commitTime),
      "--label",
      `org.opencontainers.image.version=${src.version}`,
      "--label",
      `org.opencontainers.image.revision=${src.commit}`,
    ]);
  } else {
    const built = await buildImage({ log });
    bases = { build: "stand-in (test/support/image.ts)", runtime: "stand-in (test/support/image.ts)" };
    await b.run(["pull", "--quiet", `docker-archive:${built.archive}`]);
    await b.run(["tag", built.ref, ref]);
    await b.run(["rmi", built.ref]);
  }
  const file = join(
    out,
    `kubeprovisioner-image-${src.version}${mode === "standin" ? "-standin" : ""}.oci.tar`,
  );
  try {
    await b.run(["push", "--quiet", ref, `oci-archive:${file}:kubeprovisioner:${src.version}`]);
  } finally {
    await b.run(["rmi", ref], { quiet: true }).catch(() => undefined);
  }
  return {
    file,
    ref: `kubeprovisioner:${src.version}`,
    ...(await ociDigests(file)),
    bases,
    standin: mode === "standin",
  };
}

/** The text of SHA256SUMS: comments on what the release is, then one `<sha256>  <file>` line per file. */
export async function digestFile(
  src: ReleaseSource,
  out: string,
  image: ReleaseImage | undefined,
  mode: ImageMode,
  cli?: ReleaseCli,
): Promise<string> {
  const lines = [
    `# kubeprovisioner ${src.version} (chart ${src.chartVersion}), commit ${src.commit}` +
      (src.dirty ? " with uncommitted changes" : "") +
      (src.tagged ? `, tag v${src.version}` : `, not at tag v${src.version}`),
  ];
  if (image === undefined) lines.push(`# no image (RELEASE_IMAGE=${mode})`);
  else {
    lines.push(
      `# image ${image.ref} manifest ${image.manifest} config ${image.config}`,
      `# image bases: build ${image.bases.build}, runtime ${image.bases.runtime}`,
    );
    if (image.standin)
      lines.push("# STAND-IN BASE IMAGES: this image is for trying the release steps only; never publish it");
  }
  if (cli === undefined) lines.push(`# no CLI (RELEASE_CLI=${NO_CLI})`);
  else {
    lines.push(
      `# CLI: Node.js ${cli.nodeVersion} single executable applications for ` +
        (cli.archives.length === 0 ? "no platform" : cli.archives.map((a) => a.platform).join(", ")),
    );
    for (const s of cli.skipped) lines.push(`# CLI: no ${s.platform} executable: ${s.reason}`);
    if (cli.manifest === undefined)
      lines.push("# CLI: no krew manifest: RELEASE_URL is unset and the origin remote is not on GitHub");
    else lines.push(`# CLI: krew manifest downloads from ${cli.url}`);
  }
  for (const f of readdirSync(out)
    .filter((n) => n !== DIGEST_FILE)
    .sort())
    lines.push(`${await sha256File(join(out, f))}  ${f}`);
  return `${lines.join("\n")}\n`;
}

/** The helm that packages the chart: the pinned one of bin/ (hack/tools.sh helm), else the helm on PATH. */
function helmCommand(): string {
  try {
    return toolPath("helm");
  } catch {
    return "helm";
  }
}

/** The CLI of a release: the archives, the platforms left out, and kp.yaml when a download URL is known. */
export interface ReleaseCli extends CliBuild {
  readonly manifest?: string;
  readonly url?: string;
}

/** Builds the executables' archives (hack/sea.ts) and kp.yaml into `out`. */
async function releaseCli(
  targets: readonly Target[],
  src: ReleaseSource,
  out: string,
  url: string | undefined,
  log: (line: string) => void,
): Promise<ReleaseCli> {
  const { buildCli, krewManifest, KREW_MANIFEST } = await import("./sea.ts");
  const built = await buildCli({ version: src.version, mtime: src.commitTime, out, targets, log });
  if (built.archives.length === 0)
    throw new ReleaseError(
      `no CLI executable could be built: ${built.skipped.map((s) => s.reason).join("; ")}`,
    );
  if (url === undefined) return built;
  const manifest = join(out, KREW_MANIFEST);
  writeFileSync(manifest, krewManifest(src.version, built.archives, url));
  return { ...built, manifest, url };
}

/** Makes the release into `out`; returns the files written. `cli` undefined: no CLI (RELEASE_CLI=none). */
export async function release(opts: {
  out: string;
  mode: ImageMode;
  cli?: readonly Target[];
  url?: string;
  log?: (line: string) => void;
}): Promise<{ src: ReleaseSource; image?: ReleaseImage; cli?: ReleaseCli; files: string[] }> {
  const log = opts.log ?? ((): void => undefined);
  const src = await releaseSource();
  rmSync(opts.out, { recursive: true, force: true });
  mkdirSync(opts.out, { recursive: true });
  try {
    const image = opts.mode === "none" ? undefined : await releaseImage(opts.mode, src, opts.out, log);
    await execFileP(helmCommand(), [
      "package",
      join(repoRoot, "charts/kubeprovisioner"),
      "--destination",
      opts.out,
    ]).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT")
        throw new ReleaseError(
          "helm not found: install helm 3.8 or newer on PATH, or build the pinned one with `bash hack/tools.sh helm`",
        );
      throw err;
    });
    const chart = join(opts.out, `kubeprovisioner-${src.chartVersion}.tgz`);
    if (!existsSync(chart)) throw new ReleaseError(`helm package wrote no ${chart}`);
    const cli = opts.cli === undefined ? undefined : await releaseCli(opts.cli, src, opts.out, opts.url, log);
    writeFileSync(join(opts.out, DIGEST_FILE), await digestFile(src, opts.out, image, opts.mode, cli));
    return { src, ...(image ? { image } : {}), ...(cli ? { cli } : {}), files: readdirSync(opts.out).sort() };
  } catch (err) {
    rmSync(opts.out, { recursive: true, force: true });
    throw err;
  }
}

/** `make release`: the release the environment describes, into RELEASE_DIR; exits non-zero when it cannot be made. */
async function main(): Promise<void> {
  const mode = (process.env.RELEASE_IMAGE || "upstream") as ImageMode;
  if (!["upstream", "standin", "none"].includes(mode)) {
    console.error(`release: RELEASE_IMAGE=${mode}: expected upstream, standin or none`);
    process.exit(2);
  }
  const out = resolve(repoRoot, process.env.RELEASE_DIR || RELEASE_DIR);
  try {
    const cliSpec = process.env.RELEASE_CLI?.trim() ?? "";
    // Loaded only for a CLI: a release without one needs nothing of its build.
    const cli = cliSpec === NO_CLI ? undefined : (await import("./sea.ts")).parseTargets(cliSpec);
    const url = cli === undefined ? undefined : await releaseUrl((await releaseSource()).version);
    const {
      src,
      image,
      cli: built,
      files,
    } = await release({
      out,
      mode,
      ...(cli ? { cli } : {}),
      ...(url ? { url } : {}),
      log: (l) => console.log(`  ${l}`),
    });
    console.log(`release ${src.version} (chart ${src.chartVersion}) in ${out}:\n  ${files.join("\n  ")}`);
    if (image)
      console.log(
        `image ${image.ref}: manifest ${image.manifest}${image.standin ? " (STAND-IN BASES: do not publish)" : ""}`,
      );
    if (built !== undefined) {
      for (const s of built.skipped) console.log(`no ${s.platform} executable: ${s.reason}`);
      if (built.manifest === undefined)
        console.log(
          "no kp.yaml: set RELEASE_URL to where the archives will be downloaded from (docs/release.md)",
        );
    }
    if (src.dirty || !src.tagged)
      console.log(
        `note: built from ${src.dirty ? "a work tree with uncommitted changes" : "a commit"} not tagged v${src.version}`,
      );
  } catch (err) {
    console.error(`release: ${(err as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.main) await main();
