/**
 * `spec.writeOutputsTo`: the ConfigMap (`configMapName`) and the Secret (`secretName`) an
 * object's identifiers are written into, for applications to read with `envFrom`; both hold the
 * same keys. Every kind supplies a pure function from the object (its spec and the status the
 * flow just computed) to its output values; this module owns the ConfigMap and the Secret, one
 * {@link OutputTarget} each, under the same rules (a Secret holds its values base64-encoded in
 * `data`, as the API stores them).
 *
 * The ConfigMap (Secret) is the object's when it carries an ownerReference to it with
 * `controller: true` (the garbage collector deletes it with the object). The operator labels
 * every one it writes with {@link MANAGED_BY_LABEL}, and its ConfigMap and Secret informers list
 * and watch only that label ({@link OUTPUT_CONFIGMAP_SELECTOR}), so the cache holds the
 * operator's ConfigMaps and Secrets and no others, indexed by the UID of their controller.
 * Secrets are written only in the namespaces the operator is told it may write them in
 * (`--output-secret-namespaces`, granted by a Role in each): elsewhere a secretName is reported
 * with reason OutputNotAllowed and no Secret is read or written. Per reconcile and target:
 *
 * - the object's own ConfigMaps under another name (configMapName changed, or writeOutputsTo
 *   removed) are deleted;
 * - the ConfigMap of the wanted name, read from the cache, is left alone when its data and label
 *   are already right (no request at all), updated when they are not, and reported as a conflict
 *   when it is not the object's;
 * - absent from the cache, it is created. A 409 AlreadyExists means a ConfigMap of that name
 *   exists without the label: one GET says whose it is. The object's own (its label was removed)
 *   is repaired; anyone else's is a conflict and never touched. While a conflict is reported, the
 *   next reconciles look with a GET first instead of trying the create again, so a lasting
 *   conflict costs one read per poll and no write.
 */
import { isDeepStrictEqual } from "node:util";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../../api/v1/index.ts";
import { CONTROLLER_UID_INDEX, controllerUidIndex, type IndexFunc } from "../../runtime/cache/index.ts";
import type { ResourceClient } from "../../runtime/client/index.ts";
import { isAlreadyExists, isNotFound } from "../../runtime/kube/errors.ts";
import type { KubeObject, OwnerReference, ResourceType } from "../../runtime/kube/object.ts";
import type { Logger } from "../../runtime/logging.ts";
import type { ManagedObject } from "./driver.ts";
import type { KubeRule } from "./rbac.ts";
import { Reason } from "./reasons.ts";

/** Where ConfigMaps are served. */
export const ConfigMapResource: ResourceType = Object.freeze({
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
});

/** Where Secrets are served. */
export const SecretResource: ResourceType = Object.freeze({
  group: "",
  version: "v1",
  plural: "secrets",
  kind: "Secret",
  namespaced: true,
});

/** A core/v1 ConfigMap, as far as this module reads and writes it. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** A core/v1 Secret, as far as this module reads and writes it (`data` values are base64). */
export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

/** The label selector of the operator's ConfigMap and Secret informers. */
export const OUTPUT_CONFIGMAP_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

const isOutputResource = (r: ResourceType): boolean =>
  [ConfigMapResource, SecretResource].some((o) => r.group === o.group && r.plural === o.plural);

/** The label selector the informer of `resource` watches with, if any. */
export function outputCacheSelector(resource: ResourceType): string | undefined {
  return isOutputResource(resource) ? OUTPUT_CONFIGMAP_SELECTOR : undefined;
}

/**
 * The indexes the informer of `resource` needs: the ConfigMaps and Secrets by the UID of their
 * controller, so an object's ConfigMaps and Secrets are found without a scan of its namespace.
 */
export function outputCacheIndexers(
  resource: ResourceType,
): Readonly<Record<string, IndexFunc<KubeObject>>> | undefined {
  return isOutputResource(resource) ? { [CONTROLLER_UID_INDEX]: controllerUidIndex } : undefined;
}

/**
 * The namespaces the informer of `resource` watches, when they are not those of every other
 * informer: the Secrets only in the namespaces of `--output-secret-namespaces`.
 */
export function outputCacheNamespaces(
  resource: ResourceType,
  secretNamespaces: readonly string[],
): string[] | undefined {
  return resource.group === SecretResource.group && resource.plural === SecretResource.plural
    ? [...secretNamespaces]
    : undefined;
}

