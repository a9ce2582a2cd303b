/**
 * The AWS client factory: one SDK client per service and region, built once and reused, every
 * one with the same timeouts, retry policy, rate budget, metrics and redacting logger.
 *
 * Credentials come only from the SDK's default provider chain (environment variables, shared
 * config and credentials files with profiles, web identity token files as used by IRSA, ECS
 * container credentials, EC2 instance metadata). There is deliberately no option taking keys.
 *
 * Proxies: HTTPS_PROXY, HTTP_PROXY and NO_PROXY as Go programs read them (runtime/proxy.ts),
 * through Node's own proxy support in the clients' agents.
 *
 * Endpoints: the SDK itself honours `AWS_ENDPOINT_URL`, the per-service `AWS_ENDPOINT_URL_EC2`,
 * `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_SQS`, `endpoint_url` in the shared config file and
 * `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`; the factory does not re-implement that. It only adds
 * path-style S3 addressing when an override is in effect (emulators such as moto cannot serve
 * virtual-hosted bucket names) and lets an explicit {@link AwsClientsOptions.endpoint} win.
 */

import type { AwsCredentialIdentityProvider, MiddlewareStack } from "@smithy/types";
import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../runtime/clock.ts";
import { proxyEnvironment, sharedAgentProxyOptions } from "../runtime/proxy.ts";
import { silentLogger, type Logger } from "../runtime/logging.ts";
import { AwsError } from "./errors.ts";
import { AwsMetrics } from "./metrics.ts";
import { instrumentClient, type BudgetPermit } from "./middleware.ts";
import {
  budgetDraws,
  DEFAULT_POLL_BUDGET_SHARE,
  DEFAULT_RATE_BUDGETS,
  type BudgetName,
  type BudgetSize,
} from "./budget-plan.ts";
import { RateBudget } from "./rate-budget.ts";
import { sdkLogger } from "./sdk-logger.ts";
import {
  AWS_SERVICE_TABLE,
  isRegionName,
  type AwsClientOf,
  type AwsService,
  type BaseClientConfig,
} from "./service.ts";

/**
 * The product every client adds to its User-Agent header. CloudTrail records that header as
 * `userAgent`, which is how the operator tells its own calls in change events (src/change-events).
 */
export const OPERATOR_USER_AGENT = "kubeprovisioner";

/**
 * How S3 requests name the bucket (`--aws-s3-addressing-style`), spelled as the AWS CLI's
 * `s3.addressing_style`: `auto` leaves the choice to {@link AwsClientsOptions.s3ForcePathStyle}'s
 * default, `path` is `https://host/bucket`, `virtual` is `https://bucket.host/`.
 */
export const S3_ADDRESSING_STYLES = ["auto", "path", "virtual"] as const;
/** One of {@link S3_ADDRESSING_STYLES}. */
export type S3AddressingStyle = (typeof S3_ADDRESSING_STYLES)[number];

/** The {@link AwsClientsOptions.s3ForcePathStyle} of `style`; `undefined` (the default) for `auto`. */
export function s3ForcePathStyleOf(style: S3AddressingStyle): boolean | undefined {
  return style === "auto" ? undefined : style === "path";
}

