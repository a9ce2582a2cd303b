import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { FakeClock } from "../testing/fake-clock.ts";
import { KubeConfigConnection } from "./connection.ts";
import { ExecCredentials, ExecPluginError } from "./exec-credential.ts";
import { KubeConfig, type KubeConfigExec, type KubeConfigUser } from "./kubeconfig.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "connection-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A plugin printing `token-<run>` expiring at the time in file `expiry` (if any), counting runs. */
function plugin(name: string, body = ""): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `#!${process.execPath}
const fs = require("node:fs");
const count = __filename + ".count";
const n = (fs.existsSync(count) ? Number(fs.readFileSync(count, "utf8")) : 0) + 1;
fs.writeFileSync(count, String(n));
${body}
const expiry = __filename + ".expiry";
const status = { token: "token-" + n };
if (fs.existsSync(expiry)) status.expirationTimestamp = fs.readFileSync(expiry, "utf8");
process.stdout.write(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status }));
`,
  );
  chmodSync(file, 0o755);
  return file;
}
const runs = (file: string): number => Number(readFileSync(`${file}.count`, "utf8"));

function connection(
  user: KubeConfigUser,
  clock: FakeClock,
  server = "https://127.0.0.1:6443",
): KubeConfigConnection {
  const kc = KubeConfig.fromDocument({
    clusters: [{ name: "c", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
  return new KubeConfigConnection(kc, { clock, refreshMs: 60_000, env: {} });
}

const exec = (command: string, more: Partial<KubeConfigExec> = {}): KubeConfigExec => ({
  apiVersion: "client.authentication.k8s.io/v1",
  command,
  interactiveMode: "Never",
  ...more,
});

describe("KubeConfigConnection", () => {
  it("never uses an expired exec credential, however long the refresh period", async () => {
    const clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
    const file = plugin("expiring");
    writeFileSync(`${file}.expiry`, "2030-01-01T00:00:05Z");
    const conn = connection({ exec: exec(file) }, clock);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer token-1");
    await clock.advance(5_000);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer token-1", "valid up to its expiry");
    await clock.advance(1);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer token-2", "run again once expired");
    assert.equal(runs(file), 2);
    conn.destroy();
  });

  it("reuses a credential without expiry until invalidated (a 401)", async () => {
    const clock = new FakeClock();
    const file = plugin("forever");
    const conn = connection({ exec: exec(file) }, clock);
    await conn.settings();
    await clock.advance(3_600_000);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer token-1");
    conn.invalidate();
    assert.equal((await conn.settings()).headers.Authorization, "Bearer token-2");
    conn.destroy();
  });

  it("sends no credential to an http server and does not run its plugin", async () => {
    const clock = new FakeClock();
    const file = plugin("never-run");
    const conn = connection({ token: "t", exec: exec(file), as: "jane" }, clock, "http://127.0.0.1:8080");
    const s = await conn.settings();
    assert.deepEqual(s.headers, { "Impersonate-User": "jane" });
    assert.equal(s.auth, undefined);
    const http = connection({ username: "bob", password: "pw" }, clock, "http://127.0.0.1:8080");
    assert.equal((await http.settings()).auth, undefined);
    assert.throws(() => readFileSync(`${file}.count`));
    conn.destroy();
    http.destroy();
  });

  it("reads tokenFile on each refresh over the inline token, and falls back to the last good value", async () => {
    const clock = new FakeClock();
    const tokenFile = path.join(dir, "token");
    writeFileSync(tokenFile, "first\n");
    const conn = connection({ token: "inline", tokenFile }, clock);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer first");
    writeFileSync(tokenFile, "second");
    await clock.advance(60_000);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer second");
    rmSync(tokenFile);
    await clock.advance(60_000);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer second");
    conn.destroy();
  });

  it("never sends an empty token: a tokenFile emptied later keeps the last token; one never filled fails", async () => {
    const clock = new FakeClock();
    const tokenFile = path.join(dir, "rotating-token");
    writeFileSync(tokenFile, "first\n");
    const conn = connection({ tokenFile }, clock);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer first");
    writeFileSync(tokenFile, "  \n");
    await clock.advance(60_000);
    assert.equal((await conn.settings()).headers.Authorization, "Bearer first");
    conn.destroy();
    // Emptied between the start's check and the first request: no request goes out without it.
    writeFileSync(tokenFile, "start\n");
    const late = connection({ tokenFile }, clock);
    writeFileSync(tokenFile, "");
    await assert.rejects(late.settings(), /read empty token from tokenFile \S+rotating-token of user "u"/);
    late.destroy();
  });

  it("lists the credentials it sends, for the REST client to remove from server messages", async () => {
    const clock = new FakeClock();
    const bearer = connection({ token: "tok-123" }, clock);
    assert.deepEqual((await bearer.settings()).secrets, ["tok-123"]);
    bearer.destroy();
    const basic = connection({ username: "bob", password: "pw-456" }, clock);
    assert.deepEqual([...(await basic.settings()).secrets].sort(), [
      Buffer.from("bob:pw-456").toString("base64"),
      "pw-456",
    ]);
    basic.destroy();
  });

  it("escapes impersonation extra keys as client-go does and sends one header per value", async () => {
    const conn = connection(
      {
        token: "t",
        as: "jane",
        "as-groups": ["a", "b"],
        "as-user-extra": { "example.com/scopes": ["r", "w"] },
      },
      new FakeClock(),
    );
    const { headers } = await conn.settings();
    assert.deepEqual(headers["Impersonate-Group"], ["a", "b"]);
    assert.deepEqual(headers["Impersonate-Extra-example.com%2Fscopes"], ["r", "w"]);
    conn.destroy();
  });
});

describe("ExecCredentials", () => {
  const cluster = { server: "https://127.0.0.1:6443" };
  const noCa = (): Promise<undefined> => Promise.resolve(undefined);

  it("gives the plugin no stdin: one that reads it finishes at once", async () => {
    const file = plugin("reads-stdin", `fs.readFileSync(0);`);
    const creds = new ExecCredentials(exec(file), cluster, noCa);
    assert.equal((await creds.get()).credential.token, "token-1");
  });

  it("names the command and exit code, never its arguments, output or stderr", async () => {
    const file = plugin(
      "fails",
      `process.stderr.write("stderr-secret"); process.stdout.write("stdout-secret"); process.exit(4);`,
    );
    const creds = new ExecCredentials(exec(file, { args: ["--client-secret=argv-secret"] }), cluster, noCa);
    await assert.rejects(creds.get(), (err: unknown) => {
      assert.ok(err instanceof ExecPluginError);
      assert.equal(err.message, `exec plugin: executable ${file} failed with exit code 4`);
      return true;
    });
    const missing = new ExecCredentials(
      exec("kp-missing", { installHint: "\u001b[1mbrew install kp\u001b[0m\n now" }),
      cluster,
      noCa,
    );
    await assert.rejects(missing.get(), {
      message: "exec plugin: executable kp-missing not found: brew install kp now",
    });
  });

  it("refuses an answer of another apiVersion", async () => {
    const file = plugin("beta");
    const creds = new ExecCredentials(
      exec(file, { apiVersion: "client.authentication.k8s.io/v1beta1" }),
      cluster,
      noCa,
    );
    await assert.rejects(
      creds.get(),
      /configured to use API version client.authentication.k8s.io\/v1beta1, plugin returned version "client.authentication.k8s.io\/v1"/,
    );
  });
});
