/**
 * The process's HTTP endpoints: `/healthz` and `/readyz` on the probe address, `/metrics` on the
 * metrics address. Both implement the manager's `Server` (opened first, closed last).
 */
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import path from "node:path";
import type { Registry } from "prom-client";
import { systemClock, type Clock, type TimerHandle } from "../clock.ts";
import { silentLogger, type Logger } from "../logging.ts";
import type { Server } from "../manager/manager.ts";
import type { DelegatingAuth } from "./auth.ts";
import type { HealthChecks } from "./health.ts";

/** Where a server listens; `host` undefined means every interface. Port 0 picks a free port. */
export interface ListenAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/** Base of both servers: listen/close with a bounded drain. */
abstract class HttpEndpoint implements Server {
  abstract readonly name: string;
  protected abstract readonly server: http.Server;
  protected abstract readonly address: ListenAddress;
  protected abstract readonly log: Logger;

  async listen(): Promise<void> {
    const srv = this.server;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void =>
        reject(
          new Error(`${this.name}: cannot listen on ${fmt(this.address)}: ${err.message}`, { cause: err }),
        );
      srv.once("error", onError);
      srv.listen({ host: this.address.host, port: this.address.port }, () => {
        srv.off("error", onError);
        resolve();
      });
    });
    srv.on("error", (err) => this.log.error({ err }, "server error"));
    this.log.info({ address: this.boundAddress() }, "listening");
  }

  /** The address actually bound (the real port when 0 was asked for). */
  boundAddress(): AddressInfo {
    const a = this.server.address();
    if (a === null || typeof a === "string") throw new Error(`${this.name} is not listening`);
    return a;
  }

  /** Stops accepting connections; open keep-alive connections are closed after `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    const srv = this.server;
    if (!srv.listening) return;
    const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
    srv.closeIdleConnections();
    const timer = setTimeout(() => srv.closeAllConnections(), graceMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
  }
}

/** Options of {@link ProbeServer}. */
export interface ProbeServerOptions {
  address: ListenAddress;
  healthz: HealthChecks;
  readyz: HealthChecks;
  /** @default silentLogger */
  logger?: Logger;
}

/**
 * `/healthz` and `/readyz` in controller-runtime's format: `ok` on success, every check as
 * `[+]name ok` / `[-]name failed: reason withheld` with `?verbose` or on failure (HTTP 500),
 * `/readyz/<name>` for one check, `?exclude=<name>` (repeatable) to skip checks. Failure
 * reasons are logged, never served.
 */
export class ProbeServer extends HttpEndpoint {
  readonly name = "health-probes";
  protected readonly server: http.Server;
  protected readonly address: ListenAddress;
  protected readonly log: Logger;
  readonly #sets: Readonly<Record<string, HealthChecks>>;

  constructor(opts: ProbeServerOptions) {
    super();
    this.address = opts.address;
    this.log = (opts.logger ?? silentLogger).child({ component: "health-probes" });
    this.#sets = { healthz: opts.healthz, readyz: opts.readyz };
    this.server = http.createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        this.log.error({ err }, "probe handler failed");
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://probe");
    const m = /^\/(healthz|readyz)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    const kind = m?.[1];
    const checks = kind !== undefined ? this.#sets[kind] : undefined;
    if (kind === undefined || checks === undefined || (req.method !== "GET" && req.method !== "HEAD")) {
      return send(res, 404, "404 page not found\n");
    }
    const only = m?.[2];
    if (only !== undefined) {
      if (!checks.has(only)) return send(res, 404, "404 page not found\n");
      const [r] = await checks.run({ only });
      if (r?.ok === true) return send(res, 200, "ok");
      this.log.info({ check: only, error: r?.error }, `${kind} check failed`);
      return send(res, 500, `internal server error: ${only} check failed\n`);
    }
    const exclude = new Set(url.searchParams.getAll("exclude"));
    const results = await checks.run({ exclude });
    const failed = results.filter((r) => !r.ok);
    for (const f of failed) this.log.debug({ check: f.name, error: f.error }, `${kind} check failed`);
    const verbose = url.searchParams.has("verbose");
    if (failed.length === 0 && !verbose) return send(res, 200, "ok");
    const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
    for (const ex of exclude) if (checks.has(ex)) lines.push(`[+]${ex} excluded: ok`);
    lines.push(failed.length === 0 ? `${kind} check passed` : `${kind} check failed`);
    return send(res, failed.length === 0 ? 200 : 500, lines.join("\n") + "\n");
  }
}

/** Options of {@link MetricsServer}. */
export interface MetricsServerOptions {
  address: ListenAddress;
  registry: Registry;
  /**
   * TLS plus delegated authentication/authorization; `undefined` serves plain HTTP to anyone
   * (`--metrics-secure=false`, for a sidecar proxy or a trusted network only).
   */
  secure?:
    | {
        auth: DelegatingAuth;
        /** Folder with `tls.crt` and `tls.key`; `undefined` generates a self-signed certificate. */
        certDir?: string | undefined;
        /** How often the certificate files are checked for changes. @default 10000 */
        certReloadIntervalMs?: number;
        /** Names for the generated certificate. @default localhost, 127.0.0.1, ::1, the host name */
        hosts?: readonly string[];
      }
    | undefined;
  /** @default silentLogger */
  logger?: Logger;
  /** @default systemClock */
  clock?: Clock;
}

