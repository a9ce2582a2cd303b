import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { pino } from "pino";
import { REDACTED, redactSecrets, redactString, sdkLogger } from "./sdk-logger.ts";

const ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE";
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const TOKEN = "IQoJb3JpZ2luX2VjEXAMPLETOKENvalue0123456789";

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, logger: pino({ level: "trace" }, stream) };
}

describe("redactString", () => {
  it("removes access key IDs, SigV4 credentials and signatures, and presigned-URL tokens", () => {
    const header = `AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/20240501/us-east-1/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123456789abcdef0123456789abcdef`;
    const out = redactString(header);
    assert.ok(!out.includes(ACCESS_KEY));
    assert.ok(!out.includes("0123456789abcdef0123456789abcdef"));
    const url = `https://b.s3.amazonaws.com/k?X-Amz-Credential=${ACCESS_KEY}%2F20240501&X-Amz-Security-Token=${TOKEN}&X-Amz-Signature=abc`;
    const outUrl = redactString(url);
    assert.ok(!outUrl.includes(TOKEN));
    assert.ok(!outUrl.includes("AKIA"));
    assert.ok(!redactString(`aws_secret_access_key = ${SECRET}`).includes(SECRET));
    assert.ok(!redactString(`{"secretAccessKey":"${SECRET}"}`).includes(SECRET));
  });

  it("leaves ordinary text alone", () => {
    assert.equal(
      redactString("The instance ID 'i-0123' does not exist"),
      "The instance ID 'i-0123' does not exist",
    );
  });
});

describe("redactSecrets", () => {
  it("replaces secret-named keys at any depth, case-insensitively", () => {
    const out = redactSecrets({
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET },
      request: { headers: { Authorization: "x", "X-Amz-Security-Token": TOKEN, host: "ec2" } },
      input: { UserData: "IyEvYmluL2Jhc2gKZXhwb3J0IERCX1BBU1NXT1JEPWh1bnRlcjI=", InstanceType: "t3.micro" },
    });
    const text = JSON.stringify(out);
    for (const secret of [ACCESS_KEY, SECRET, TOKEN, "IyEvYmluL2Jhc2g"])
      assert.ok(!text.includes(secret), secret);
    assert.match(text, /"host":"ec2"/);
    assert.match(text, /"InstanceType":"t3.micro"/);
    assert.ok(text.includes(`"Authorization":"${REDACTED}"`));
  });

  it("reduces errors to name, message, code and metadata, dropping the raw response", () => {
    const err = Object.assign(new Error(`denied for ${ACCESS_KEY}`), {
      name: "AccessDenied",
      code: "AccessDenied",
      $metadata: { httpStatusCode: 403 },
      $response: { headers: { authorization: "secret" }, body: "raw" },
    });
    const out = redactSecrets({ error: err }) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(out.error).sort(), ["code", "message", "metadata", "name"]);
    assert.ok(!JSON.stringify(out).includes(ACCESS_KEY));
  });

  it("survives cycles and deep nesting", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    assert.doesNotThrow(() => JSON.stringify(redactSecrets({ a, deep })));
  });
});

describe("sdkLogger", () => {
  it("writes the SDK's per-call info and error lines at debug, scrubbed", () => {
    const { lines, logger } = capture();
    const sdk = sdkLogger(logger);
    sdk.info({
      clientName: "EC2Client",
      commandName: "RunInstancesCommand",
      input: { UserData: "c2VjcmV0" },
    });
    sdk.error({
      clientName: "EC2Client",
      commandName: "RunInstancesCommand",
      error: new Error(`bad key ${ACCESS_KEY}`),
    });
    sdk.warn("socket usage at capacity", { headers: { authorization: `Credential=${ACCESS_KEY}/x` } });
    assert.equal(lines.length, 3);
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; component: string; msg: string });
    assert.deepEqual(
      parsed.map((p) => p.level),
      [20, 20, 40],
      "info and error go to debug (20), warn stays warn (40)",
    );
    assert.ok(parsed.every((p) => p.component === "aws-sdk"));
    const all = lines.join("");
    assert.ok(!all.includes(ACCESS_KEY));
    assert.ok(!all.includes("c2VjcmV0"));
    assert.match(all, /RunInstancesCommand/);
  });

  it("does no work for disabled levels", () => {
    const { lines, logger } = capture();
    logger.level = "warn";
    const sdk = sdkLogger(logger);
    let touched = false;
    const probe = {
      get input() {
        touched = true;
        return {};
      },
    };
    sdk.info(probe);
    assert.equal(lines.length, 0);
    assert.equal(touched, false);
  });
});
