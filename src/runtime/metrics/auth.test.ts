import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../kube/errors.ts";
import type { KubeRequester, RestRequest } from "../kube/rest.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { DelegatingAuth, verbOf } from "./auth.ts";

/** Answers TokenReviews from `tokens` and SubjectAccessReviews from `allowed` (by username). */
class FakeApi implements KubeRequester {
  tokens = new Map<string, string>([
    ["good", "alice"],
    ["norbac", "bob"],
  ]);
  allowed = new Set(["alice"]);
  calls: RestRequest[] = [];
  fail = false;
  async request<T>(req: RestRequest): Promise<T> {
    this.calls.push(req);
    await Promise.resolve();
    if (this.fail) throw new ApiError({ status: 503, reason: "ServiceUnavailable" });
    const body = req.body as {
      kind: string;
      spec: {
        token?: string;
        user?: string;
        groups?: string[];
        nonResourceAttributes?: { path: string; verb: string };
      };
    };
    if (body.kind === "TokenReview") {
      const user = this.tokens.get(body.spec.token ?? "");
      return {
        status:
          user === undefined
            ? { authenticated: false, error: "token not found" }
            : { authenticated: true, user: { username: user, groups: ["system:authenticated"] } },
      } as T;
    }
    const attrs = body.spec.nonResourceAttributes;
    const ok = this.allowed.has(body.spec.user ?? "") && attrs?.path === "/metrics" && attrs.verb === "get";
    return { status: { allowed: ok, ...(ok ? {} : { reason: "no RBAC policy matched" }) } } as T;
  }
  count(kind: string): number {
    return this.calls.filter((c) => (c.body as { kind: string }).kind === kind).length;
  }
}

test("no token is 401, a bad token is 401, a token without RBAC is 403, a bound one is allowed", async () => {
  const api = new FakeApi();
  const auth = new DelegatingAuth({ client: api, clock: new FakeClock() });
  assert.deepEqual(await auth.check(undefined, "GET", "/metrics"), {
    allowed: false,
    status: 401,
    reason: "no bearer token",
  });
  assert.equal((await auth.check("Basic Zm9vOmJhcg==", "GET", "/metrics")).allowed, false);
  const bad = await auth.check("Bearer nope", "GET", "/metrics");
  assert.ok(!bad.allowed && bad.status === 401 && /token not found/.test(bad.reason));
  const denied = await auth.check("Bearer norbac", "GET", "/metrics");
  assert.ok(
    !denied.allowed && denied.status === 403 && /user "bob" cannot get path "\/metrics"/.test(denied.reason),
  );
  const ok = await auth.check("Bearer good", "GET", "/metrics");
  assert.ok(ok.allowed && ok.user.username === "alice");
  const sar = api.calls.findLast((c) => (c.body as { kind: string }).kind === "SubjectAccessReview");
  assert.deepEqual((sar?.body as { spec: unknown }).spec, {
    user: "alice",
    groups: ["system:authenticated"],
    nonResourceAttributes: { path: "/metrics", verb: "get" },
  });
});

test("answers are cached: allowed for 60 s, denied authorization for 30 s, rejected tokens for 10 s", async () => {
  const api = new FakeApi();
  const clock = new FakeClock();
  const auth = new DelegatingAuth({ client: api, clock });
  for (let i = 0; i < 5; i++)
    assert.equal((await auth.check("Bearer good", "GET", "/metrics")).allowed, true);
  assert.equal(api.count("TokenReview"), 1);
  assert.equal(api.count("SubjectAccessReview"), 1);
  await auth.check("Bearer norbac", "GET", "/metrics");
  await auth.check("Bearer nope", "GET", "/metrics");
  assert.equal(api.count("TokenReview"), 3);
  assert.equal(api.count("SubjectAccessReview"), 2);

  await clock.advance(10_001); // rejected token expires
  await auth.check("Bearer nope", "GET", "/metrics");
  await auth.check("Bearer norbac", "GET", "/metrics");
  assert.equal(api.count("TokenReview"), 4);
  assert.equal(api.count("SubjectAccessReview"), 2);

  api.allowed.add("bob");
  await clock.advance(20_000); // 30 s: the denial expires, bob's TokenReview still cached
  assert.equal((await auth.check("Bearer norbac", "GET", "/metrics")).allowed, true);
  assert.equal(api.count("SubjectAccessReview"), 3);

  api.allowed.delete("alice");
  assert.equal(
    (await auth.check("Bearer good", "GET", "/metrics")).allowed,
    true,
    "the allow is still cached",
  );
  await clock.advance(30_000); // 60 s
  const again = await auth.check("Bearer good", "GET", "/metrics");
  assert.ok(!again.allowed && again.status === 403);
});

test("concurrent checks of one token share one TokenReview", async () => {
  const api = new FakeApi();
  const auth = new DelegatingAuth({ client: api, clock: new FakeClock() });
  const results = await Promise.all(
    Array.from({ length: 10 }, () => auth.check("Bearer good", "GET", "/metrics")),
  );
  assert.ok(results.every((r) => r.allowed));
  assert.equal(api.count("TokenReview"), 1);
  assert.equal(api.count("SubjectAccessReview"), 1);
});

test("API failures are 500 and are not cached", async () => {
  const api = new FakeApi();
  const auth = new DelegatingAuth({ client: api, clock: new FakeClock() });
  api.fail = true;
  const r = await auth.check("Bearer good", "GET", "/metrics");
  assert.ok(!r.allowed && r.status === 500);
  api.fail = false;
  assert.equal((await auth.check("Bearer good", "GET", "/metrics")).allowed, true);
});

test("the cache stays bounded however many tokens arrive", async () => {
  const api = new FakeApi();
  const auth = new DelegatingAuth({ client: api, clock: new FakeClock(), cacheSize: 4 });
  for (let i = 0; i < 10; i++) await auth.check(`Bearer t${i}`, "GET", "/metrics");
  await auth.check("Bearer t0", "GET", "/metrics");
  assert.equal(api.count("TokenReview"), 11, "the oldest entry was evicted");
});

test("HTTP methods map to Kubernetes verbs", () => {
  assert.equal(verbOf("GET"), "get");
  assert.equal(verbOf("HEAD"), "get");
  assert.equal(verbOf("post"), "post");
  assert.equal(verbOf("DELETE"), "delete");
});
