/**
 * One driver per AWS account: a {@link ResourceDriver} that hands each call to the driver built
 * for the account in the call's context ({@link DriverContext.account}), so every cache a driver
 * keeps (the EC2 describe batcher per region, AMI root devices) is per account as well, and a
 * driver only ever holds the clients of its own account. It also puts the account ID into the
 * object's status through {@link ResourceDriver.describe}.
 */
import type { AwsClientSource } from "../../aws/clients.ts";
import type {
  DeleteOutcome,
  Description,
  DriftRepair,
  DriverContext,
  ManagedObject,
  Observation,
  ObservedDetails,
  ResourceDriver,
} from "./driver.ts";

/** A resource of the inner driver with the account it was found or created in. */
export interface InAccount<R> {
  readonly resource: R;
  readonly accountId: string | undefined;
}

/**
 * The driver that serves every account with its own instance of `build(aws)`; `own` are the
 * operator's own clients, used when the context names no account.
 */
export class AccountDrivers<T extends ManagedObject, R> implements ResourceDriver<T, InAccount<R>> {
  readonly noun: string;
  readonly idField: ResourceDriver<T, R>["idField"];
  readonly alignPolls: boolean;
  readonly driftSettings: readonly string[];
  readonly observedFields?: ResourceDriver<T, R>["observedFields"];
  readonly #build: (aws: AwsClientSource) => ResourceDriver<T, R>;
  readonly #own: AwsClientSource;
  readonly #drivers = new WeakMap<AwsClientSource, ResourceDriver<T, R>>();

  constructor(build: (aws: AwsClientSource) => ResourceDriver<T, R>, own: AwsClientSource) {
    this.#build = build;
    this.#own = own;
    const first = this.#driver(undefined);
    this.noun = first.noun;
    this.idField = first.idField;
    this.alignPolls = first.alignPolls ?? false;
    this.driftSettings = first.driftSettings;
    if (first.observedFields !== undefined) this.observedFields = first.observedFields;
  }

  async observe(obj: T, ctx: DriverContext): Promise<Observation<InAccount<R>>> {
    const obs = await this.#driver(ctx).observe(obj, ctx);
    return obs.exists
      ? { ...obs, resource: { resource: obs.resource, accountId: ctx.account?.accountId } }
      : obs;
  }

  async create(obj: T, token: string, ctx: DriverContext): Promise<InAccount<R>> {
    return { resource: await this.#driver(ctx).create(obj, token, ctx), accountId: ctx.account?.accountId };
  }

  update(
    obj: T,
    observed: Observation<InAccount<R>> & { exists: true },
    ctx: DriverContext,
  ): Promise<DriftRepair[]> {
    return this.#driver(ctx).update(obj, { ...observed, resource: observed.resource.resource }, ctx);
  }

  delete(obj: T, observed: Observation<InAccount<R>>, ctx: DriverContext): Promise<DeleteOutcome> {
    const inner: Observation<R> = observed.exists
      ? { ...observed, resource: observed.resource.resource }
      : observed;
    return this.#driver(ctx).delete(obj, inner, ctx);
  }

  describe(found: InAccount<R>, obj: T): Description<NonNullable<T["status"]>> {
    const { status, readiness } = this.#driver(undefined).describe(found.resource, obj);
    return { status: { ...status, accountId: found.accountId }, readiness };
  }

  observed(found: InAccount<R>): ObservedDetails<NonNullable<T["status"]>> {
    return this.#driver(undefined).observed(found.resource);
  }

  #driver(ctx: DriverContext | undefined): ResourceDriver<T, R> {
    const aws = ctx?.account?.aws ?? this.#own;
    let driver = this.#drivers.get(aws);
    if (driver === undefined) {
      driver = this.#build(aws);
      this.#drivers.set(aws, driver);
    }
    return driver;
  }
}
