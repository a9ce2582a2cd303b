/**
 * Proxies as Go programs use them, through a loopback proxy that counts CONNECT tunnels and
 * forwarded requests: the API server through `proxy-url` and through HTTPS_PROXY, NO_PROXY
 * exclusion, loopback never proxied from the environment; the AWS clients (against moto)
 * through HTTP_PROXY, with the same exclusions. Targets are named `*.proxy.test`, which resolves
 * nowhere: such a request succeeds only through the proxy (which reaches 127.0.0.1).
 */
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { AwsClients } from "../../src/aws/clients.ts";
import { AwsError } from "../../src/aws/errors.ts";
import { KubeConfigConnection } from "../../src/runtime/kube/connection.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import { RestClient } from "../../src/runtime/kube/rest.ts";
import { CountingProxy } from "../support/connect-proxy.ts";
import {
  createFixture,
  PROXIED_NAME,
  removeFixture,
  type Fixture,
} from "../support/kubeconfig-conformance.ts";
import { startEmulator } from "../support/backends.ts";
import type { Moto } from "../support/moto.ts";

describe("proxies", () => {
  let fx: Fixture;
  let server: https.Server;
  let port: number;
  let proxy: CountingProxy;
  let moto: Moto;
  const authorizations: string[] = [];

  before(async () => {
    fx = createFixture();
    server = https.createServer({ cert: fx.serverCert, key: fx.serverKey }, (req, res) => {
      authorizations.push(req.headers.authorization ?? "");
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"gitVersion":"v1.36.0"}');
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
    proxy = await CountingProxy.start();
    moto = await startEmulator();
  });
  after(async () => {
    await proxy.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await moto.stop();
    removeFixture(fx);
  });

  const reset = (): void => {
    proxy.tunnels.length = 0;
    proxy.forwarded.length = 0;
    proxy.proxyAuthorizations.length = 0;
    authorizations.length = 0;
  };

  async function version(host: string, cluster: object, env: Record<string, string>): Promise<unknown> {
    const kc = KubeConfig.fromDocument({
      clusters: [
        {
          name: "c",
          cluster: {
            server: `https://${host}:${port}`,
            "certificate-authority-data": Buffer.from(fx.caPem).toString("base64"),
            ...cluster,
          },
        },
      ],
      users: [{ name: "u", user: { token: "proxied-token" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    });
    const connection = new KubeConfigConnection(kc, { env });
    const rest = new RestClient({ connection, registry: new Registry(), timeoutMs: 10_000 });
    try {
      return await rest.request({ method: "GET", path: "/version" });
    } finally {
      connection.destroy();
    }
  }

  it("reaches the API server through proxy-url, one tunnel, with the proxy's credentials", async () => {
    reset();
    const withAuth = proxy.url.replace("http://", "http://proxy-user:proxy-pass@");
    assert.deepEqual(await version(PROXIED_NAME, { "proxy-url": withAuth }, {}), { gitVersion: "v1.36.0" });
    assert.deepEqual(proxy.tunnels, [`${PROXIED_NAME}:${port}`]);
    assert.deepEqual(proxy.proxyAuthorizations, [
      `Basic ${Buffer.from("proxy-user:proxy-pass").toString("base64")}`,
    ]);
    // The bearer token travels inside the tunnel, to the API server only.
    assert.deepEqual(authorizations, ["Bearer proxied-token"]);
  });

  it("reaches the API server through HTTPS_PROXY and https_proxy", async () => {
    for (const name of ["HTTPS_PROXY", "https_proxy"]) {
      reset();
      assert.deepEqual(await version(PROXIED_NAME, {}, { [name]: proxy.url }), { gitVersion: "v1.36.0" });
      assert.deepEqual(proxy.tunnels, [`${PROXIED_NAME}:${port}`], name);
    }
  });

  it("goes direct for NO_PROXY matches and, from the environment, for loopback", async () => {
    for (const noProxy of ["proxy.test", ".proxy.test", `${PROXIED_NAME}:${port}`, "*"]) {
      reset();
      await assert.rejects(
        version(PROXIED_NAME, {}, { HTTPS_PROXY: proxy.url, NO_PROXY: noProxy }),
        /ENOTFOUND|EAI_AGAIN/,
      );
      assert.deepEqual(proxy.tunnels, [], noProxy);
    }
    reset();
    assert.deepEqual(await version("127.0.0.1", {}, { HTTPS_PROXY: proxy.url }), { gitVersion: "v1.36.0" });
    assert.deepEqual(await version("localhost", {}, { HTTPS_PROXY: proxy.url }), { gitVersion: "v1.36.0" });
    assert.deepEqual(proxy.tunnels, []);
    // An explicit proxy-url applies to loopback too.
    assert.deepEqual(await version("127.0.0.1", { "proxy-url": proxy.url }, {}), { gitVersion: "v1.36.0" });
    assert.deepEqual(proxy.tunnels, [`127.0.0.1:${port}`]);
  });

  async function listQueues(endpointHost: string, env: Record<string, string>): Promise<unknown> {
    const motoPort = new URL(moto.endpoint).port;
    const aws = new AwsClients({
      endpoint: `http://${endpointHost}:${motoPort}`,
      registry: new Registry(),
      rateBudget: false,
      maxAttempts: 1,
      env,
    });
    try {
      return await (await aws.client("sqs", "us-east-1")).send(new ListQueuesCommand({}));
    } finally {
      aws.destroy();
    }
  }

  it("tunnels the AWS clients' https requests through HTTPS_PROXY, except NO_PROXY matches", async () => {
    const aws = (env: Record<string, string>): AwsClients =>
      new AwsClients({
        endpoint: `https://sqs.proxy.test:${port}`,
        registry: new Registry(),
        rateBudget: false,
        maxAttempts: 1,
        env,
      });
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "y",
      AWS_EC2_METADATA_DISABLED: "true",
    });
    try {
      reset();
      const through = aws({ HTTPS_PROXY: proxy.url });
      // The test server's CA is not the SDK's: the call fails after the tunnel, on the certificate.
      await assert.rejects(
        (await through.client("sqs", "us-east-1")).send(new ListQueuesCommand({})),
        AwsError,
      );
      through.destroy();
      assert.deepEqual(proxy.tunnels, [`sqs.proxy.test:${port}`]);

      reset();
      const direct = aws({ HTTPS_PROXY: proxy.url, NO_PROXY: ".proxy.test" });
      await assert.rejects(
        (await direct.client("sqs", "us-east-1")).send(new ListQueuesCommand({})),
        (e: unknown) => {
          assert.ok(e instanceof AwsError);
          assert.match(e.info.code, /ENOTFOUND|EAI_AGAIN/);
          return true;
        },
      );
      direct.destroy();
      assert.deepEqual(proxy.tunnels, []);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  it("sends the AWS clients' requests through HTTP_PROXY, except loopback and NO_PROXY matches", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, moto.env);
    delete process.env.AWS_ENDPOINT_URL;
    try {
      reset();
      await listQueues("sqs.proxy.test", { HTTP_PROXY: proxy.url });
      assert.equal(proxy.forwarded.length, 1);
      assert.match(proxy.forwarded[0] ?? "", /^sqs\.proxy\.test:\d+$/);

      reset();
      await listQueues("127.0.0.1", { HTTP_PROXY: proxy.url });
      assert.deepEqual(proxy.forwarded, []);

      const excluded: Record<string, string>[] = [
        { HTTP_PROXY: proxy.url, NO_PROXY: "proxy.test" },
        { HTTP_PROXY: proxy.url, no_proxy: "*.proxy.test" },
        // HTTPS_PROXY is for https endpoints only.
        { HTTPS_PROXY: proxy.url },
      ];
      for (const env of excluded) {
        reset();
        const err = await listQueues("sqs.proxy.test", env).then(
          () => assert.fail("reached a name that resolves nowhere without the proxy"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof AwsError, String(err));
        assert.match(err.info.code, /ENOTFOUND|EAI_AGAIN/);
        assert.deepEqual(proxy.forwarded, [], JSON.stringify(env));
        assert.deepEqual(proxy.tunnels, []);
      }
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
