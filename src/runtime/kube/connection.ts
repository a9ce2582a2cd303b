import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { systemClock, type Clock } from "../clock.ts";
import { agentProxyOptions, parseProxyUrl, proxyEnvironment, proxyFor } from "../proxy.ts";
import { ExecCredentials } from "./exec-credential.ts";
import { InvalidKubeConfigError, validate, type KubeConfig } from "./kubeconfig.ts";
import { credentialsOf } from "./redact.ts";

/**
 * What one request needs to reach and authenticate to the API server: headers (bearer token,
 * impersonation), optional basic auth, and a keep-alive agent holding the TLS material.
 */
export interface ConnectionSettings {
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** `user:password` for basic auth, when the kubeconfig has one. */
  readonly auth: string | undefined;
  readonly agent: http.Agent;
  /**
   * The credentials these settings send, in every form an answer could repeat them (see
   * ./redact.ts): the REST client removes them from server messages.
   */
  readonly secrets: readonly string[];
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
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Connection settings from a {@link KubeConfig}, by client-go's rules (clientcmd and transport):
 *
 * - The kubeconfig is checked first ({@link validate}); a config client-go refuses throws
 *   {@link InvalidKubeConfigError}.
 * - Credentials go only to an `https` server. For an `http` server no token, password, client
 *   certificate, exec plugin or auth-provider is used (impersonation headers are still sent).
 * - One kind of credential: a bearer token (the `tokenFile`'s contents, re-read on each refresh,
 *   over `token`, which is the fallback while the file cannot be read or is empty; never an empty
 *   token), or basic auth, plus an optional client certificate; the exec plugin runs only when
 *   none of those is set; the oidc auth-provider's id-token is sent when no other
 *   `Authorization` is.
 * - TLS: the CA from `certificate-authority-data` or the file, `insecure-skip-tls-verify`,
 *   `tls-server-name` (SNI and the name verified); files are read again on each refresh.
 * - Proxy: `proxy-url` when set, else HTTPS_PROXY/HTTP_PROXY/NO_PROXY as Go reads them (see
 *   ../proxy.ts). An https proxy's certificate is verified by Node against its own CA roots
 *   (extended by `NODE_EXTRA_CA_CERTS`), not with the cluster's CA as Go does: Node's proxy
 *   support takes no TLS options for the proxy.
 *
 * Requests go through our own keep-alive agent, which is replaced when the TLS material changes
 * (idle sockets of the old agent are closed, open watches finish on it).
 */
export class KubeConfigConnection implements ConnectionProvider {
  readonly server: URL;
  /** The proxy requests go through, if any. */
  readonly proxy: URL | undefined;
  readonly #kc: KubeConfig;
  readonly #secure: boolean;
  readonly #exec: ExecCredentials | undefined;
  readonly #refreshMs: number;
  readonly #clock: Clock;
  readonly #maxSockets: number;
  #cached: { settings: ConnectionSettings; until: number } | undefined;
  #inflight: Promise<ConnectionSettings> | undefined;
  #agent: { agent: http.Agent; fingerprint: string } | undefined;
  /** The last token read from `tokenFile`: used while the file cannot be read. */
  #fileToken: string | undefined;

  /** @throws InvalidKubeConfigError when the kubeconfig is one client-go refuses. */
  constructor(kc: KubeConfig, opts: KubeConfigConnectionOptions = {}) {
    validate(kc);
    this.server = new URL(kc.cluster.server);
    this.#secure = this.server.protocol === "https:";
    this.#kc = kc;
    this.#clock = opts.clock ?? systemClock;
    const proxyUrl = kc.cluster["proxy-url"];
    try {
      this.proxy =
        proxyUrl !== undefined && proxyUrl !== ""
          ? parseProxyUrl(proxyUrl, `proxy-url of cluster ${JSON.stringify(kc.clusterName)}`)
          : proxyFor(this.server, proxyEnvironment(opts.env ?? process.env));
    } catch (err) {
      throw new InvalidKubeConfigError((err as Error).message);
    }
    const { user, cluster } = kc;
    const exec = user.exec ?? undefined;
    const staticCredentials =
      nonEmpty(user.token) ||
      nonEmpty(user.tokenFile) ||
      nonEmpty(user.username) ||
      ((nonEmpty(user["client-certificate"]) || nonEmpty(user["client-certificate-data"])) &&
        (nonEmpty(user["client-key"]) || nonEmpty(user["client-key-data"])));
    this.#exec =
      this.#secure && exec !== undefined && !staticCredentials
        ? new ExecCredentials(
            exec,
            cluster,
            () => material(cluster["certificate-authority-data"], cluster["certificate-authority"]),
            this.#clock,
          )
        : undefined;
    this.#refreshMs = opts.refreshMs ?? 60_000;
    this.#maxSockets = opts.maxSockets ?? Infinity;
  }

