/**
 * Assembles an apiextensions.k8s.io/v1 CustomResourceDefinition from typed spec and status
 * schemas. One served and stored version, the status subresource always on, structural schema
 * (unknown fields are pruned).
 */
import type { ResourceType } from "../../runtime/kube/object.ts";
import { canonicalNode, SchemaError, type AnySchema } from "./builder.ts";
import type { JSONSchemaProps, ValidationRule } from "./openapi.ts";

/** A `kubectl get` column (`additionalPrinterColumns` entry). */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** Simple JSONPath relative to the object, for example `.status.state`. */
  jsonPath: string;
  description: string;
  /** 0 shows the column in `kubectl get`; 1 only in `-o wide`. @default 0 */
  priority?: number;
}

/** Everything that distinguishes one kind's CRD. */
export interface CrdOptions {
  resource: ResourceType;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  /** Description of the kind, shown by `kubectl explain <kind>`. */
  description: string;
  spec: AnySchema;
  status: AnySchema;
  printerColumns: readonly PrinterColumn[];
  /** Fields usable in `--field-selector` (JSONPaths such as `.spec.region`). */
  selectableFields?: readonly string[];
  /** Rules on the whole object (may read `self.metadata.name`). */
  validations?: readonly ValidationRule[];
  /** Labels for the CRD object itself. */
  labels?: Readonly<Record<string, string>>;
}

/** The CustomResourceDefinition object, as sent to the API server. */
export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      selectableFields?: { jsonPath: string }[];
    }[];
  };
}

/**
 * Builds the CRD. Throws {@link SchemaError} when a printer column or selectable field points at
 * a path the schema does not declare, so a renamed field cannot silently blank a column.
 */
export function buildCrd(opts: CrdOptions): CustomResourceDefinition {
  const { resource } = opts;
  const root: JSONSchemaProps = canonicalNode({
    description: opts.description,
    type: "object",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. " +
          `Always ${resource.group}/${resource.version} for this kind.`,
        type: "string",
      },
      kind: {
        description: `Kind is the REST resource this object represents. Always ${resource.kind}.`,
        type: "string",
      },
      metadata: { type: "object" },
      spec: opts.spec.node,
      status: opts.status.node,
    },
    required: ["spec"],
    "x-kubernetes-validations": opts.validations ? [...opts.validations] : undefined,
  });
  for (const column of opts.printerColumns) checkPath(root, column.jsonPath, `printer column ${column.name}`);
  for (const path of opts.selectableFields ?? []) checkPath(root, path, "selectable field");

  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${resource.plural}.${resource.group}`,
      ...(opts.labels ? { labels: { ...opts.labels } } : {}),
    },
    spec: {
      group: resource.group,
      names: {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular: opts.singular,
        shortNames: [...opts.shortNames],
        categories: [...opts.categories],
      },
      scope: resource.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: root },
          subresources: { status: {} },
          additionalPrinterColumns: opts.printerColumns.map((c) => ({ ...c, priority: c.priority ?? 0 })),
          ...(opts.selectableFields && opts.selectableFields.length > 0
            ? { selectableFields: opts.selectableFields.map((jsonPath) => ({ jsonPath })) }
            : {}),
        },
      ],
    },
  };
}

/**
 * Follows a simple JSONPath (`.a.b`, `.a[?(@.k=="v")].c`) through the schema. Filters step into
 * list items. `.metadata.*` is accepted as is.
 */
function checkPath(root: JSONSchemaProps, jsonPath: string, what: string): void {
  const segments = jsonPath
    .replace(/\[\?\(@\.[A-Za-z0-9_]+=="[^"]*"\)\]/g, ".[]")
    .split(".")
    .filter((s) => s !== "");
  let node: JSONSchemaProps | undefined = root;
  for (const seg of segments) {
    if (node === root && seg === "metadata") return;
    if (seg === "[]") node = node?.items;
    else node = node?.properties?.[seg];
    if (!node) throw new SchemaError(`${what} points at ${jsonPath}, which the schema does not declare`);
  }
}
