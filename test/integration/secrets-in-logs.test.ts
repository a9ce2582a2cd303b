/**
 * No secret reaches a log line. Every error path that can hold one is made to fail with planted
 * secrets, and the real log output is searched for them:
 * - the operator process (its pino JSON lines and stderr, at debug level) with kubeconfigs that
 *   fail in YAML parsing, in exec plugins (arguments, env, stderr and stdout holding secrets),
 *   in TLS setup, at a proxy, against an API server whose error answers echo the request, and
 *   against one whose metav1.Status answers (a 401, a watch ERROR event) repeat the bearer token or
 *   the basic-auth password the request sent, which the REST client removes before anything
 *   quotes them;
 * - the AWS clients and the AwsAccount sessions (createLogger's real output at debug, SDK lines
 *   included) against a loopback STS whose validation errors quote the external ID and the web
 *   identity token they were sent, as AWS does.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { AccountSessions } from "../../src/accounts/sessions.ts";
import type { AwsAccount } from "../../src/api/v1/aws-account.ts";
import { AwsClients } from "../../src/aws/clients.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { createLogger } from "../../src/runtime/logging.ts";
import { createFixture, removeFixture, type Fixture } from "../support/kubeconfig-conformance.ts";
import { kubeconfig } from "../support/kubeconfig-cases.ts";
import { inParallel } from "../support/pool.ts";
import { startOperator } from "../support/operator.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";

/** A secret-looking value that appears nowhere else: `kpPlanted<what><random>`. */
const planted = new Map<string, string>();
function secret(what: string): string {
  const value = `kpPlanted${what}${randomBytes(6).toString("hex")}`;
  planted.set(what, value);
  return value;
}

function assertNoSecret(text: string, where: string): void {
  for (const [what, value] of planted) {
    assert.ok(!text.includes(value), `${where}: the planted ${what} is in the log:\n${text.slice(0, 3000)}`);
    const b64 = Buffer.from(value).toString("base64").replace(/=+$/, "");
    assert.ok(!text.includes(b64), `${where}: the planted ${what} is in the log in base64`);
  }
}

