import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  InvalidKubeConfigError,
  KubeConfig,
  KubeConfigError,
  UnsupportedKubeConfigError,
  validate,
} from "./kubeconfig.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "kubeconfig-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const YAML = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example.com:6443
    certificate-authority: certs/ca.crt
    tls-server-name: api.internal
users:
- name: ops
  user:
    client-certificate: certs/ops.crt
    client-key: /abs/ops.key
    as: auditor
    as-groups: [readers]
- name: robot
  user:
    tokenFile: robot.token
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
contexts:
- name: prod-ops
  context: { cluster: prod, user: ops, namespace: tools }
- name: prod-robot
  context: { cluster: prod, user: robot }
current-context: prod-ops
`;

describe("KubeConfig", () => {
  it("reads a YAML kubeconfig and resolves relative paths against its folder", async () => {
    const kc = await KubeConfig.fromFile(write("config", YAML));
    assert.equal(kc.contextName, "prod-ops");
    assert.equal(kc.namespace, "tools");
    assert.equal(kc.cluster.server, "https://prod.example.com:6443");
    assert.equal(kc.cluster["certificate-authority"], path.join(dir, "certs/ca.crt"));
    assert.equal(kc.cluster["tls-server-name"], "api.internal");
    assert.equal(kc.user["client-certificate"], path.join(dir, "certs/ops.crt"));
    assert.equal(kc.user["client-key"], "/abs/ops.key");
    assert.equal(kc.user.as, "auditor");
    assert.deepEqual(kc.user["as-groups"], ["readers"]);
  });

  it("resolves token files and exec commands with a path, and keeps bare command names for PATH", async () => {
    const kc = await KubeConfig.fromFile(
      write("robot", YAML.replace("current-context: prod-ops", "current-context: prod-robot")),
    );
    assert.equal(kc.user.tokenFile, path.join(dir, "robot.token"));
    assert.equal(kc.user.exec?.command, path.join(dir, "bin/get-token"));
    const bare = await KubeConfig.fromString(
      YAML.replace("command: ./bin/get-token", "command: aws").replace(
        "current-context: prod-ops",
        "current-context: prod-robot",
      ),
      dir,
    );
    assert.equal(bare.user.exec?.command, "aws");
  });

  it("round-trips through its JSON form", async () => {
    const kc = await KubeConfig.fromFile(write("rt", YAML));
    const again = await KubeConfig.fromFile(write("rt.json", kc.toString()));
    assert.deepEqual(again.document, kc.document);
  });

  it("merges a KUBECONFIG list as kubectl does: the first file naming an entry or current-context wins", async () => {
    const a = write(
      "a",
      `clusters: [{name: c, cluster: {server: "https://a"}}]