/** The Kubernetes API calls of this module on ConfigMaps, for the ClusterRole. */
export const OUTPUT_RULES: readonly KubeRule[] = [
  {
    apiGroups: [""],
    resources: ["configmaps"],
    verbs: ["get", "list", "watch", "create", "update", "delete"],
    why:
      "spec.writeOutputsTo. list and watch: the ConfigMap informer (only ConfigMaps labelled " +
      `${OUTPUT_CONFIGMAP_SELECTOR}). create and update: writing and repairing an object's ` +
      "ConfigMap (update is a conditional replace). get: after a create met 409 AlreadyExists, " +
      "finding out whose the unlabelled ConfigMap of that name is. delete: the ConfigMap of a " +
      "configMapName that changed or of a writeOutputsTo that was removed.",
  },
];

/**
 * The Kubernetes API calls of this module on Secrets (spec.writeOutputsTo.secretName), for the
 * Role the chart creates in each namespace of `outputs.secretNamespaces`, never cluster-wide:
 * RBAC cannot restrict create (nor list and watch) to the Secrets the operator owns or labels.
 */
export const OUTPUT_SECRET_RULES: readonly KubeRule[] = [
  {
    apiGroups: [""],
    resources: ["secrets"],
    verbs: ["get", "list", "watch", "create", "update", "delete"],
    why:
      "spec.writeOutputsTo.secretName, in this namespace only. list and watch: the Secret " +
      `informer (only Secrets labelled ${OUTPUT_CONFIGMAP_SELECTOR}). create and update: writing ` +
      "and repairing an object's Secret (update is a conditional replace). get: after a create met " +
      "409 AlreadyExists, finding out whose the unlabelled Secret of that name is. delete: the " +
      "Secret of a secretName that changed or of a writeOutputsTo that was removed.",
  },
];

/** The output values of an object, by ConfigMap key; an undefined or empty value is left out. */
export type OutputValues = Readonly<Record<string, string | undefined>>;

/** The ConfigMap data for `values`: every key with a non-empty value. */
export function outputData(values: OutputValues): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== "") data[k] = v;
  return data;
}

/** The controller reference of `obj`, if it has one. */
export function controllerOf(obj: Pick<KubeObject, "metadata">): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** The ownerReference that makes a ConfigMap `owner`'s (no blockOwnerDeletion: see kind.ts). */
export function ownerReferenceTo(owner: ManagedObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? "",
    uid: owner.metadata.uid ?? "",
    controller: true,
  };
}

/** `data` as a Secret stores it: every value base64-encoded. */
export function secretData(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
  );
}

/** The metadata of an output object `name` of `owner`, as it is created. */
function desiredMetadata(owner: ManagedObject, name: string): KubeObject["metadata"] {
  return {
    name,
    namespace: owner.metadata.namespace ?? "",
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
    ownerReferences: [ownerReferenceTo(owner)],
  };
}

/** The ConfigMap `name` of `owner` holding `data`, as it is created. */
export function desiredConfigMap(
  owner: ManagedObject,
  name: string,
  data: Record<string, string>,
): ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: desiredMetadata(owner, name), data };
}

/** The Secret `name` of `owner` holding `data` (plain values), as it is created: type Opaque. */
export function desiredSecret(owner: ManagedObject, name: string, data: Record<string, string>): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: desiredMetadata(owner, name),
    type: "Opaque",
    data: secretData(data),
  };
}

/**
 * `current` (the owner's ConfigMap) with the operator's label and exactly `data`, keeping every
 * other label, annotation and owner reference; `undefined` when it already is so.
 */