  settings(): Promise<ConnectionSettings> {
    const c = this.#cached;
    if (c !== undefined && this.#clock.now() < c.until) return Promise.resolve(c.settings);
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
    const now = this.#clock.now();
    let until = now + this.#refreshMs;
    const headers: Record<string, string | string[]> = impersonationHeaders(this.#kc);
    if (!this.#secure) {
      const settings: ConnectionSettings = {
        headers,
        auth: undefined,
        agent: this.#agentFor(undefined),
        secrets: credentialsOf({ proxy: this.proxy }),
      };
      this.#cached = { settings, until };
      return settings;
    }
    let token = await this.#bearerToken();
    const exec = this.#exec !== undefined ? await this.#exec.get() : undefined;
    if (exec !== undefined) {
      // An expired credential is never used: the plugin runs again once it expires.
      until = Math.min(until, exec.expiresAt + 1);
      token ??= exec.credential.token;
    }
    const auth = nonEmpty(user.username) ? `${user.username}:${user.password ?? ""}` : undefined;
    if (token === undefined && auth === undefined) token = oidcToken(this.#kc, now);
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    const staticCert = nonEmpty(user["client-certificate"]) || nonEmpty(user["client-certificate-data"]);
    const tls: TlsMaterial = {
      ca: await material(cluster["certificate-authority-data"], cluster["certificate-authority"]),
      cert: staticCert
        ? await material(user["client-certificate-data"], user["client-certificate"])
        : exec?.credential.clientCertificateData,
      key: staticCert
        ? await material(user["client-key-data"], user["client-key"])
        : exec?.credential.clientKeyData,
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] === true ? false : undefined,
      servername: nonEmpty(cluster["tls-server-name"]) ? cluster["tls-server-name"] : undefined,
    };
    const settings: ConnectionSettings = {
      headers,
      auth,
      agent: this.#agentFor(tls),
      secrets: credentialsOf({ token, auth, proxy: this.proxy }),
    };
    this.#cached = { settings, until };
    return settings;
  }

  /**
   * The bearer token: the `tokenFile`'s contents (trimmed) when it can be read and is not empty,
   * else the last one read from it, else `token`. Never an empty token (client-go's file token
   * source).
   * @throws Error when only a `tokenFile` is set and it has never held a token.
   */
  async #bearerToken(): Promise<string | undefined> {
    const { user } = this.#kc;
    const inline = nonEmpty(user.token) ? user.token : undefined;
    if (!nonEmpty(user.tokenFile)) return inline;
    const who = `user ${JSON.stringify(this.#kc.userName)}`;
    let problem: { message: string; cause?: unknown } | undefined;
    try {
      const text = (await readFile(user.tokenFile, "utf8")).trim();
      if (text !== "") this.#fileToken = text;
      else problem = { message: `read empty token from tokenFile ${user.tokenFile} of ${who}` };
    } catch (err) {
      problem = {
        message: `cannot read tokenFile ${user.tokenFile} of ${who}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
        cause: err,
      };
    }
    const token = this.#fileToken ?? inline;
    if (token === undefined && problem !== undefined)
      throw new Error(problem.message, problem.cause !== undefined ? { cause: problem.cause } : {});
    return token;
  }

  #agentFor(tls: TlsMaterial | undefined): http.Agent {
    const fingerprint = tls === undefined ? "http" : fingerprintOf(tls);
    if (this.#agent?.fingerprint === fingerprint) return this.#agent.agent;
    const previous = this.#agent?.agent;
    const common = {
      keepAlive: true,
      keepAliveMsecs: 30_000,
      maxSockets: this.#maxSockets,
      scheduling: "lifo" as const,
      ...agentProxyOptions(this.proxy),
    };
    const agent =
      tls === undefined
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

function nonEmpty(v: string | undefined | null): v is string {
  return v !== undefined && v !== null && v !== "";
}

/**
 * `Impersonate-User`, `-Uid`, one `Impersonate-Group` per group and one `Impersonate-Extra-<key>`
 * per value, the key percent-encoded where a header name cannot hold a character (client-go's
 * rule).
 */
function impersonationHeaders(kc: KubeConfig): Record<string, string | string[]> {
  const user = kc.user;
  const headers: Record<string, string | string[]> = {};
  if (!nonEmpty(user.as)) return headers;
  headers["Impersonate-User"] = user.as;
  if (nonEmpty(user["as-uid"])) headers["Impersonate-Uid"] = user["as-uid"];
  // One header per group: the API server does not split a comma-separated value.
  const groups = user["as-groups"] ?? [];
  if (groups.length > 0) headers["Impersonate-Group"] = [...groups];
  for (const [key, values] of Object.entries(user["as-user-extra"] ?? {})) {
    if (values === null || values.length === 0) continue;
    headers[`Impersonate-Extra-${headerKeyEscape(key)}`] = [...values];
  }
  return headers;
}

/** Characters allowed in an HTTP header name (RFC 7230 token) stay; others are percent-encoded. */
function headerKeyEscape(key: string): string {
  let out = "";
  for (const byte of Buffer.from(key, "utf8")) {
    const ch = String.fromCharCode(byte);
    out += /^[A-Za-z0-9!#$&'*+\-.^_`|~]$/.test(ch)
      ? ch
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The oidc auth-provider's id-token while it is valid (client-go treats it as expired 10 s
 * before its `exp`). Refreshing through the issuer is not done.
 * @throws Error when the user has an oidc auth-provider without a valid id-token.
 */
function oidcToken(kc: KubeConfig, now: number): string | undefined {
  const provider = kc.user["auth-provider"] ?? undefined;
  if (provider?.name !== "oidc") return undefined;
  const idToken = provider.config?.["id-token"] ?? "";
  const who = `user ${JSON.stringify(kc.userName)}`;
  const renew =
    "renew it with the identity provider's login tool, or give the user an exec plugin (such as kubelogin)";
  if (idToken === "") throw new Error(`the oidc auth-provider of ${who} has no id-token: ${renew}`);
  const payload = idToken.split(".");
  let exp: unknown;
  try {
    if (payload.length !== 3 || payload[1] === undefined) throw new Error("not a JWT");
    exp = (JSON.parse(Buffer.from(payload[1], "base64url").toString("utf8")) as { exp?: unknown }).exp;
  } catch {
    throw new Error(`the oidc id-token of ${who} is not a valid JWT`);
  }
  if (typeof exp !== "number" || now + 10_000 >= exp * 1000)
    throw new Error(`the oidc id-token of ${who} has expired and is not refreshed here: ${renew}`);
  return idToken;
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
