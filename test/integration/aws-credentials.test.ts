/**
 * The default credential chain through AwsClients, against moto: nothing configured gives a
 * terminal error with a clear message; a shared-config profile works; a web identity token file
 * and role ARN (how IRSA presents itself to a pod) are exchanged at STS for credentials.
 *
 * Every test rebuilds the environment from scratch, so no source leaks from one to the next.
 */
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { Registry } from "prom-client";
import { AwsClients } from "../../src/aws/clients.ts";
import { AwsError } from "../../src/aws/errors.ts";
import { AWS_METRIC_NAMES } from "../../src/aws/metrics.ts";
import { startEmulator } from "../support/backends.ts";
import type { Moto } from "../support/moto.ts";
import { metricSum, metricValue } from "../../src/runtime/testing/prometheus-text.ts";

const savedEnv = { ...process.env };

/** Removes every variable the SDK's credential chain or config loading reads. */
function clearAwsEnv(): void {
  for (const k of Object.keys(process.env)) {
    if (k.startsWith("AWS_")) delete process.env[k];
  }
}

/** An HTTP proxy to moto that records the `Action` of each form-encoded request. */
async function recordingProxy(
  target: string,
): Promise<{ url: string; actions: string[]; close(): Promise<void> }> {
  const actions: string[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const action = new URLSearchParams(body.toString()).get("Action");
      if (action !== null) actions.push(action);
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === "object");
  return {
    url: `http://127.0.0.1:${addr.port}`,
    actions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("AWS credentials through the default chain", () => {
  let moto: Moto;
  let dir: string;

  before(async () => {
    moto = await startEmulator();
    dir = mkdtempSync(path.join(os.tmpdir(), "kp-aws-creds-"));
  });

  after(async () => {
    await moto?.stop();
    rmSync(dir, { recursive: true, force: true });
    clearAwsEnv();
    Object.assign(process.env, savedEnv);
  });

  beforeEach(() => {
    clearAwsEnv();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_CONFIG_FILE: path.join(dir, "no-config"),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, "no-credentials"),
    });
  });

  it("fails terminally, with a message naming the sources, when no credentials exist", async () => {
    const registry = new Registry();
    const clients = new AwsClients({ registry });
    try {
      const err = await (await clients.client("sqs", "us-east-1")).send(new ListQueuesCommand({})).then(
        () => assert.fail("a call without credentials succeeded"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof AwsError);
      assert.equal(err.kind, "terminal");
      assert.equal(err.code, "CredentialsProviderError");
      assert.equal(
        err.message,
        "SQS ListQueues failed with CredentialsProviderError: no AWS credentials found (looked in the environment, shared config and profiles, the web identity token (IRSA), container and instance metadata); see docs/aws.md#credentials",
      );
      const text = await registry.metrics();
      assert.equal(
        metricValue(text, AWS_METRIC_NAMES.requests, {
          service: "sqs",
          region: "us-east-1",
          operation: "ListQueues",
          code: "CredentialsProviderError",
        }),
        1,
      );
      assert.equal(metricSum(text, `${AWS_METRIC_NAMES.duration}_count`), 0, "nothing reached the wire");
    } finally {
      clients.destroy();
    }
  });

  it("uses a named profile from the shared config and credentials files", async () => {
    const config = path.join(dir, "config");
    const credentials = path.join(dir, "credentials");
    writeFileSync(config, "[profile ops]\nregion = eu-west-1\n");
    writeFileSync(
      credentials,
      "[ops]\naws_access_key_id = AKIAPROFILEEXAMPLE01\naws_secret_access_key = profile-secret\n",
    );
    Object.assign(process.env, {
      AWS_CONFIG_FILE: config,
      AWS_SHARED_CREDENTIALS_FILE: credentials,
      AWS_PROFILE: "ops",
    });
    const clients = new AwsClients({ registry: new Registry() });
    try {
      const out = await (await clients.client("sqs", "eu-west-1")).send(new ListQueuesCommand({}));
      assert.equal(out.$metadata.httpStatusCode, 200);
    } finally {
      clients.destroy();
    }
  });

  it("exchanges a web identity token file for credentials at STS, as IRSA sets it up", async () => {
    const proxy = await recordingProxy(moto.endpoint);
    const tokenFile = path.join(dir, "token");
    // A service account token as the kubelet projects it: moto does not verify the signature.
    const claims = {
      iss: "https://oidc.eks.example",
      sub: "system:serviceaccount:kp-system:kubeprovisioner",
      aud: "sts.amazonaws.com",
    };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    writeFileSync(tokenFile, `${b64({ alg: "RS256", typ: "JWT" })}.${b64(claims)}.c2ln`);
    Object.assign(process.env, {
      AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/kubeprovisioner",
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ENDPOINT_URL_STS: proxy.url,
      AWS_REGION: "us-east-1",
    });
    const clients = new AwsClients({ registry: new Registry() });
    try {
      const sqs = await clients.client("sqs", "us-east-1");
      await sqs.send(new ListQueuesCommand({}));
      await sqs.send(new ListQueuesCommand({}));
      assert.deepEqual(
        proxy.actions,
        ["AssumeRoleWithWebIdentity"],
        "one exchange, cached for the next call",
      );
    } finally {
      clients.destroy();
      await proxy.close();
    }
  });
});
