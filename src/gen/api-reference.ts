/**
 * The API reference, docs/api-reference.md: every field of every CRD with its type, whether it is
 * required, its default, the rules admission enforces (enum, pattern, bounds, list semantics, CEL
 * rules with their messages, immutability) and its description, rendered from the very
 * CustomResourceDefinitions `make manifests` writes to config/crd, so the page cannot disagree
 * with what the API server enforces. Pure: returns the page's text; src/gen/files.ts adds it to
 * the generated files, so src/gen/files.test.ts fails when the committed page is stale.
 *
 * What the fields do (reconciliation, drift, ownership) is prose in docs/api.md; this page is the
 * exhaustive, mechanical half.
 */
import type { CustomResourceDefinition } from "../api/schema/crd.ts";
import type { JSONSchemaProps, ValidationRule } from "../api/schema/openapi.ts";
import { headingAnchor } from "./markdown.ts";

/** Where the page lives, relative to the repository root. */
export const API_REFERENCE = "docs/api-reference.md";

/** One row of a field table. */
interface FieldRow {
  readonly path: string;
  readonly type: string;
  readonly required: boolean;
  readonly defaultValue: string;
  readonly rules: readonly string[];
  readonly description: string;
}

/** Text safe inside one Markdown table cell: one line, no column breaks, no HTML. */
function cell(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|");
}

/** A literal inside a table cell, in backticks (a backtick in it is written as an entity). */
function code(text: string): string {
  return `\`${text.replace(/\s+/g, " ").replace(/\|/g, "\\|").replace(/`/g, "'")}\``;
}

/** The type of a node as users write it: `string (date-time)`, `[]object`, `map[string]string`. */
function typeOf(node: JSONSchemaProps): string {
  if (node["x-kubernetes-preserve-unknown-fields"] && node.properties === undefined) return "any";
  if (node.type === "array") return `[]${node.items ? typeOf(node.items) : "any"}`;
  if (node.type === "object" && node.additionalProperties !== undefined && node.properties === undefined)
    return `map[string]${typeOf(node.additionalProperties)}`;
  const base = node.type ?? "any";
  return node.format !== undefined ? `${base} (${node.format})` : base;
}

/** `3-63`, `≥ 1`, `≤ 80`: a bound pair in words, or undefined when neither is set. */
function bounds(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return min === max ? `${min}` : `${min}-${max}`;
  if (min !== undefined) return `at least ${min}`;
  if (max !== undefined) return `at most ${max}`;
  return undefined;
}

/** A CEL rule as the reference states it: its message, or the rule itself. */
function ruleText(r: ValidationRule): string {
  if (r.rule === "self == oldSelf") return "immutable";
  if (r.message !== undefined) return cell(r.message);
  return `rule ${code(r.rule)}`;
}

/**
 * Rules a node states about one of its fields (`fieldPath`), keyed by that field's path: they
 * are listed on the field's row, where admission reports them.
 */
type FieldRules = Map<string, string[]>;

function collectFieldRules(node: JSONSchemaProps, path: string, into: FieldRules): void {
  for (const r of node["x-kubernetes-validations"] ?? [])
    if (r.fieldPath !== undefined) {
      const target = `${path}${r.fieldPath}`;
      into.set(target, [...(into.get(target) ?? []), ruleText(r)]);
    }
}

/** What admission enforces on a node itself, in the order users meet it. */
function rulesOf(node: JSONSchemaProps): string[] {
  const out: string[] = [];
  if (node.enum !== undefined) out.push(`one of ${node.enum.map((v) => code(JSON.stringify(v))).join(", ")}`);
  if (node.pattern !== undefined) out.push(`pattern ${code(node.pattern)}`);
  const length = bounds(node.minLength, node.maxLength);
  if (length !== undefined) out.push(`length ${length}`);
  const range = bounds(node.minimum, node.maximum);
  if (range !== undefined) out.push(`value ${range}`);
  const items = bounds(node.minItems, node.maxItems);
  if (items !== undefined) out.push(`${items} items`);
  const props = bounds(node.minProperties, node.maxProperties);
  if (props !== undefined) out.push(`${props} entries`);
  const listType = node["x-kubernetes-list-type"];
  if (listType === "map")
    out.push(`list keyed by ${(node["x-kubernetes-list-map-keys"] ?? []).map(code).join(", ")}`);
  else if (listType === "set") out.push("items unique");
  if (node.nullable) out.push("nullable");
  for (const r of node["x-kubernetes-validations"] ?? [])
    if (r.fieldPath === undefined) out.push(ruleText(r));
  return out;
}

/** The rows of `node`'s properties under `prefix`, depth first, in the schema's key order. */
function rows(node: JSONSchemaProps, prefix: string, fieldRules: FieldRules): FieldRow[] {
  const out: FieldRow[] = [];
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = `${prefix}.${name}`;
    collectFieldRules(child, path, fieldRules);
    out.push({
      path,
      type: typeOf(child),
      required: required.has(name),
      defaultValue: child.default !== undefined ? JSON.stringify(child.default) : "",
      rules: [...rulesOf(child), ...(fieldRules.get(path) ?? [])],
      description: child.description ?? "",
    });
    out.push(...nested(child, path, fieldRules));
  }
  return out;
}

