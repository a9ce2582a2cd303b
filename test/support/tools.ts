/**
 * Where the test binaries are: envtest's convention first (TEST_ASSET_* variables, then
 * KUBEBUILDER_ASSETS), else what `make tools` linked into ./bin.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./process.ts";

const overrides: Record<string, string> = {
  "kube-apiserver": "TEST_ASSET_KUBE_APISERVER",
  "kube-controller-manager": "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
  etcd: "TEST_ASSET_ETCD",
  kubectl: "TEST_ASSET_KUBECTL",
};

/** Absolute path of a test tool; throws with the command that installs it when it is missing. */
export function toolPath(
  name:
    | "kube-apiserver"
    | "kube-controller-manager"
    | "etcd"
    | "kubectl"
    | "helm"
    | "promtool"
    | "kubelet"
    | "kube-scheduler"
    | "kube-proxy"
    | "crictl",
): string {
  const envName = overrides[name];
  const fromEnv = envName !== undefined ? process.env[envName] : undefined;
  const candidates = [
    fromEnv,
    process.env.KUBEBUILDER_ASSETS ? path.join(process.env.KUBEBUILDER_ASSETS, name) : undefined,
    path.join(repoRoot, "bin", name),
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  throw new Error(`${name} not found (looked in ${candidates.filter(Boolean).join(", ")}); run 'make tools'`);
}

/** `KEY=value` pins of hack/versions.env. */
export function versions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path.join(repoRoot, "hack/versions.env"), "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/**
 * `--kube-version` of the Kubernetes the tests run on (K8S_VERSION), for `helm template` and
 * `helm lint`: offline, Helm renders for the version compiled into it (hack/tools.sh builds it as
 * helm's releases are, one minor above its client-go), not the one the tests run.
 */
export function helmKubeVersionArgs(): string[] {
  const v = versions()["K8S_VERSION"];
  if (v === undefined) throw new Error("hack/versions.env has no K8S_VERSION");
  return ["--kube-version", v];
}
