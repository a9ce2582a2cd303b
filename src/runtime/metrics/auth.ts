/**
 * Delegated authentication and authorization for the metrics endpoint, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` does it: the bearer token is checked with a
 * TokenReview, then the user is authorised with a SubjectAccessReview for the request's verb on
 * the non-resource URL. Results are cached briefly so a scrape every few seconds costs the API
 * server nothing.
 */
import { createHash } from "node:crypto";
import { systemClock, type Clock } from "../clock.ts";
import { LruCache } from "../lru.ts";
import { silentLogger, type Logger } from "../logging.ts";
import type { KubeRequester } from "../kube/rest.ts";

/** The authenticated user, as TokenReview reports it. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The verdict for one request: the HTTP status to answer with when not allowed. */
export type AuthDecision =
  | { readonly allowed: true; readonly user: UserInfo }
  | { readonly allowed: false; readonly status: 401 | 403 | 500; readonly reason: string };

/** Options of {@link DelegatingAuth}. */
export interface DelegatingAuthOptions {
  client: KubeRequester;
  /** How long a TokenReview answer is reused. @default 60000 */
  authenticationTtlMs?: number;
  /** How long a rejected token stays rejected. @default 10000 */
  authenticationDeniedTtlMs?: number;
  /** How long an allowing SubjectAccessReview is reused. @default 60000 */
  authorizationAllowTtlMs?: number;
  /** How long a denying SubjectAccessReview is reused. @default 30000 */
  authorizationDenyTtlMs?: number;
  /** Entries per cache. @default 1024 */
  cacheSize?: number;
  /** Audiences to ask TokenReview for; empty means the API server's own. */
  audiences?: readonly string[];
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

interface SubjectAccessReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
}

type Authn = { ok: true; user: UserInfo } | { ok: false; reason: string };

/**
 * Authenticates bearer tokens and authorises them for non-resource URLs. Concurrent checks of
 * the same token or user share one API request. Errors talking to the API server are answered
 * with 500 and never cached.
 */
export class DelegatingAuth {
  readonly #client: KubeRequester;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #authnTtl: number;
  readonly #authnDenyTtl: number;
  readonly #authzAllowTtl: number;
  readonly #authzDenyTtl: number;
  readonly #audiences: readonly string[];
  readonly #authn: LruCache<string, Authn>;
  readonly #authz: LruCache<string, { allowed: boolean; reason: string }>;
  readonly #inflight = new Map<string, Promise<unknown>>();

  constructor(opts: DelegatingAuthOptions) {
    this.#client = opts.client;
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).child({ component: "metrics-auth" });
    this.#authnTtl = opts.authenticationTtlMs ?? 60_000;
    this.#authnDenyTtl = opts.authenticationDeniedTtlMs ?? 10_000;
    this.#authzAllowTtl = opts.authorizationAllowTtlMs ?? 60_000;
    this.#authzDenyTtl = opts.authorizationDenyTtlMs ?? 30_000;
    this.#audiences = opts.audiences ?? [];
    this.#authn = new LruCache(opts.cacheSize ?? 1024);
    this.#authz = new LruCache(opts.cacheSize ?? 1024);
  }

  /**
   * Decides on a request from its `Authorization` header, HTTP method and path. Never throws.
   * 401 without a valid bearer token, 403 when RBAC denies, 500 when the API server could not
   * be asked.
   */
  async check(authorization: string | undefined, method: string, path: string): Promise<AuthDecision> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    const token = m?.[1];
    if (token === undefined) return { allowed: false, status: 401, reason: "no bearer token" };
    let authn: Authn;
    try {
      authn = await this.#authenticate(token);
    } catch (err) {
      this.#log.error({ err }, "TokenReview failed");
      return { allowed: false, status: 500, reason: "authentication failed" };
    }
    if (!authn.ok) return { allowed: false, status: 401, reason: authn.reason };
    const verb = verbOf(method);
    let authz: { allowed: boolean; reason: string };
    try {
      authz = await this.#authorize(authn.user, verb, path);
    } catch (err) {
      this.#log.error({ err }, "SubjectAccessReview failed");
      return { allowed: false, status: 500, reason: "authorization failed" };
    }
    if (!authz.allowed) {
      return {
        allowed: false,
        status: 403,
        reason: `user "${authn.user.username}" cannot ${verb} path "${path}"${authz.reason ? `: ${authz.reason}` : ""}`,
      };
    }
    return { allowed: true, user: authn.user };
  }

  async #authenticate(token: string): Promise<Authn> {
    const key = createHash("sha256").update(token).digest("hex");
    const cached = this.#authn.get(key, this.#clock.now());
    if (cached !== undefined) return cached;
    return this.#once(`authn:${key}`, async () => {
      const review = await this.#client.request<{ status?: TokenReviewStatus }>({
        method: "POST",
        path: "/apis/authentication.k8s.io/v1/tokenreviews",
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenReview",
          spec: { token, ...(this.#audiences.length > 0 ? { audiences: this.#audiences } : {}) },
        },
      });
      const s = review.status ?? {};
      const result: Authn =
        s.authenticated === true && s.user?.username
          ? {
              ok: true,
              user: {
                username: s.user.username,
                ...(s.user.uid !== undefined ? { uid: s.user.uid } : {}),
                ...(s.user.groups !== undefined ? { groups: s.user.groups } : {}),
                ...(s.user.extra !== undefined ? { extra: s.user.extra } : {}),
              },
            }
          : { ok: false, reason: s.error ? `invalid bearer token: ${s.error}` : "invalid bearer token" };
      this.#authn.set(key, result, this.#clock.now() + (result.ok ? this.#authnTtl : this.#authnDenyTtl));
      return result;
    });
  }

  async #authorize(
    user: UserInfo,
    verb: string,
    path: string,
  ): Promise<{ allowed: boolean; reason: string }> {
    const key = JSON.stringify([
      user.username,
      user.uid ?? "",
      [...(user.groups ?? [])].sort(),
      user.extra ?? {},
      verb,
      path,
    ]);
    const cached = this.#authz.get(key, this.#clock.now());
    if (cached !== undefined) return cached;
    return this.#once(`authz:${key}`, async () => {
      const review = await this.#client.request<{ status?: SubjectAccessReviewStatus }>({
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: user.username,
            ...(user.uid !== undefined ? { uid: user.uid } : {}),
            ...(user.groups !== undefined ? { groups: user.groups } : {}),
            ...(user.extra !== undefined ? { extra: user.extra } : {}),
            nonResourceAttributes: { path, verb },
          },
        },
      });
      const allowed = review.status?.allowed === true && review.status.denied !== true;
      const result = { allowed, reason: review.status?.reason ?? "" };
      this.#authz.set(key, result, this.#clock.now() + (allowed ? this.#authzAllowTtl : this.#authzDenyTtl));
      return result;
    });
  }

  #once<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const existing = this.#inflight.get(key);
    if (existing !== undefined) return existing as Promise<T>;
    const p = fn().finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, p);
    return p;
  }
}

/** The Kubernetes verb of an HTTP method on a non-resource URL (as the API server maps them). */
export function verbOf(method: string): string {
  switch (method.toUpperCase()) {
    case "GET":
    case "HEAD":
      return "get";
    case "POST":
      return "post";
    case "PUT":
      return "put";
    case "PATCH":
      return "patch";
    case "DELETE":
      return "delete";
    default:
      return method.toLowerCase();
  }
}
