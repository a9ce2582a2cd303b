/**
 * Kubeconfig conformance: a table of kubeconfig cases (files and environment), each run by a
 * client against recording servers, and what reached them. kubectl is the reference; the
 * operator's loader is driven the same way through test/support/kube-get-version.ts.
 *
 * What is recorded per request: the path, `Authorization`, every `Impersonate-*` header, the
 * client certificate's CN and the TLS server name (SNI); per run: whether the client succeeded,
 * the CONNECT tunnels and forwarded requests of a loopback proxy (reached over plain http or, for
 * an https proxy, through a TLS front with a certificate of the cases' CA), and what each exec
 * plugin run saw (arguments, the environment variables the case names, `KUBERNETES_EXEC_INFO`,
 * stdin).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import tls, { type TLSSocket } from "node:tls";
import { clientCert, createPki, servingCert } from "./certs.ts";
import { CountingProxy } from "./connect-proxy.ts";
import { inServiceAccountNamespace } from "./service-account-namespace.ts";

/** Names the serving certificate is valid for, besides 127.0.0.1 and localhost. */
export const SERVER_NAME = "kube.internal";
/** A name that resolves nowhere: reachable only through the test proxy. */
export const PROXIED_NAME = "apiserver.proxy.test";

export interface Fixture {
  dir: string;
  caPem: string;
  caFile: string;
  otherCaPem: string;
  serverCert: string;
  serverKey: string;
  alice: { cert: string; key: string };
  execUser: { cert: string; key: string };
}

/** The PKI shared by every case: a CA, a second unrelated CA, a serving and two client certificates. */
export function createFixture(): Fixture {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubeconfig-conformance-"));
  const pkiDir = path.join(dir, "pki");
  const otherDir = path.join(dir, "other-pki");
  mkdirSync(pkiDir);
  mkdirSync(otherDir);
  const pki = createPki(pkiDir);
  const other = createPki(otherDir);
  const serving = servingCert(pki, "recorder", [
    "IP:127.0.0.1",
    "DNS:localhost",
    `DNS:${SERVER_NAME}`,
    `DNS:${PROXIED_NAME}`,
  ]);
  return {
    dir,
    caPem: readFileSync(pki.caCert, "utf8"),
    caFile: pki.caCert,
    otherCaPem: readFileSync(other.caCert, "utf8"),
    serverCert: serving.cert,
    serverKey: serving.key,
    alice: clientCert(pki, "alice"),
    execUser: clientCert(pki, "exec-user"),
  };
}

export function removeFixture(fx: Fixture): void {
  rmSync(fx.dir, { recursive: true, force: true });
}

/** One request as the server saw it. */
export interface RequestRecord {
  path: string;
  authorization: string;
  impersonation: string[];
  clientCN: string;
  sni: string;
}

/** What one exec plugin run saw. */
export interface PluginRecord {
  args: string[];
  env: Record<string, string>;
  execInfo: unknown;
  stdin: string;
}

/** Everything a client run left behind. */
export interface Observation {
  ok: boolean;
  requests: RequestRecord[];
  tunnels: number;
  forwarded: number;
  plugin: PluginRecord[];
}

/** What a case hands to the servers and the client. */
export interface CaseContext {
  fx: Fixture;
  dir: string;
  /** `https://127.0.0.1:<port>` of the recording TLS server. */
  server: string;
  /** `http://127.0.0.1:<port>` of the recording plain server. */
  httpServer: string;
  /** The TLS server under {@link PROXIED_NAME}. */
  proxiedServer: string;
  /** The plain server under {@link PROXIED_NAME}. */
  proxiedHttpServer: string;
  proxy: string;
  /** `https://127.0.0.1:<port>`: the same proxy behind TLS, its certificate issued by the cases' CA. */
  httpsProxy: string;
  caB64: string;
}

export interface CaseSetup {
  /** Files to write, relative to the case folder. */
  files?: Record<string, string>;
  /** Executable exec plugins to write (relative path → behaviour). */
  plugins?: Record<string, PluginBehaviour>;
  /** A kubeconfig given with `--kubeconfig` (relative to the case folder). */
  kubeconfig?: string;
  /** KUBECONFIG list (relative to the case folder). */
  KUBECONFIG?: string[];
  env?: Record<string, string>;
  /** A ServiceAccount folder (relative) mounted at the in-cluster path for the run. */
  serviceAccountDir?: string;
}