users: [{name: u, user: {token: from-a}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
`,
    );
    const b = write(
      "b",
      `clusters: [{name: c, cluster: {server: "https://b"}}, {name: d, cluster: {server: "https://d"}}]
users: [{name: u, user: {token: from-b}}]
contexts: [{name: later, context: {cluster: d, user: u}}]
current-context: x
`,
    );
    const c = write("c", `current-context: later\n`);
    const kc = await KubeConfig.fromFiles([path.join(dir, "missing"), a, b, c]);
    assert.equal(kc.contextName, "x");
    assert.equal(kc.cluster.server, "https://a");
    assert.equal(kc.user.token, "from-a");
    const viaEnv = await KubeConfig.fromDefault({ KUBECONFIG: [c, b].join(path.delimiter) });
    assert.equal(viaEnv.contextName, "later");
    assert.equal(viaEnv.cluster.server, "https://d");
    await assert.rejects(async () => KubeConfig.fromFiles([path.join(dir, "nope")]), KubeConfigError);
  });

  it("builds the in-cluster configuration from the service environment and the ServiceAccount folder", () => {
    const sa = mkdtempSync(path.join(dir, "sa-"));
    writeFileSync(path.join(sa, "namespace"), "operators\n");
    writeFileSync(path.join(sa, "ca.crt"), "a CA\n");
    const kc = KubeConfig.inCluster(
      { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
      sa,
    );
    assert.equal(kc.cluster.server, "https://[fd00::1]:443");
    assert.equal(kc.cluster["certificate-authority"], path.join(sa, "ca.crt"));
    assert.equal(kc.user.tokenFile, path.join(sa, "token"));
    assert.equal(kc.namespace, "operators");
    assert.equal(
      KubeConfig.inCluster({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "6443" }, sa)
        .cluster.server,
      "https://10.0.0.1:6443",
    );
    assert.throws(() => KubeConfig.inCluster({}, sa), /KUBERNETES_SERVICE_HOST/);
    // Without a readable ca.crt client-go goes on with the system roots.
    const bare = mkdtempSync(path.join(dir, "sa-"));
    assert.equal(
      KubeConfig.inCluster({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "6443" }, bare)
        .cluster["certificate-authority"],
      undefined,
    );
  });

  it("refuses what it cannot honour, saying what", async () => {
    const base = {
      clusters: [{ name: "c", cluster: { server: "https://c" } }],
      users: [{ name: "u", user: {} }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    };
    assert.throws(() => KubeConfig.fromDocument({ ...base, "current-context": "" }), /no current-context/);
    assert.throws(
      () => KubeConfig.fromDocument({ ...base, "current-context": "other" }),
      /no context "other"/,
    );
    const withUser = (user: object): KubeConfig =>
      KubeConfig.fromDocument({ ...base, users: [{ name: "u", user }] });
    assert.throws(
      () => validate(withUser({ "auth-provider": { name: "gcp" } })),
      (err: unknown) =>
        err instanceof UnsupportedKubeConfigError &&
        /user "u" uses auth-provider "gcp", which client-go removed: use its exec plugin \(gke-gcloud-auth-plugin\)/.test(
          err.message,
        ),
    );
    validate(
      withUser({
        "auth-provider": { name: "oidc", config: { "idp-issuer-url": "https://i", "client-id": "k" } },
      }),
    );
    const withCluster = (cluster: object): KubeConfig =>
      KubeConfig.fromDocument({
        ...base,
        clusters: [{ name: "c", cluster: { server: "https://c", ...cluster } }],
      });
    validate(withCluster({ "proxy-url": "http://proxy:3128" }));
    validate(withCluster({ "proxy-url": "" }));
    assert.throws(
      () => validate(withCluster({ "proxy-url": "socks5://proxy:1080" })),
      (err: unknown) =>
        err instanceof UnsupportedKubeConfigError && /cluster "c" sets a socks5 proxy-url/.test(err.message),
    );
    assert.throws(
      () => validate(withUser({ "client-certificate-data": "Zm9v" })),
      (err: unknown) =>
        err instanceof InvalidKubeConfigError &&
        /user "u" has a client certificate without client-key or client-key-data/.test(err.message),
    );
    assert.throws(
      () => validate(withUser({ token: "t", "as-groups": ["g"] })),
      /user "u" sets as-uid, as-groups or as-user-extra without as/,
    );
    await assert.rejects(
      async () => KubeConfig.fromString("- just\n- a list\n"),
      /not a kubeconfig document/,
    );
    await assert.rejects(async () => KubeConfig.fromString("clusters: [unclosed"), /not valid YAML/);
  });

  it("reports a YAML error by line and column, never quoting the file", async () => {
    const text =
      "users:\n- name: u\n  user:\n    token: tok-secret-1\n    client-key-data: key-secret-2\n   bad: [x\n*alias-secret-3\n";
    await assert.rejects(
      async () => KubeConfig.fromString(text),
      (err: unknown) =>
        err instanceof InvalidKubeConfigError &&
        /is not valid YAML: .+ at line \d+, column \d+$/.test(err.message) &&
        !/secret/.test(err.message),
    );
    await assert.rejects(
      async () => KubeConfig.fromString("a: *unknown-secret-alias\n"),
      (err: unknown) => err instanceof InvalidKubeConfigError && !/secret/.test(err.message),
    );
  });
});
