import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { systemClock, type Clock } from "../clock.ts";

/**
 * What one request needs to reach and authenticate to the API server: headers (bearer token,
 * impersonation), optional basic auth, and a keep-alive agent holding the TLS material.
 */
export interface ConnectionSettings {
  readonly headers: Readonly<Record<string, string>>;
  /** `user:password` for basic auth, when the kubeconfig has one. */
  readonly auth: string | undefined;
  readonly agent: http.Agent;
}

/**
 * Source of {@link ConnectionSettings}. Implementations cache and refresh them; the REST client
 * asks before every request and calls {@link ConnectionProvider.invalidate} after a 401.
 */
export interface ConnectionProvider {
  /** Base URL of the API server (may carry a path prefix). */
  readonly server: URL;
  settings(): Promise<ConnectionSettings>;
  /** Forces the next {@link ConnectionProvider.settings} call to re-read credentials. */
  invalidate(): void;
}

/** Options of {@link KubeConfigConnection}. */
export interface KubeConfigConnectionOptions {
  /**
   * How long credentials are reused before the kubeconfig is asked again. A re-read picks up a
   * rotated ServiceAccount token file, a renewed exec-plugin credential and rotated client
   * certificate files.
   * @default 60_000
   */
  refreshMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /**
   * Upper bound of sockets per agent. Each open watch holds one.
   * @default Infinity
   */
  maxSockets?: number;
}

/**
 * Connection settings from a `KubeConfig` of @kubernetes/client-node. The library is used only
 * for kubeconfig parsing, authentication (token, token file, exec plugins, client certificates)
 * and TLS material; requests go through our own keep-alive agent, which is replaced when the TLS
 * material changes (idle sockets of the old agent are closed, open watches finish on it).
 * Clusters with a `proxy-url` use the library's proxy agent instead.
 */
export class KubeConfigConnection implements ConnectionProvider {
  readonly server: URL;
  readonly #kc: KubeConfig;
  readonly #refreshMs: number;
  readonly #clock: Clock;
  readonly #maxSockets: number;
  #cached: { settings: ConnectionSettings; at: number } | undefined;
  #inflight: Promise<ConnectionSettings> | undefined;
  #agent: { agent: http.Agent; fingerprint: string } | undefined;

  constructor(kc: KubeConfig, opts: KubeConfigConnectionOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error("kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
    this.#kc = kc;
    this.#refreshMs = opts.refreshMs ?? 60_000;
    this.#clock = opts.clock ?? systemClock;
    this.#maxSockets = opts.maxSockets ?? Infinity;
  }

  settings(): Promise<ConnectionSettings> {
    const c = this.#cached;
    if (c !== undefined && this.#clock.now() - c.at < this.#refreshMs) return Promise.resolve(c.settings);
    this.#inflight ??= this.#load().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  invalidate(): void {
    this.#cached = undefined;
  }

  async #load(): Promise<ConnectionSettings> {
    const opts: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    const agent = this.#kc.getCurrentCluster()?.proxyUrl ? (opts.agent as http.Agent) : this.#agentFor(opts);
    const settings: ConnectionSettings = { headers, auth: opts.auth ?? undefined, agent };
    this.#cached = { settings, at: this.#clock.now() };
    return settings;
  }

  #agentFor(opts: https.RequestOptions): http.Agent {
    const tls = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    };
    const fingerprint = fingerprintOf(tls);
    if (this.#agent?.fingerprint === fingerprint) return this.#agent.agent;
    const previous = this.#agent?.agent;
    const common = {
      keepAlive: true,
      keepAliveMsecs: 30_000,
      maxSockets: this.#maxSockets,
      scheduling: "lifo" as const,
    };
    const agent =
      this.server.protocol === "http:"
        ? new http.Agent(common)
        : new https.Agent({
            ...common,
            ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
            ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
            ...(tls.key !== undefined ? { key: tls.key } : {}),
            ...(tls.pfx !== undefined ? { pfx: tls.pfx } : {}),
            ...(tls.passphrase !== undefined ? { passphrase: tls.passphrase } : {}),
            ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
            ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
          });
    this.#agent = { agent, fingerprint };
    if (previous !== undefined) closeIdleSockets(previous);
    return agent;
  }

  /** Closes every socket of the current agent, including open watches. For shutdown. */
  destroy(): void {
    this.#agent?.agent.destroy();
    this.#agent = undefined;
    this.#cached = undefined;
  }
}

function fingerprintOf(v: Record<string, unknown>): string {
  const h = createHash("sha256");
  for (const [k, val] of Object.entries(v)) {
    h.update(k);
    h.update("\0");
    if (val === undefined) h.update("-");
    else if (Buffer.isBuffer(val) || typeof val === "string") h.update(val);
    else if (Array.isArray(val)) for (const x of val as unknown[]) h.update(String(x));
    else h.update(String(val));
    h.update("\0");
  }
  return h.digest("hex");
}

function closeIdleSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const s of sockets ?? []) s.destroy();
  }
}
