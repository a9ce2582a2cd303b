/**
 * `spec.writeOutputsTo`: the ConfigMap an object's identifiers are written into, for applications
 * to read with `envFrom`. Every kind supplies a pure function from the object (its spec and the
 * status the flow just computed) to its output values; this module owns the ConfigMap.
 *
 * The ConfigMap is the object's when it carries an ownerReference to it with `controller: true`
 * (the garbage collector deletes it with the object). The operator labels every ConfigMap it
 * writes with {@link MANAGED_BY_LABEL}, and its ConfigMap informer lists and watches only that
 * label ({@link OUTPUT_CONFIGMAP_SELECTOR}), so the cache holds the operator's ConfigMaps and no
 * others, indexed by the UID of their controller. Per reconcile:
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
import type { KubeRule } from "./kind.ts";

/** Where ConfigMaps are served. */
export const ConfigMapResource: ResourceType = Object.freeze({
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
});

/** A core/v1 ConfigMap, as far as this module reads and writes it. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** The label selector of the operator's ConfigMap informer. */
export const OUTPUT_CONFIGMAP_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

const isConfigMaps = (r: ResourceType): boolean =>
  r.group === ConfigMapResource.group && r.plural === ConfigMapResource.plural;

/** The label selector the informer of `resource` watches with, if any. */
export function outputCacheSelector(resource: ResourceType): string | undefined {
  return isConfigMaps(resource) ? OUTPUT_CONFIGMAP_SELECTOR : undefined;
}

/**
 * The indexes the informer of `resource` needs: the ConfigMaps by the UID of their controller,
 * so an object's ConfigMaps are found without a scan of its namespace.
 */
export function outputCacheIndexers(
  resource: ResourceType,
): Readonly<Record<string, IndexFunc<KubeObject>>> | undefined {
  return isConfigMaps(resource) ? { [CONTROLLER_UID_INDEX]: controllerUidIndex } : undefined;
}

/** The Kubernetes API calls of this module, for the ClusterRole. */
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

/** The ConfigMap `name` of `owner` holding `data`, as it is created. */
export function desiredConfigMap(
  owner: ManagedObject,
  name: string,
  data: Record<string, string>,
): ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: owner.metadata.namespace ?? "",
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ownerReferences: [ownerReferenceTo(owner)],
    },
    data,
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

/** The conflict message for a ConfigMap `cm` that is not `owner`'s; stable for a given owner. */
export function conflictMessage(cm: Readonly<ConfigMap>): string {
  const ref = controllerOf(cm);
  const whose = ref !== undefined ? `it is controlled by ${ref.kind} ${ref.name}` : "it has no controller";
  return (
    `ConfigMap ${cm.metadata.name ?? ""} exists and is not this object's (${whose}); it is left ` +
    "as it is: delete it or choose another spec.writeOutputsTo.configMapName"
  );
}

/** The ConfigMap calls an {@link OutputWriter} makes (a `ResourceClient<ConfigMap>` fits). */
export type ConfigMapClient = Pick<
  ResourceClient<ConfigMap>,
  "get" | "byIndex" | "getLive" | "create" | "update" | "delete"
>;

/** Options of {@link OutputWriter}. */
export interface OutputWriterOptions<T extends ManagedObject> {
  configMaps: ConfigMapClient;
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

/** Writes, repairs and deletes the ConfigMaps of `spec.writeOutputsTo`; see the module comment. */
export class OutputWriter<T extends ManagedObject> {
  readonly #cms: ConfigMapClient;
  readonly #values: (obj: T) => OutputValues;

  constructor(opts: OutputWriterOptions<T>) {
    this.#cms = opts.configMaps;
    this.#values = opts.values;
  }

  /**
   * Brings the object's ConfigMaps in line with its spec. Resolves to the conflict message when
   * the wanted ConfigMap exists and is not the object's, else `undefined`. `obj` carries its
   * type meta, metadata.uid and the status just computed.
   */
  async sync(obj: T, ctx: OutputContext): Promise<string | undefined> {
    const namespace = obj.metadata.namespace ?? "";
    const uid = obj.metadata.uid ?? "";
    const wanted = obj.spec.writeOutputsTo?.configMapName;
    for (const cm of this.#cms.byIndex(CONTROLLER_UID_INDEX, uid)) {
      if (cm.metadata.name === wanted || cm.metadata.namespace !== namespace) continue;
      await this.#delete(cm, ctx);
    }
    if (wanted === undefined) return undefined;
    const data = outputData(this.#values(obj));
    const ref = { namespace, name: wanted };
    const cached = this.#cms.get(ref);
    if (cached !== undefined) return this.#reconcile(obj, cached, data, ctx);
    if (ctx.conflictReported) {
      const live = await this.#cms.getLive(ref, { signal: ctx.signal });
      if (live !== undefined) return this.#reconcile(obj, live, data, ctx);
    }
    try {
      await this.#cms.create(desiredConfigMap(obj, wanted, data), { signal: ctx.signal });
      ctx.logger.info({ configMap: wanted }, "wrote the outputs ConfigMap");
      return undefined;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const live = await this.#cms.getLive(ref, { signal: ctx.signal });
      // Deleted again in between: the 409 goes to the flow, which looks again shortly.
      if (live === undefined) throw err;
      return this.#reconcile(obj, live, data, ctx);
    }
  }

  async #reconcile(
    obj: T,
    current: Readonly<ConfigMap>,
    data: Record<string, string>,
    ctx: OutputContext,
  ): Promise<string | undefined> {
    if (controllerOf(current)?.uid !== obj.metadata.uid) return conflictMessage(current);
    const next = repairedConfigMap(current, data);
    if (next === undefined) return undefined;
    const name = current.metadata.name ?? "";
    if (current.immutable === true) {
      // An immutable ConfigMap cannot be changed, only replaced.
      await this.#delete(current, ctx);
      await this.#cms.create(desiredConfigMap(obj, name, data), { signal: ctx.signal });
    } else {
      await this.#cms.update(next, { signal: ctx.signal });
    }
    ctx.logger.info({ configMap: name }, "updated the outputs ConfigMap");
    return undefined;
  }

  async #delete(cm: Readonly<ConfigMap>, ctx: OutputContext): Promise<void> {
    const uid = cm.metadata.uid;
    try {
      await this.#cms.delete(cm, {
        signal: ctx.signal,
        ...(uid !== undefined ? { preconditions: { uid } } : {}),
      });
      ctx.logger.info({ configMap: cm.metadata.name }, "deleted an outputs ConfigMap no longer wanted");
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
