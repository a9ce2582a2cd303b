/**
 * The case table of the kubeconfig conformance suite (see kubeconfig-conformance.ts): merge
 * lists, missing and malformed files, YAML documents and duplicates, repeated entry names, every
 * auth kind and every pair of them, token files, relative paths, the CA as data or file,
 * insecure-skip-tls-verify, tls-server-name, a path prefix, credentials in the server URL,
 * impersonation, exec plugins (v1 and v1beta1), an http server, proxies (http, https, socks5)
 * and in-cluster.
 */
import type { CaseContext, ConformanceCase, PluginBehaviour } from "./kubeconfig-conformance.ts";

type Entry = Record<string, unknown>;

/** A kubeconfig with one cluster `c`, one user `u` and context `x` selecting them. */
export function kubeconfig(cluster: Entry, user: Entry | undefined, extra: Entry = {}): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: user === undefined ? [] : [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
    ...extra,
  });
}

const b64 = (text: string): string => Buffer.from(text).toString("base64");
const tls = (ctx: CaseContext, more: Entry = {}): Entry => ({
  server: ctx.server,
  "certificate-authority-data": ctx.caB64,
  ...more,
});

const V1 = "client.authentication.k8s.io/v1";
const V1BETA1 = "client.authentication.k8s.io/v1beta1";
const tokenCredential = (apiVersion: string, token: string, extra: Entry = {}): PluginBehaviour => ({
  stdout: { apiVersion, kind: "ExecCredential", status: { token, ...extra } },
});