/** Options for {@link AwsClients}. Normalized once in the constructor. */
export interface AwsClientsOptions {
  /** Deadline for one HTTP attempt, from sending to the full response. @default 10000 */
  requestTimeoutMs?: number;
  /** Deadline for establishing the TCP (and TLS) connection. @default 3000 */
  connectionTimeoutMs?: number;
  /**
   * SDK attempts per call (retry mode `standard`), first attempt included. Small on purpose: the
   * controller's work queue does the long retries with backoff. @default 3
   */
  maxAttempts?: number;
  /**
   * One endpoint for every service, overriding the SDK's own resolution (environment and shared
   * config). Leave unset in production; the environment variables are the usual way.
   */
  endpoint?: string;
  /**
   * Path-style S3 addressing (`https://host/bucket`). @default true when an endpoint override
   * for S3 is in effect (explicit, `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`), else false.
   * Set it explicitly when the override comes from the shared config file (true), or when the
   * override serves bucket host names, as an S3 interface VPC endpoint does (false).
   */
  s3ForcePathStyle?: boolean;
  /**
   * Rate budgets by name (see budget-plan.ts; each applies to every region separately), or
   * `false` for none. Names left out keep {@link DEFAULT_RATE_BUDGETS}; a partial entry keeps the
   * default's other field.
   */
  rateBudget?: Partial<Record<BudgetName, Partial<BudgetSize>>> | false;
  /**
   * The longest a call waits for its rate-budget permits. A call that would wait longer is not
   * sent: it books the next free permits and throws NoPermitYetError, and the reconcile that
   * made it gives its worker back until then. @default DEFAULT_MAX_PERMIT_WAIT_MS
   */
  maxPermitWaitMs?: number;
  /**
   * The share of every rate budget polls may take, in (0, 1]; real work may always use the whole
   * rate and goes first (./rate-budget.ts). @default DEFAULT_POLL_BUDGET_SHARE
   */
  pollShare?: number;
  /** Sockets per client and protocol; keep-alive is on. @default 50 */
  maxSockets?: number;
  /** @default defaultRegistry */
  registry?: Registry;
  /** SDK log lines go here, redacted, at debug (see sdk-logger.ts). @default silentLogger */
  logger?: Logger;
  /** Used for the rate budget and durations. @default systemClock */
  clock?: Clock;
  /**
   * Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read (Go's rules, as the AWS SDK for Go
   * applies them: see runtime/proxy.ts). @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The default longest wait for a rate-budget permit: 4 RunInstances permits at EC2's 2 per
 * second, or 40 describe calls at 20 per second, more than 16 workers send at once; so only
 * a budget that many calls queue on (RunInstances, StartInstances) defers calls.
 */
export const DEFAULT_MAX_PERMIT_WAIT_MS = 2000;

/**
 * What the reconcilers depend on: a client per service and region. The factory answers with a
 * promise: it imports a service's SDK module when the first client of the service is asked for
 * (see service.ts). Tests may supply any object of this shape, and may answer at once.
 */
export interface AwsClientSource {
  client<S extends AwsService>(service: S, region: string): Promise<AwsClientOf<S>> | AwsClientOf<S>;
}

type AnyClient = AwsClientOf<AwsService>;

/**
 * An AWS account the factory serves clients for with other credentials than its own (an assumed
 * role): see {@link AwsClients.forAccount}.
 */
export interface AccountScope {
  /** Identifies the credentials: clients are cached per key, service and region. Not empty. */
  readonly key: string;
  /**
   * The AWS account ID the credentials act in: rate budgets are kept per account ID, service and
   * region, since AWS's limits are per account (two roles in one account share them).
   */
  readonly accountId: string;
  /** Resolves (and refreshes) the credentials; called by the SDK when its cached ones near expiry. */
  readonly credentials: AwsCredentialIdentityProvider;
}

/**
 * Builds and caches SDK clients. The first client of a service imports the service's SDK module
 * (logged at debug, "loaded the AWS SDK client module"); a service no object needs is never
 * loaded. Every client it returns:
 * - resolves credentials through the default provider chain, lazily on the first call, and
 *   refreshes them before expiry (web identity and instance credentials);
 * - times out each attempt ({@link AwsClientsOptions.requestTimeoutMs}) and each connect;
 * - retries in SDK `standard` mode at most {@link AwsClientsOptions.maxAttempts} times in all;
 * - waits, before each attempt, for the {@link RateBudget}s of the region the call draws from
 *   (one per EC2 action, sized by its class; one per service for S3 and SQS; budget-plan.ts), in
 *   the polls' share of each when the call is made by a poll (./poll-scope.ts);
 * - records `aws_api_requests_total` and `aws_api_request_duration_seconds`;
 * - throws only {@link AwsError}, with the SDK exception as `cause`.
 *
 * Clients of other accounts ({@link forAccount}) are the same, with the account's credentials
 * and the account's own rate budgets.
 *
 * Caveat: clients are never evicted (except by {@link dropAccount}); the number of accounts and
 * regions in use bounds the cache.
 */
export class AwsClients implements AwsClientSource {
  readonly metrics: AwsMetrics;
  readonly #opts: {
    requestTimeoutMs: number;
    connectionTimeoutMs: number;
    maxAttempts: number;
    endpoint: string | undefined;
    s3ForcePathStyle: boolean;
    maxSockets: number;
    proxy: { proxyEnv?: NodeJS.ProcessEnv };
    budgets: Readonly<Record<BudgetName, BudgetSize>> | false;
    maxPermitWaitMs: number;
    pollShare: number;
    logger: Logger;
    clock: Clock;
  };
  readonly #clients = new Map<string, Promise<AnyClient>>();
  readonly #budgets = new Map<string, RateBudget>();
  readonly #loaded = new Set<AwsService>();
  #destroyed = false;

