/**
 * What the manager-* and metrics-* integration tests share besides the operator process itself
 * (test/support/operator.ts): probe status codes, the Lease holder, namespaces.
 */
import type { ControlPlane } from "../support/envtest.ts";

/** Status code of `GET http://127.0.0.1:<port><path>`, or 0 when nothing answers. */
export async function httpStatus(port: number, urlPath: string): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

/** The spec of a Lease, or undefined when the Lease does not exist. */
export async function leaseSpec(
  cp: ControlPlane,
  namespace: string,
  name: string,
): Promise<{ holderIdentity?: string; renewTime?: string; leaseTransitions?: number } | undefined> {
  const res = await cp.request("GET", `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET lease: ${res.status} ${res.text}`);
  return (res.body as { spec?: { holderIdentity?: string; renewTime?: string } }).spec ?? {};
}

/** The Lease's holder, or undefined when the Lease does not exist. */
export async function leaseHolder(
  cp: ControlPlane,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const spec = await leaseSpec(cp, namespace, name);
  return spec === undefined ? undefined : (spec.holderIdentity ?? "");
}

/** Creates a namespace (ignoring AlreadyExists). */
export async function ensureNamespace(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name },
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`creating namespace ${name}: ${res.text}`);
}
