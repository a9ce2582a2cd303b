/**
 * The shape of Kubernetes objects as they travel over the wire (JSON, timestamps as strings).
 * The runtime works on these plain objects; typed kinds extend {@link KubeObject}.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** Identifies one object: `namespace` is empty or absent for cluster-scoped kinds. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** Names an object: a key, a `namespace/name` string, or an object carrying metadata. */
export type ObjectRef = ObjectKey | string | { readonly metadata: Readonly<ObjectMeta> };

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function keyOf(obj: { metadata: ObjectMeta } | ObjectKey): string {
  const ns = "metadata" in obj ? obj.metadata.namespace : obj.namespace;
  const name = "metadata" in obj ? (obj.metadata.name ?? "") : obj.name;
  return ns ? `${ns}/${name}` : name;
}

/** Inverse of {@link keyOf}. */
export function parseKey(key: string): ObjectKey {
  const i = key.indexOf("/");
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * Identifies a served resource. `plural` is the URL segment; `namespaced` decides the path.
 */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(r: Pick<ResourceType, "group" | "version">): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * REST path of a collection or an object: `/api/v1/namespaces/ns/pods/name/status`.
 * Omit `namespace` to address all namespaces of a namespaced kind.
 */
export function resourcePath(
  r: ResourceType,
  opts: { namespace?: string | undefined; name?: string | undefined; subresource?: string | undefined } = {},
): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && opts.namespace ? `/namespaces/${encodeURIComponent(opts.namespace)}` : "";
  const name = opts.name !== undefined ? `/${encodeURIComponent(opts.name)}` : "";
  const sub = opts.name !== undefined && opts.subresource ? `/${opts.subresource}` : "";
  return `${base}${ns}/${r.plural}${name}${sub}`;
}