/** The rows below a node: its properties, its list items' or its map values' properties. */
function nested(node: JSONSchemaProps, path: string, fieldRules: FieldRules): FieldRow[] {
  if (node.properties !== undefined) return rows(node, path, fieldRules);
  const inner =
    node.type === "array" && node.items !== undefined
      ? { node: node.items, path: `${path}[]` }
      : node.additionalProperties !== undefined
        ? { node: node.additionalProperties, path: `${path}.<key>` }
        : undefined;
  if (inner === undefined) return [];
  collectFieldRules(inner.node, inner.path, fieldRules);
  return nested(inner.node, inner.path, fieldRules);
}

function table(fieldRows: readonly FieldRow[]): string[] {
  const lines = [
    "| Field | Type | Required | Default | Admission checks | Description |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of fieldRows)
    lines.push(
      `| ${code(r.path)} | ${code(r.type)} | ${r.required ? "yes" : ""} | ${r.defaultValue === "" ? "" : code(r.defaultValue)} | ${r.rules.join("; ")} | ${cell(r.description)} |`,
    );
  return lines;
}

function kindSection(crd: CustomResourceDefinition): string[] {
  const { names, group, scope } = crd.spec;
  const out: string[] = [`## ${names.kind}`, ""];
  for (const version of crd.spec.versions) {
    const root = version.schema.openAPIV3Schema;
    out.push(
      `\`${group}/${version.name}\`, ${scope === "Namespaced" ? "namespaced" : "cluster-scoped"}; ` +
        `resource \`${names.plural}\`, short names ${names.shortNames.map((n) => `\`${n}\``).join(", ") || "none"}, ` +
        `categories ${names.categories.map((n) => `\`${n}\``).join(", ") || "none"}; ` +
        `${version.served ? "served" : "not served"}${version.storage ? ", the storage version" : ""}; ` +
        "status subresource.",
      "",
      cell(root.description ?? ""),
      "",
    );
    const objectRules = root["x-kubernetes-validations"] ?? [];
    if (objectRules.length > 0) {
      out.push("Rules on the whole object:", "");
      for (const r of objectRules) out.push(`- ${ruleText(r)}`);
      out.push("");
    }
    out.push(
      `\`kubectl get ${names.shortNames[0] ?? names.plural}\` columns (\`-o wide\` adds those of priority 1):`,
      "",
    );
    out.push("| Column | Type | Priority | JSONPath | Description |", "| --- | --- | --- | --- | --- |");
    for (const c of version.additionalPrinterColumns)
      out.push(
        `| ${c.name} | ${c.type} | ${c.priority ?? 0} | ${code(c.jsonPath)} | ${cell(c.description)} |`,
      );
    out.push("");
    if (version.selectableFields !== undefined && version.selectableFields.length > 0)
      out.push(
        `Field selectors (\`kubectl get --field-selector\`): ${version.selectableFields.map((f) => code(f.jsonPath)).join(", ")}.`,
        "",
      );
    for (const part of ["spec", "status"] as const) {
      const node = root.properties?.[part];
      if (node === undefined) continue;
      out.push(`### ${names.kind} ${part}`, "", cell(node.description ?? ""), "");
      const partRules = rulesOf(node);
      if (partRules.length > 0) out.push(`Rules on \`${part}\`: ${partRules.join("; ")}.`, "");
      const fieldRules: FieldRules = new Map();
      collectFieldRules(node, part, fieldRules);
      out.push(...table(rows(node, part, fieldRules)), "");
    }
  }
  return out;
}

/** Renders the API reference of `crds` (in the order given). */
export function renderApiReference(crds: readonly CustomResourceDefinition[]): string {
  const lines = [
    "# API reference",
    "",
    "<!-- Generated by `make manifests` (src/gen/api-reference.ts) from the schemas in src/api/v1: do not edit",
    "by hand; change the schema and run `make manifests`. -->",
    "",
    "Every field of every kind of the `compute.cloud.com` API, as the CustomResourceDefinitions in",
    "`config/crd` declare it: what admission checks and defaults are exactly these. What the operator",
    "does with each field (drift repair, ownership, deletion) is in [api.md](api.md), and how the API",
    "may change between versions in [versioning.md](versioning.md). `kubectl explain <kind>.spec` shows",
    "the same descriptions from a running cluster.",
    "",
    ...crds.map((c) => `- [${c.spec.names.kind}](#${headingAnchor(c.spec.names.kind)})`),
    "",
  ];
  for (const crd of crds) lines.push(...kindSection(crd));
  return `${lines.join("\n").trimEnd()}\n`;
}