export interface PluginBehaviour {
  /** What it prints. */
  stdout?: unknown;
  /** Exit code. @default 0 */
  exit?: number;
  /** What it writes on stderr. */
  stderr?: string;
  /** Environment variables it records. */
  recordEnv?: string[];
}

export interface ConformanceCase {
  name: string;
  setup(ctx: CaseContext): CaseSetup;
}

/** A client under test: how to run it with kubectl-style arguments. */
export interface ClientUnderTest {
  name: string;
  command(args: string[]): { file: string; args: string[] };
}

const CASE_TIMEOUT_MS = 20_000;

/** Runs `c` with each client in turn on fresh servers; returns the observations by client name. */
export async function runCase(
  fx: Fixture,
  c: ConformanceCase,
  clients: readonly ClientUnderTest[],
): Promise<Record<string, Observation & { stderr: string }>> {
  const dir = mkdtempSync(path.join(fx.dir, `case-${c.name.replace(/[^a-z0-9]+/gi, "-")}-`));
  const rec = await Recorder.start(fx);
  const proxy = await CountingProxy.start();
  const tlsFront = await TlsFront.start(fx, Number(new URL(proxy.url).port));
  try {
    const ctx: CaseContext = {
      fx,
      dir,
      server: `https://127.0.0.1:${rec.tlsPort}`,
      httpServer: `http://127.0.0.1:${rec.plainPort}`,
      proxiedServer: `https://${PROXIED_NAME}:${rec.tlsPort}`,
      proxiedHttpServer: `http://${PROXIED_NAME}:${rec.plainPort}`,
      proxy: proxy.url,
      httpsProxy: tlsFront.url,
      caB64: Buffer.from(fx.caPem).toString("base64"),
    };
    const setup = c.setup(ctx);
    for (const [rel, text] of Object.entries(setup.files ?? {})) {
      const file = path.join(dir, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    for (const [rel, behaviour] of Object.entries(setup.plugins ?? {}))
      writePlugin(path.join(dir, rel), behaviour);
    mkdirSync(path.join(dir, "cwd"), { recursive: true });
    mkdirSync(path.join(dir, "home"), { recursive: true });
    const out: Record<string, Observation & { stderr: string }> = {};
    for (const client of clients) {
      rec.reset();
      proxy.tunnels.length = 0;
      proxy.forwarded.length = 0;
      for (const rel of Object.keys(setup.plugins ?? {}))
        rmSync(`${path.join(dir, rel)}.log`, { force: true });
      const args = ["get", "--raw", "/version"];
      if (setup.kubeconfig !== undefined) args.push("--kubeconfig", path.join(dir, setup.kubeconfig));
      const env: NodeJS.ProcessEnv = {
        PATH: `${path.join(dir, "bin")}${path.delimiter}${process.env.PATH ?? ""}`,
        HOME: path.join(dir, "home"),
        ...(setup.KUBECONFIG !== undefined
          ? { KUBECONFIG: setup.KUBECONFIG.map((f) => path.join(dir, f)).join(path.delimiter) }
          : {}),
        ...setup.env,
      };
      const { file, args: argv } = client.command(args);
      const run =
        setup.serviceAccountDir !== undefined
          ? inServiceAccountNamespace(path.join(dir, setup.serviceAccountDir), file, argv)
          : { file, args: argv };
      const result = await runProcess(run.file, run.args, { cwd: path.join(dir, "cwd"), env });
      const plugin: PluginRecord[] = [];
      for (const rel of Object.keys(setup.plugins ?? {})) {
        const log = `${path.join(dir, rel)}.log`;
        if (!existsSync(log)) continue;
        for (const line of readFileSync(log, "utf8").split("\n"))
          if (line !== "") plugin.push(JSON.parse(line) as PluginRecord);
      }
      out[client.name] = {
        ok: result.code === 0,
        requests: [...rec.requests],
        tunnels: proxy.tunnels.length,
        forwarded: proxy.forwarded.length,
        plugin,
        stderr: result.stderr,
      };
    }
    return out;
  } finally {
    await tlsFront.close();
    await proxy.close();
    await rec.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function runProcess(
  file: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    // stdin is an empty pipe: kubectl prompts on it for a username when it finds no credentials
    // and then fails at its end. A plugin's stdin is the client's business (client-go gives it none).
    // A process group of its own, so a plugin still running when the client is stopped goes too.
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["pipe", "ignore", "pipe"],
      detached: true,
    });
    child.stdin.end();
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => (stderr += d));
    const stop = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, CASE_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      stop();
      resolve({ code: code ?? (signal === "SIGKILL" ? 137 : 1), stderr });
    });
  });
}

