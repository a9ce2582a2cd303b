/**
 * Which AWS account a managed object's calls go to ({@link AccountResolver} of the shared flow):
 * its `spec.accountRef`, else its namespace's `compute.cloud.com/account` annotation, else the
 * operator's own credentials (refused with `--require-account`). An account the namespace may
 * not use is refused for good (AccountNotAllowed) and one that is missing or not Ready holds the
 * object back (AccountNotReady); neither ever falls back to other credentials. Everything is read
 * from the shared cache: resolving makes no Kubernetes request and no AWS call (the AwsAccount
 * controller checks the accounts; the operator's own account ID is asked once).
 */
import { GetCallerIdentityCommand } from "@aws-sdk/client-sts";
import {
  ACCOUNT_ANNOTATION,
  AwsAccountResource,
  ConditionType,
  getCondition,
  type AwsAccount,
} from "../api/v1/index.ts";
import type { AwsClientSource } from "../aws/clients.ts";
import type { AccountResolver } from "../reconcilers/common/account.ts";
import { Reason } from "../reconcilers/common/reasons.ts";
import {
  InvalidSpecError,
  NotReadyRetryError,
  type ManagedObject,
  type ObjectAccount,
} from "../reconcilers/common/driver.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Request } from "../runtime/controller/reconciler.ts";
import type { KubeObject, ResourceType } from "../runtime/kube/object.ts";
import type { Logger } from "../runtime/logging.ts";
import { namespaceAllowed } from "./selection.ts";
import type { AccountSessions } from "./sessions.ts";

/** A Namespace as the resolver reads it. */
export type NamespaceObject = KubeObject;

/** Core namespaces, read through the shared cache (their account annotation and labels). */
export const NamespaceResource: ResourceType = Object.freeze({
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
});

const keys = (objects: readonly Readonly<ManagedObject>[]): Request[] =>
  objects.map((o) => ({ namespace: o.metadata.namespace ?? "", name: o.metadata.name ?? "" }));

/** The account name `obj` refers to, if any: its accountRef, else its namespace's annotation. */
export function accountNameOf(
  obj: Pick<ManagedObject, "spec">,
  namespace: Readonly<NamespaceObject> | undefined,
): string | undefined {
  const ref = obj.spec.accountRef?.name;
  if (ref !== undefined && ref !== "") return ref;
  const annotated = namespace?.metadata.annotations?.[ACCOUNT_ANNOTATION];
  return annotated !== undefined && annotated !== "" ? annotated : undefined;
}

/**
 * Whether `account` is Ready for its current spec, with a known account ID. The start of a
 * deletion bumps the generation without changing the spec: a deleting account stays usable, so
 * its objects can still delete their resources.
 */
export function accountReady(account: Readonly<AwsAccount>): boolean {
  const ready = getCondition(account.status?.conditions, ConditionType.Ready);
  const current =
    ready?.observedGeneration === (account.metadata.generation ?? 0) ||
    account.metadata.deletionTimestamp !== undefined;
  return ready?.status === "True" && current && account.status?.accountId !== undefined;
}

/** Options of {@link CacheAccountResolver}. */
export interface CacheAccountResolverOptions {
  /** AwsAccounts by name, from the shared cache. */
  accounts: (name: string) => Readonly<AwsAccount> | undefined;
  /** Namespaces by name, from the shared cache. */
  namespaces: (name: string) => Readonly<NamespaceObject> | undefined;
  sessions: AccountSessions;
  /** The operator's own clients. */
  own: AwsClientSource;
  /** Refuse objects without an account (`--require-account`). */
  requireAccount: boolean;
  clock: Clock;
  logger: Logger;
}

/** How long a failed lookup of the operator's own account ID is not repeated, in ms. */
const OWN_IDENTITY_RETRY_MS = 60_000;

/** See the module comment. */
export class CacheAccountResolver implements AccountResolver {
  readonly #o: CacheAccountResolverOptions;
  #ownId: string | undefined;
  #ownLookup: Promise<string | undefined> | undefined;
  #ownFailedAt = -Infinity;

  constructor(opts: CacheAccountResolverOptions) {
    this.#o = opts;
  }

