/**
 * The shared flow's account hook: before anything touches AWS, the account an object's calls go
 * to is resolved (by an {@link AccountResolver}, src/accounts) and checked against what the object
 * recorded. A refusal is an error the flow reports like any other: AccountRequired and
 * AccountNotAllowed are terminal ({@link InvalidSpecError}), AccountNotReady is retried with
 * backoff ({@link NotReadyRetryError}), and AccountChanged (checked here) is terminal.
 *
 * The hook runs before the finalizer is added, so an object refused its account never gets one
 * and is deleted at once; and it is skipped for deletions that make no AWS call (no finalizer,
 * or deletionPolicy Retain).
 */
import { FINALIZER } from "../../api/v1/index.ts";
import { Reason } from "./reasons.ts";
import { hasFinalizer } from "../../runtime/client/finalizers.ts";
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import { InvalidSpecError, recordedIdOf, type ManagedObject, type ObjectAccount } from "./driver.ts";

/** Resolves the account of a managed object. */
export interface AccountResolver {
  /**
   * The account `obj` uses: its `spec.accountRef`, else its namespace's account annotation,
   * else the operator's own. Throws InvalidSpecError (AccountRequired, AccountNotAllowed) or
   * NotReadyRetryError (AccountNotReady); never falls back to other credentials.
   */
  resolve(obj: ManagedObject, signal: AbortSignal): Promise<ObjectAccount>;
  /**
   * The name of the AwsAccount {@link resolve} would give `obj`, from the cache alone: "" for the
   * operator's own credentials, undefined when the cache cannot tell yet (its namespace is not
   * cached) or the object would be refused one. For counting, never for credentials.
   */
  accountNameFromCache?(obj: ManagedObject): string | undefined;
  /**
   * What an object's account depends on besides the object (the AwsAccounts, the namespaces): a
   * change of one of these (an account turns Ready or allows another namespace, a namespace's
   * annotation or labels change) enqueues the managed objects among `objects` it concerns, so
   * they are judged again at once.
   */
  readonly sources?: readonly {
    readonly resource: ResourceType;
    affected(changed: KubeObject, objects: readonly Readonly<ManagedObject>[]): Request[];
  }[];
}

/**
 * The account of this reconcile of `obj` (undefined without a resolver, or when the reconcile
 * makes no AWS call). `driver` names the status field of the resource's identifier.
 */
export async function accountForReconcile(
  resolver: AccountResolver | undefined,
  obj: ManagedObject,
  driver: { readonly idField: string; readonly noun: string },
  signal: AbortSignal,
): Promise<ObjectAccount | undefined> {
  if (resolver === undefined) return undefined;
  if (
    obj.metadata.deletionTimestamp !== undefined &&
    (!hasFinalizer(obj, FINALIZER) || obj.spec.deletionPolicy === "Retain")
  ) {
    return undefined;
  }
  const account = await resolver.resolve(obj, signal);
  const refusal = accountChange(obj, account, driver);
  if (refusal !== undefined) throw new InvalidSpecError(Reason.AccountChanged, refusal, { notReady: true });
  return account;
}

/**
 * Why `obj` may not use `account`: its resource is recorded in another account (status.accountId)
 * than the one it resolves to now (an annotation changed, an AwsAccount was re-pointed). Undefined
 * when it may.
 */
export function accountChange(
  obj: ManagedObject,
  account: ObjectAccount,
  driver: { readonly idField: string; readonly noun: string },
): string | undefined {
  const recorded = obj.status?.accountId;
  if (recorded === undefined || account.accountId === undefined || recorded === account.accountId)
    return undefined;
  if (recordedIdOf(obj, driver.idField) === undefined) return undefined;
  const now = account.name !== undefined ? `AwsAccount ${account.name}` : "the operator's own credentials";
  return (
    `the ${driver.noun} lives in account ${recorded}, but the object now resolves to account ` +
    `${account.accountId} (${now}); a resource cannot move between accounts: restore the ` +
    `previous account, or delete the object with deletionPolicy Retain and create a new one`
  );
}
