/**
 * The `kubeprovisioner` command line, run as a real process: bad values exit 2 with one line
 * naming the flag; --help and --version exit 0.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../support/process.ts";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("KUBEPROVISIONER_") && k !== "KUBECONFIG" && k !== "KUBERNETES_SERVICE_HOST")
      clean[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, "src/main.ts"), ...args], {
      env: { ...clean, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 30_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function assertUsageError(r: Run, pattern: RegExp): void {
  assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
  assert.equal(r.stdout, "");
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
  assert.match(lines[0] ?? "", /^kubeprovisioner: /);
  assert.match(lines[0] ?? "", pattern);
}

describe("kubeprovisioner CLI", () => {
  it("exits 2 with one line naming the flag and the accepted values for a bad value", async () => {
    assertUsageError(
      await cli(["--sync-period=soon"]),
      /--sync-period: expected a duration .*like 30s, 5m or 10h/,
    );
    assertUsageError(
      await cli(["--log-level", "chatty"]),
      /--log-level: expected one of trace, debug, info, warn, error, fatal, silent/,
    );
    assertUsageError(await cli(["--metrics-secure=yes"]), /--metrics-secure: expected true or false/);
  });

  it("exits 2 for an unknown flag and for a bad environment value", async () => {
    assertUsageError(await cli(["--leader-elections"]), /unknown flag --leader-elections/);
    assertUsageError(
      await cli([], { KUBEPROVISIONER_MAX_CONCURRENT_RECONCILES: "many" }),
      /--max-concurrent-reconciles \(from \$KUBEPROVISIONER_MAX_CONCURRENT_RECONCILES\): expected an integer/,
    );
  });

  it("exits 2 when leader election has no namespace outside a cluster", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kp-cli-"));
    try {
      const kubeconfig = path.join(dir, "kubeconfig");
      writeFileSync(
        kubeconfig,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
          users: [{ name: "u", user: { token: "t" } }],
          contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
          "current-context": "c",
        }),
      );
      const r = await cli([
        "--leader-elect",
        `--kubeconfig=${kubeconfig}`,
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        "kubeprovisioner: --leader-election-namespace is required with --leader-elect when not running in a cluster\n",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits 2 with a message naming what is unsupported for an auth-provider or proxy-url kubeconfig", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kp-cli-"));
    try {
      const kubeconfig = (name: string, cluster: object, user: object): string => {
        const file = path.join(dir, name);
        writeFileSync(
          file,
          JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1", ...cluster } }],
            users: [{ name: "u", user }],
            contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
            "current-context": "c",
          }),
        );
        return file;
      };
      const flags = ["--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"];
      const oidc = await cli([
        `--kubeconfig=${kubeconfig("oidc", {}, { "auth-provider": { name: "oidc" } })}`,
        ...flags,
      ]);
      assert.equal(oidc.code, 2, oidc.stderr);
      assert.match(
        oidc.stderr,
        /^kubeprovisioner: unsupported kubeconfig: kubeconfig user "u" uses auth-provider "oidc", which is not supported: give the user an exec credential plugin/m,
      );
      const proxy = await cli([
        `--kubeconfig=${kubeconfig("proxy", { "proxy-url": "http://proxy:3128" }, { token: "t" })}`,
        ...flags,
      ]);
      assert.equal(proxy.code, 2, proxy.stderr);
      assert.match(
        proxy.stderr,
        /^kubeprovisioner: unsupported kubeconfig: kubeconfig cluster "c" sets proxy-url/m,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints help and the version with exit 0", async () => {
    const help = await cli(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: kubeprovisioner \[flags\]/);
    for (const flag of [
      "--leader-elect",
      "--leader-election-id",
      "--metrics-bind-address",
      "--health-probe-bind-address",
      "--metrics-secure",
      "--watch-namespace",
      "--max-concurrent-reconciles",
      "--sync-period",
      "--poll-interval",
      "--graceful-shutdown-timeout",
    ]) {
      assert.ok(help.stdout.includes(flag), flag);
    }
    const version = await cli(["--version"]);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^kubeprovisioner \d+\.\d+\.\d+\n$/);
  });
});
