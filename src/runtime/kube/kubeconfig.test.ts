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

  it("reads the first YAML document and ignores an empty one after it; refuses a second real one", async () => {
    for (const tail of ["---\n", "---\n# nothing here\n", "--- \n...\n", "---\n---\n"]) {
      const kc = await KubeConfig.fromString(`${YAML}${tail}`, dir);
      assert.equal(kc.contextName, "prod-ops", JSON.stringify(tail));
    }
    await assert.rejects(
      async () => KubeConfig.fromString(`${YAML}---\nkind: Config\n`, dir),
      (err: unknown) =>
        err instanceof InvalidKubeConfigError && /holds more than one YAML document/.test(err.message),
    );
    await assert.rejects(
      async () => KubeConfig.fromString(`---\n---\n${YAML}`, dir),
      /holds more than one YAML document/,
    );
    await assert.rejects(
      async () => KubeConfig.fromString(`${YAML}current-context: prod-robot\n`, dir),
      (err: unknown) =>
        err instanceof InvalidKubeConfigError && /duplicate key at line \d+/.test(err.message),
    );
  });

  it("refuses repeated names in a list, naming the list and the name, never an entry", async () => {
    const twice = (list: string, entry: (n: number) => string): string =>
      YAML.replace(`${list}:\n`, `${list}:\n${entry(1)}${entry(2)}`);
    const cases: [string, RegExp][] = [
      [
        twice("clusters", (n) => `- name: prod\n  cluster:\n    server: https://dup-${n}.example.com\n`),
        /clusters has more than one entry named "prod"/,
      ],
      [
        twice("users", (n) => `- name: ops\n  user:\n    token: planted-secret-${n}\n`),
        /users has more than one entry named "ops"/,
      ],
      [
        twice(
          "contexts",
          (n) => `- name: prod-ops\n  context: {cluster: prod, user: ops, namespace: n${n}}\n`,
        ),
        /contexts has more than one entry named "prod-ops"/,
      ],
      [
        YAML.replace(
          "    tls-server-name: api.internal\n",
          "    tls-server-name: api.internal\n    extensions:\n    - {name: e, extension: {a: 1}}\n    - {name: e, extension: {a: 2}}\n",
        ),
        /clusters\["prod"\]\.cluster\.extensions has more than one entry named "e"/,
      ],
    ];
    for (const [text, message] of cases)
      await assert.rejects(
        async () => KubeConfig.fromFile(write("dup", text)),
        (err: unknown) =>
          err instanceof InvalidKubeConfigError &&
          message.test(err.message) &&
          !/planted-secret|dup-\d/.test(err.message),
      );
    // A KUBECONFIG list is refused when one of its files is.
    const good = write("good", YAML);
    await assert.rejects(
      async () => KubeConfig.fromFiles([good, path.join(dir, "dup")]),
      /more than one entry named/,
    );
  });

  it("refuses a server URL holding a user name or password, without quoting it", () => {
    const kc = KubeConfig.fromDocument({
      clusters: [{ name: "c", cluster: { server: "https://admin:planted-secret@c.example.com" } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    });
    assert.throws(
      () => validate(kc),
      (err: unknown) =>
        err instanceof InvalidKubeConfigError &&
        /cluster "c" has a user name or password in its server URL/.test(err.message) &&
        !/planted-secret|admin/.test(err.message),
    );
  });

  it("refuses an empty or unreadable tokenFile without a token, as client-go does", () => {
    const empty = write("empty-token", "");
    const blank = write("blank-token", " \n\t\n");
    const good = write("good-token", "tok\n");
    const withUser = (user: object, server = "https://c"): KubeConfig =>
      KubeConfig.fromDocument({
        clusters: [{ name: "c", cluster: { server } }],
        users: [{ name: "u", user }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      });
    for (const file of [empty, blank])
      assert.throws(
        () => validate(withUser({ tokenFile: file })),
        (err: unknown) =>
          err instanceof InvalidKubeConfigError &&
          err.message.includes(`user "u" has an empty tokenFile ${file} (read empty token from file)`),
      );
    assert.throws(
      () => validate(withUser({ tokenFile: path.join(dir, "no-such-token") })),
      /cannot read tokenFile \S+no-such-token of user "u": ENOENT/,
    );
    validate(withUser({ tokenFile: good }));
    // With a token the file is only the preferred source; an http server gets no credentials.
    validate(withUser({ tokenFile: empty, token: "inline" }));
    validate(withUser({ tokenFile: empty }, "http://c"));
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
