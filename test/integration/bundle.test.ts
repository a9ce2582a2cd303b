/**
 * The image's entry point, the esbuild bundle of hack/bundle.ts: it runs the operator on its own
 * (no node_modules beside it), serves an S3Bucket through the SDK code it kept, and has left out
 * the SDK shapes of operations the operator never calls. An operator with buckets alone parses
 * the SDK clients of S3 and of STS (which tells the account ID each object's status records),
 * never EC2's or SQS's, nor the X.509 code (a module hook records every chunk the process loads);
 * run as in a pod, it never parses the YAML reader of kubeconfig files. Its secure /metrics
 * endpoint signs its own certificate with the X.509 code the bundle carries.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { get } from "node:https";
import type { TLSSocket } from "node:tls";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { bundle } from "../../hack/bundle.ts";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { startOperator } from "../support/operator.ts";
import { freePort, repoRoot, trackTempDir } from "../support/process.ts";
import { podServiceAccount } from "../support/service-account-namespace.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bundle-"));
trackTempDir(dir);
const entry = path.join(dir, "kubeprovisioner.mjs");
const output = await bundle(entry);
const moduleLog = path.join(dir, "modules.log");

/** The URL of the one file of the bundle that holds input module `input` (a path under the repository). */
function fileHolding(input: string): string {
  const files = output.files.filter((f) => f.inputs.includes(input));
  assert.equal(files.length, 1, `one file of the bundle holds ${input}`);
  return pathToFileURL((files[0] as { path: string }).path).href;
}

describe("the bundled operator", () => {
  const env = new S3Env("bundle", {
    operatorEntry: entry,
    operatorEnv: {
      NODE_OPTIONS: `--import=${path.join(repoRoot, "test/support/module-log.ts")}`,
      MODULE_LOG_FILE: moduleLog,
    },
  }).hooks();

  it("creates a bucket and reports it Ready", async () => {
    const created = await env.create("bundle-assets", { versioning: true, tags: { team: "a" } });
    await env.waitReady("bundle-assets");
    assert.equal(await env.bucketExists("bundle-assets"), true);
    assert.equal(await env.versioning("bundle-assets"), "Enabled");
    const tags = await env.bucketTags("bundle-assets");
    assert.equal(tags.team, "a");
    assert.equal(tags[OWNERSHIP_TAGS.uid], created.metadata.uid);
  });

  it("with buckets alone, parses the SDK clients of S3 and STS, never EC2's or SQS's, nor X.509 code", async () => {
    await env.create("bundle-lazy");
    await env.waitReady("bundle-lazy");
    const loaded = new Set(readFileSync(moduleLog, "utf8").split("\n"));
    assert.ok(loaded.has(pathToFileURL(entry).href), "the hook saw the entry point");
    const client = (svc: string, cls: string): string =>
      fileHolding(`node_modules/@aws-sdk/client-${svc}/dist-es/${cls}.js`);
    assert.ok(loaded.has(client("s3", "S3Client")), "S3's client was loaded");
    assert.ok(loaded.has(client("sts", "STSClient")), "STS's client was loaded: the account ID");
    for (const [svc, cls] of [
      ["ec2", "EC2Client"],
      ["sqs", "SQSClient"],
    ] as const) {
      assert.ok(!loaded.has(client(svc, cls)), `${cls} was never loaded`);
    }
    assert.ok(
      !loaded.has(fileHolding("node_modules/@peculiar/x509/build/x509.es.js")),
      "no X.509 code without a generated certificate",
    );
    const services = env.op
      .logLines()
      .filter((l) => l.msg === "loaded the AWS SDK client module")
      .map((l) => String(l.service));
    assert.deepEqual(services.sort(), ["s3", "sts"]);
  });

  it("parses the YAML reader for a kubeconfig file, and never in a pod (the in-cluster configuration)", async () => {
    const yamlReader = fileHolding("src/runtime/kube/kubeconfig-yaml.ts");
    assert.ok(
      readFileSync(moduleLog, "utf8").split("\n").includes(yamlReader),
      "the operator given a kubeconfig file loaded the YAML reader",
    );
    const podLog = path.join(dir, "pod-modules.log");
    const op = await startOperator({
      kubeconfig: env.cp.kubeconfigPath,
      inCluster: {
        server: env.cp.server,
        serviceAccountDir: await podServiceAccount(env.cp, dir, "bundle-pod"),
      },
      dir: env.cp.dir,
      name: "bundle-in-cluster",
      entry,
      env: {
        NODE_OPTIONS: `--import=${path.join(repoRoot, "test/support/module-log.ts")}`,
        MODULE_LOG_FILE: podLog,
      },
      // A namespace with no objects: this second operator only connects and serves its probes.
      args: ["--leader-elect=false", "--watch-namespace=bundle-idle"],
    });
    try {
      assert.match(op.logText(), /"msg":"using API server"/);
      const loaded = readFileSync(podLog, "utf8").split("\n");
      assert.ok(loaded.includes(pathToFileURL(entry).href), "the hook saw the entry point");
      assert.ok(!loaded.includes(yamlReader), "the in-cluster operator never loaded the YAML reader");
    } finally {
      await op.stop();
    }
  });

  it("keeps only the SDK shapes of operations the operator calls", () => {
    const code = output.files.map((f) => readFileSync(f.path, "utf8")).join("\n");
    assert.match(code, /"DescribeInstancesRequest"/);
    assert.match(code, /"RunInstancesRequest"/);
    assert.doesNotMatch(code, /"WithdrawByoipCidrRequest"/);
    assert.doesNotMatch(code, /"CreateVpnConnectionRequest"/);
  });

  it("serves /metrics over TLS with a certificate it signed itself", async () => {
    const port = await freePort();
    const op = await startOperator({
      kubeconfig: env.cp.kubeconfigPath,
      dir: env.cp.dir,
      name: "bundle-secure-metrics",
      entry,
      // A namespace with no objects: this second operator only serves its endpoints.
      args: [
        "--leader-elect=false",
        "--watch-namespace=bundle-idle",
        "--metrics-secure=true",
        `--metrics-bind-address=127.0.0.1:${port}`,
      ],
    });
    try {
      const { status, peer } = await new Promise<{ status: number; peer: X509Certificate }>(
        (resolve, reject) => {
          const req = get(
            { host: "127.0.0.1", port, path: "/metrics", rejectUnauthorized: false, agent: false },
            (res) => {
              const raw = (res.socket as TLSSocket).getPeerCertificate().raw;
              res.resume();
              res.on("end", () => resolve({ status: res.statusCode ?? 0, peer: new X509Certificate(raw) }));
            },
          );
          req.on("error", reject);
        },
      );
      assert.equal(status, 401, "an anonymous scrape is refused");
      assert.equal(peer.issuer, peer.subject, "self-signed");
      assert.ok(peer.verify(peer.publicKey), "signed by its own key");
    } finally {
      await op.stop();
    }
  });
});
