/**
 * What a command of the program (`plan`, `export`) reads with: the operator's own parts, built
 * read-only. The kubeconfig is found as the operator finds it; the informer cache holds the
 * managed kinds, the kinds they reference, the AwsAccounts and the Namespaces (list and watch
 * only); the AWS clients resolve credentials as the operator's do, with its rate budgets; each
 * object's account is resolved from the AwsAccounts' status as the operator wrote it. Nothing
 * here writes to Kubernetes: there is no controller, no leader election and no Event (the
 * recorder drops them), and the only other Kubernetes read is an AwsAccount's Secret.
 */
import { Registry } from "prom-client";
import { accountResolver, type CacheAccountResolver } from "../accounts/index.ts";
import { AwsAccountResource } from "../api/v1/aws-account.ts";
import { AwsClients, s3ForcePathStyleOf } from "../aws/clients.ts";
import { cacheOptions } from "../controllers.ts";
import { apiClient, loadKubeConfig } from "../kubeconfig-source.ts";
import { KINDS } from "../kinds.ts";
import type { KindModule } from "../reconcilers/common/kind.ts";
import { CacheOwnerDirectory } from "../reconcilers/common/owner-directory.ts";
import type { InstallAdoption } from "../reconcilers/common/ownership.ts";
import type { ReconcilerDeps } from "../reconcilers/common/setup.ts";
import { tagPolicy } from "../reconcilers/common/tags.ts";
import type { TagMap } from "../aws/ownership.ts";
import { InformerFactory } from "../runtime/cache/factory.ts";
import { Client } from "../runtime/client/index.ts";
import { systemClock } from "../runtime/clock.ts";
import type { KubeConfig } from "../runtime/kube/kubeconfig.ts";
import type { RestClient } from "../runtime/kube/rest.ts";
import type { Logger } from "../runtime/logging.ts";

/** How a command reads, as the operator's install is configured (the flags of the same names). */
export interface SessionOptions {
  readonly kubeconfig: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** The User-Agent of its Kubernetes requests, which names the command in the API server's audit log. */
  readonly userAgent: string;
  /** `--aws-region`: the STS region of the credential chain. */
  readonly awsRegion?: string | undefined;
  /** `--adoption` and `--adoption-namespaces`. */
  readonly adoption: InstallAdoption;
  /** `--default-tags` and `--ignore-tag-prefixes`. */
  readonly defaultTags?: Readonly<TagMap> | undefined;
  readonly ignoreTagPrefixes?: readonly string[] | undefined;
  /** `--require-account`. */
  readonly requireAccount?: boolean;
}

/** A read-only session; {@link close} stops the cache's watches. */
export interface Session {
  readonly kubeconfig: KubeConfig;
  readonly rest: RestClient;
  readonly client: Client;
  /** What a kind's planner is built from. */
  readonly deps: ReconcilerDeps;
  /** Each object's account, and the clients of an AwsAccount. */
  readonly accounts: CacheAccountResolver;
  readonly kinds: readonly KindModule[];
  close(): void;
}

/** Opens a session and waits until its cache has synced; `signal` aborts the wait. */
export async function openSession(opts: SessionOptions, signal: AbortSignal): Promise<Session> {
  const { logger } = opts;
  const registry = new Registry();
  const kubeconfig = await loadKubeConfig(opts.kubeconfig, opts.env);
  const rest = apiClient(kubeconfig, {
    registry,
    logger: logger.child({ component: "rest" }),
    userAgent: opts.userAgent,
  });
  const informers = new InformerFactory({
    rest,
    ...cacheOptions([]),
    logger: logger.child({ component: "cache" }),
    registry,
  });
  const client = new Client({ rest, cache: informers });
  if (opts.awsRegion !== undefined && !opts.env.AWS_REGION) process.env.AWS_REGION = opts.awsRegion;
  const aws = new AwsClients({
    logger: logger.child({ component: "aws" }),
    registry,
    s3ForcePathStyle: s3ForcePathStyleOf("auto"),
    env: opts.env,
  });
  const kinds = KINDS;
  for (const kind of kinds) {
    informers.informerFor(kind.resource);
    for (const ref of kind.references) informers.informerFor(ref);
  }
  informers.informerFor(AwsAccountResource);
  const processDeps = {
    client,
    informers,
    events: { recorderFor: () => ({ event: () => undefined }) },
    manager: { add: () => undefined },
    logger,
    registry,
    clock: systemClock,
  };
  const accounts = accountResolver({
    ...processDeps,
    aws,
    stsRegion: opts.awsRegion,
    requireAccount: opts.requireAccount ?? false,
  });
  const deps: ReconcilerDeps = {
    ...processDeps,
    aws,
    owners: new CacheOwnerDirectory({ client, kinds: kinds.map((k) => k.resource) }),
    adoption: opts.adoption,
    tagPolicy: tagPolicy({ defaultTags: opts.defaultTags, ignoredPrefixes: opts.ignoreTagPrefixes }),
    accounts,
    runningKinds: kinds.map((k) => k.resource.kind),
  };
  const stop = new AbortController();
  const cache = informers.start(stop.signal);
  cache.catch((err: unknown) => logger.error({ err }, "the cache stopped"));
  const onAbort = (): void => stop.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  if (!(await informers.waitForCacheSync(signal))) {
    stop.abort();
    throw new Error("the cache did not sync: the Kubernetes API server could not be listed");
  }
  return {
    kubeconfig,
    rest,
    client,
    deps,
    accounts,
    kinds,
    close: () => {
      signal.removeEventListener("abort", onAbort);
      stop.abort();
    },
  };
}
