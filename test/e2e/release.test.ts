/**
 * `make release` (hack/release.ts) as docs/release.md describes it, run here with the tests'
 * stand-in base images and without an image, since no registry can be reached: the chart package
 * is produced and renders as the chart folder does, SHA256SUMS matches every artifact and names
 * the image's digests as the OCI archive holds them, and a base image that cannot be pulled stops
 * the run with nothing written.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { builtImage } from "../support/image.ts";
import { CommandError, repoRoot, runCommand, trackTempDir } from "../support/process.ts";
import { helmKubeVersionArgs } from "../support/tools.ts";
import { CHART_DIR, helm } from "./helm.ts";

const execFileP = promisify(execFile);

/**
 * Runs hack/release.ts with `env`, stopped with the test file (and whatever buildah it runs) when
 * the file ends first; never throws on a non-zero exit.
 */
async function release(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await runCommand(process.execPath, [path.join(repoRoot, "hack/release.ts")], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
  }
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kp-release-"));
  trackTempDir(dir);
  return dir;
}

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/** A file of a tar archive, as bytes. */
async function tarEntry(archive: string, entry: string): Promise<Buffer> {
  const { stdout } = await execFileP("tar", ["-xOf", archive, entry], {
    encoding: "buffer",
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** SHA256SUMS: its comment lines, and file name → digest. */
function digestFile(dir: string): { comments: string[]; sums: Map<string, string> } {
  const lines = readFileSync(path.join(dir, "SHA256SUMS"), "utf8").trimEnd().split("\n");
  const sums = new Map<string, string>();
  for (const l of lines.filter((x) => !x.startsWith("#"))) {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
    assert.ok(m, `not a sha256sum line: ${l}`);
    sums.set(m[2] ?? "", m[1] ?? "");
  }
  return { comments: lines.filter((x) => x.startsWith("#")), sums };
}

const chart = parseYaml(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8")) as {
  version: string;
  appVersion: string;
};
const packageName = `kubeprovisioner-${chart.version}.tgz`;

describe("make release", () => {
  const standin = path.join(tempDir(), "release");
  const chartOnly = path.join(tempDir(), "release");

  before(async () => {
    // The stand-in image is the one `make image` built before the files started: the release
    // repackages it and builds nothing.
    builtImage();
    for (const [dir, mode] of [
      [chartOnly, "none"],
      [standin, "standin"],
    ] as const) {
      // The CLI's executables are release-cli.test.ts's.
      const res = await release({ RELEASE_DIR: dir, RELEASE_IMAGE: mode, RELEASE_CLI: "none" });
      assert.equal(res.code, 0, `RELEASE_IMAGE=${mode}: ${res.stderr}`);
    }
  });

  it("packages the chart with its version and appVersion, and the package renders as the chart folder", async () => {
    assert.deepEqual(readdirSync(chartOnly).sort(), ["SHA256SUMS", packageName]);
    const pkg = path.join(chartOnly, packageName);
    const shown = await helm(["show", "chart", pkg]);
    assert.equal(shown.code, 0, shown.stderr);
    const meta = parseYaml(shown.stdout) as { version: string; appVersion: string; name: string };
    assert.deepEqual(
      [meta.name, meta.version, meta.appVersion],
      ["kubeprovisioner", chart.version, chart.appVersion],
    );
    for (const values of [
      [],
      ["--set", "metrics.dashboard.enabled=true", "--set", "metrics.prometheusRule.enabled=true"],
    ]) {
      const args = (from: string): string[] => [
        "template",
        "kp",
        from,
        "--namespace",
        "kp-system",
        "--include-crds",
        ...helmKubeVersionArgs(),
        ...values,
      ];
      const [packaged, folder] = await Promise.all([helm(args(pkg)), helm(args(CHART_DIR))]);
      assert.equal(packaged.code, 0, packaged.stderr);
      assert.ok(packaged.stdout.includes("kind: CustomResourceDefinition"), "the package holds the CRDs");
      assert.equal(packaged.stdout, folder.stdout, `helm template ${values.join(" ")}`);
    }
  });

  it("writes a SHA256SUMS that matches every artifact, as sha256sum -c checks it", async () => {
    for (const dir of [chartOnly, standin]) {
      const { comments, sums } = digestFile(dir);
      const artifacts = readdirSync(dir).filter((f) => f !== "SHA256SUMS");
      assert.deepEqual([...sums.keys()].sort(), artifacts.sort(), `${dir}: every artifact is listed`);
      for (const [file, digest] of sums)
        assert.equal(digest, sha256(readFileSync(path.join(dir, file))), file);
      assert.match(
        comments[0] ?? "",
        new RegExp(
          `^# kubeprovisioner ${chart.appVersion} \\(chart ${chart.version}\\), commit [0-9a-f]{40}`,
        ),
      );
      const checked = await execFileP("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir });
      for (const f of artifacts) assert.match(checked.stdout, new RegExp(`^${f}: OK$`, "m"));
    }
    assert.ok(digestFile(chartOnly).comments.includes("# no image (RELEASE_IMAGE=none)"));
    assert.ok(digestFile(chartOnly).comments.includes("# no CLI (RELEASE_CLI=none)"));

    // A changed artifact no longer matches.
    const copy = tempDir();
    for (const f of readdirSync(chartOnly))
      writeFileSync(path.join(copy, f), readFileSync(path.join(chartOnly, f)));
    writeFileSync(path.join(copy, packageName), "changed");
    await assert.rejects(execFileP("sha256sum", ["-c", "SHA256SUMS"], { cwd: copy }));
  });

  it("writes the image as an OCI archive whose manifest and config digests SHA256SUMS names", async () => {
    const archive = `kubeprovisioner-image-${chart.appVersion}-standin.oci.tar`;
    assert.deepEqual(readdirSync(standin).sort(), ["SHA256SUMS", packageName, archive].sort());
    const file = path.join(standin, archive);
    const index = JSON.parse((await tarEntry(file, "index.json")).toString("utf8")) as {
      manifests: { digest: string; annotations?: Record<string, string> }[];
    };
    assert.equal(index.manifests.length, 1);
    const manifestDigest = index.manifests[0]?.digest ?? "";
    const manifestBytes = await tarEntry(file, `blobs/${manifestDigest.replace(":", "/")}`);
    assert.equal(
      `sha256:${sha256(manifestBytes)}`,
      manifestDigest,
      "the manifest blob is what its digest says",
    );
    const manifest = JSON.parse(manifestBytes.toString("utf8")) as { config: { digest: string } };
    const configBytes = await tarEntry(file, `blobs/${manifest.config.digest.replace(":", "/")}`);
    assert.equal(`sha256:${sha256(configBytes)}`, manifest.config.digest);
    const config = JSON.parse(configBytes.toString("utf8")) as {
      config: { Entrypoint: string[]; User: string };
    };
    assert.deepEqual(config.config.Entrypoint, ["/nodejs/bin/node", "/app/dist/kubeprovisioner.mjs"]);
    assert.equal(config.config.User, "65532:65532");

    const { comments } = digestFile(standin);
    assert.ok(
      comments.includes(
        `# image kubeprovisioner:${chart.appVersion} manifest ${manifestDigest} config ${manifest.config.digest}`,
      ),
      comments.join("\n"),
    );
    assert.ok(comments.some((c) => /STAND-IN BASE IMAGES: .*never publish it/.test(c)));
  });

  it("stops with nothing written when a base image cannot be pulled", async () => {
    const dir = path.join(tempDir(), "release");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "kubeprovisioner-0.0.1.tgz"), "an older release");
    // .invalid never resolves (RFC 6761), with or without a network.
    const res = await release({ RELEASE_DIR: dir, BUILD_BASE: "registry.invalid/library/node:24-slim" });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /cannot pull the base image registry\.invalid\/library\/node:24-slim/);
    assert.match(res.stderr, /a release image is built from the Dockerfile's own base images/);
    assert.throws(() => readdirSync(dir), /ENOENT/, "the output folder is gone");
  });
});