/** An exec plugin: a Node script recording what it saw next to itself, answering as told. */
function writePlugin(file: string, b: PluginBehaviour): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.json`, JSON.stringify(b));
  writeFileSync(
    file,
    `#!${process.execPath}
const fs = require("node:fs");
const b = JSON.parse(fs.readFileSync(__filename + ".json", "utf8"));
const env = {};
for (const n of b.recordEnv ?? []) if (process.env[n] !== undefined) env[n] = process.env[n];
const info = process.env.KUBERNETES_EXEC_INFO;
const rec = { args: process.argv.slice(2), env, execInfo: info === undefined ? null : JSON.parse(info), stdin: "" };
if ((b.recordEnv ?? []).includes("STDIN")) rec.stdin = fs.readFileSync(0, "utf8");
fs.appendFileSync(__filename + ".log", JSON.stringify(rec) + "\\n");
if (b.stderr) process.stderr.write(b.stderr);
if (b.stdout !== undefined) process.stdout.write(typeof b.stdout === "string" ? b.stdout : JSON.stringify(b.stdout));
process.exit(b.exit ?? 0);
`,
  );
  chmodSync(file, 0o755);
}

/** TLS in front of a plain port on loopback: turns the counting http proxy into an https one. */
class TlsFront {
  readonly #server: tls.Server;
  readonly #sockets = new Set<net.Socket>();

  private constructor(server: tls.Server) {
    this.#server = server;
  }

  static async start(fx: Fixture, port: number): Promise<TlsFront> {
    const server = tls.createServer({ cert: fx.serverCert, key: fx.serverKey });
    const front = new TlsFront(server);
    server.on("secureConnection", (client) => {
      const upstream = net.connect(port, "127.0.0.1");
      for (const s of [client, upstream]) {
        front.#sockets.add(s);
        s.on("close", () => front.#sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    // A client that refuses the certificate ends the handshake: nothing to do.
    server.on("tlsClientError", () => {});
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return front;
  }

  get url(): string {
    return `https://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

/** The TLS and plain recording servers of one case. */
class Recorder {
  readonly requests: RequestRecord[] = [];
  readonly #tls: https.Server;
  readonly #plain: http.Server;

  private constructor(tls: https.Server, plain: http.Server) {
    this.#tls = tls;
    this.#plain = plain;
  }

  static async start(fx: Fixture): Promise<Recorder> {
    const handler = (rec: () => Recorder) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      const socket = req.socket as Partial<TLSSocket>;
      const peer = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
      const cn = peer?.subject?.CN;
      const impersonation: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = (req.rawHeaders[i] ?? "").toLowerCase();
        if (name.startsWith("impersonate-")) impersonation.push(`${name}: ${req.rawHeaders[i + 1] ?? ""}`);
      }
      impersonation.sort();
      rec().requests.push({
        path: req.url ?? "",
        authorization: req.headers.authorization ?? "",
        impersonation,
        clientCN: typeof cn === "string" ? cn : Array.isArray(cn) ? cn.join(",") : "",
        sni: typeof socket.servername === "string" ? socket.servername : "",
      });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ major: "1", minor: "36", gitVersion: "v1.36.0-recorder" }));
    };
    const holder: { self?: Recorder } = {};
    const get = (): Recorder => holder.self as Recorder;
    const tls = https.createServer(
      { cert: fx.serverCert, key: fx.serverKey, ca: fx.caPem, requestCert: true, rejectUnauthorized: false },
      handler(get),
    );
    const plain = http.createServer(handler(get));
    const self = new Recorder(tls, plain);
    holder.self = self;
    await Promise.all([
      new Promise<void>((r) => tls.listen(0, "127.0.0.1", r)),
      new Promise<void>((r) => plain.listen(0, "127.0.0.1", r)),
    ]);
    return self;
  }

  get tlsPort(): number {
    return (this.#tls.address() as AddressInfo).port;
  }

  get plainPort(): number {
    return (this.#plain.address() as AddressInfo).port;
  }

  reset(): void {
    this.requests.length = 0;
    this.#tls.closeAllConnections();
    this.#plain.closeAllConnections();
  }

  async close(): Promise<void> {
    this.#tls.closeAllConnections();
    this.#plain.closeAllConnections();
    await Promise.all([
      new Promise<void>((r) => this.#tls.close(() => r())),
      new Promise<void>((r) => this.#plain.close(() => r())),
    ]);
  }
}