  readonly sources = [
    {
      resource: AwsAccountResource,
      affected: (account: KubeObject, objects: readonly Readonly<ManagedObject>[]): Request[] =>
        keys(
          objects.filter(
            (o) => accountNameOf(o, this.#o.namespaces(o.metadata.namespace ?? "")) === account.metadata.name,
          ),
        ),
    },
    {
      resource: NamespaceResource,
      affected: (ns: KubeObject, objects: readonly Readonly<ManagedObject>[]): Request[] =>
        keys(objects.filter((o) => o.metadata.namespace === ns.metadata.name)),
    },
  ];

  accountNameFromCache(obj: ManagedObject): string | undefined {
    const namespace = this.#o.namespaces(obj.metadata.namespace ?? "");
    if (namespace === undefined) return undefined;
    const name = accountNameOf(obj, namespace);
    if (name !== undefined) return name;
    return this.#o.requireAccount ? undefined : "";
  }

  async resolve(obj: ManagedObject): Promise<ObjectAccount> {
    const nsName = obj.metadata.namespace ?? "";
    const namespace = this.#o.namespaces(nsName);
    if (namespace === undefined) {
      // Without the namespace its annotation is unknown: never guess the operator's own account.
      throw new NotReadyRetryError(Reason.AccountNotReady, `namespace ${nsName} is not in the cache yet`);
    }
    const name = accountNameOf(obj, namespace);
    if (name === undefined) {
      if (this.#o.requireAccount) {
        throw new InvalidSpecError(
          Reason.AccountRequired,
          `the object names no AwsAccount (spec.accountRef, or the ${ACCOUNT_ANNOTATION} annotation of ` +
            `namespace ${nsName}) and the operator runs with --require-account: it does not act with its own credentials`,
          { notReady: true },
        );
      }
      return { name: undefined, accountId: await this.#ownAccountId(), aws: this.#o.own };
    }
    const account = this.#o.accounts(name);
    if (account === undefined) {
      throw new NotReadyRetryError(Reason.AccountNotReady, `AwsAccount ${name} does not exist`);
    }
    if (
      !namespaceAllowed(account.spec.allowedNamespaces, {
        name: nsName,
        labels: namespace.metadata.labels ?? {},
      })
    ) {
      throw new InvalidSpecError(
        Reason.AccountNotAllowed,
        `AwsAccount ${name} does not allow namespace ${nsName} (see its spec.allowedNamespaces)`,
        { notReady: true },
      );
    }
    if (!accountReady(account)) {
      const ready = getCondition(account.status?.conditions, ConditionType.Ready);
      const why =
        ready !== undefined && ready.status !== "True" ? `: ${ready.reason}: ${ready.message}` : " yet";
      throw new NotReadyRetryError(Reason.AccountNotReady, `AwsAccount ${name} is not ready${why}`);
    }
    return {
      name,
      accountId: account.status?.accountId,
      aws: this.#o.sessions.entry(account).aws,
      adoption: account.spec.adoption,
    };
  }

  /** The clients acting with `account`'s assumed role (for reading its change-event queue). */
  clientsOf(account: Readonly<AwsAccount>): AwsClientSource {
    return this.#o.sessions.entry(account).aws;
  }

  /** The operator's own account ID: asked once (GetCallerIdentity); undefined while unknown. */
  async #ownAccountId(): Promise<string | undefined> {
    if (this.#ownId !== undefined) return this.#ownId;
    if (this.#o.clock.now() - this.#ownFailedAt < OWN_IDENTITY_RETRY_MS) return undefined;
    this.#ownLookup ??= (async () => {
      try {
        const out = await (
          await this.#o.own.client("sts", this.#o.sessions.stsRegion)
        ).send(new GetCallerIdentityCommand({}));
        this.#ownId = out.Account;
        return out.Account;
      } catch (err) {
        this.#ownFailedAt = this.#o.clock.now();
        this.#o.logger.warn({ err }, "could not tell the operator's own AWS account ID");
        return undefined;
      } finally {
        this.#ownLookup = undefined;
      }
    })();
    return this.#ownLookup;
  }
}
