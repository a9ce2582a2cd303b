/**
 * Kubeconfig conformance with kubectl as the oracle: every case of test/support/kubeconfig-cases.ts
 * is run by `kubectl get --raw /version` and by the operator's loader (kube-get-version.ts)
 * against the same recording servers and proxy, and what reached them must be the same: the
 * requests (path, Authorization, Impersonate-* headers, client certificate, SNI), the proxy's
 * tunnels and forwarded requests, what the exec plugins saw, and whether the client refused.
 * The only differences allowed are those in {@link DELIBERATE}, each with its reason (also in
 * docs/install.md, "kubeconfig and credentials"). Needs no control plane.
 */
import { build } from "esbuild";
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CASES } from "../support/kubeconfig-cases.ts";
import {
  createFixture,
  removeFixture,
  runCase,
  type ClientUnderTest,
  type Fixture,
  type Observation,
} from "../support/kubeconfig-conformance.ts";
import { inParallel } from "../support/pool.ts";
import { repoRoot } from "../support/process.ts";
import { toolPath } from "../support/tools.ts";

type DeliberateCheck = (kubectl: Observation, project: Observation) => void;

/**
 * The documented differences from kubectl: case name → why, and what each side must do.
 */
const DELIBERATE: Record<string, { why: string; check: DeliberateCheck }> = {};
const PROMPT = {
  why:
    "kubectl asks for a username and password on stdin when the user of an https server has no " +
    "credentials, and fails without an answer; the operator never prompts and connects without " +
    "credentials, as client-go does for programs that give it no prompt (controller-runtime)",
  check(kubectl: Observation, project: Observation): void {
    assert.equal(kubectl.ok, false);
    assert.deepEqual(kubectl.requests, []);
    assert.equal(project.ok, true);
    assert.deepEqual(
      project.requests.map((r) => [r.authorization, r.clientCN]),
      [["", ""]],
    );
  },
};
for (const name of [
  "the context's user is not listed",
  "password without username",
  "client key without a certificate",
])
  DELIBERATE[name] = PROMPT;

/**
 * kubectl gets through (with `tunnels` proxy tunnels) and sends `authorization`; the operator
 * fails and nothing reaches the server or the proxy.
 */
function refusedWhereKubectlSends(authorization: string, tunnels = 0): DeliberateCheck {
  return (kubectl, project) => {
    assert.equal(kubectl.ok, true);
    assert.deepEqual(
      kubectl.requests.map((r) => [r.path, r.authorization]),
      [["/version", authorization]],
    );
    assert.equal(kubectl.tunnels, tunnels);
    assert.equal(project.ok, false);
    assert.deepEqual(project.requests, []);
    assert.equal(project.tunnels, 0);
  };
}
DELIBERATE["YAML: a second document"] = {
  why:
    "kubectl reads the first YAML document of a file and ignores the others; the operator refuses a " +
    "file with a second document that is not empty rather than half read it (a trailing --- is read)",
  check: refusedWhereKubectlSends("Bearer first-document"),
};
DELIBERATE["YAML: a duplicate key"] = {
  why:
    "kubectl takes the last of two equal keys in a mapping; the operator refuses the file, naming the " +
    "line, rather than pick one",
  check: refusedWhereKubectlSends("Bearer last-value"),
};
DELIBERATE["user and password in the server URL"] = {
  why:
    "Go sends a user name and password in the server URL as basic auth, over the user's token and " +
    "over http too; the operator refuses such a URL at start, without quoting it",
  check: refusedWhereKubectlSends(`Basic ${Buffer.from("url-user:url-password").toString("base64")}`),
};
for (const name of [
  "https proxy-url, its certificate from the kubeconfig's CA",
  "https proxy-url with insecure-skip-tls-verify",
])
  DELIBERATE[name] = {
    why:
      "Go verifies an https proxy with the cluster's TLS settings (its CA, insecure-skip-tls-verify); " +
      "Node verifies it against its own CA roots, to which NODE_EXTRA_CA_CERTS adds (a case below)",
    check: refusedWhereKubectlSends("Bearer t", 1),
  };

/**
 * The clients: kubectl, and the operator's entry bundled once with esbuild (as the image bundles
 * the operator), which starts in a third of the time of the sources.
 */
function clientsFor(entryBundle: string): ClientUnderTest[] {
  return [
    { name: "kubectl", command: (args) => ({ file: toolPath("kubectl"), args }) },
    // The entry takes kubectl's arguments after `get --raw /version`.
    {
      name: "project",
      command: (args) => ({ file: process.execPath, args: [entryBundle, ...args.slice(3)] }),
    },
  ];
}

describe("kubeconfig conformance with kubectl", () => {
  let fx: Fixture;
  const results = new Map<string, Record<string, Observation & { stderr: string }>>();
  before(async () => {
    fx = createFixture();
    const entryBundle = path.join(fx.dir, "kube-get-version.mjs");
    await build({
      entryPoints: [path.join(repoRoot, "test/support/kube-get-version.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: entryBundle,
      logLevel: "warning",
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    const clients = clientsFor(entryBundle);
    await inParallel(CASES, 8, async (c) => {
      results.set(c.name, await runCase(fx, c, clients));
    });
  });
  after(() => removeFixture(fx));

  it("covers each deliberate difference with a case", () => {
    for (const name of Object.keys(DELIBERATE))
      assert.ok(
        CASES.some((c) => c.name === name),
        `deliberate difference without a case: ${name}`,
      );
  });

  for (const c of CASES) {
    it(c.name, () => {
      const r = results.get(c.name);
      assert.ok(r !== undefined);
      const { stderr: kubectlErr, ...kubectl } = r.kubectl as Observation & { stderr: string };
      const { stderr: projectErr, ...project } = r.project as Observation & { stderr: string };
      const deliberate = DELIBERATE[c.name];
      if (deliberate !== undefined) {
        deliberate.check(kubectl, project);
        return;
      }
      assert.deepStrictEqual(
        project,
        kubectl,
        `differs from kubectl\nkubectl stderr: ${kubectlErr.trim()}\nproject stderr: ${projectErr.trim()}`,
      );
      // A refusal says why in one line (the operator logs it and exits).
      if (!project.ok) assert.match(projectErr.trim(), /^[^\n]+$/);
    });
  }
});
