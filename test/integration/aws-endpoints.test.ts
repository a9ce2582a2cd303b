/**
 * Endpoint overrides end to end, through the operator: each service's calls go where the SDK's
 * `AWS_ENDPOINT_URL_<SERVICE>` sends them, the others to `AWS_ENDPOINT_URL` (the chart's
 * `aws.endpoints.<service>` and `aws.endpoint`), and `--aws-s3-addressing-style=path` keeps S3 on
 * path-style requests when the S3 endpoint comes from the shared config file, where the factory
 * cannot see it.
 *
 * Each endpoint is its own counting proxy in front of the one moto, so where a call landed is
 * what that proxy saw. For the addressing style, the endpoint has a name that does not resolve,
 * reached through a forward proxy (HTTP_PROXY) that records the host of every request: path-style
 * keeps the endpoint's host, virtual-hosted puts the bucket in front of it.
 */
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startBackends } from "../support/backends.ts";
import { CountingProxy } from "../support/connect-proxy.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";

const NS = "endpoints";

type Obj = { status?: { conditions?: { type: string; status: string; reason?: string }[] } };

describe("AWS endpoint overrides", () => {
  let cp: ControlPlane;
  let moto: Moto;
  const proxies: AwsProxy[] = [];
  let forward: CountingProxy | undefined;
  let op: OperatorProcess | undefined;

  before(async () => {
    ({ cp, moto } = await startBackends({ installCRDs: true }));
    const ns = await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    assert.equal(ns.status, 201, ns.text);
  });
  after(async () => {
    await op?.stop();
    for (const p of proxies) await p.stop();
    await forward?.close();
    await Promise.allSettled([cp?.stop(), moto?.stop()]);
  });

  const proxy = async (): Promise<AwsProxy> => {
    const p = await startAwsProxy(moto.endpoint);
    proxies.push(p);
    return p;
  };
  const create = async (plural: string, kind: string, name: string, spec: Record<string, unknown>) => {
    const res = await cp.request("POST", `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}`, {
      apiVersion: "compute.cloud.com/v1",
      kind,
      metadata: { name },
      spec: { region: "us-east-1", ...spec },
    });
    assert.equal(res.status, 201, res.text);
  };
  const waitReady = (plural: string, name: string): Promise<void> =>
    waitFor(
      `${plural}/${name} Ready`,
      async () => {
        const res = await cp.request("GET", `/apis/compute.cloud.com/v1/namespaces/${NS}/${plural}/${name}`);
        const ready = (res.body as Obj).status?.conditions?.find((c) => c.type === "Ready");
        return ready?.status === "True";
      },
      WAIT_MS,
      200,
    );
  const services = (p: AwsProxy): string[] => [...new Set(p.calls.map((c) => c.service))].sort();

  it("sends each service's calls to its own endpoint, and the rest to AWS_ENDPOINT_URL", async () => {
    const [sqs, s3, sts, rest] = [await proxy(), await proxy(), await proxy(), await proxy()];
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      dir: cp.dir,
      name: "per-service",
      args: ["--leader-elect=false"],
      env: {
        ...moto.env,
        AWS_ENDPOINT_URL: rest.endpoint,
        AWS_ENDPOINT_URL_SQS: sqs.endpoint,
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        AWS_ENDPOINT_URL_STS: sts.endpoint,
      },
    });
    try {
      await create("sqsqueues", "SqsQueue", "routed", { queueName: "kp-routed" });
      await create("s3buckets", "S3Bucket", "routed", { bucketName: "kp-routed" });
      await create("ec2instances", "Ec2Instance", "routed", {
        instanceType: "t3.micro",
        amiId: "ami-1e749f67",
      });
      for (const plural of ["sqsqueues", "s3buckets", "ec2instances"]) await waitReady(plural, "routed");
    } finally {
      await op.stop();
      op = undefined;
    }

    assert.deepEqual(services(sqs), ["sqs"], "AWS_ENDPOINT_URL_SQS saw SQS only");
    assert.ok(sqs.count("CreateQueue") >= 1);
    assert.deepEqual(services(s3), ["s3"], "AWS_ENDPOINT_URL_S3 saw S3 only");
    assert.ok(s3.count("CreateBucket") >= 1);
    // The STS calls the operator makes of its own accord.
    assert.deepEqual(services(sts), ["sts"], "AWS_ENDPOINT_URL_STS saw STS only");
    assert.deepEqual(services(rest), ["ec2"], "AWS_ENDPOINT_URL saw what no variable of its own names");
    assert.ok(rest.count("RunInstances") >= 1);
  });

  it("keeps path-style S3 requests for an endpoint from the shared config file with --aws-s3-addressing-style=path", async () => {
    forward = await CountingProxy.start();
    const motoPort = new URL(moto.endpoint).port;
    // A name that does not resolve. It starts with "localhost" because moto, behind the proxy,
    // reads the bucket from the first label of any other Host it does not know as AWS's.
    const host = `localhost.endpoints.test:${motoPort}`;
    const config = path.join(cp.dir, "aws-config");
    // The SDK's services section: an S3 endpoint the factory's environment check cannot see.
    writeFileSync(
      config,
      `[default]\nservices = local\n\n[services local]\ns3 =\n  endpoint_url = http://${host}\n`,
    );
    try {
      op = await startOperator({
        kubeconfig: cp.kubeconfigPath,
        dir: cp.dir,
        name: "path-style",
        args: ["--leader-elect=false", "--aws-s3-addressing-style=path"],
        env: {
          AWS_ACCESS_KEY_ID: moto.env.AWS_ACCESS_KEY_ID ?? "testing",
          AWS_SECRET_ACCESS_KEY: moto.env.AWS_SECRET_ACCESS_KEY ?? "testing",
          AWS_REGION: "us-east-1",
          AWS_CONFIG_FILE: config,
          // STS straight to moto (loopback, never proxied): only S3's endpoint is under test.
          AWS_ENDPOINT_URL_STS: moto.endpoint,
          HTTP_PROXY: forward.url,
        },
      });
      await create("s3buckets", "S3Bucket", "path-style", { bucketName: "kp-path-style" });
      await waitReady("s3buckets", "path-style");
      await op.stop();
      op = undefined;
      assert.ok(forward.forwarded.length > 0, "the S3 calls went to the configured endpoint");
      assert.deepEqual(
        [...new Set(forward.forwarded)],
        [host],
        "every request names the endpoint's host, not the bucket's",
      );
    } finally {
      rmSync(config, { force: true });
    }
  });
});
