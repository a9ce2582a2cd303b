/**
 * Where the reconcilers are wired into the manager. `main` calls {@link registerControllers}
 * once, before the manager starts, with everything a controller needs.
 */
import type { Registry } from "prom-client";
import { setupAccounts, type AccountClientFactory } from "./accounts/index.ts";
import { PollDemand } from "./aws/poll-demand.ts";
import { ChangeEvents } from "./change-events/index.ts";
import type { Options } from "./config/options.ts";
import { KINDS, selectKinds } from "./kinds.ts";
import {
  outputCacheIndexers,
  outputCacheNamespaces,
  outputCacheSelector,
} from "./reconcilers/common/outputs.ts";
import { CacheOwnerDirectory } from "./reconcilers/common/owner-directory.ts";
import type { ProcessDeps, ReconcilerDeps } from "./reconcilers/common/setup.ts";
import { tagPolicy } from "./reconcilers/common/tags.ts";
import type { InformerFactory, InformerFactoryOptions } from "./runtime/cache/factory.ts";
import { Client } from "./runtime/client/index.ts";
import type { Clock } from "./runtime/clock.ts";
import type { EventBroadcaster } from "./runtime/events/recorder.ts";
import type { RestClient } from "./runtime/kube/rest.ts";
import type { Logger } from "./runtime/logging.ts";
import type { Manager } from "./runtime/manager/manager.ts";

/** What the controllers are built from; all of it is shared process-wide. */
export interface ControllerDeps {
  readonly options: Options;
  readonly rest: RestClient;
  /** The shared informer cache; it is already added to the manager. */
  readonly informers: InformerFactory;
  /** Hand each controller `events.recorderFor("<name>-controller")`. */
  readonly events: EventBroadcaster;
  /** AWS SDK clients per account, service and region. */
  readonly aws: AccountClientFactory;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock: Clock;
  /** The operator's own Pod (the downward API's $POD_NAMESPACE and $POD_NAME), for Events about the process. */
  readonly pod?: { readonly namespace: string; readonly name: string } | undefined;
}

/**
 * How the shared cache holds each resource, for the InformerFactory: the ConfigMaps and Secrets
 * are watched only with the label the operator puts on the ones it writes, and indexed by their
 * controller, the Secrets only in `outputSecretNamespaces` (`--output-secret-namespaces`); each
 * kind's objects carry the indexes the kind asks for.
 */
export function cacheOptions(
  outputSecretNamespaces: readonly string[],
): Pick<InformerFactoryOptions, "labelSelectorFor" | "indexersFor" | "namespacesFor"> {
  return {
    labelSelectorFor: outputCacheSelector,
    indexersFor: (resource) =>
      outputCacheIndexers(resource) ??
      KINDS.find((k) => k.resource.group === resource.group && k.resource.plural === resource.plural)
        ?.indexers,
    namespacesFor: (resource) => outputCacheNamespaces(resource, outputSecretNamespaces),
  };
}

/**
 * Adds the controller of every kind `--controllers` enables to `manager` (leader-gated
 * runnables), and the AwsAccount controller. A kind left out is not even watched: the other
 * parts (accounts, change events, owner lookups) see only the enabled kinds.
 */
export function registerControllers(manager: Manager, deps: ControllerDeps): void {
  const kinds = selectKinds(deps.options.controllers);
  const client = new Client({ rest: deps.rest, cache: deps.informers });
  const processDeps: ProcessDeps = {
    client,
    informers: deps.informers,
    events: deps.events,
    manager,
    logger: deps.logger,
    registry: deps.registry,
    clock: deps.clock,
  };
  const accounts = setupAccounts({
    ...processDeps,
    aws: deps.aws,
    kinds: kinds.map((k) => k.resource),
    requireAccount: deps.options.requireAccount,
    checkIntervalMs: deps.options.pollIntervalMs,
    stsRegion: deps.options.awsRegion,
  });
  const changeEvents = new ChangeEvents({
    kinds,
    client,
    informers: deps.informers,
    queue: deps.options.changeEvents,
    aws: deps.aws,
    accountClients: (account) => accounts.clientsOf(account),
    pollIntervalWithEventsMs: deps.options.pollIntervalWithEventsMs,
    pollIntervalMs: deps.options.pollIntervalMs,
    region: deps.options.awsRegion,
    recorder: deps.events.recorderFor("change-events"),
    pod: deps.pod,
    registry: deps.registry,
    logger: deps.logger.child({ component: "change-events" }),
    clock: deps.clock,
  });
  manager.add(changeEvents);
  const shared: ReconcilerDeps = {
    ...processDeps,
    aws: deps.aws,
    owners: new CacheOwnerDirectory({
      client,
      kinds: kinds.map((k) => k.resource),
      namespaces: deps.options.watchNamespaces,
    }),
    adoption: { policy: deps.options.adoption, namespaces: deps.options.adoptionNamespaces },
    tagPolicy: tagPolicy({
      defaultTags: deps.options.defaultTags,
      ignoredPrefixes: deps.options.ignoreTagPrefixes,
    }),
    maxConcurrentReconciles: deps.options.maxConcurrentReconciles,
    pollIntervalMs: deps.options.pollIntervalMs,
    pendingInitialMs: deps.options.pendingPollInitialMs,
    pendingMaxMs: deps.options.pendingPollMaxMs,
    accounts,
    resync: changeEvents,
    polls: new PollDemand({ registry: deps.registry, logger: deps.logger.child({ component: "polls" }) }),
    outputSecretNamespaces: deps.options.outputSecretNamespaces,
    bulkTagReads: deps.options.bulkTagReads ? { windowMs: deps.options.bulkTagWindowMs } : undefined,
    runningKinds: kinds.map((k) => k.resource.kind),
  };
  for (const kind of kinds) kind.setup(shared);
}
