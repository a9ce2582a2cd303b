/**
 * The object model every managed kind shares: an object of one of the kinds, its shared spec and
 * status fields (derived from the API schema, src/api/v1/common.ts), and the identifier its
 * status records.
 */
import type { ManagedSpec, ManagedStatus } from "../../api/v1/common.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";

/** Spec and status fields every managed kind shares, derived from the API schema (src/api/v1/common.ts). */
export type { ManagedSpec, ManagedStatus };

/** An object of one of the managed kinds. */
export interface ManagedObject extends KubeObject {
  apiVersion: string;
  kind: string;
  spec: ManagedSpec;
  status?: ManagedStatus;
}

/**
 * The identifier recorded in `obj.status[idField]` (see {@link ResourceDriver.idField}), or
 * undefined when none (or an empty one) is.
 */
export function recordedIdOf(obj: ManagedObject, idField: string): string | undefined {
  const v = (obj.status as Record<string, unknown> | undefined)?.[idField];
  return typeof v === "string" && v !== "" ? v : undefined;
}
