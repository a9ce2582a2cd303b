import http from "node:http";
import https from "node:https";
import type { Registry } from "prom-client";
import { silentLogger, type Logger } from "../logging.ts";
import { defaultRegistry } from "../metrics/registry.ts";
import { KubeConfigConnection, type ConnectionProvider, type ConnectionSettings } from "./connection.ts";
import type { KubeConfig } from "./kubeconfig.ts";
import { ApiError, TransportError, type TransportFailure } from "./errors.ts";
import type { KubeObject } from "./object.ts";
import { redactValue } from "./redact.ts";
import { restMetrics, type RestMetrics } from "./rest-metrics.ts";
import { WatchDecodeError, WatchLineDecoder, type WatchEvent } from "./watch.ts";

export type { WatchEvent, WatchEventType } from "./watch.ts";

/** Query parameters; `undefined` values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** One request to the API server. */
export interface RestRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. `/api/v1/namespaces/default/configmaps/x` (see `resourcePath`). */
  path: string;
  query?: Query;
  /** Serialised as JSON unless it is a string (sent as is, e.g. an apply-patch YAML document). */
  body?: unknown;
  /**
   * @default "application/json"; PATCH takes `application/merge-patch+json`,
   * `application/json-patch+json`, `application/strategic-merge-patch+json` or
   * `application/apply-patch+yaml`.
   */
  contentType?: string;
  signal?: AbortSignal;
  /** Overrides the client's timeout for this request (time to the complete response). */
  timeoutMs?: number;
}

/**
 * Sends {@link RestRequest}s: what the manager, the Event recorder and the metrics authorizer
 * need from a Kubernetes client. Implementations reject with an error whose numeric `status` is
 * the HTTP status when the server answered non-2xx (`ApiError`, ./errors.ts), and honour
 * `signal`. {@link RestClient} is one; unit tests pass an in-memory fake.
 */
export interface KubeRequester {
  request<T>(req: RestRequest): Promise<T>;
}

/** Options of {@link RestClient}. */
export interface RestClientOptions {
  /** Where and how to connect; see {@link KubeConfigConnection}. */
  connection: ConnectionProvider;
  /** @default defaultRegistry */
  registry?: Registry;
  /** @default silentLogger */
  logger?: Logger;
  /** @default "kubeprovisioner" */
  userAgent?: string;
  /**
   * Time to the complete response of a request, and to the response headers of a watch.
   * @default 30_000
   */
  timeoutMs?: number;
}

/** Options of {@link RestClient.fromKubeConfig}. */
export interface FromKubeConfigOptions {
  registry?: Registry;
  logger?: Logger;
  userAgent?: string;
  timeoutMs?: number;
  /** How long credentials are reused before the kubeconfig is asked again. @default 60_000 */
  credentialRefreshMs?: number;
}

const IDEMPOTENT = new Set(["GET", "PUT", "DELETE"]);

/** Marks a request destroyed by our own timer. */
class TimeoutMarker extends Error {}

interface Opened {
  req: http.ClientRequest;
  res: http.IncomingMessage;
  /** The credentials the request sent ({@link ConnectionSettings.secrets}). */
  secrets: readonly string[];
  /** Stops the timeout and the abort listener; idempotent. */
  release(): void;
  /** Whether our timer destroyed the request. */
  timedOut(): boolean;
}

/**
 * A small Kubernetes REST client over Node's http/https with a keep-alive agent.
 *
 * Guarantees: every attempt is counted in `rest_client_requests_total{code,method,host}`; a non-2xx
 * answer throws {@link ApiError} with the parsed `metav1.Status`, from which (as from a watch
 * ERROR event) the request's own credentials are removed (./redact.ts); a connection failure,
 * timeout or undecodable body throws {@link TransportError}; an abort by the caller rejects with
 * the signal's reason. A 401 re-reads credentials and retries once; an idempotent request (GET, PUT,
 * DELETE) that fails on a reused keep-alive socket before any response is retried once. Nothing
 * else is retried: callers own their retry policy (429 and 5xx surface as ApiError with
 * `retryAfterSeconds`).
 */
export class RestClient {
  /** The API server's base URL as configured, e.g. `https://127.0.0.1:6443`. */
  readonly host: string;
  readonly #conn: ConnectionProvider;
  readonly #metrics: RestMetrics;
  readonly #log: Logger;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  readonly #hostLabel: string;
  readonly #prefix: string;