describe("secrets never reach the log", () => {
  let fx: Fixture;
  let dir: string;
  let echo: https.Server;
  let echoUrl: string;
  let statusEcho: https.Server;
  let statusEchoUrl: string;

  before(async () => {
    fx = createFixture();
    dir = mkdtempSync(path.join(os.tmpdir(), "secrets-in-logs-"));
    // An API server whose error answers quote what they were sent, headers included.
    echo = https.createServer({ cert: fx.serverCert, key: fx.serverKey }, (req, res) => {
      const status = req.url?.includes("/apis/") ? 500 : 401;
      res.writeHead(status, {
        "Content-Type": "text/plain",
        "WWW-Authenticate": `Bearer realm="${req.headers.authorization ?? ""}"`,
      });
      res.end(
        `rejected ${req.method} ${req.url} with ${JSON.stringify(req.headers)} ${planted.get("Body") ?? ""}`,
      );
    });
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
    echoUrl = `https://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    // An API server whose metav1.Status answers repeat the credential: a bearer token starting
    // with kpPlantedWatch may list (empty lists) and then gets a watch ERROR event quoting it;
    // any other request gets a 401 quoting the token, or the basic-auth password.
    statusEcho = https.createServer({ cert: fx.serverCert, key: fx.serverKey }, (req, res) => {
      const auth = req.headers.authorization ?? "";
      const token = /^Bearer (.*)$/.exec(auth)?.[1] ?? "";
      const basic = /^Basic (.*)$/.exec(auth)?.[1];
      const password = basic !== undefined ? Buffer.from(basic, "base64").toString().split(":")[1] : "";
      const statusOf = (code: number, reason: string, message: string): object => ({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        code,
        reason,
        message,
      });
      const url = new URL(req.url ?? "/", "https://x");
      if (token.startsWith("kpPlantedWatch") && req.method === "GET") {
        res.writeHead(200, { "Content-Type": "application/json" });
        if (url.searchParams.get("watch") === "true")
          res.end(
            `${JSON.stringify({ type: "ERROR", object: statusOf(500, "InternalError", `watch refused for token ${token}`) })}\n`,
          );
        else
          res.end(
            JSON.stringify({ kind: "List", apiVersion: "v1", metadata: { resourceVersion: "7" }, items: [] }),
          );
        return;
      }
      res.writeHead(401, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify(
          statusOf(
            401,
            "Unauthorized",
            `Unauthorized: token ${token} password ${password} (${auth}) rejected`,
          ),
        ),
      );
    });
    await new Promise<void>((r) => statusEcho.listen(0, "127.0.0.1", r));
    statusEchoUrl = `https://127.0.0.1:${(statusEcho.address() as AddressInfo).port}`;
  });
  after(async () => {
    echo.closeAllConnections();
    await new Promise<void>((r) => echo.close(() => r()));
    statusEcho.closeAllConnections();
    await new Promise<void>((r) => statusEcho.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
    removeFixture(fx);
  });

  it("from the operator: kubeconfig parsing, exec plugins, TLS setup, proxies and HTTP failures", async () => {
    const ca = Buffer.from(fx.caPem).toString("base64");
    const plugin = (name: string, body: string): string => {
      const file = path.join(dir, name);
      writeFileSync(file, `#!${process.execPath}\n${body}\n`);
      chmodSync(file, 0o755);
      return file;
    };
    secret("Body");
    const scenarios: { name: string; config: string; expect: RegExp; exits?: boolean }[] = [
      {
        name: "yaml",
        config: `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${secret("YamlToken")}\n    client-key-data: ${secret("YamlKey")}\n   bad: [indent\n`,
        expect: /is not valid YAML: .* at line \d+/,
        exits: true,
      },
      {
        name: "exec-fails",
        config: kubeconfig(
          { server: echoUrl, "certificate-authority-data": ca },
          {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              interactiveMode: "Never",
              command: plugin(
                "failing-plugin",
                `process.stderr.write("token=" + process.env.PLUGIN_SECRET + " ${secret("Stderr")}\\n"); process.exit(7);`,
              ),
              args: [`--client-secret=${secret("Argv")}`],
              env: [{ name: "PLUGIN_SECRET", value: secret("ExecEnv") }],
            },
          },
        ),
        expect: /exec plugin: executable \S+failing-plugin failed with exit code 7/,
      },
      {
        name: "exec-garbage",
        config: kubeconfig(
          { server: echoUrl, "certificate-authority-data": ca },
          {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1beta1",
              command: plugin("garbage-plugin", `process.stdout.write("token: ${secret("Stdout")}");`),
            },
          },
        ),
        expect: /exec plugin \S+garbage-plugin did not print an ExecCredential/,
      },
      {
        name: "exec-missing",
        config: kubeconfig(
          { server: echoUrl, "certificate-authority-data": ca },
          {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              interactiveMode: "Never",
              command: "kp-no-such-plugin",
              args: [`--password=${secret("MissingArgv")}`],
              installHint: "install kp-no-such-plugin from your identity team",
            },
          },
        ),
        expect: /executable kp-no-such-plugin not found: install kp-no-such-plugin from your identity team/,
      },
      {
        name: "tls",
        config: kubeconfig(
          { server: echoUrl, "certificate-authority-data": ca },
          {
            "client-certificate-data": Buffer.from(fx.alice.cert).toString("base64"),
            "client-key-data": Buffer.from(
              `-----BEGIN PRIVATE KEY-----\n${secret("KeyData")}\n-----END PRIVATE KEY-----\n`,
            ).toString("base64"),
          },
        ),
        expect: /GET \/\S+: /,
      },
      {
        name: "proxy",
        config: kubeconfig(
          {
            server: echoUrl,
            "certificate-authority-data": ca,
            "proxy-url": `http://proxy-user:${secret("ProxyPassword")}@127.0.0.1:1`,
          },
          { token: secret("ProxiedToken") },
        ),
        expect: /ECONNREFUSED|connect/,
      },
      {
        name: "http",
        config: kubeconfig(
          { server: echoUrl, "certificate-authority-data": ca },
          { token: secret("BearerToken"), as: "jane", "as-user-extra": { reason: [secret("ExtraValue")] } },
        ),
        expect: /HTTP (401|500)/,
      },
      {
        name: "status-token",
        config: kubeconfig(
          { server: statusEchoUrl, "certificate-authority-data": ca },
          { token: secret("StatusToken") },
        ),
        expect: /Unauthorized: token \[redacted\] password {2}\(Bearer \[redacted\]\) rejected/,
      },
      {
        name: "status-basic",
        config: kubeconfig(
          { server: statusEchoUrl, "certificate-authority-data": ca },
          { username: "bob", password: secret("StatusPassword") },
        ),
        expect: /Unauthorized: token {2}password \[redacted\] \(Basic \[redacted\]\) rejected/,
      },
      {
        name: "status-watch",
        config: kubeconfig(
          { server: statusEchoUrl, "certificate-authority-data": ca },
          { token: secret("WatchToken") },
        ),
        expect: /watch refused for token \[redacted\]/,
      },
    ];
    await inParallel(scenarios, 4, async (s) => {
      const file = path.join(dir, `${s.name}.kubeconfig`);
      writeFileSync(file, s.config);
      const op = await startOperator({
        kubeconfig: file,
        dir,
        name: s.name,
        waitReady: false,
        args: ["--leader-elect=false", "--metrics-bind-address=0"],
        env: { AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y" },
      });
      try {
        await waitFor(`${s.name}: the error in the log`, async () => s.expect.test(op.logText()), WAIT_MS);
        if (s.exits === true)
          await waitFor(`${s.name}: exit`, async () => op.process.proc.exitCode !== null, WAIT_MS);
      } finally {
        await op.stop();
      }
      assertNoSecret(op.logText(), s.name);
    });
  });

  it("from the AWS clients and AwsAccount sessions, SDK debug lines included", async () => {
    const externalId = secret("ExternalId");
    const webToken = secret("WebIdentityToken");
    // Realistic-looking static credentials: the scrubbers know their shapes.
    const secretKey = `kpPlantedSecretKey${randomBytes(11).toString("hex")}`;
    planted.set("SecretAccessKey", secretKey);
    const sts = http.createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        const echoed =
          form.get("Action") === "AssumeRole"
            ? `Value '${form.get("ExternalId") ?? ""}' at 'externalId'`
            : `Value '${form.get("WebIdentityToken") ?? ""}' at 'webIdentityToken'`;
        res.writeHead(400, { "Content-Type": "text/xml" });
        res.end(
          `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>` +
            `<Code>ValidationError</Code><Message>1 validation error detected: ${echoed} failed to satisfy ` +
            `constraint: Member must satisfy regular expression pattern: [\\w+=,.@:/-]*</Message></Error>` +
            `<RequestId>3f1c2d4e-0000-4000-8000-000000000000</RequestId></ErrorResponse>`,
        );
      });
    });
    await new Promise<void>((r) => sts.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(sts.address() as AddressInfo).port}`;
    let output = "";
    const logger = createLogger({
      level: "trace",
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          output += chunk.toString();
          done();
        },
      }),
    });
    const saved = { ...process.env };
    try {
      // The operator's own credentials: a web identity (IRSA) whose STS call fails.
      const tokenFile = path.join(dir, "web-identity-token");
      writeFileSync(tokenFile, webToken);
      Object.assign(process.env, {
        AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
        AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/operator",
        AWS_ENDPOINT_URL_STS: endpoint,
        AWS_EC2_METADATA_DISABLED: "true",
        AWS_REGION: "us-east-1",
      });
      for (const k of [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
      ])
        delete process.env[k];
      const own = new AwsClients({
        endpoint,
        registry: new Registry(),
        logger,
        rateBudget: false,
        maxAttempts: 1,
      });
      const viaWebIdentity = await (
        await own.client("sts", "us-east-1")
      )
        .send(new (await import("@aws-sdk/client-sts")).GetCallerIdentityCommand({}))
        .then(
          () => assert.fail("GetCallerIdentity succeeded against a failing STS"),
          (e: unknown) => e,
        );
      logger.error({ err: viaWebIdentity }, "AWS call failed");
      own.destroy();

      // An AwsAccount assumed with the operator's static credentials and an external ID.
      process.env.AWS_ACCESS_KEY_ID = "AKIAKPPLANTED0000001";
      process.env.AWS_SECRET_ACCESS_KEY = secretKey;
      delete process.env.AWS_WEB_IDENTITY_TOKEN_FILE;
      delete process.env.AWS_ROLE_ARN;
      const aws = new AwsClients({
        endpoint,
        registry: new Registry(),
        logger,
        rateBudget: false,
        maxAttempts: 1,
      });
      const sessions = new AccountSessions({
        aws,
        stsRegion: "us-east-1",
        readSecret: () => Promise.reject(new Error("no secrets here")),
        clock: systemClock,
      });
      const account = {
        apiVersion: "compute.cloud.com/v1",
        kind: "AwsAccount",
        metadata: { name: "team", uid: "u1", generation: 1 },
        spec: { roleArn: "arn:aws:iam::210987654321:role/managed", externalId },
      } as unknown as AwsAccount;
      const err = await sessions
        .entry(account)
        .session.credentials()
        .then(
          () => assert.fail("AssumeRole succeeded against a failing STS"),
          (e: unknown) => e,
        );
      logger.error({ err }, "AssumeRole failed");
      logger.info({ message: (err as Error).message }, "AwsAccount is not ready");
      aws.destroy();
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      sts.closeAllConnections();
      await new Promise<void>((r) => sts.close(() => r()));
    }
    logger.flush();
    // The failures were logged, with AWS's reason, and the SDK's debug lines are there.
    assert.match(output, /ValidationError/);
    assert.match(output, /aws-sdk/);
    assertNoSecret(output, "aws");
  });
});
