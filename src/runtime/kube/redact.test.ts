import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { credentialsOf, REDACTED, redactText, redactValue } from "./redact.ts";

describe("redact", () => {
  it("lists the token, the passwords and each user:password in base64", () => {
    const b64 = (s: string): string => Buffer.from(s).toString("base64");
    assert.deepEqual(credentialsOf({ token: "t0k" }), ["t0k"]);
    assert.deepEqual(credentialsOf({ auth: "bob:pw" }), ["pw", b64("bob:pw")]);
    assert.deepEqual(credentialsOf({ auth: "bob:" }), [b64("bob:")]);
    assert.deepEqual(credentialsOf({ proxy: new URL("http://p%40x:s%2Fecret@proxy:3128") }), [
      "s/ecret",
      b64("p@x:s/ecret"),
      "s%2Fecret",
    ]);
    assert.deepEqual(credentialsOf({ token: "", auth: "", proxy: new URL("http://proxy:3128") }), []);
  });

  it("replaces every occurrence, longest secret first, in text and in JSON values, keys included", () => {
    assert.equal(
      redactText("a SECRET and SECRET-2", ["SECRET", "SECRET-2"]),
      `a ${REDACTED} and ${REDACTED}`,
    );
    assert.equal(redactText("nothing here", []), "nothing here");
    assert.deepEqual(
      redactValue({ message: "bad abc", details: { causes: [{ message: "abc" }], abc: 1, n: 3 } }, ["abc"]),
      { message: `bad ${REDACTED}`, details: { causes: [{ message: REDACTED }], [REDACTED]: 1, n: 3 } },
    );
  });
});
