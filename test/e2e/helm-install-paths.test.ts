/**
 * The chart's install paths on a real kube-apiserver with the real helm, run as docs/install.md
 * documents them (its commands are read from the page and run with bash):
 *
 * - the CRDs come from the chart's crds/ folder: `helm install` creates them when they are absent
 *   (so `awsAccounts.accounts` works at the first install), no release owns them, so a release
 *   installs over CRDs another release left behind or `kubectl apply -k config/crd` created, and
 *   Helm never upgrades them: the documented server-side apply does;
 * - an AwsAccount of `awsAccounts.accounts` is removed by the documented upgrade with
 *   `--reuse-values`, and by a values file that no longer lists it, and stays removed through
 *   the next upgrades;
 * - a namespaced install says what it watches in its notes, and the API server warns on an object
 *   created or changed in a namespace it does not watch.
 *
 * No operator runs here: nothing sets the AwsAccounts' finalizer, so they go at once.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parse, stringify } from "yaml";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { shCommands, runBash } from "../support/doc-commands.ts";
import { CommandError, repoRoot, trackTempDir, waitFor, WAIT_MS } from "../support/process.ts";
import { helmKubeVersionArgs, toolPath } from "../support/tools.ts";
import { CRDS } from "./chart-expect.ts";
import { CHART_DIR, helm, type HelmResult } from "./helm.ts";

/** The release and namespace docs/install.md's commands name. */
const RELEASE = "kubeprovisioner";
const NS = "kubeprovisioner-system";
const INSTALL_MD = readFileSync(path.join(repoRoot, "docs/install.md"), "utf8");

/** The one documented command matching `re`. */
function documented(re: RegExp): string {
  const hits = shCommands(INSTALL_MD).filter((c) => re.test(c));
  assert.equal(hits.length, 1, `docs/install.md has one command matching ${re}: ${hits.join(" | ")}`);
  return hits[0] ?? "";
}

const CRD_NAMES = CRDS.map((p) => `${p}.compute.cloud.com`);
const ROLE = "arn:aws:iam::111122223333:role/kubeprovisioner-tenant";
const account = (ns: string): Record<string, unknown> => ({
  roleArn: ROLE,
  externalId: ns,
  allowedNamespaces: { names: [ns] },
});