/** A JWT-shaped id-token expiring `inSeconds` from now (not signed: clients do not verify it). */
function idToken(inSeconds: number): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "none" })}.${part({ iss: "https://issuer.invalid", exp: Math.floor(Date.now() / 1000) + inSeconds })}.sig`;
}

/** One case whose only file is `config`, passed with `--kubeconfig`. */
function single(
  name: string,
  cluster: (ctx: CaseContext) => Entry,
  user: Entry | undefined,
): ConformanceCase {
  return {
    name,
    setup: (ctx) => ({ files: { config: kubeconfig(cluster(ctx), user) }, kubeconfig: "config" }),
  };
}

/**
 * One case whose kubeconfig is written as plain YAML (not JSON), so a value's type is what a YAML
 * reader makes of it: `cluster` and `user` are the entries' lines, indented under their keys.
 */
function yamlText(name: string, cluster: (ctx: CaseContext) => string, user: string): ConformanceCase {
  return {
    name,
    setup: (ctx) => ({
      files: {
        config: [
          "apiVersion: v1",
          "kind: Config",
          "clusters:",
          "- name: c",
          "  cluster:",
          `    ${cluster(ctx)}`,
          "users:",
          "- name: u",
          "  user:",
          `    ${user}`,
          "contexts:",
          "- name: x",
          "  context: {cluster: c, user: u}",
          "current-context: x",
          "",
        ].join("\n"),
      },
      kubeconfig: "config",
    }),
  };
}

/**
 * One case whose only file is `config`, a YAML kubeconfig (token user `u` of the TLS server)
 * with `before` and `after` around it: `before` goes first, `after` last.
 */
function yamlAround(name: string, before: string, after: string): ConformanceCase {
  return {
    name,
    setup: (ctx) => ({
      files: {
        config: [
          before,
          "apiVersion: v1",
          "kind: Config",
          "clusters:",
          "- name: c",
          "  cluster:",
          `    server: ${ctx.server}`,
          `    certificate-authority-data: ${ctx.caB64}`,
          "users:",
          "- name: u",
          "  user:",
          "    token: first-document",
          "contexts:",
          "- name: x",
          "  context: {cluster: c, user: u}",
          "current-context: x",
          after,
        ].join("\n"),
      },
      kubeconfig: "config",
    }),
  };
}

/** A kubeconfig whose `list` has two entries named as the context selects them, the first one valid. */
function twice(ctx: CaseContext, list: "clusters" | "users" | "contexts"): string {
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: tls(ctx) }],
    users: [{ name: "u", user: { token: "first-entry" } }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  };
  const second = {
    clusters: { name: "c", cluster: tls(ctx, { server: `${ctx.server}/second` }) },
    users: { name: "u", user: { token: "second-entry" } },
    contexts: { name: "x", context: { cluster: "c", user: "u", namespace: "second" } },
  }[list];
  (doc[list] as unknown[]).push(second);
  return JSON.stringify(doc);
}

const execUser = (apiVersion: string, command = "plugin", more: Entry = {}): Entry => ({
  exec: { apiVersion, command, ...(apiVersion === V1 ? { interactiveMode: "Never" } : {}), ...more },
});

export const CASES: ConformanceCase[] = [
  // --- files and merging -------------------------------------------------------------------
  {
    name: "merge: the first file naming an entry wins it",
    setup: (ctx) => ({
      files: {
        a: kubeconfig(tls(ctx), { token: "from-a" }, { "current-context": "" }),
        b: kubeconfig(tls(ctx, { server: `${ctx.server}/from-b` }), { token: "from-b" }),
      },
      KUBECONFIG: ["a", "b"],
    }),
  },
  {
    name: "merge: current-context from a later file",
    setup: (ctx) => ({
      files: {
        a: JSON.stringify({
          clusters: [{ name: "c", cluster: tls(ctx) }],
          users: [{ name: "u", user: { token: "t-a" } }],
        }),
        b: JSON.stringify({
          contexts: [{ name: "y", context: { cluster: "c", user: "u" } }],
          "current-context": "y",
        }),
      },
      KUBECONFIG: ["a", "b"],
    }),
  },
  {
    name: "merge: a missing file in the list is skipped",
    setup: (ctx) => ({ files: { a: kubeconfig(tls(ctx), { token: "t" }) }, KUBECONFIG: ["missing", "a"] }),
  },
  {
    name: "merge: every file in the list missing",
    setup: () => ({ KUBECONFIG: ["missing-1", "missing-2"] }),
  },
  { name: "--kubeconfig names a missing file", setup: () => ({ kubeconfig: "missing" }) },
  {
    name: "malformed YAML",
    setup: () => ({
      files: { config: "users:\n- name: u\n  user:\n    token: planted-yaml-secret\n  - bad: [\n" },
      kubeconfig: "config",
    }),
  },
  {
    name: "a YAML list, not a document",
    setup: () => ({ files: { config: "- a\n- b\n" }, kubeconfig: "config" }),
  },
  { name: "an empty file", setup: () => ({ files: { config: "" }, kubeconfig: "config" }) },
  yamlAround("YAML: a trailing ---", "", "---\n"),
  yamlAround("YAML: --- before and after, with a comment", "---", "---\n# the end\n"),
  yamlAround(
    "YAML: a second document",
    "",
    "---\napiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: second-document\n",
  ),
  yamlText(
    "YAML: a duplicate key",
    (ctx) => `server: ${ctx.server}\n    certificate-authority-data: ${ctx.caB64}`,
    "token: first-value\n    token: last-value",
  ),
  {
    name: "duplicate cluster names",
    setup: (ctx) => ({ files: { config: twice(ctx, "clusters") }, kubeconfig: "config" }),
  },
  {
    name: "duplicate user names",
    setup: (ctx) => ({ files: { config: twice(ctx, "users") }, kubeconfig: "config" }),
  },
  {
    name: "duplicate context names",
    setup: (ctx) => ({ files: { config: twice(ctx, "contexts") }, kubeconfig: "config" }),
  },
  {
    name: "merge: a file with duplicate user names in the list",
    setup: (ctx) => ({
      files: { a: kubeconfig(tls(ctx), { token: "from-a" }), b: twice(ctx, "users") },
      KUBECONFIG: ["a", "b"],
    }),
  },
  {
    name: "no current-context",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "t" }, { "current-context": "" }) },
      kubeconfig: "config",
    }),
  },
  {
    name: "current-context names no context",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "t" }, { "current-context": "nope" }) },
      kubeconfig: "config",
    }),
  },
  single("the context's user is not listed", (ctx) => tls(ctx), undefined),

  // --- one auth kind -----------------------------------------------------------------------
  single("token", (ctx) => tls(ctx), { token: "static-token" }),
  {
    name: "tokenFile, relative to the kubeconfig",
    setup: (ctx) => ({
      files: {
        "conf/config": kubeconfig(tls(ctx), { tokenFile: "../secrets/token" }),
        "secrets/token": "file-token\n",
      },
      kubeconfig: "conf/config",
    }),
  },
  {
    name: "token with tokenFile: the file wins",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "inline", tokenFile: "token" }), token: "from-file" },
      kubeconfig: "config",
    }),
  },
  single("token with a missing tokenFile: the token", (ctx) => tls(ctx), {
    token: "inline",
    tokenFile: "/nonexistent/token",
  }),
  single("a missing tokenFile alone", (ctx) => tls(ctx), { tokenFile: "/nonexistent/token" }),
  {
    name: "an empty tokenFile alone",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { tokenFile: "token" }), token: "" },
      kubeconfig: "config",
    }),
  },
  {
    name: "a tokenFile holding a newline alone",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { tokenFile: "token" }), token: "\n" },
      kubeconfig: "config",
    }),
  },
  {
    name: "a tokenFile holding blanks alone",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { tokenFile: "token" }), token: " \t \n" },
      kubeconfig: "config",
    }),
  },
  {
    name: "a tokenFile with blanks around the token",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { tokenFile: "token" }), token: "\n  padded-token \n\n" },
      kubeconfig: "config",
    }),
  },
  {
    name: "token with an empty tokenFile: the token",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "inline", tokenFile: "token" }), token: "" },
      kubeconfig: "config",
    }),
  },
  single("basic auth", (ctx) => tls(ctx), { username: "bob", password: "hunter2" }),
  single('basic auth with token: ""', (ctx) => tls(ctx), { token: "", username: "bob", password: "pw" }),
  single("password without username", (ctx) => tls(ctx), { password: "pw" }),
  single("username without password", (ctx) => tls(ctx), { username: "bob" }),
  {
    name: "client certificate as data",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-key-data": b64(ctx.fx.alice.key),
        }),
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "client certificate files, relative",
    setup: (ctx) => ({
      files: {
        "conf/config": kubeconfig(tls(ctx), {
          "client-certificate": "pki/alice.crt",
          "client-key": "pki/alice.key",
        }),
        "conf/pki/alice.crt": ctx.fx.alice.cert,
        "conf/pki/alice.key": ctx.fx.alice.key,
      },
      kubeconfig: "conf/config",
    }),
  },
  single("client certificate without a key", (ctx) => tls(ctx), { "client-certificate-data": "Zm9v" }),
  {
    name: "client key without a certificate",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { "client-key-data": b64(ctx.fx.alice.key) }) },
      kubeconfig: "config",
    }),
  },
  {
    name: "client certificate as data and as file",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-certificate": "alice.crt",
          "client-key-data": b64(ctx.fx.alice.key),
        }),
        "alice.crt": ctx.fx.alice.cert,
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec v1: token, args and env",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          exec: {
            apiVersion: V1,
            command: "plugin",
            args: ["--client-secret=planted-argv-secret", "get-token"],
            env: [{ name: "PLUGIN_MODE", value: "test" }],
            interactiveMode: "Never",
          },
        }),
      },
      plugins: { "bin/plugin": { ...tokenCredential(V1, "exec-token"), recordEnv: ["PLUGIN_MODE"] } },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec v1beta1 without interactiveMode",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { exec: { apiVersion: V1BETA1, command: "plugin" } }) },
      plugins: { "bin/plugin": tokenCredential(V1BETA1, "beta-token") },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec v1 without interactiveMode",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { exec: { apiVersion: V1, command: "plugin" } }) },
      plugins: { "bin/plugin": tokenCredential(V1, "t") },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec v1 with interactiveMode Always",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1, "plugin", { interactiveMode: "Always" })) },
      plugins: { "bin/plugin": tokenCredential(V1, "t") },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec returning a client certificate",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1)) },
      plugins: {
        "bin/plugin": {
          stdout: {
            apiVersion: V1,
            kind: "ExecCredential",
            status: { clientCertificateData: ctx.fx.execUser.cert, clientKeyData: ctx.fx.execUser.key },
          },
        },
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec returning a token and a client certificate",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1)) },
      plugins: {
        "bin/plugin": tokenCredential(V1, "both-token", {
          clientCertificateData: ctx.fx.execUser.cert,
          clientKeyData: ctx.fx.execUser.key,
        }),
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec provideClusterInfo with a CA file, tls-server-name and an extension",
    setup: (ctx) => ({
      files: {
        "conf/config": JSON.stringify({
          clusters: [
            {
              name: "c",
              cluster: {
                server: ctx.server,
                "certificate-authority": "ca.crt",
                "tls-server-name": "kube.internal",
                extensions: [{ name: "client.authentication.k8s.io/exec", extension: { audience: "kube" } }],
              },
            },
          ],
          users: [{ name: "u", user: execUser(V1, "plugin", { provideClusterInfo: true }) }],
          contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
          "current-context": "x",
        }),
        "conf/ca.crt": ctx.fx.caPem,
      },
      plugins: { "bin/plugin": tokenCredential(V1, "info-token") },
      kubeconfig: "conf/config",
    }),
  },
  {
    name: "exec plugin that reads stdin",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1BETA1)) },
      plugins: { "bin/plugin": { ...tokenCredential(V1BETA1, "stdin-token"), recordEnv: ["STDIN"] } },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec plugin failing with stderr",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1)) },
      plugins: { "bin/plugin": { exit: 3, stderr: "error: planted-stderr-secret rejected\n" } },
      kubeconfig: "config",
    }),
  },
  single(
    "exec command missing, with installHint",
    (ctx) => tls(ctx),
    execUser(V1, "no-such-plugin", { installHint: "install it with: brew install no-such-plugin" }),
  ),
  {
    name: "exec plugin returning another apiVersion",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1)) },
      plugins: { "bin/plugin": tokenCredential(V1BETA1, "t") },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec plugin returning a certificate without key",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), execUser(V1)) },
      plugins: {
        "bin/plugin": {
          stdout: {
            apiVersion: V1,
            kind: "ExecCredential",
            status: { clientCertificateData: ctx.fx.execUser.cert },
          },
        },
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec command relative to the kubeconfig",
    setup: (ctx) => ({
      files: { "conf/config": kubeconfig(tls(ctx), execUser(V1, "./tools/plugin")) },
      plugins: { "conf/tools/plugin": tokenCredential(V1, "relative-token") },
      kubeconfig: "conf/config",
    }),
  },
  single("oidc auth-provider with a valid id-token", (ctx) => tls(ctx), {
    "auth-provider": {
      name: "oidc",
      config: { "client-id": "k", "idp-issuer-url": "https://issuer.invalid", "id-token": idToken(3600) },
    },
  }),
  single("oidc auth-provider with an expired id-token", (ctx) => tls(ctx), {
    "auth-provider": {
      name: "oidc",
      config: { "client-id": "k", "idp-issuer-url": "https://issuer.invalid", "id-token": idToken(-3600) },
    },
  }),
  single("gcp auth-provider", (ctx) => tls(ctx), { "auth-provider": { name: "gcp", config: {} } }),

  // --- pairs of auth kinds -----------------------------------------------------------------
  single("token and basic auth", (ctx) => tls(ctx), { token: "t", username: "bob", password: "pw" }),
  {
    name: "tokenFile and basic auth",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), { tokenFile: "token", username: "bob", password: "pw" }),
        token: "ft",
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "token and client certificate",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          token: "t",
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-key-data": b64(ctx.fx.alice.key),
        }),
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "token and exec",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "static", ...execUser(V1) }) },
      plugins: { "bin/plugin": tokenCredential(V1, "exec-token") },
      kubeconfig: "config",
    }),
  },
  {
    name: "basic auth and client certificate",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          username: "bob",
          password: "pw",
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-key-data": b64(ctx.fx.alice.key),
        }),
      },
      kubeconfig: "config",
    }),
  },
  {
    name: "basic auth and exec",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { username: "bob", password: "pw", ...execUser(V1) }) },
      plugins: { "bin/plugin": tokenCredential(V1, "exec-token") },
      kubeconfig: "config",
    }),
  },
  {
    name: "client certificate and exec",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-key-data": b64(ctx.fx.alice.key),
          ...execUser(V1),
        }),
      },
      plugins: { "bin/plugin": tokenCredential(V1, "exec-token") },
      kubeconfig: "config",
    }),
  },
  {
    name: "exec and auth-provider",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          ...execUser(V1),
          "auth-provider": {
            name: "oidc",
            config: { "client-id": "k", "idp-issuer-url": "https://i.invalid", "id-token": idToken(3600) },
          },
        }),
      },
      plugins: { "bin/plugin": tokenCredential(V1, "exec-token") },
      kubeconfig: "config",
    }),
  },
  single("token and oidc auth-provider", (ctx) => tls(ctx), {
    token: "static",
    "auth-provider": {
      name: "oidc",
      config: { "client-id": "k", "idp-issuer-url": "https://i.invalid", "id-token": idToken(3600) },
    },
  }),
  single("basic auth and oidc auth-provider", (ctx) => tls(ctx), {
    username: "bob",
    password: "pw",
    "auth-provider": {
      name: "oidc",
      config: { "client-id": "k", "idp-issuer-url": "https://i.invalid", "id-token": idToken(3600) },
    },
  }),
  {
    name: "client certificate and oidc auth-provider",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx), {
          "client-certificate-data": b64(ctx.fx.alice.cert),
          "client-key-data": b64(ctx.fx.alice.key),
          "auth-provider": {
            name: "oidc",
            config: { "client-id": "k", "idp-issuer-url": "https://i.invalid", "id-token": idToken(3600) },
          },
        }),
      },
      kubeconfig: "config",
    }),
  },

  // --- the cluster's TLS -------------------------------------------------------------------
  {
    name: "CA file, relative",
    setup: (ctx) => ({
      files: {
        "conf/config": kubeconfig({ server: ctx.server, "certificate-authority": "ca.crt" }, { token: "t" }),
        "conf/ca.crt": ctx.fx.caPem,
      },
      kubeconfig: "conf/config",
    }),
  },
  {
    name: "CA data and CA file",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx, { "certificate-authority": "ca.crt" }), { token: "t" }),
        "ca.crt": ctx.fx.caPem,
      },
      kubeconfig: "config",
    }),
  },
  single(
    "CA file missing",
    (ctx) => ({ server: ctx.server, "certificate-authority": "/nonexistent/ca.crt" }),
    { token: "t" },
  ),
  single(
    "CA data of another CA",
    (ctx) => ({ server: ctx.server, "certificate-authority-data": b64(ctx.fx.otherCaPem) }),
    { token: "t" },
  ),
  single("no CA: the system roots", (ctx) => ({ server: ctx.server }), { token: "t" }),
  single("insecure-skip-tls-verify", (ctx) => ({ server: ctx.server, "insecure-skip-tls-verify": true }), {
    token: "t",
  }),
  single("insecure-skip-tls-verify with a CA", (ctx) => tls(ctx, { "insecure-skip-tls-verify": true }), {
    token: "t",
  }),
  single("tls-server-name", (ctx) => tls(ctx, { "tls-server-name": "kube.internal" }), { token: "t" }),
  yamlText(
    "YAML 1.1: insecure-skip-tls-verify: yes",
    (ctx) => `server: ${ctx.server}\n    insecure-skip-tls-verify: yes`,
    "token: t",
  ),
  yamlText(
    "YAML 1.1: insecure-skip-tls-verify: off with a CA",
    (ctx) =>
      `server: ${ctx.server}\n    certificate-authority-data: ${ctx.caB64}\n    insecure-skip-tls-verify: off`,
    "token: t",
  ),
  yamlText(
    "YAML 1.1: token: yes",
    (ctx) => `server: ${ctx.server}\n    certificate-authority-data: ${ctx.caB64}`,
    "token: yes",
  ),
  yamlText(
    "YAML 1.1: token: 0777",
    (ctx) => `server: ${ctx.server}\n    certificate-authority-data: ${ctx.caB64}`,
    "token: 0777",
  ),
  yamlText(
    "YAML 1.1: token: 2012-10-17",
    (ctx) => `server: ${ctx.server}\n    certificate-authority-data: ${ctx.caB64}`,
    "token: 2012-10-17",
  ),
  single(
    "tls-server-name the certificate does not name",
    (ctx) => tls(ctx, { "tls-server-name": "other.internal" }),
    { token: "t" },
  ),
  single("server with a path prefix", (ctx) => tls(ctx, { server: `${ctx.server}/prefix/` }), { token: "t" }),
  single(
    "user and password in the server URL",
    (ctx) => tls(ctx, { server: ctx.server.replace("https://", "https://url-user:url-password@") }),
    { token: "t" },
  ),

  // --- impersonation -----------------------------------------------------------------------
  single("impersonation: as, as-uid, as-groups, as-user-extra", (ctx) => tls(ctx), {
    token: "t",
    as: "jane",
    "as-uid": "1234",
    "as-groups": ["devs", "ops"],
    "as-user-extra": { "example.com/scopes": ["read", "write"], reason: ["audit"] },
  }),
  single("impersonation: as-groups without as", (ctx) => tls(ctx), { token: "t", "as-groups": ["devs"] }),

  // --- plain http --------------------------------------------------------------------------
  single("http server: no credentials are sent", (ctx) => ({ server: ctx.httpServer }), {
    token: "clear-text-token",
    as: "jane",
    "as-groups": ["g"],
  }),
  single("http server with basic auth", (ctx) => ({ server: ctx.httpServer }), {
    username: "bob",
    password: "pw",
  }),
  {
    name: "http server with exec",
    setup: (ctx) => ({
      files: { config: kubeconfig({ server: ctx.httpServer }, execUser(V1)) },
      plugins: { "bin/plugin": tokenCredential(V1, "exec-token") },
      kubeconfig: "config",
    }),
  },
  {
    name: "http server with a client certificate",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(
          { server: ctx.httpServer },
          { "client-certificate-data": b64(ctx.fx.alice.cert), "client-key-data": b64(ctx.fx.alice.key) },
        ),
      },
      kubeconfig: "config",
    }),
  },

  // --- proxies -----------------------------------------------------------------------------
  single("proxy-url", (ctx) => tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.proxy }), {
    token: "t",
  }),
  {
    name: "proxy-url with tls-server-name and a client certificate",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(
          tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.proxy, "tls-server-name": "kube.internal" }),
          {
            "client-certificate-data": b64(ctx.fx.alice.cert),
            "client-key-data": b64(ctx.fx.alice.key),
          },
        ),
      },
      kubeconfig: "config",
    }),
  },
  single("proxy-url for a loopback server", (ctx) => tls(ctx, { "proxy-url": ctx.proxy }), { token: "t" }),
  single('proxy-url: ""', (ctx) => tls(ctx, { "proxy-url": "" }), { token: "t" }),
  single(
    "https proxy-url, its certificate from the kubeconfig's CA",
    (ctx) => tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.httpsProxy }),
    { token: "t" },
  ),
  single(
    "https proxy-url with insecure-skip-tls-verify",
    (ctx) => ({ server: ctx.proxiedServer, "proxy-url": ctx.httpsProxy, "insecure-skip-tls-verify": true }),
    { token: "t" },
  ),
  {
    name: "https proxy-url with NODE_EXTRA_CA_CERTS naming the CA",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.httpsProxy }), {
          token: "t",
        }),
      },
      kubeconfig: "config",
      env: { NODE_EXTRA_CA_CERTS: ctx.fx.caFile },
    }),
  },
  single(
    "proxy-url with socks5",
    (ctx) => tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.proxy.replace("http:", "socks5:") }),
    { token: "t" },
  ),
  single("proxy-url with an unknown scheme", (ctx) => tls(ctx, { "proxy-url": "ftp://127.0.0.1:1" }), {
    token: "t",
  }),
  {
    name: "HTTPS_PROXY",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTPS_PROXY: ctx.proxy },
    }),
  },
  {
    name: "https_proxy (lower case)",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { https_proxy: ctx.proxy },
    }),
  },
  {
    name: "HTTPS_PROXY with socks5",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTPS_PROXY: ctx.proxy.replace("http:", "socks5:") },
    }),
  },
  {
    name: "HTTPS_PROXY and a loopback server",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTPS_PROXY: ctx.proxy },
    }),
  },
  {
    name: "HTTPS_PROXY with NO_PROXY naming the domain",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTPS_PROXY: ctx.proxy, NO_PROXY: "example.com,proxy.test" },
    }),
  },
  {
    name: "HTTPS_PROXY with NO_PROXY=*",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTPS_PROXY: ctx.proxy, NO_PROXY: "*" },
    }),
  },
  {
    name: "HTTP_PROXY only, https server",
    setup: (ctx) => ({
      files: { config: kubeconfig(tls(ctx, { server: ctx.proxiedServer }), { token: "t" }) },
      kubeconfig: "config",
      env: { HTTP_PROXY: ctx.proxy },
    }),
  },
  {
    name: "HTTP_PROXY and an http server",
    setup: (ctx) => ({
      files: { config: kubeconfig({ server: ctx.proxiedHttpServer }, undefined) },
      kubeconfig: "config",
      env: { HTTP_PROXY: ctx.proxy },
    }),
  },
  {
    name: "proxy-url over HTTPS_PROXY",
    setup: (ctx) => ({
      files: {
        config: kubeconfig(tls(ctx, { server: ctx.proxiedServer, "proxy-url": ctx.proxy }), { token: "t" }),
      },
      kubeconfig: "config",
      env: { HTTPS_PROXY: "http://127.0.0.1:1", NO_PROXY: "*" },
    }),
  },

  // --- in-cluster --------------------------------------------------------------------------
  {
    name: "in-cluster ServiceAccount",
    setup: (ctx) => ({
      files: { "sa/token": "sa-token\n", "sa/ca.crt": ctx.fx.caPem, "sa/namespace": "ops\n" },
      serviceAccountDir: "sa",
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: new URL(ctx.server).port },
    }),
  },
  {
    name: "in-cluster with an empty token file",
    setup: (ctx) => ({
      files: { "sa/token": "", "sa/ca.crt": ctx.fx.caPem, "sa/namespace": "ops\n" },
      serviceAccountDir: "sa",
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: new URL(ctx.server).port },
    }),
  },
  {
    name: "in-cluster without ca.crt",
    setup: (ctx) => ({
      files: { "sa/token": "sa-token\n" },
      serviceAccountDir: "sa",
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: new URL(ctx.server).port },
    }),
  },
];