/**
 * Serves `registry` at `/metrics` in the Prometheus text format. Secure by default: HTTPS, a
 * bearer token checked by TokenReview and authorised by SubjectAccessReview (verb `get`,
 * non-resource URL `/metrics`): 401 without a valid token, 403 without RBAC. Certificate files
 * are re-read when they change, so cert-manager rotations need no restart.
 */
export class MetricsServer extends HttpEndpoint {
  readonly name = "metrics";
  protected readonly server: http.Server;
  protected readonly address: ListenAddress;
  protected readonly log: Logger;
  readonly #registry: Registry;
  readonly #secure: MetricsServerOptions["secure"];
  readonly #clock: Clock;
  #reloadTimer: TimerHandle | undefined;
  #certStamp = "";

  constructor(opts: MetricsServerOptions) {
    super();
    this.address = opts.address;
    this.log = (opts.logger ?? silentLogger).child({ component: "metrics-server" });
    this.#registry = opts.registry;
    this.#secure = opts.secure;
    this.#clock = opts.clock ?? systemClock;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.#handle(req, res).catch((err: unknown) => {
        this.log.error({ err }, "metrics handler failed");
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    };
    this.server =
      this.#secure !== undefined
        ? https.createServer({ minVersion: "TLSv1.2" }, handler)
        : http.createServer(handler);
  }

  /** Whether TLS and authentication are on. */
  get secure(): boolean {
    return this.#secure !== undefined;
  }

  override async listen(): Promise<void> {
    const s = this.#secure;
    if (s !== undefined) {
      if (s.certDir !== undefined) {
        await this.#loadCertFiles(s.certDir);
        this.#scheduleReload(s.certDir, s.certReloadIntervalMs ?? 10_000);
      } else {
        const hosts = s.hosts ?? ["localhost", "127.0.0.1", "::1", hostname()];
        // Imported here: the X.509 code loads only when a certificate is generated, never for
        // certificate files or plain HTTP (in the bundle it is a chunk of its own).
        const { generateSelfSignedCertificate } = await import("./self-signed.ts");
        const pair = await generateSelfSignedCertificate({ hosts });
        (this.server as https.Server).setSecureContext({ cert: pair.cert, key: pair.key });
        this.log.info({ hosts }, "serving metrics with a generated self-signed certificate");
      }
    }
    await super.listen();
  }

  override async close(graceMs?: number): Promise<void> {
    if (this.#reloadTimer !== undefined) this.#clock.clearTimeout(this.#reloadTimer);
    this.#reloadTimer = undefined;
    await super.close(graceMs);
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://metrics");
    if (url.pathname !== "/metrics") return send(res, 404, "404 page not found\n");
    if (this.#secure !== undefined) {
      const decision = await this.#secure.auth.check(
        req.headers.authorization,
        req.method ?? "GET",
        url.pathname,
      );
      if (!decision.allowed) {
        this.log.debug({ status: decision.status, reason: decision.reason }, "metrics request refused");
        const text =
          decision.status === 401
            ? "Unauthorized"
            : decision.status === 403
              ? "Forbidden"
              : "Internal Server Error";
        if (decision.status === 401)
          res.setHeader("WWW-Authenticate", 'Bearer realm="kubeprovisioner metrics"');
        return send(res, decision.status, `${text}: ${decision.reason}\n`);
      }
    }
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "Method Not Allowed\n");
    const body = await this.#registry.metrics();
    res.writeHead(200, { "Content-Type": this.#registry.contentType });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  async #loadCertFiles(dir: string): Promise<boolean> {
    const certFile = path.join(dir, "tls.crt");
    const keyFile = path.join(dir, "tls.key");
    const [c, k] = await Promise.all([stat(certFile), stat(keyFile)]);
    const stamp = `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
    if (stamp === this.#certStamp) return false;
    const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
    (this.server as https.Server).setSecureContext({ cert, key });
    this.#certStamp = stamp;
    this.log.info({ certFile }, "loaded metrics serving certificate");
    return true;
  }

  #scheduleReload(dir: string, intervalMs: number): void {
    this.#reloadTimer = this.#clock.setTimeout(() => {
      this.#loadCertFiles(dir)
        .catch((err: unknown) =>
          this.log.error({ err }, "reloading the metrics certificate failed; keeping the previous one"),
        )
        .finally(() => {
          if (this.#reloadTimer !== undefined) this.#scheduleReload(dir, intervalMs);
        });
    }, intervalMs);
  }
}

function send(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });
  res.end(text);
}

function fmt(a: ListenAddress): string {
  return `${a.host === undefined ? "" : a.host.includes(":") ? `[${a.host}]` : a.host}:${a.port}`;
}