describe("helm install paths on a real API server", () => {
  let cp: ControlPlane;
  const work = mkdtempSync(path.join(os.tmpdir(), "kp-install-paths-"));
  trackTempDir(work);

  before(async () => {
    // Without the project's CRDs: the test installs, deletes and replaces them (a shared bare
    // control plane is reset to none once the file is done).
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  /** helm with the control plane's admin kubeconfig. */
  const h = (args: readonly string[]): Promise<HelmResult> =>
    helm([...args, "--kubeconfig", cp.kubeconfigPath]);
  /** A documented command line, run by bash from the repository root against the control plane. */
  const sh = async (cmd: string): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const out = await runBash(cmd, {
        cwd: repoRoot,
        env: {
          PATH: `${path.dirname(toolPath("helm"))}:${path.dirname(toolPath("kubectl"))}:${process.env.PATH ?? ""}`,
          KUBECONFIG: cp.kubeconfigPath,
          KUBECACHEDIR: path.join(work, "kubectl-cache"),
        },
      });
      return { code: 0, ...out };
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
    }
  };
  const status = async (p: string): Promise<number> => (await cp.request("GET", p)).status;
  const crdPath = (name: string): string => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
  const accountPath = (name: string): string => `/apis/compute.cloud.com/v1/awsaccounts/${name}`;
  const accounts = async (): Promise<string[]> => {
    const res = await cp.request("GET", "/apis/compute.cloud.com/v1/awsaccounts");
    assert.equal(res.status, 200, res.text);
    return (res.body as { items: { metadata: { name: string } }[] }).items.map((a) => a.metadata.name).sort();
  };
  type Crd = {
    spec: unknown;
    metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
  };
  const crd = async (name: string): Promise<Crd> => {
    const res = await cp.request("GET", crdPath(name));
    assert.equal(res.status, 200, `${name}: ${res.text}`);
    return res.body as Crd;
  };
  /** config/crd's CRDs by name. */
  const sources = new Map(
    readdirSync(path.join(repoRoot, "config/crd"))
      .filter((f) => f.startsWith("compute.cloud.com_"))
      .map((f) => {
        const doc = parse(readFileSync(path.join(repoRoot, "config/crd", f), "utf8")) as Crd & {
          metadata: { name: string };
        };
        return [doc.metadata.name, doc] as const;
      }),
  );
  /**
   * config/crd's spec of CRD `name` as the API server serves it: with its defaults (conversion
   * strategy None) and without what it leaves out as a zero value (a printer column's priority 0).
   */
  const served = (name: string): unknown => {
    const spec = structuredClone(sources.get(name)?.spec) as {
      conversion?: unknown;
      versions: { additionalPrinterColumns?: { priority?: number }[] }[];
    };
    spec.conversion ??= { strategy: "None" };
    for (const v of spec.versions)
      for (const c of v.additionalPrinterColumns ?? []) if (c.priority === 0) delete c.priority;
    return spec;
  };
  // The deletion is followed on the API server itself (kubectl's own --wait missed it once on a
  // loaded machine); a CRD goes once the API server has removed its objects (none here). A CRD
  // deleted while the watch cache of its objects is still starting stays Terminating for minutes
  // (InstanceDeletionFailed, "storage is (re)initializing": the API server's finalizer retries on
  // a growing backoff), so the deletion waits until each kind's objects list from that cache.
  const deleteCrds = async (): Promise<void> => {
    await waitFor(
      "the CRDs' objects listed from the watch cache",
      async () =>
        (
          await Promise.all(
            CRDS.map((plural) => status(`/apis/compute.cloud.com/v1/${plural}?resourceVersion=0`)),
          )
        ).every((s) => s === 200),
      WAIT_MS,
      250,
    );
    await cp.kubectl(["delete", "crd", "--wait=false", ...CRD_NAMES]);
    await waitFor(
      `CRDs ${CRD_NAMES.join(", ")} gone`,
      async () => (await Promise.all(CRD_NAMES.map(async (n) => status(crdPath(n))))).every((c) => c === 404),
      2 * WAIT_MS,
      250,
    );
  };

  describe("the CRDs of the chart's crds/ folder", () => {
    it("helm install creates the CRDs as config/crd has them, before the chart's AwsAccounts, owned by no release", async () => {
      for (const n of CRD_NAMES) assert.equal(await status(crdPath(n)), 404, `${n} does not exist yet`);
      const res = await h([
        "install",
        RELEASE,
        CHART_DIR,
        "--namespace",
        NS,
        "--create-namespace",
        "--set-json",
        `awsAccounts.accounts=${JSON.stringify({ "team-a": account("team-a"), "team-b": account("team-b") })}`,
      ]);
      assert.equal(res.code, 0, res.stderr);
      for (const n of CRD_NAMES) {
        const got = await crd(n);
        assert.deepEqual(got.spec, served(n), `${n} is config/crd's`);
        assert.equal(
          got.metadata.annotations?.["meta.helm.sh/release-name"],
          undefined,
          `${n}: no release owns it`,
        );
        assert.equal(got.metadata.labels?.["app.kubernetes.io/managed-by"], undefined, n);
      }
      assert.deepEqual(await accounts(), ["team-a", "team-b"]);
    });

    it("helm template leaves the CRDs out, and --include-crds and helm show crds print config/crd's", async () => {
      const plain = await helm(["template", RELEASE, CHART_DIR, ...helmKubeVersionArgs()]);
      assert.equal(plain.code, 0, plain.stderr);
      assert.doesNotMatch(plain.stdout, /kind: CustomResourceDefinition/);
      for (const args of [
        ["template", RELEASE, CHART_DIR, "--include-crds", ...helmKubeVersionArgs()],
        ["show", "crds", CHART_DIR],
      ]) {
        const res = await helm(args);
        assert.equal(res.code, 0, res.stderr);
        const docs = res.stdout
          .split(/^---$/m)
          .map((d) => parse(d) as (Crd & { kind: string; metadata: { name: string } }) | null)
          .filter((d) => d?.kind === "CustomResourceDefinition");
        assert.deepEqual(
          docs.map((d) => d?.metadata.name).sort(),
          [...sources.keys()].sort(),
          args.join(" "),
        );
        for (const d of docs) assert.deepEqual(d?.spec, sources.get(d?.metadata.name ?? "")?.spec);
      }
    });
  });

  describe("AwsAccounts of awsAccounts.accounts", () => {
    it("removing the entry does nothing under --reuse-values, as the page warns", async () => {
      for (const set of ["awsAccounts.accounts.team-a=null", "awsAccounts.accounts={}"]) {
        const res = await h(["upgrade", RELEASE, CHART_DIR, "-n", NS, "--reuse-values", "--set-json", set]);
        assert.equal(res.code, 0, res.stderr);
        assert.deepEqual(await accounts(), ["team-a", "team-b"], `--set-json ${set} kept team-a`);
      }
    });

    it("the documented upgrade with --reuse-values removes one AwsAccount, and the next upgrades do not bring it back", async () => {
      const offboard = documented(
        /^helm upgrade kubeprovisioner charts\/kubeprovisioner .*--reuse-values .*team-a/,
      );
      const res = await sh(offboard);
      assert.equal(res.code, 0, `${offboard}\n${res.stderr}`);
      assert.equal(await status(accountPath("team-a")), 404, "team-a is gone");
      assert.deepEqual(await accounts(), ["team-b"]);
      // Later upgrades that reuse the values, changing something else.
      for (const more of [["--set", "controller.logLevel=debug"], []]) {
        const again = await h(["upgrade", RELEASE, CHART_DIR, "-n", NS, "--reuse-values", ...more]);
        assert.equal(again.code, 0, again.stderr);
        assert.deepEqual(
          await accounts(),
          ["team-b"],
          `team-a stays gone: upgrade --reuse-values ${more.join(" ")}`,
        );
      }
    });

    it("a values file that no longer lists an AwsAccount removes it, and keeps the others", async () => {
      const file = path.join(work, "values.yaml");
      writeFileSync(
        file,
        stringify({
          awsAccounts: { accounts: { "team-b": account("team-b"), "team-c": account("team-c") } },
        }),
      );
      const add = await h(["upgrade", RELEASE, CHART_DIR, "-n", NS, "-f", file]);
      assert.equal(add.code, 0, add.stderr);
      assert.deepEqual(await accounts(), ["team-b", "team-c"]);
      writeFileSync(file, stringify({ awsAccounts: { accounts: { "team-c": account("team-c") } } }));
      for (let i = 0; i < 2; i++) {
        const res = await h(["upgrade", RELEASE, CHART_DIR, "-n", NS, "-f", file]);
        assert.equal(res.code, 0, res.stderr);
        assert.deepEqual(await accounts(), ["team-c"], `upgrade ${i + 1} with the values file`);
      }
    });
  });

  describe("installing over CRDs no release owns", () => {
    it("helm uninstall leaves the CRDs, and a release of another name installs over them", async () => {
      const gone = await h(["uninstall", RELEASE, "-n", NS, "--wait"]);
      assert.equal(gone.code, 0, gone.stderr);
      for (const n of CRD_NAMES) assert.equal(await status(crdPath(n)), 200, `${n} stays`);
      const res = await h([
        "install",
        "kp-other",
        CHART_DIR,
        "--namespace",
        "kp-other",
        "--create-namespace",
      ]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(
        await status(`/apis/apps/v1/namespaces/kp-other/deployments/kp-other-kubeprovisioner`),
        200,
      );
      const un = await h(["uninstall", "kp-other", "-n", "kp-other", "--wait"]);
      assert.equal(un.code, 0, un.stderr);
    });

    it("helm install after kubectl apply -k config/crd", async () => {
      await deleteCrds();
      await cp.kubectl(["apply", "-k", path.join(repoRoot, "config/crd")]);
      await cp.kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd", ...CRD_NAMES]);
      const res = await h(["install", RELEASE, CHART_DIR, "--namespace", NS]);
      assert.equal(res.code, 0, res.stderr);
      const un = await h(["uninstall", RELEASE, "-n", NS, "--wait"]);
      assert.equal(un.code, 0, un.stderr);
    });

    it("helm upgrade leaves older CRDs as they are, and the documented server-side apply upgrades them", async () => {
      // An older chart: its CRDs lack a field and carry another description.
      const older = path.join(work, "older-chart");
      cpSync(CHART_DIR, older, { recursive: true });
      const file = path.join(older, "crds", "compute.cloud.com_s3buckets.yaml");
      const doc = parse(readFileSync(file, "utf8")) as {
        spec: {
          versions: {
            schema: {
              openAPIV3Schema: {
                description?: string;
                properties: { spec: { properties: Record<string, unknown> } };
              };
            };
          }[];
        };
      };
      const schema = doc.spec.versions[0]?.schema.openAPIV3Schema;
      assert.ok(schema?.properties.spec.properties.tags !== undefined, "the S3Bucket schema has spec.tags");
      delete schema.properties.spec.properties.tags;
      schema.description = "An older description.";
      writeFileSync(file, stringify(doc));

      await deleteCrds();
      const old = await h(["install", RELEASE, older, "--namespace", NS]);
      assert.equal(old.code, 0, old.stderr);
      const bucketCrd = "s3buckets.compute.cloud.com";
      const created = await crd(bucketCrd);
      assert.notDeepEqual(created.spec, served(bucketCrd), "the older CRD was installed");

      const up = await h(["upgrade", RELEASE, CHART_DIR, "-n", NS]);
      assert.equal(up.code, 0, up.stderr);
      assert.deepEqual((await crd(bucketCrd)).spec, created.spec, "helm upgrade leaves the CRD as it was");

      const apply = documented(/^helm show crds charts\/kubeprovisioner \| kubectl apply --server-side/);
      const res = await sh(apply);
      assert.equal(res.code, 0, `${apply}\n${res.stderr}`);
      for (const n of CRD_NAMES) assert.deepEqual((await crd(n)).spec, served(n), `${n} upgraded`);
      const un = await h(["uninstall", RELEASE, "-n", NS, "--wait"]);
      assert.equal(un.code, 0, un.stderr);
    });
  });

  describe("a namespaced install", () => {
    const WATCHED = "team-x";
    const bucket = (name: string): string =>
      JSON.stringify({
        apiVersion: "compute.cloud.com/v1",
        kind: "S3Bucket",
        metadata: { name },
        spec: { bucketName: `kp-install-paths-${name}`, region: "us-east-1" },
      });
    const warning =
      /Warning: Validation failed for ValidatingAdmissionPolicy 'kp-kubeprovisioner-unwatched-namespaces' with binding 'kp-kubeprovisioner-unwatched-namespaces': kubeprovisioner release kp-ns\/kp watches only the namespaces team-x \(installScope=namespace\): this S3Bucket in namespace demo gets no status, no Event and no AWS resource\. Create it in a watched namespace, or add demo to controller\.watchNamespaces\./;

    it("names the namespaces it watches in its notes", async () => {
      for (const ns of [WATCHED, "demo"]) await cp.kubectl(["create", "namespace", ns]);
      const res = await h([
        "install",
        "kp",
        CHART_DIR,
        "--namespace",
        "kp-ns",
        "--create-namespace",
        "--set",
        "installScope=namespace",
        "--set",
        `controller.watchNamespaces={${WATCHED}}`,
      ]);
      assert.equal(res.code, 0, res.stderr);
      assert.match(
        res.stdout,
        /It watches only the namespaces team-x \(installScope=namespace\): Ec2Instance,\s+S3Bucket and SqsQueue objects anywhere else get no status, no Event and no AWS resource\./,
      );
      assert.match(res.stdout, /ValidatingAdmissionPolicy\s+kp-kubeprovisioner-unwatched-namespaces/);
    });

    it("the API server warns on an object created or changed outside the watched namespaces, and admits it", async () => {
      // The policy takes effect once the API server has loaded it: a dry run shows when.
      await waitFor(
        "the unwatched-namespaces policy to warn",
        async () =>
          warning.test(
            (
              await cp.kubectl(["create", "-n", "demo", "--dry-run=server", "-f", "-"], {
                input: bucket("probe"),
              })
            ).stderr,
          ),
        WAIT_MS,
        200,
      );
      const created = await cp.kubectl(["apply", "-n", "demo", "-f", "-"], { input: bucket("elsewhere") });
      assert.match(created.stderr, warning);
      assert.match(created.stdout, /s3bucket.compute.cloud.com\/elsewhere created/);
      const changed = await cp.kubectl(["label", "-n", "demo", "s3bucket/elsewhere", "team=x"]);
      assert.match(changed.stderr, warning);

      const watched = await cp.kubectl(["apply", "-n", WATCHED, "-f", "-"], { input: bucket("here") });
      assert.equal(watched.stderr, "", "no warning in a watched namespace");
    });

    it("renders no policy while every namespace is watched, and none when turned off", async () => {
      const all = await helm(["template", "kp", CHART_DIR, ...helmKubeVersionArgs()]);
      assert.doesNotMatch(all.stdout, /ValidatingAdmissionPolicy/);
      const off = await helm([
        "template",
        "kp",
        CHART_DIR,
        "--set",
        "installScope=namespace",
        "--set",
        "controller.warnUnwatchedNamespaces=false",
        ...helmKubeVersionArgs(),
      ]);
      assert.equal(off.code, 0, off.stderr);
      assert.doesNotMatch(off.stdout, /ValidatingAdmissionPolicy/);
    });
  });
});
