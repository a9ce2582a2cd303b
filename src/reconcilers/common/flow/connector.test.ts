import { IN_SYNC } from "../changes.ts";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AwsClientSource } from "../../../aws/clients.ts";
import { accountChange, type AccountResolver } from "../account.ts";
import type { ManagedObject, ObjectAccount, ResourceDriver } from "../driver.ts";
import { widgetObject } from "../testing/widget.ts";
import { AccountConnector } from "./connector.ts";

/** A client source standing for one account; the fake driver reports which one it was built with. */
const source = (): AwsClientSource => ({
  client: () => {
    throw new Error("unused");
  },
});

interface Seen {
  readonly builtWith: AwsClientSource;
}

/** A connector whose accounts come from `accountOf(obj)`, recording each driver it builds. */
function connector(accountOf: (obj: ManagedObject) => ObjectAccount | undefined) {
  const built: AwsClientSource[] = [];
  const accounts: AccountResolver = {
    resolve: async (obj) => accountOf(obj) ?? { name: undefined, accountId: "000000000000", aws: own },
  };
  const c = new AccountConnector<ManagedObject, Seen>({
    traits: { noun: "widget", idField: "state", driftSettings: ["tags"] },
    build: (aws) => {
      built.push(aws);
      const driver: ResourceDriver<ManagedObject, Seen> = {
        observe: async () => ({ exists: true, resource: { builtWith: aws }, ownership: "owned" }),
        create: async () => ({ builtWith: aws }),
        plan: async () => IN_SYNC,
        createActions: () => [],
        delete: async () => ({ done: true }),
        observed: () => ({ tags: {} }),
        describe: () => ({
          status: {},
          readiness: { ready: true, pending: false, reason: "Available", message: "" },
        }),
      };
      return driver;
    },
    own,
    accounts,
  });
  return { c, built };
}
const own = source();
const signal = new AbortController().signal;
const inNamespace = (namespace: string) => widgetObject({ metadata: { name: "w", namespace, uid: "u" } });

describe("AccountConnector", () => {
  it("connects each object to the driver built with its account's clients, one per account", async () => {
    const a = source();
    const b = source();
    const byNamespace: Record<string, ObjectAccount> = {
      a: { name: "a", accountId: "111111111111", aws: a },
      b: { name: "b", accountId: "222222222222", aws: b },
    };
    const { c, built } = connector((obj) => byNamespace[obj.metadata.namespace ?? ""]);
    const inA = await c.connect(inNamespace("a"), signal);
    const againA = await c.connect(inNamespace("a"), signal);
    const inB = await c.connect(inNamespace("b"), signal);
    const inOwn = await c.connect(inNamespace("other"), signal);
    assert.deepEqual(built, [own, a, b], "the operator's own driver first, then one per account, once");
    assert.equal(inA.driver, againA.driver);
    const seen = async (d: ResourceDriver<ManagedObject, Seen>) => {
      const obs = await d.observe(inNamespace("x"), {} as never);
      assert.ok(obs.exists);
      return obs.resource.builtWith;
    };
    assert.equal(await seen(inA.driver), a);
    assert.equal(await seen(inB.driver), b);
    assert.equal(await seen(inOwn.driver), own);
    assert.equal(inA.account?.accountId, "111111111111", "the account, for the flow to record");
    assert.equal(c.traits.noun, "widget", "the kind's facts are its declared traits");
  });

  it("resolves no account for a deletion that makes no AWS call, and serves it the own driver", async () => {
    const { c, built } = connector(() => {
      throw new Error("not asked");
    });
    const leaving = widgetObject({
      metadata: { name: "w", namespace: "ns", uid: "u", deletionTimestamp: "2026-01-01T00:00:00Z" },
    });
    const conn = await c.connect(leaving, signal);
    assert.equal(conn.account, undefined);
    assert.deepEqual(built, [own], "the own account's driver");
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
