import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AwsError } from "../aws/errors.ts";
import { failureOf, SecretUnavailableError } from "./controller.ts";

const account = {
  spec: { roleArn: "arn:aws:iam::222222222222:role/t", sessionDurationSeconds: 3600, allowedNamespaces: {} },
};
const denied = new AwsError({
  kind: "terminal",
  code: "AccessDenied",
  service: "sts",
  operation: "AssumeRole",
  message: "STS AssumeRole failed with AccessDenied: not authorized",
});

describe("failureOf", () => {
  it("reports the AssumeRole failure inside the call it was providing credentials for", () => {
    const outer = new AwsError(
      {
        kind: "terminal",
        code: "CredentialsProviderError",
        service: "sts",
        operation: "GetCallerIdentity",
        message: "x",
      },
      { cause: denied },
    );
    const [reason, message] = failureOf(outer, account);
    assert.equal(reason, "AssumeRoleFailed");
    assert.match(message, /^AccessDenied: could not assume arn:aws:iam::222222222222:role\/t: AssumeRole: /);
  });

  it("names an unreadable external-ID Secret", () => {
    const err = new Error("wrapped", { cause: new SecretUnavailableError("Secret ns/ids does not exist") });
    assert.deepEqual(failureOf(err, account), ["ExternalIdUnavailable", "Secret ns/ids does not exist"]);
  });

  it("reports anything else as AssumeRoleFailed with its text", () => {
    assert.deepEqual(failureOf(new Error("boom"), account), [
      "AssumeRoleFailed",
      "could not assume arn:aws:iam::222222222222:role/t: Error: boom",
    ]);
  });
});