  constructor(options: AwsClientsOptions = {}) {
    const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    const connectionTimeoutMs = options.connectionTimeoutMs ?? 3_000;
    const maxAttempts = options.maxAttempts ?? 3;
    if (!(requestTimeoutMs > 0))
      throw new RangeError(`requestTimeoutMs must be > 0, got ${requestTimeoutMs}`);
    if (!(connectionTimeoutMs > 0))
      throw new RangeError(`connectionTimeoutMs must be > 0, got ${connectionTimeoutMs}`);
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
      throw new RangeError(`maxAttempts must be an integer >= 1`);
    if (options.endpoint !== undefined) new URL(options.endpoint); // throws TypeError on a malformed URL
    const pollShare = options.pollShare ?? DEFAULT_POLL_BUDGET_SHARE;
    if (!(pollShare > 0 && pollShare <= 1))
      throw new RangeError(`pollShare must be in (0, 1], got ${pollShare}`);
    this.metrics = new AwsMetrics(options.registry !== undefined ? { registry: options.registry } : {});
    this.#opts = {
      requestTimeoutMs,
      connectionTimeoutMs,
      maxAttempts,
      endpoint: options.endpoint,
      s3ForcePathStyle: options.s3ForcePathStyle ?? s3EndpointOverridden(options.endpoint, process.env),
      maxSockets: options.maxSockets ?? 50,
      proxy: sharedAgentProxyOptions(proxyEnvironment(options.env ?? process.env)),
      budgets: options.rateBudget === false ? false : withDefaults(options.rateBudget ?? {}),
      maxPermitWaitMs: options.maxPermitWaitMs ?? DEFAULT_MAX_PERMIT_WAIT_MS,
      pollShare,
      logger: options.logger ?? silentLogger,
      clock: options.clock ?? systemClock,
    };
  }

  /** The client of `service` for `region`, created on first use (see AWS_SERVICE_TABLE). */
  client<S extends AwsService>(service: S, region: string): Promise<AwsClientOf<S>> {
    return this.#client(service, region, undefined);
  }

  /**
   * The clients of another account: built like this factory's own, with `scope.credentials`
   * instead of the default provider chain, cached per scope key, service and region, drawing from
   * the rate budgets of `scope.accountId`. The source stays valid across {@link dropAccount}.
   */
  forAccount(scope: AccountScope): AwsClientSource {
    if (scope.key === "") throw new RangeError("an account scope needs a key");
    return { client: (service, region) => this.#client(service, region, scope) };
  }

  /**
   * Closes the cached clients of account scope `key`, so the next call builds them afresh (the
   * SDK caches credentials in each client until they near expiry: a changed role needs new ones).
   */
  dropAccount(key: string): void {
    const prefix = `${key}\0`;
    for (const [k, client] of this.#clients) {
      if (k.startsWith(prefix)) {
        destroyWhenBuilt(client);
        this.#clients.delete(k);
      }
    }
  }

  async #client<S extends AwsService>(
    service: S,
    region: string,
    scope: AccountScope | undefined,
  ): Promise<AwsClientOf<S>> {
    if (this.#destroyed) throw new Error("AwsClients used after destroy()");
    if (!isRegionName(region)) {
      throw new AwsError({
        kind: "terminal",
        code: "InvalidRegion",
        service,
        operation: "unknown",
        message: `${service.toUpperCase()} client failed with InvalidRegion: ${JSON.stringify(region)} is not an AWS region name`,
      });
    }
    const key = scope === undefined ? `${service}/${region}` : `${scope.key}\0${service}/${region}`;
    let client = this.#clients.get(key);
    if (client === undefined) {
      client = this.#build(service, region, scope);
      this.#clients.set(key, client);
      // A module that failed to load is imported afresh by the next call.
      client.catch(() => {
        if (this.#clients.get(key) === client) this.#clients.delete(key);
      });
    }
    return (await client) as AwsClientOf<S>;
  }

  async #build(service: AwsService, region: string, scope: AccountScope | undefined): Promise<AnyClient> {
    const build = AWS_SERVICE_TABLE[service].build as (
      config: BaseClientConfig,
      settings: { s3ForcePathStyle: boolean },
    ) => Promise<AnyClient>;
    const config = this.#baseConfig(region);
    if (scope !== undefined) config.credentials = scope.credentials;
    const client = await build(config, { s3ForcePathStyle: this.#opts.s3ForcePathStyle });
    if (!this.#loaded.has(service)) {
      this.#loaded.add(service);
      this.#opts.logger.debug({ service }, "loaded the AWS SDK client module");
    }
    if (this.#destroyed) {
      client.destroy();
      throw new Error("AwsClients used after destroy()");
    }
    this.#instrument(
      client.middlewareStack as MiddlewareStack<object, object>,
      service,
      region,
      scope?.accountId,
    );
    return client;
  }

  /** The services whose SDK client module has been loaded, in the order they were. */
  loadedServices(): AwsService[] {
    return [...this.#loaded];
  }

  /**
   * The rate budget `key` of a service in a region (`s3`, `sqs`, or an EC2 action such as
   * `DescribeInstances` and `RunInstances/instances`), if budgets are enabled and a call has
   * drawn from it. `accountId`: the budget of an account served through {@link forAccount}.
   */
  budget(service: AwsService, region: string, key: string, accountId?: string): RateBudget | undefined {
    return this.#budgets.get(budgetId(service, region, key, accountId));
  }

  /**
   * Closes every client's sockets and fails calls waiting for a permit. Clients handed out
   * before stop working; asking for a client afterwards throws.
   */
  destroy(): void {
    this.#destroyed = true;
    for (const client of this.#clients.values()) destroyWhenBuilt(client);
    this.#clients.clear();
    const closed = new Error("AWS clients destroyed");
    for (const budget of this.#budgets.values()) budget.cancelAll(closed);
  }

  #instrument<I extends object, O extends object>(
    stack: MiddlewareStack<I, O>,
    service: AwsService,
    region: string,
    accountId: string | undefined,
  ): void {
    const sizes = this.#opts.budgets;
    instrumentClient(stack, {
      service,
      region,
      metrics: this.metrics,
      clock: this.#opts.clock,
      ...(sizes !== false
        ? {
            budgets: (operation: string, input: unknown): BudgetPermit[] =>
              budgetDraws(service, operation, input).map((d) => ({
                budget: this.#budgetFor(service, region, d.key, sizes[d.name], accountId),
                label: d.key,
                cost: d.cost,
              })),
            maxPermitWaitMs: this.#opts.maxPermitWaitMs,
          }
        : {}),
    });
  }

  #budgetFor(
    service: AwsService,
    region: string,
    key: string,
    size: BudgetSize,
    accountId: string | undefined,
  ): RateBudget {
    const id = budgetId(service, region, key, accountId);
    let budget = this.#budgets.get(id);
    if (budget === undefined) {
      // The rate gauge carries no account label: it reports the operator's own account's budgets.
      const report = accountId === undefined;
      budget = new RateBudget({
        ...size,
        pollShare: this.#opts.pollShare,
        name:
          accountId === undefined
            ? `${service}/${region}/${key}`
            : `${accountId}/${service}/${region}/${key}`,
        clock: this.#opts.clock,
        ...(report
          ? { onRateChange: (rate: number) => this.metrics.setBudgetRate(service, region, key, rate) }
          : {}),
      });
      if (report) this.metrics.setBudgetRate(service, region, key, budget.rate);
      this.#budgets.set(id, budget);
    }
    return budget;
  }

  #baseConfig(region: string): BaseClientConfig {
    const logger = sdkLogger(this.#opts.logger);
    const agent = { keepAlive: true, maxSockets: this.#opts.maxSockets, ...this.#opts.proxy };
    return {
      region,
      maxAttempts: this.#opts.maxAttempts,
      retryMode: "standard",
      customUserAgent: OPERATOR_USER_AGENT,
      logger,
      requestHandler: {
        requestTimeout: this.#opts.requestTimeoutMs,
        connectionTimeout: this.#opts.connectionTimeoutMs,
        // Without this the SDK only logs a warning when requestTimeout passes.
        throwOnRequestTimeout: true,
        httpAgent: agent,
        httpsAgent: agent,
        logger,
      },
      ...(this.#opts.endpoint !== undefined ? { endpoint: this.#opts.endpoint } : {}),
    };
  }
}

/** Closes a client once it is built; one that failed to build holds nothing to close. */
function destroyWhenBuilt(client: Promise<AnyClient>): void {
  client.then(
    (c) => c.destroy(),
    () => undefined,
  );
}

/** The map key of a rate budget; the operator's own account's budgets have no account part. */
function budgetId(service: AwsService, region: string, key: string, accountId: string | undefined): string {
  return accountId === undefined
    ? `${service}/${region}/${key}`
    : `${accountId}\0${service}/${region}/${key}`;
}

/** Every budget's size: the given fields over {@link DEFAULT_RATE_BUDGETS}. */
function withDefaults(
  given: Partial<Record<BudgetName, Partial<BudgetSize>>>,
): Record<BudgetName, BudgetSize> {
  const out = {} as Record<BudgetName, BudgetSize>;
  for (const [name, size] of Object.entries(DEFAULT_RATE_BUDGETS) as [BudgetName, BudgetSize][]) {
    out[name] = { ...size, ...given[name] };
  }
  return out;
}

/**
 * Whether S3 requests go to an overridden endpoint: an explicit one, or the environment
 * variables the SDK reads (unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true).
 */
export function s3EndpointOverridden(
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (explicit !== undefined) return true;
  if ((env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS ?? "").toLowerCase() === "true") return false;
  return Boolean(env[`AWS_ENDPOINT_URL_${AWS_SERVICE_TABLE.s3.endpointEnvSuffix}`] || env.AWS_ENDPOINT_URL);
}
