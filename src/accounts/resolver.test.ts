import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AwsAccount } from "../api/v1/index.ts";
import type { AccountScope, AwsClientSource } from "../aws/clients.ts";
import { InvalidSpecError, NotReadyRetryError } from "../reconcilers/common/driver.ts";
import { widgetObject } from "../reconcilers/common/testing/widget.ts";
import { silentLogger } from "../runtime/logging.ts";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import type { KubeObject } from "../runtime/kube/object.ts";
import { accountNameOf, accountReady, CacheAccountResolver } from "./resolver.ts";
import { AccountSessions } from "./sessions.ts";

/** A client source that fails every call: resolution must never need AWS for an AwsAccount. */
const noCalls: AwsClientSource = {
  client: () => {
    throw new Error("no AWS call expected");
  },
};
const scopes: AccountScope[] = [];
const factory = {
  ...noCalls,
  forAccount: (scope: AccountScope): AwsClientSource => {
    scopes.push(scope);
    return { client: noCalls.client };
  },
  dropAccount: () => {},
};

const readyAccount = (
  name: string,
  allowed: AwsAccount["spec"]["allowedNamespaces"],
  generation = 1,
  adoption: AwsAccount["spec"]["adoption"] = "Disallowed",
): AwsAccount => ({
  metadata: { name, uid: `uid-${name}`, generation },
  spec: {
    roleArn: "arn:aws:iam::222222222222:role/t",
    sessionDurationSeconds: 3600,
    adoption,
    allowedNamespaces: allowed,
  },
  status: {
    accountId: "222222222222",
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "RoleAssumed",
        message: "",
        observedGeneration: 1,
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ],
  },
});

function resolver(opts: {
  accounts?: AwsAccount[];
  namespaces?: KubeObject[];
  requireAccount?: boolean;
}): CacheAccountResolver {
  const clock = new FakeClock();
  return new CacheAccountResolver({
    accounts: (n) => opts.accounts?.find((a) => a.metadata.name === n),
    namespaces: (n) => opts.namespaces?.find((x) => x.metadata.name === n),
    sessions: new AccountSessions({
      aws: factory,
      stsRegion: "us-east-1",
      readSecret: async () => "",
      clock,
    }),
    own: noCalls,
    requireAccount: opts.requireAccount ?? false,
    clock,
    logger: silentLogger,
  });
}

const obj = (ns: string, accountRef?: string) =>
  widgetObject({
    metadata: { name: "w", namespace: ns },
    spec: accountRef ? { accountRef: { name: accountRef } } : {},
  });
const ns = (name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}) => ({
  metadata: { name, annotations, labels },
});

describe("accountNameOf", () => {
  it("takes accountRef first, then the namespace annotation", () => {
    const annotated = ns("a", { "compute.cloud.com/account": "from-ns" });
    assert.equal(accountNameOf(obj("a", "from-ref"), annotated), "from-ref");
    assert.equal(accountNameOf(obj("a"), annotated), "from-ns");
    assert.equal(accountNameOf(obj("a"), ns("a")), undefined);
  });
});

describe("accountReady", () => {
  it("needs Ready=True for the current generation, except while the account is being deleted", () => {
    assert.equal(accountReady(readyAccount("x", {})), true);
    const changed = readyAccount("x", {}, 2);
    assert.equal(accountReady(changed), false);
    changed.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    assert.equal(accountReady(changed), true);
  });
});

describe("CacheAccountResolver", () => {
  it("tells from the cache alone the account name an object's polls are counted under", () => {
    const annotated = ns("a", { "compute.cloud.com/account": "from-ns" });
    const r = resolver({ namespaces: [annotated, ns("b")] });
    assert.equal(r.accountNameFromCache(obj("a", "from-ref")), "from-ref");
    assert.equal(r.accountNameFromCache(obj("a")), "from-ns");
    assert.equal(r.accountNameFromCache(obj("b")), "", "the operator's own credentials");
    assert.equal(r.accountNameFromCache(obj("c")), undefined, "its namespace is not cached yet");
    const required = resolver({ namespaces: [ns("b")], requireAccount: true });
    assert.equal(required.accountNameFromCache(obj("b")), undefined, "refused its own credentials");
  });

  it("resolves an allowed, ready account to its clients without an AWS call", async () => {
    const r = resolver({ accounts: [readyAccount("team", { names: ["a"] })], namespaces: [ns("a")] });
    const got = await r.resolve(obj("a", "team"));
    assert.equal(got.name, "team");
    assert.equal(got.accountId, "222222222222");
    assert.equal(got.adoption, "Disallowed");
    assert.equal((await r.resolve(obj("a", "team"))).aws, got.aws, "one client source per account");
    assert.equal(scopes.at(-1)?.accountId, "222222222222");
  });

  it("hands the account's adoption policy to the flow, and none for the operator's own credentials", async () => {
    const r = resolver({
      accounts: [readyAccount("team", { names: ["a"] }, 1, "Allowed")],
      namespaces: [ns("a"), ns("b")],
    });
    assert.equal((await r.resolve(obj("a", "team"))).adoption, "Allowed");
    assert.equal((await r.resolve(obj("b"))).adoption, undefined);
  });

  it("refuses a namespace the account does not allow, terminally", async () => {
    const r = resolver({ accounts: [readyAccount("team", { names: ["a"] })], namespaces: [ns("b")] });
    await assert.rejects(
      r.resolve(obj("b", "team")),
      (e: unknown) => e instanceof InvalidSpecError && e.reason === "AccountNotAllowed" && e.notReady,
    );
  });

  it("holds an object back while its account is missing or not ready, never falling back", async () => {
    const notReady = readyAccount("team", { names: ["a"] }, 2);
    const r = resolver({
      accounts: [notReady],
      namespaces: [ns("a", { "compute.cloud.com/account": "gone" })],
    });
    for (const o of [obj("a", "team"), obj("a")]) {
      await assert.rejects(
        r.resolve(o),
        (e: unknown) => e instanceof NotReadyRetryError && e.reason === "AccountNotReady",
      );
    }
  });

  it("waits for a namespace missing from the cache instead of using the operator's own credentials", async () => {
    await assert.rejects(resolver({}).resolve(obj("a")), (e: unknown) => e instanceof NotReadyRetryError);
  });

  it("refuses an object without an account under --require-account", async () => {
    await assert.rejects(
      resolver({ namespaces: [ns("a")], requireAccount: true }).resolve(obj("a")),
      (e: unknown) => e instanceof InvalidSpecError && e.reason === "AccountRequired",
    );
  });
});

describe("CacheAccountResolver.sources", () => {
  it("maps a changed AwsAccount to its users and a changed namespace to its objects", () => {
    const r = resolver({ namespaces: [ns("a", { "compute.cloud.com/account": "team" }), ns("b")] });
    const objects = [
      widgetObject({ metadata: { name: "by-annotation", namespace: "a" } }),
      widgetObject({ metadata: { name: "by-ref", namespace: "b" }, spec: { accountRef: { name: "team" } } }),
      widgetObject({ metadata: { name: "other", namespace: "b" } }),
    ];
    const [accounts, namespaces] = r.sources;
    assert.deepEqual(
      accounts?.affected({ metadata: { name: "team" } }, objects).map((k) => k.name),
      ["by-annotation", "by-ref"],
    );
    assert.deepEqual(
      namespaces?.affected({ metadata: { name: "b" } }, objects).map((k) => k.name),
      ["by-ref", "other"],
    );
  });
});
