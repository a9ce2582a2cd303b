/**
 * Multi-account operation: the AwsAccount kind's controller, the shared sessions of its assumed
 * roles, and the resolver through which the managed kinds' flow finds each object's account.
 * {@link setupAccounts} wires them into the manager; src/controllers.ts calls it once.
 */
import { AwsAccountResource, awsAccountCrd, type AwsAccount } from "../api/v1/index.ts";
import { flowRules, type KubeRule } from "../reconcilers/common/kind.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import type { ProcessDeps } from "../reconcilers/common/setup.ts";
import { generationChanged, newControllerManagedBy } from "../runtime/controller/index.ts";
import type { KubeObject, ResourceType } from "../runtime/kube/object.ts";
import { AwsAccountReconciler, SecretUnavailableError } from "./controller.ts";
import { CacheAccountResolver, NamespaceResource, type NamespaceObject } from "./resolver.ts";
import { AccountSessions, type AccountClientFactory } from "./sessions.ts";

export { accountNameOf, accountReady, CacheAccountResolver, NamespaceResource } from "./resolver.ts";
export { AccountSessions, type AccountClientFactory } from "./sessions.ts";
export { AwsAccountReconciler } from "./controller.ts";

/** Core Secrets, read one at a time (never listed or cached): the external IDs. */
export const SecretResource: ResourceType = Object.freeze({
  group: "",
  version: "v1",
  plural: "secrets",
  kind: "Secret",
  namespaced: true,
});

/** The AwsAccount kind as the generators see it (src/gen): its CRD and the ClusterRole rules. */
export const awsAccountModule = Object.freeze({
  resource: AwsAccountResource,
  crd: awsAccountCrd,
  /** The AwsAccount controller's calls (the managed kinds' flow rules) and the namespace informer. */
  kubernetes: [
    ...flowRules(AwsAccountResource),
    {
      apiGroups: [""],
      resources: ["namespaces"],
      verbs: ["list", "watch"],
      why:
        "The namespace informer: an object's account may come from its namespace's " +
        "compute.cloud.com/account annotation, and an AwsAccount's allowedNamespaces may select " +
        "namespaces by label. Secrets holding external IDs are granted per namespace (values " +
        "awsAccounts.externalIdSecretNamespaces), never cluster-wide.",
    },
  ] satisfies KubeRule[],
});

/** What {@link setupAccounts} needs; shared process-wide. */
export interface AccountsDeps extends ProcessDeps {
  aws: AccountClientFactory;
  /** The managed kinds (the objects that use accounts). */
  kinds: readonly ResourceType[];
  /** Refuse objects without an account (`--require-account`). */
  requireAccount: boolean;
  /** How often a Ready AwsAccount is checked again, in ms. */
  checkIntervalMs: number;
  /** Region of the STS endpoint. @default $AWS_REGION, else us-east-1 */
  stsRegion?: string | undefined;
  /** Workers of the AwsAccount controller. @default 1 */
  maxConcurrentReconciles?: number;
}

/** The assumed-role sessions of the AwsAccounts, reading their external IDs from Secrets. */
function accountSessions(
  deps: Pick<AccountsDeps, "client" | "aws" | "stsRegion" | "clock">,
): AccountSessions {
  const secrets = deps.client.resource<KubeObject & { data?: Record<string, string> }>(SecretResource);
  return new AccountSessions({
    aws: deps.aws,
    stsRegion: deps.stsRegion ?? process.env.AWS_REGION ?? "us-east-1",
    clock: deps.clock,
    readSecret: async (ref) => {
      const where = `Secret ${ref.namespace}/${ref.name}`;
      let secret;
      try {
        secret = await secrets.getLive({ namespace: ref.namespace, name: ref.name });
      } catch (err) {
        throw new SecretUnavailableError(`cannot read ${where}: ${(err as Error).message}`, { cause: err });
      }
      const value = secret?.data?.[ref.key];
      if (secret === undefined) throw new SecretUnavailableError(`${where} does not exist`);
      if (value === undefined) throw new SecretUnavailableError(`${where} has no key ${ref.key}`);
      return Buffer.from(value, "base64").toString("utf8");
    },
  });
}

/**
 * The resolver of the managed kinds' accounts alone, without the AwsAccount controller: for a
 * reader of the accounts the operator checks (`kubeprovisioner plan`), which trusts the
 * AwsAccounts' status as the operator wrote it and writes nothing.
 */
export function accountResolver(
  deps: Pick<
    AccountsDeps,
    "client" | "informers" | "aws" | "stsRegion" | "clock" | "logger" | "requireAccount"
  >,
  sessions: AccountSessions = accountSessions(deps),
): CacheAccountResolver {
  const accounts = deps.client.resource<AwsAccount>(AwsAccountResource);
  const namespaces = deps.client.resource<NamespaceObject>(NamespaceResource);
  // Created now, so the cache's sync covers the namespaces before the first object is resolved.
  deps.informers.informerFor(NamespaceResource);
  return new CacheAccountResolver({
    accounts: (name) => accounts.get(name),
    namespaces: (name) => namespaces.get(name),
    sessions,
    own: deps.aws,
    requireAccount: deps.requireAccount,
    clock: deps.clock,
    logger: deps.logger.child({ component: "accounts" }),
  });
}

/** Adds the AwsAccount controller to the manager and returns the resolver for the managed kinds. */
export function setupAccounts(deps: AccountsDeps): CacheAccountResolver {
  const accounts = deps.client.resource<AwsAccount>(AwsAccountResource);
  const namespaces = deps.client.resource<NamespaceObject>(NamespaceResource);
  const sessions = accountSessions(deps);
  const resolver = accountResolver(deps, sessions);
  const nsOf = (name: string): Readonly<NamespaceObject> | undefined => namespaces.get(name);
  const reconciler = new AwsAccountReconciler({
    client: accounts,
    sessions,
    kinds: deps.kinds.map((resource) => {
      const objects = deps.client.resource<ManagedObject>(resource);
      return { kind: resource.kind, list: () => objects.list() };
    }),
    namespaces: nsOf,
    recorder: deps.events.recorderFor("awsaccount-controller"),
    clock: deps.clock,
    checkIntervalMs: deps.checkIntervalMs,
  });
  const builder = newControllerManagedBy(deps)
    .for<AwsAccount>(AwsAccountResource, { predicates: [generationChanged<AwsAccount>()] })
    .named("awsaccount")
    .withOptions({ maxConcurrentReconciles: deps.maxConcurrentReconciles ?? 1 });
  // A user of a deleting account that goes away (or drops the flow's finalizer) releases it.
  for (const kind of deps.kinds)
    builder.watches<ManagedObject>(kind, (obj) => reconciler.deletingAccountOf(obj));
  builder.complete(reconciler);
  return resolver;
}
