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
import { operatorProgram } from "../support/operator-program.ts";
import { WAIT_MS } from "../support/process.ts";

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
    const child = spawn(process.execPath, [operatorProgram(), ...args], {
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

/** A kubeconfig in `dir` whose one context names a server nothing answers on (port 1 of loopback). */
function writeUnreachableKubeconfig(dir: string): string {
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
  return kubeconfig;
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

  it("exits with its own code when its standard output is a pipe nobody reads", async () => {
    // The reader goes away before the program writes a line (`kubeprovisioner ... | true`): its
    // log lines fail with EPIPE, and the fatal error's exit code still comes out at once.
    const child = spawn(process.execPath, [operatorProgram(), "--kubeconfig=/nonexistent"], {
      env: { ...process.env, KUBECONFIG: "" },
      stdio: ["ignore", "pipe", "ignore"],
      timeout: WAIT_MS,
    });
    child.stdout.destroy();
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (c, s) => resolve([c, s]));
    });
    assert.deepEqual([code, signal], [1, null], "exit code 1, not killed at the timeout");
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
      const kubeconfig = writeUnreachableKubeconfig(dir);
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

  it("exits 2 with one line naming the entry and the field for a kubeconfig client-go or the operator refuses", async () => {
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
      const refusals: [string, object, object, RegExp][] = [
        [
          "gcp",
          {},
          { "auth-provider": { name: "gcp" } },
          /^kubeprovisioner: unusable kubeconfig: kubeconfig context "c": user "u" uses auth-provider "gcp", which client-go removed: use its exec plugin \(gke-gcloud-auth-plugin\) instead$/m,
        ],
        [
          "oidc",
          {},
          { "auth-provider": { name: "oidc", config: { "client-id": "k" } } },
          /^kubeprovisioner: unusable kubeconfig: kubeconfig context "c": user "u" uses auth-provider oidc without idp-issuer-url$/m,
        ],
        [
          "socks",
          { "proxy-url": "socks5://proxy:1080" },
          { token: "t" },
          /^kubeprovisioner: unusable kubeconfig: kubeconfig context "c": cluster "c" sets a socks5 proxy-url, which is not supported: use an http or https proxy$/m,
        ],
        [
          "cert",
          {},
          { "client-certificate-data": "Zm9v" },
          /^kubeprovisioner: unusable kubeconfig: kubeconfig context "c": user "u" has a client certificate without client-key or client-key-data$/m,
        ],
      ];
      for (const [name, cluster, user, message] of refusals) {
        const run = await cli([`--kubeconfig=${kubeconfig(name, cluster, user)}`, ...flags]);
        assert.equal(run.code, 2, run.stderr);
        assert.match(run.stderr, message);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits 2 with one line for a SOCKS proxy in HTTPS_PROXY or HTTP_PROXY, whatever it would be used for", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kp-cli-"));
    try {
      // A loopback server never goes through the proxy; the AWS clients would.
      const kubeconfig = writeUnreachableKubeconfig(dir);
      const flags = [
        `--kubeconfig=${kubeconfig}`,
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
        "--leader-elect=false",
      ];
      for (const [name, value] of [
        ["HTTPS_PROXY", "socks5://proxy-user:planted-proxy-secret@127.0.0.1:1080"],
        ["HTTP_PROXY", "socks5h://127.0.0.1:1080"],
      ] as const) {
        const run = await cli(flags, { [name]: value, AWS_REGION: "us-east-1" });
        assert.equal(run.code, 2, `${name}: ${run.stderr}`);
        assert.equal(
          run.stderr,
          `kubeprovisioner: ${name} uses scheme "${value.slice(0, value.indexOf(":"))}"; only http and https proxies are supported (Node.js has no SOCKS client)\n`,
        );
        assert.ok(!run.stdout.includes("planted-proxy-secret"));
      }
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