export function repairedConfigMap(
  current: Readonly<ConfigMap>,
  data: Record<string, string>,
): ConfigMap | undefined {
  const labelled = current.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
  if (labelled && current.binaryData === undefined && isDeepStrictEqual(current.data ?? {}, data)) {
    return undefined;
  }
  const next = structuredClone(current) as ConfigMap;
  next.metadata.labels = { ...next.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
  next.data = data;
  delete next.binaryData;
  return next;
}

/**
 * `current` (the owner's Secret) with the operator's label and exactly `data` (plain values,
 * stored base64-encoded), keeping its type and every other label, annotation and owner
 * reference; `undefined` when it already is so.
 */
export function repairedSecret(current: Readonly<Secret>, data: Record<string, string>): Secret | undefined {
  const encoded = secretData(data);
  const labelled = current.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
  if (labelled && current.stringData === undefined && isDeepStrictEqual(current.data ?? {}, encoded)) {
    return undefined;
  }
  const next = structuredClone(current) as Secret;
  next.metadata.labels = { ...next.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
  next.data = encoded;
  delete next.stringData;
  return next;
}

/** What an output object of one kind (ConfigMap, Secret) is, for the rules they share. */
interface OutputShape<O extends KubeObject & { immutable?: boolean }> {
  /** `ConfigMap` or `Secret`, for messages. */
  readonly kind: string;
  /** The field of spec.writeOutputsTo that names it. */
  readonly field: "configMapName" | "secretName";
  desired(owner: ManagedObject, name: string, data: Record<string, string>): O;
  repaired(current: Readonly<O>, data: Record<string, string>): O | undefined;
}

const CONFIGMAP_SHAPE: OutputShape<ConfigMap> = {
  kind: "ConfigMap",
  field: "configMapName",
  desired: desiredConfigMap,
  repaired: repairedConfigMap,
};

const SECRET_SHAPE: OutputShape<Secret> = {
  kind: "Secret",
  field: "secretName",
  desired: desiredSecret,
  repaired: repairedSecret,
};

/**
 * The conflict message for an output object `o` (a ConfigMap unless `kind` says otherwise) that
 * is not `owner`'s; stable for a given owner.
 */
export function conflictMessage(o: Readonly<KubeObject>, kind: "ConfigMap" | "Secret" = "ConfigMap"): string {
  const ref = controllerOf(o);
  const whose = ref !== undefined ? `it is controlled by ${ref.kind} ${ref.name}` : "it has no controller";
  const field = kind === "Secret" ? "secretName" : "configMapName";
  return (
    `${kind} ${o.metadata.name ?? ""} exists and is not this object's (${whose}); it is left ` +
    `as it is: delete it or choose another spec.writeOutputsTo.${field}`
  );
}

/** The message of a secretName in a namespace the operator may not write Secrets in. */
export function secretNotAllowedMessage(namespace: string): string {
  return (
    `spec.writeOutputsTo.secretName: the operator may not write Secrets in namespace ${namespace}: ` +
    "it writes them only in the namespaces of --output-secret-namespaces (chart value " +
    "outputs.secretNamespaces), where the chart grants it a Role"
  );
}

/** The calls an {@link OutputWriter} makes on one resource (a `ResourceClient` fits). */
export type OutputClient<O extends KubeObject> = Pick<
  ResourceClient<O>,
  "get" | "byIndex" | "getLive" | "create" | "update" | "delete"
>;

/** The ConfigMap calls an {@link OutputWriter} makes (a `ResourceClient<ConfigMap>` fits). */
export type ConfigMapClient = OutputClient<ConfigMap>;

/** Options of {@link OutputWriter}. */
export interface OutputWriterOptions<T extends ManagedObject> {
  configMaps: ConfigMapClient;
  /** The Secret calls, and the namespaces Secrets may be written in. @default no Secret is written */
  secrets?: { client: OutputClient<Secret>; namespaces: readonly string[] };
  /** The kind's output values of an object whose status the flow just computed; pure. */
  values: (obj: T) => OutputValues;
}

/** Per-call context of {@link OutputWriter.sync}. */
export interface OutputContext {
  signal: AbortSignal;
  logger: Logger;
  /** The object's Ready condition already reports an output conflict. */
  conflictReported: boolean;
}

/** Why the outputs could not be written: the condition reason and its message. */
export interface OutputRefusal {
  readonly reason: typeof Reason.OutputConflict | typeof Reason.OutputNotAllowed;
  readonly message: string;
}

/** One output resource the writer keeps in line: its shape and its client. */
class OutputTarget<O extends KubeObject & { immutable?: boolean }> {
  readonly #shape: OutputShape<O>;
  readonly #client: OutputClient<O>;

  constructor(shape: OutputShape<O>, client: OutputClient<O>) {
    this.#shape = shape;
    this.#client = client;
  }

  /** Brings the object's outputs of this kind in line; resolves to the conflict message, if any. */
  async sync(
    obj: ManagedObject,
    wanted: string | undefined,
    data: Record<string, string>,
    ctx: OutputContext,
  ): Promise<string | undefined> {
    const namespace = obj.metadata.namespace ?? "";
    const uid = obj.metadata.uid ?? "";
    for (const o of this.#client.byIndex(CONTROLLER_UID_INDEX, uid)) {
      if (o.metadata.name === wanted || o.metadata.namespace !== namespace) continue;
      await this.#delete(o, ctx);
    }
    if (wanted === undefined) return undefined;
    const ref = { namespace, name: wanted };
    const cached = this.#client.get(ref);
    if (cached !== undefined) return this.#reconcile(obj, cached, data, ctx);
    if (ctx.conflictReported) {
      const live = await this.#client.getLive(ref, { signal: ctx.signal });
      if (live !== undefined) return this.#reconcile(obj, live, data, ctx);
    }
    try {
      await this.#client.create(this.#shape.desired(obj, wanted, data), { signal: ctx.signal });
      ctx.logger.info({ [this.#logKey]: wanted }, `wrote the outputs ${this.#shape.kind}`);
      return undefined;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const live = await this.#client.getLive(ref, { signal: ctx.signal });
      // Deleted again in between: the 409 goes to the flow, which looks again shortly.
      if (live === undefined) throw err;
      return this.#reconcile(obj, live, data, ctx);
    }
  }

  get #logKey(): string {
    return this.#shape.kind === "Secret" ? "secret" : "configMap";
  }

  async #reconcile(
    obj: ManagedObject,
    current: Readonly<O>,
    data: Record<string, string>,
    ctx: OutputContext,
  ): Promise<string | undefined> {
    if (controllerOf(current)?.uid !== obj.metadata.uid)
      return conflictMessage(current, this.#shape.kind === "Secret" ? "Secret" : "ConfigMap");
    const next = this.#shape.repaired(current, data);
    if (next === undefined) return undefined;
    const name = current.metadata.name ?? "";
    if (current.immutable === true) {
      // An immutable ConfigMap or Secret cannot be changed, only replaced.
      await this.#delete(current, ctx);
      await this.#client.create(this.#shape.desired(obj, name, data), { signal: ctx.signal });
    } else {
      await this.#client.update(next, { signal: ctx.signal });
    }
    ctx.logger.info({ [this.#logKey]: name }, `updated the outputs ${this.#shape.kind}`);
    return undefined;
  }

  async #delete(o: Readonly<O>, ctx: OutputContext): Promise<void> {
    const uid = o.metadata.uid;
    try {
      await this.#client.delete(o, {
        signal: ctx.signal,
        ...(uid !== undefined ? { preconditions: { uid } } : {}),
      });
      ctx.logger.info(
        { [this.#logKey]: o.metadata.name },
        `deleted an outputs ${this.#shape.kind} no longer wanted`,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/**
 * Writes, repairs and deletes the ConfigMaps and Secrets of `spec.writeOutputsTo`; see the
 * module comment.
 */
export class OutputWriter<T extends ManagedObject> {
  readonly #configMaps: OutputTarget<ConfigMap>;
  readonly #secrets: OutputTarget<Secret> | undefined;
  readonly #secretNamespaces: ReadonlySet<string>;
  readonly #values: (obj: T) => OutputValues;

  constructor(opts: OutputWriterOptions<T>) {
    this.#configMaps = new OutputTarget(CONFIGMAP_SHAPE, opts.configMaps);
    this.#secrets =
      opts.secrets === undefined || opts.secrets.namespaces.length === 0
        ? undefined
        : new OutputTarget(SECRET_SHAPE, opts.secrets.client);
    this.#secretNamespaces = new Set(opts.secrets?.namespaces ?? []);
    this.#values = opts.values;
  }

  /**
   * Brings the object's ConfigMaps and Secrets in line with its spec. Resolves to the refusal
   * when a wanted one exists and is not the object's (OutputConflict), or when the Secret may not
   * be written in the object's namespace (OutputNotAllowed), else `undefined`. `obj` carries its
   * type meta, metadata.uid and the status just computed. A Secret is never read or written in a
   * namespace outside `--output-secret-namespaces`.
   */
  async sync(obj: T, ctx: OutputContext): Promise<OutputRefusal | undefined> {
    const data = outputData(this.#values(obj));
    const spec = obj.spec.writeOutputsTo;
    const cm = await this.#configMaps.sync(obj, spec?.configMapName, data, ctx);
    let secret: OutputRefusal | undefined;
    if (this.#secrets !== undefined && this.#secretNamespaces.has(obj.metadata.namespace ?? "")) {
      const message = await this.#secrets.sync(obj, spec?.secretName, data, ctx);
      if (message !== undefined) secret = { reason: Reason.OutputConflict, message };
    } else if (spec?.secretName !== undefined) {
      secret = {
        reason: Reason.OutputNotAllowed,
        message: secretNotAllowedMessage(obj.metadata.namespace ?? ""),
      };
    }
    return cm !== undefined ? { reason: Reason.OutputConflict, message: cm } : secret;
  }
}
