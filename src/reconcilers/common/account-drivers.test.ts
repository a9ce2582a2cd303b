import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AwsClientSource } from "../../aws/clients.ts";
import { accountChange } from "./account.ts";
import { AccountDrivers } from "./account-drivers.ts";
import type { DriverContext, ManagedObject, ObjectAccount, ResourceDriver } from "./driver.ts";
import { context } from "./testing/context.ts";
import { widgetObject } from "./testing/widget.ts";

/** A client source standing for one account; the fake driver reports which one it was built with. */
const source = (): AwsClientSource => ({
  client: () => {
    throw new Error("unused");
  },
});

interface Seen {
  readonly builtWith: AwsClientSource;
}

function drivers() {
  const built: AwsClientSource[] = [];
  const d = new AccountDrivers<ManagedObject, Seen>((aws) => {
    built.push(aws);
    const driver: ResourceDriver<ManagedObject, Seen> = {
      noun: "widget",
      idField: "state",
      driftSettings: ["tags"],
      observe: async () => ({ exists: true, resource: { builtWith: aws }, ownership: "owned" }),
      create: async () => ({ builtWith: aws }),
      update: async (_obj, observed) => {
        assert.equal(observed.resource.builtWith, aws, "update sees the inner resource");
        return [];
      },
      delete: async () => ({ done: true }),
      observed: () => ({ tags: {} }),
      describe: (r) => ({
        status: { state: r.builtWith === aws ? "same" : "other" },
        readiness: { ready: true, pending: false, reason: "Available", message: "" },
      }),
    };
    return driver;
  }, own);
  return { d, built };
}
const own = source();

const inAccount = (account: ObjectAccount): DriverContext => ({ ...context(), account });
const obj = widgetObject({ metadata: { name: "w", namespace: "ns", uid: "u" } });

describe("AccountDrivers", () => {
  it("builds one driver per account's clients and hands each call to its account's driver", async () => {
    const { d, built } = drivers();
    const a = source();
    const b = source();
    const inA = inAccount({ name: "a", accountId: "111111111111", aws: a });
    const obsA = await d.observe(obj, inA);
    await d.observe(obj, inA);
    const obsB = await d.observe(obj, inAccount({ name: "b", accountId: "222222222222", aws: b }));
    const obsOwn = await d.observe(obj, context());
    assert.deepEqual(built, [own, a, b], "the operator's own driver first, then one per account, once");
    assert.ok(obsA.exists && obsB.exists && obsOwn.exists);
    assert.equal(obsA.resource.resource.builtWith, a);
    assert.equal(obsB.resource.resource.builtWith, b);
    assert.equal(obsOwn.resource.resource.builtWith, own);
    await d.update(obj, obsA, inA);
  });

  it("puts the account ID of the account the resource was found in into the status", async () => {
    const { d } = drivers();
    const created = await d.create(
      obj,
      "t",
      inAccount({ name: "a", accountId: "111111111111", aws: source() }),
    );
    assert.deepEqual(d.describe(created, obj).status, { state: "other", accountId: "111111111111" });
    assert.equal(d.noun, "widget");
    assert.equal(d.idField, "state");
  });
});

describe("accountChange", () => {
  const driver = { idField: "state", noun: "widget" };
  const recorded = widgetObject({
    metadata: { name: "w", namespace: "ns" },
    status: { state: "id-1", accountId: "111111111111" },
  });
  const account = (accountId: string | undefined): ObjectAccount => ({ name: "b", accountId, aws: source() });

  it("refuses a recorded resource in another account than the one the object resolves to now", () => {
    assert.match(
      accountChange(recorded, account("222222222222"), driver) ?? "",
      /lives in account 111111111111/,
    );
    assert.equal(accountChange(recorded, account("111111111111"), driver), undefined);
    assert.equal(accountChange(recorded, account(undefined), driver), undefined);
  });

  it("allows any account while no resource is recorded", () => {
    const fresh = widgetObject({
      metadata: { name: "w", namespace: "ns" },
      status: { accountId: "111111111111" },
    });
    assert.equal(accountChange(fresh, account("222222222222"), driver), undefined);
  });
});
