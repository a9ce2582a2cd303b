/**
 * Running a program as it runs in a pod: in a private mount namespace where a ServiceAccount
 * folder (token, ca.crt, namespace) is mounted at the fixed in-cluster path,
 * /var/run/secrets/kubernetes.io/serviceaccount (client-go's InClusterConfig, and the operator's,
 * read only that path). Needs root (unshare and mount).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ControlPlane } from "./envtest.ts";

/**
 * A ServiceAccount folder as the kubelet mounts it, in a new folder `name` under `dir`: a token of
 * ServiceAccount `default/<name>` (created, and bound to cluster-admin), the cluster's CA and
 * the namespace.
 */
export async function podServiceAccount(cp: ControlPlane, dir: string, name: string): Promise<string> {
  const namespace = "default";
  const token = await cp.serviceAccountToken(namespace, name);
  const binding = await cp.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `${name}-cluster-admin` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", namespace, name }],
  });
  if (binding.status !== 201) throw new Error(`creating the ClusterRoleBinding of ${name}: ${binding.text}`);
  const ca = cp.kubeConfig().cluster["certificate-authority-data"];
  if (ca === undefined) throw new Error("the admin kubeconfig has no certificate-authority-data");
  const sa = path.join(dir, name);
  mkdirSync(sa);
  writeFileSync(path.join(sa, "token"), token);
  writeFileSync(path.join(sa, "ca.crt"), Buffer.from(ca, "base64"));
  writeFileSync(path.join(sa, "namespace"), namespace);
  return sa;
}

/** The command that runs `file args` with `saDir` mounted at the in-cluster path. */
export function inServiceAccountNamespace(
  saDir: string,
  file: string,
  args: string[],
): { file: string; args: string[] } {
  // /var/run is a link to /run; a tmpfs over /run keeps the mount off the host's folder.
  const script =
    "mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && " +
    'mount --bind "$0" /run/secrets/kubernetes.io/serviceaccount && exec "$@"';
  return {
    file: "unshare",
    args: ["--mount", "--propagation", "private", "sh", "-c", script, saDir, file, ...args],
  };
}
