import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../runtime/testing/fake-clock.ts";
import { renewalTime, RoleSession, type SessionCredentials } from "./session.ts";

/** A role that hands out numbered credentials valid for `lifetimeMs`. */
function role(clock: FakeClock, lifetimeMs: number) {
  const calls: number[] = [];
  let fail = false;
  const assume = async (): Promise<SessionCredentials> => {
    calls.push(clock.now());
    if (fail) throw new Error("AccessDenied");
    const n = calls.length;
    return {
      accessKeyId: `AKID${n}`,
      secretAccessKey: "secret",
      sessionToken: "token",
      expiration: new Date(clock.now() + lifetimeMs),
    };
  };
  return { assume, calls, failNext: (v: boolean) => (fail = v) };
}

describe("RoleSession", () => {
  it("keeps the credentials until the renewal margin before expiry, then assumes again", async () => {
    const clock = new FakeClock();
    const r = role(clock, 3_600_000);
    const session = new RoleSession({ assume: r.assume, clock, refreshBeforeMs: 600_000 });
    assert.equal((await session.credentials()).accessKeyId, "AKID1");
    await clock.advance(2_999_999); // 1 ms before the 10-minute margin
    assert.equal((await session.credentials()).accessKeyId, "AKID1");
    assert.equal(r.calls.length, 1);
    await clock.advance(1);
    assert.equal((await session.credentials()).accessKeyId, "AKID2");
    assert.equal(r.calls.length, 2);
  });

  it("renews short sessions halfway through their lifetime", async () => {
    assert.equal(renewalTime(900_000, 0, 600_000), 450_000);
    assert.equal(renewalTime(3_600_000, 0, 600_000), 3_000_000);
    const clock = new FakeClock();
    const r = role(clock, 900_000);
    const session = new RoleSession({ assume: r.assume, clock });
    await session.credentials();
    assert.equal(session.renewsAt(), clock.now() + 450_000);
  });

  it("shares one AssumeRole call among concurrent callers", async () => {
    const clock = new FakeClock();
    const r = role(clock, 3_600_000);
    const session = new RoleSession({ assume: r.assume, clock });
    const all = await Promise.all([session.credentials(), session.credentials(), session.credentials()]);
    assert.deepEqual(
      all.map((c) => c.accessKeyId),
      ["AKID1", "AKID1", "AKID1"],
    );
    assert.equal(r.calls.length, 1);
  });

  it("keeps no failure: the next caller assumes the role again", async () => {
    const clock = new FakeClock();
    const r = role(clock, 3_600_000);
    const session = new RoleSession({ assume: r.assume, clock });
    r.failNext(true);
    await assert.rejects(session.credentials(), /AccessDenied/);
    r.failNext(false);
    assert.equal((await session.credentials()).accessKeyId, "AKID2");
  });
});
