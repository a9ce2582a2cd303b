import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { systemClock, type Clock } from "../clock.ts";
import { ExecCredentials } from "./exec-credential.ts";
import type { KubeConfig } from "./kubeconfig.ts";

/**
 * What one request needs to reach and authenticate to the API server: headers (bearer token,
 * impersonation), optional basic auth, and a keep-alive agent holding the TLS material.
 */
export interface ConnectionSettings {
  readonly headers: Readonly<Record<string, string | string[]>>;
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
 * Connection settings from a {@link KubeConfig}: TLS material from the cluster and user entries
 * (files are read again on each refresh), a bearer token (inline, from `tokenFile`, or from an
 * exec plugin), basic auth and impersonation headers. Requests go through our own keep-alive
 * agent, which is replaced when the TLS material changes (idle sockets of the old agent are
 * closed, open watches finish on it).
 */
export class KubeConfigConnection implements ConnectionProvider {
  readonly server: URL;
  readonly #kc: KubeConfig;
  readonly #exec: ExecCredentials | undefined;
  readonly #refreshMs: number;
  readonly #clock: Clock;
  readonly #maxSockets: number;
  #cached: { settings: ConnectionSettings; at: number } | undefined;
  #inflight: Promise<ConnectionSettings> | undefined;
  #agent: { agent: http.Agent; fingerprint: string } | undefined;

  constructor(kc: KubeConfig, opts: KubeConfigConnectionOptions = {}) {
    this.server = new URL(kc.cluster.server);
    this.#kc = kc;
    this.#clock = opts.clock ?? systemClock;
    this.#exec =
      kc.user.exec !== undefined ? new ExecCredentials(kc.user.exec, kc.cluster, this.#clock) : undefined;
    this.#refreshMs = opts.refreshMs ?? 60_000;
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
    this.#exec?.invalidate();
  }

  async #load(): Promise<ConnectionSettings> {
    const { cluster, user } = this.#kc;
    const exec = await this.#exec?.get();
    const headers: Record<string, string | string[]> = {};
    const token =
      exec?.token ??
      user.token ??
      (user.tokenFile ? (await readFile(user.tokenFile, "utf8")).trim() : undefined);
    if (token) headers.Authorization = `Bearer ${token}`;
    if (user.as) headers["Impersonate-User"] = user.as;
    if (user["as-uid"]) headers["Impersonate-Uid"] = user["as-uid"];
    // One header per group: the API server does not split a comma-separated value.
    if (user["as-groups"]?.length) headers["Impersonate-Group"] = [...user["as-groups"]];
    const tls: TlsMaterial = {
      ca: await material(cluster["certificate-authority-data"], cluster["certificate-authority"]),
      cert:
        exec?.clientCertificateData ??
        (await material(user["client-certificate-data"], user["client-certificate"])),
      key: exec?.clientKeyData ?? (await material(user["client-key-data"], user["client-key"])),
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] === true ? false : undefined,
      servername: cluster["tls-server-name"],
    };
    const auth =
      user.username !== undefined && token === undefined
        ? `${user.username}:${user.password ?? ""}`
        : undefined;
    const settings: ConnectionSettings = { headers, auth, agent: this.#agentFor(tls) };
    this.#cached = { settings, at: this.#clock.now() };
    return settings;
  }

  #agentFor(tls: TlsMaterial): http.Agent {
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

/** The TLS parts of a connection; the agent is rebuilt when any of them changes. */
interface TlsMaterial {
  ca: string | Buffer | undefined;
  cert: string | Buffer | undefined;
  key: string | Buffer | undefined;
  rejectUnauthorized: boolean | undefined;
  servername: string | undefined;
}

/**
 * PEM material given inline as base64 (`*-data` in a kubeconfig; an exec plugin returns PEM
 * text instead) or as a file, read now so rotated files are picked up.
 */
async function material(base64: string | undefined, file: string | undefined): Promise<Buffer | undefined> {
  if (base64 !== undefined && base64 !== "") return Buffer.from(base64, "base64");
  if (file !== undefined && file !== "") return await readFile(file);
  return undefined;
}

function fingerprintOf(v: TlsMaterial): string {
  const h = createHash("sha256");
  for (const [k, val] of Object.entries(v)) {
    h.update(k);
    h.update("\0");
    if (val === undefined) h.update("-");
    else if (Buffer.isBuffer(val) || typeof val === "string") h.update(val);
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
