/** A made-up managed kind, Widget, for the unit tests of the shared flow and its helpers. */
import type { ResourceType } from "../../../runtime/kube/object.ts";
import type { ManagedObject, ManagedSpec } from "../driver.ts";

/** Where Widgets are served. */
export const widgetResource: ResourceType = {
  group: "compute.cloud.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

/** A Widget with `metadata` as given, the shared spec defaults under `spec`, and `status` if any. */
export function widgetObject<T extends ManagedObject = ManagedObject>(parts: {
  metadata: ManagedObject["metadata"];
  spec?: Partial<ManagedSpec>;
  status?: T["status"] | undefined;
}): T {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "Widget",
    metadata: parts.metadata,
    spec: {
      region: "us-east-1",
      deletionPolicy: "Delete",
      adoptExisting: false,
      onDeletedOutOfBand: "Recreate",
      ...parts.spec,
    },
    ...(parts.status !== undefined ? { status: parts.status } : {}),
  } as T;
}