  constructor(opts: RestClientOptions) {
    this.#conn = opts.connection;
    this.#metrics = restMetrics(opts.registry ?? defaultRegistry);
    this.#log = opts.logger ?? silentLogger;
    this.#userAgent = opts.userAgent ?? "kubeprovisioner";
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    const server = opts.connection.server;
    this.host = `${server.protocol}//${server.host}${server.pathname.replace(/\/+$/, "")}`;
    this.#hostLabel = server.host;
    this.#prefix = server.pathname.replace(/\/+$/, "");
  }

  /**
   * A client for the current context of `kc`. The kubeconfig is consulted again every
   * `credentialRefreshMs` (and after a 401), so rotating tokens and exec plugins keep working.
   */
  static fromKubeConfig(kc: KubeConfig, opts: FromKubeConfigOptions = {}): RestClient {
    const connection = new KubeConfigConnection(kc, { refreshMs: opts.credentialRefreshMs });
    return new RestClient({
      connection,
      registry: opts.registry,
      logger: opts.logger,
      userAgent: opts.userAgent,
      timeoutMs: opts.timeoutMs,
    });
  }

  /**
   * Sends one request and returns the decoded JSON body (`undefined` for an empty body).
   * @throws ApiError on a non-2xx status; TransportError when no usable response arrived; the
   *   signal's reason when `req.signal` aborted.
   */
  async request<T>(req: RestRequest): Promise<T> {
    const started = performance.now();
    const timeoutMs = req.timeoutMs ?? this.#timeoutMs;
    const opened = await this.#openWithRetries(req, timeoutMs);
    let text: string;
    try {
      text = await readBody(opened.res);
    } catch (e) {
      if (opened.timedOut() && !req.signal?.aborted) {
        throw new TransportError({
          failure: "timeout",
          method: req.method,
          path: req.path,
          message: `no complete response within ${timeoutMs} ms`,
          cause: e,
        });
      }
      throw this.#failure(e, req.method, req.path, req.signal);
    } finally {
      opened.release();
    }
    this.#metrics.duration.observe(
      { verb: req.method, host: this.#hostLabel },
      (performance.now() - started) / 1000,
    );
    const status = opened.res.statusCode ?? 0;
    this.#log.debug({ method: req.method, path: req.path, status }, "kube request");
    if (status < 200 || status > 299) {
      throw ApiError.fromResponse({
        status,
        text,
        method: req.method,
        path: req.path,
        retryAfterHeader: headerOf(opened.res, "retry-after"),
        secrets: opened.secrets,
      });
    }
    if (text.length === 0) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new TransportError({
        failure: "decode",
        method: req.method,
        path: req.path,
        message: "response is not JSON",
        cause: e,
      });
    }
  }

  /**
   * Opens a watch (`watch=true` is added to `query`) and yields its events as they arrive.
   * The iteration ends normally when the server closes the stream (its `timeoutSeconds`) or when
   * `signal` aborts; breaking out of the loop closes the connection.
   * @throws ApiError when the server refuses the watch (410 for an expired resourceVersion may
   *   also arrive as an ERROR event instead); TransportError when the connection fails or drops
   *   or a line is not a watch event.
   */
  async *watch<T extends KubeObject>(
    path: string,
    query: Query,
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent<T>> {
    if (signal.aborted) return;
    const req: RestRequest = { method: "GET", path, query: { ...query, watch: true }, signal };
    let opened: Opened;
    try {
      opened = await this.#openWithRetries(req, this.#timeoutMs);
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
    opened.release();
    const { res } = opened;
    const status = res.statusCode ?? 0;
    const onAbort = (): void => {
      opened.req.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      if (status < 200 || status > 299) {
        const text = await readBody(res);
        throw ApiError.fromResponse({
          status,
          text,
          method: "GET",
          path,
          retryAfterHeader: headerOf(res, "retry-after"),
          secrets: opened.secrets,
        });
      }
      // An ERROR event's Status is the server's message too: without the request's credentials.
      const clean = (ev: WatchEvent<T>): WatchEvent<T> =>
        ev.type === "ERROR" ? { ...ev, object: redactValue(ev.object, opened.secrets) } : ev;
      const decoder = new WatchLineDecoder<T>();
      for await (const chunk of res as AsyncIterable<Buffer>) {
        for (const ev of decoder.push(chunk)) yield clean(ev);
      }
      for (const ev of decoder.end()) yield clean(ev);
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError) throw e;
      throw this.#failure(e, "GET", path, undefined);
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (!res.complete) opened.req.destroy();
    }
  }

  async #openWithRetries(req: RestRequest, timeoutMs: number): Promise<Opened> {
    let refreshedAuth = false;
    let retriedReset = false;
    for (;;) {
      const settings = await this.#conn.settings();
      let opened: Opened;
      try {
        opened = await this.#open(req, settings, timeoutMs);
      } catch (e) {
        const err = this.#failure(e, req.method, req.path, req.signal);
        const reused = (e as { reusedSocket?: boolean }).reusedSocket === true;
        if (
          err instanceof TransportError &&
          err.failure === "reset" &&
          reused &&
          IDEMPOTENT.has(req.method) &&
          !retriedReset
        ) {
          retriedReset = true;
          continue;
        }
        throw err;
      }
      this.#metrics.requests.inc({
        code: String(opened.res.statusCode ?? 0),
        method: req.method,
        host: this.#hostLabel,
      });
      if (opened.res.statusCode === 401 && !refreshedAuth) {
        refreshedAuth = true;
        opened.res.resume();
        opened.release();
        this.#conn.invalidate();
        continue;
      }
      return opened;
    }
  }

  /** Sends the request and resolves once response headers arrive. */
  #open(req: RestRequest, settings: ConnectionSettings, timeoutMs: number): Promise<Opened> {
    const url = this.#url(req.path, req.query);
    const headers: Record<string, string | number | string[]> = {
      Accept: "application/json",
      "User-Agent": this.#userAgent,
      ...settings.headers,
    };
    let payload: string | undefined;
    if (req.body !== undefined) {
      payload = typeof req.body === "string" ? req.body : JSON.stringify(req.body);
      headers["Content-Type"] = req.contentType ?? "application/json";
      headers["Content-Length"] = Buffer.byteLength(payload);
    }
    const mod = url.protocol === "http:" ? http : https;
    return new Promise<Opened>((resolve, reject) => {
      if (req.signal?.aborted) {
        reject(req.signal.reason as Error);
        return;
      }
      const r = mod.request(url, {
        method: req.method,
        headers,
        agent: settings.agent,
        auth: settings.auth,
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        r.destroy(new TimeoutMarker(`no complete response within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const onAbort = (): void => {
        r.destroy(req.signal?.reason as Error);
      };
      req.signal?.addEventListener("abort", onAbort, { once: true });
      let released = false;
      let responded = false;
      const release = (): void => {
        if (released) return;
        released = true;
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
      };
      r.on("error", (e: Error) => {
        if (!responded) {
          this.#metrics.requests.inc({ code: "<error>", method: req.method, host: this.#hostLabel });
          release();
          Object.assign(e, { reusedSocket: r.reusedSocket });
          reject(e);
        }
      });
      r.on("response", (res) => {
        // From here on the caller reads the body and owns the release (a request keeps its
        // timeout until the body is read; a watch releases at once).
        responded = true;
        resolve({ req: r, res, release, timedOut: () => timedOut, secrets: settings.secrets });
      });
      r.end(payload);
    });
  }

  #url(path: string, query: Query | undefined): URL {
    const url = new URL(this.host);
    url.pathname = `${this.#prefix}${path}`;
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    return url;
  }

  /** Maps a low-level error to TransportError, or to the caller's abort reason. */
  #failure(e: unknown, method: string, path: string, signal: AbortSignal | undefined): unknown {
    if (e instanceof ApiError || e instanceof TransportError) return e;
    if (signal?.aborted) return signal.reason;
    if (e instanceof TimeoutMarker)
      return new TransportError({ failure: "timeout", method, path, message: e.message, cause: e });
    if (e instanceof WatchDecodeError)
      return new TransportError({ failure: "decode", method, path, message: e.message, cause: e });
    const code = (e as NodeJS.ErrnoException | undefined)?.code ?? "";
    const message = e instanceof Error ? e.message : String(e);
    return new TransportError({ failure: classify(code, message), method, path, message, cause: e });
  }
}

function classify(code: string, message: string): TransportFailure {
  if (["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"].includes(code))
    return "connect";
  if (["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE"].includes(code)) return "reset";
  if (code === "ETIMEDOUT") return "timeout";
  if (message === "aborted" || message === "socket hang up") return "reset";
  return "other";
}

function headerOf(res: http.IncomingMessage, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}
