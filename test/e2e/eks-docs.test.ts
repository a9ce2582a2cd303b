/**
 * Commands of docs/eks.md run as written, where they need no AWS account: the image tag of step 1
 * in a clone with and without a release tag, and the trust policies of IRSA and EKS Pod Identity,
 * written from the install's namespace, ServiceAccount and cluster.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parse as parseYaml } from "yaml";
import { runBash, shBlocks } from "../support/doc-commands.ts";
import { repoRoot, trackTempDir } from "../support/process.ts";

const EKS_MD = readFileSync(path.join(repoRoot, "docs/eks.md"), "utf8");

/** The one block holding `marker`. */
function block(marker: string): string {
  const hits = shBlocks(EKS_MD).filter((b) => b.includes(marker));
  assert.equal(hits.length, 1, `docs/eks.md has one sh block with ${marker}`);
  return hits[0] ?? "";
}

/** Runs `script` with bash in `cwd`; returns its standard output. */
async function bash(script: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return (await runBash(script, { cwd, env })).stdout;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kp-eks-docs-"));
  trackTempDir(dir);
  return dir;
}

describe("docs/eks.md, step 1: the image tag", () => {
  const chart = parseYaml(readFileSync(path.join(repoRoot, "charts/kubeprovisioner/Chart.yaml"), "utf8")) as {
    appVersion: string;
  };
  // The lines of the block that set VERSION and TAG; the rest needs AWS and Docker.
  const tagLines = block("export TAG=")
    .split("\n")
    .filter((l) => /^(export (VERSION|TAG)=|git describe )/.test(l))
    .join("\n");

  it("asks for no tag to exist, and names the version at its release tag, the version and the commit elsewhere", async () => {
    assert.match(tagLines, /export VERSION=/);
    assert.doesNotMatch(EKS_MD, /git checkout v\d/, "the page checks out no tag that may not exist");
    const repo = tempDir();
    mkdirSync(path.join(repo, "charts/kubeprovisioner"), { recursive: true });
    copyFileSync(
      path.join(repoRoot, "charts/kubeprovisioner/Chart.yaml"),
      path.join(repo, "charts/kubeprovisioner/Chart.yaml"),
    );
    const git = (...args: string[]): Promise<string> =>
      bash(
        `git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false -c tag.gpgsign=false ${args.join(" ")}`,
        repo,
      );
    await git("init", "--quiet");
    await git("add", ".");
    await git("commit", "--quiet", "-m", "chart");
    const commit = (await git("rev-parse", "--short=12", "HEAD")).trim();
    const tag = async (): Promise<string> => (await bash(`${tagLines}\necho "$TAG"`, repo)).trim();

    assert.equal(await tag(), `${chart.appVersion}-${commit}`, "no tag at all");
    await git("tag", "v0.0.1");
    assert.equal(await tag(), `${chart.appVersion}-${commit}`, "a tag of another version");
    await git("tag", `v${chart.appVersion}`);
    assert.equal(await tag(), chart.appVersion, "at the release tag");
  });
});

describe("docs/eks.md, step 3: trust policies from the install's names", () => {
  const env = (namespace: string, serviceAccount: string): NodeJS.ProcessEnv => ({
    ACCOUNT: "111122223333",
    OIDC: "oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE",
    NAMESPACE: namespace,
    SERVICE_ACCOUNT: serviceAccount,
    CLUSTER_ARN: "arn:aws:eks:eu-west-1:111122223333:cluster/my-cluster",
  });
  /** The file a heredoc of the page writes, run with `vars` (lines that call AWS left out). */
  const written = async (marker: string, file: string, vars: NodeJS.ProcessEnv): Promise<unknown> => {
    const script = block(marker)
      .split("\n")
      .filter((l) => !/^\s*export CLUSTER_ARN=|^\s*--query cluster\.arn/.test(l))
      .join("\n");
    const dir = tempDir();
    await bash(script, dir, vars);
    return JSON.parse(readFileSync(path.join(dir, file), "utf8")) as unknown;
  };
  type Statement = {
    Principal: Record<string, string>;
    Action: string[] | string;
    Condition: Record<string, Record<string, string>>;
  };

  it("EKS Pod Identity: the EKS principal, held to the install's namespace, ServiceAccount and cluster", async () => {
    for (const [ns, sa] of [
      ["kubeprovisioner-system", "kubeprovisioner"],
      ["platform", "kp-kubeprovisioner"],
    ] as const) {
      const policy = (await written(
        "cat > pod-identity-trust.json",
        "pod-identity-trust.json",
        env(ns, sa),
      )) as {
        Statement: Statement[];
      };
      assert.equal(policy.Statement.length, 1);
      const [st] = policy.Statement;
      assert.deepEqual(st?.Principal, { Service: "pods.eks.amazonaws.com" });
      assert.deepEqual(st?.Action, ["sts:AssumeRole", "sts:TagSession"]);
      assert.deepEqual(st?.Condition, {
        StringEquals: {
          "aws:RequestTag/eks-cluster-arn": "arn:aws:eks:eu-west-1:111122223333:cluster/my-cluster",
          "aws:RequestTag/kubernetes-namespace": ns,
          "aws:RequestTag/kubernetes-service-account": sa,
        },
      });
    }
  });

  it("IRSA: the cluster's OIDC provider, held to the install's ServiceAccount", async () => {
    const policy = (await written(
      "cat > irsa-trust.json",
      "irsa-trust.json",
      env("platform", "kp-kubeprovisioner"),
    )) as {
      Statement: Statement[];
    };
    const [st] = policy.Statement;
    assert.deepEqual(st?.Principal, {
      Federated: "arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE",
    });
    assert.deepEqual(st?.Condition, {
      StringEquals: {
        "oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE:sub":
          "system:serviceaccount:platform:kp-kubeprovisioner",
        "oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE:aud": "sts.amazonaws.com",
      },
    });
  });
});
