/**
 * Throwaway CRDs for tests of the generic runtime (cache, client, controller), which must not
 * depend on the operator's own kinds.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import type { ResourceType } from "../../src/runtime/kube/object.ts";
import type { ControlPlane } from "./envtest.ts";

/** Options of {@link installTestCrd}. */
export interface TestCrdOptions {
  /** JSON schema properties of `spec`. @default {} */
  spec?: Record<string, unknown>;
  /** Schema of `status`; given, it also enables the status subresource. */
  status?: Record<string, unknown>;
}

/** Installs a namespaced, served and stored v1 CRD for `resource` and waits until it is served. */
export function installTestCrd(
  cp: ControlPlane,
  resource: ResourceType,
  opts: TestCrdOptions = {},
): Promise<void> {
  const singular = resource.kind.toLowerCase();
  const dir = mkdtempSync(`${cp.dir}/crd-`);
  writeFileSync(
    `${dir}/${resource.plural}.yaml`,
    JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${resource.plural}.${resource.group}` },
      spec: {
        group: resource.group,
        scope: "Namespaced",
        names: { plural: resource.plural, singular, kind: resource.kind, listKind: `${resource.kind}List` },
        versions: [
          {
            name: resource.version,
            served: true,
            storage: true,
            ...(opts.status !== undefined ? { subresources: { status: {} } } : {}),
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: { type: "object", properties: opts.spec ?? {} },
                  ...(opts.status !== undefined ? { status: opts.status } : {}),
                },
              },
            },
          },
        ],
      },
    }),
  );
  return cp.installCRDs(dir);
}
