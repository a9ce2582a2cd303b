/**
 * Accounts as a connector: before a reconcile touches AWS, the flow connects the object to the
 * driver of its AWS account. {@link AccountConnector.connect} resolves the object's account
 * (../account.ts: the hook src/accounts implements; without a resolver, the operator's own
 * credentials) and returns the driver built with that account's clients, one per account for
 * the life of the process, so every cache a driver keeps (the EC2 describe batchers per region,
 * AMI root devices) is per account as well and a driver only ever holds the clients of its own
 * account. The driver picks the region's client from the object's spec. The flow writes the
 * account ID into the object's status. The controller's setup and the bench path
 * (`KindModule.reconciler`) build the same connector.
 */
import type { AwsClientSource } from "../../../aws/clients.ts";
import { accountForReconcile, type AccountResolver } from "../account.ts";
import type { ManagedObject, ObjectAccount, ResourceDriver } from "../driver.ts";
import type { KindTraits } from "../kind-traits.ts";

/** An object connected to AWS: the driver bound to its account, and the account. */
export interface Connection<T extends ManagedObject, R, Ref = undefined> {
  readonly driver: ResourceDriver<T, R, Ref>;
  /**
   * The account the driver's calls go to, as resolved for this reconcile; undefined without a
   * resolver, or when the reconcile makes no AWS call (a deletion without the finalizer, or with
   * deletionPolicy Retain).
   */
  readonly account: ObjectAccount | undefined;
}

/** Connects objects to the driver of their account. */
export interface Connector<T extends ManagedObject, R, Ref = undefined> {
  /** What is fixed about the kind (../kind-traits.ts). */
  readonly traits: KindTraits<T>;
  /**
   * The connection of `obj` for one reconcile.
   * @throws what the account resolver refuses the object with (../account.ts).
   */
  connect(obj: T, signal: AbortSignal): Promise<Connection<T, R, Ref>>;
  /**
   * The name of the account `obj` would be connected to ("" for the operator's own), from the
   * cache alone; undefined when only a reconcile can tell. For counting, never for credentials.
   * @default unknown
   */
  accountNameOf?(obj: T): string | undefined;
}

/** Options of {@link AccountConnector}. */
export interface AccountConnectorOptions<T extends ManagedObject, R, Ref = undefined> {
  /** Builds the kind's driver with one account's clients. */
  build(aws: AwsClientSource): ResourceDriver<T, R, Ref>;
  /** What is fixed about the kind. */
  traits: KindTraits<T>;
  /** The operator's own clients. */
  own: AwsClientSource;
  /** Resolves each object's account. @default every object uses the operator's own clients */
  accounts?: AccountResolver | undefined;
}

/** The connector of one kind; see the module comment. */
export class AccountConnector<T extends ManagedObject, R, Ref = undefined> implements Connector<T, R, Ref> {
  readonly traits: KindTraits<T>;
  readonly #o: AccountConnectorOptions<T, R, Ref>;
  readonly #drivers = new WeakMap<AwsClientSource, ResourceDriver<T, R, Ref>>();

  constructor(opts: AccountConnectorOptions<T, R, Ref>) {
    this.#o = opts;
    this.traits = opts.traits;
    // The operator's own driver is built at once: what a driver registers (its metric series)
    // exists from the start, before the first object is reconciled.
    this.#driverOf(opts.own);
  }

  async connect(obj: T, signal: AbortSignal): Promise<Connection<T, R, Ref>> {
    const account = await accountForReconcile(this.#o.accounts, obj, this.traits, signal);
    return { driver: this.#driverOf(account?.aws ?? this.#o.own), account };
  }

  accountNameOf(obj: T): string | undefined {
    const accounts = this.#o.accounts;
    if (accounts === undefined) return "";
    return accounts.accountNameFromCache?.(obj);
  }

  #driverOf(aws: AwsClientSource): ResourceDriver<T, R, Ref> {
    let driver = this.#drivers.get(aws);
    if (driver === undefined) {
      driver = this.#o.build(aws);
      this.#drivers.set(aws, driver);
    }
    return driver;
  }
}

/** The connector of a driver that serves every object with the same clients (tests, one account). */
export function fixedConnector<T extends ManagedObject, R, Ref = undefined>(
  driver: ResourceDriver<T, R, Ref>,
  traits: KindTraits<T>,
): Connector<T, R, Ref> {
  return { traits, connect: async () => ({ driver, account: undefined }), accountNameOf: () => "" };
}
