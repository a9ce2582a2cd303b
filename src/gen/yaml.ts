/**
 * The one YAML writer of the generated files (config/crd and its chart copies, config/rbac,
 * config/manager, config/default): YAML that YAML 1.1 readers (go-yaml behind kubectl -f and
 * Helm, kustomize's reader behind kubectl apply -k, Argo CD and Flux) and YAML 1.2 readers read
 * as the same JSON. A string is written plain only when every one of those readers would read
 * the plain scalar back as that string; otherwise it is double-quoted. Without this, kustomize
 * sends `2012-10-17` to the API server as the timestamp `2012-10-17T00:00:00Z`, go-yaml reads
 * `yes`, `on` and `y` as true and `0777` as 511, and the YAML 1.1 schema reads `12:30` as 750.
 *
 * Uses the `yaml` package (a dev dependency): import this module from tooling and tests only.
 */
import { Document, parse, Scalar, visit, type ToStringOptions } from "yaml";

/** How the generated files are laid out: no line folding, sequences indented under their key. */
const LAYOUT: ToStringOptions = { lineWidth: 0, indent: 2, indentSeq: true, flowCollectionPadding: false };

/**
 * go-yaml's own number rules, wider than YAML 1.1's: integers as Go's strconv.ParseInt with base
 * 0 reads them once underscores are dropped (0b, 0o, 0x prefixes in either case), and floats with
 * an exponent but no dot.
 */
const GO_INT = /^[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|[0-9]+)$/;
const GO_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** Plain scalars with a meaning of their own in YAML 1.1: the merge key, and the value key `=`. */
const GO_SPECIAL = new Set(["<<", "="]);

/**
 * Examples of strings YAML 1.1 readers (go-yaml: kubectl, Helm; kustomize's reader) or YAML 1.2
 * readers read as another type, each of which the writer quotes: timestamps, booleans, null,
 * numbers in every base and notation, sexagesimal numbers, the merge key.
 */
export const YAML_TRAPS = [
  ...["2012-10-17", "2008-10-17", "2001-12-14t21:59:43.10-05:00", "2026-12-01 20:00:00"],
  ...["yes", "Yes", "YES", "no", "No", "on", "On", "ON", "off", "Off", "y", "Y", "n", "N"],
  ...["true", "False", "null", "Null", "~", ""],
  ...[
    "1e3",
    "1E3",
    "1e+3",
    "-1.5e-3",
    ".5",
    "1.",
    "+1",
    "-0",
    "0777",
    "0o17",
    "0x1F",
    "0X1f",
    "0b101",
    "1_000",
  ],
  ...["12:30", "190:20:30", "1:2", ".inf", "-.Inf", ".NaN", "<<", "="],
] as const;

/** Whether `text` as a plain scalar reads back as `text` under `version`'s schema. */
function readsAsItself(text: string, version: "1.1" | "1.2"): boolean {
  try {
    return parse(text, { version, strict: true, uniqueKeys: false, logLevel: "silent" }) === text;
  } catch {
    return false;
  }
}

/**
 * Whether a string must be quoted so that YAML 1.1 and 1.2 readers both read it back unchanged:
 * true for everything either schema or go-yaml would read as a boolean, null, number, timestamp
 * or merge key (`2012-10-17`, `yes`, `off`, `y`, `~`, `1e3`, `0777`, `0x1F`, `0o17`, `1_000`,
 * `12:30`, `<<`).
 */
export function needsQuotes(text: string): boolean {
  if (text === "") return true;
  const dropped = text.replace(/_/g, "");
  if (GO_INT.test(dropped) || GO_FLOAT.test(dropped) || GO_SPECIAL.has(text)) return true;
  return !readsAsItself(text, "1.1") || !readsAsItself(text, "1.2");
}

/**
 * Marks every string scalar of `doc` (keys and values) that `needsQuotes` as double-quoted, and
 * switches the document to the YAML 1.1 schema so the writer's own checks cover that schema too.
 * Returns `doc`.
 */
export function quoteAmbiguous<T extends Document>(doc: T): T {
  doc.setSchema("1.1");
  visit(doc, {
    Scalar(key, node) {
      if (typeof node.value !== "string" || !needsQuotes(node.value)) return;
      // kustomize's reader merges a `<<` key whatever its quoting or tag.
      if (key === "key" && node.value === "<<")
        throw new Error("a mapping key << cannot be written for every YAML reader");
      node.type = Scalar.QUOTE_DOUBLE;
      // The 1.1 schema writes the merge key's text plain whatever the style; the tag keeps it a string.
      if (node.value === "<<") node.tag = "tag:yaml.org,2002:str";
    },
  });
  return doc;
}

/** `value` as one YAML document (no `---`), safe for YAML 1.1 and 1.2 readers. */
export function toYaml(value: unknown): string {
  return documentToYaml(new Document(value));
}

/**
 * `doc` (built or parsed) as YAML text, safe for YAML 1.1 and 1.2 readers: ambiguous strings are
 * quoted. The 1.1 schema is only the writer's: no `%YAML` directive is written, the files stay
 * plain manifests.
 */
export function documentToYaml(doc: Document): string {
  quoteAmbiguous(doc);
  if (doc.directives !== undefined) doc.directives.yaml.explicit = false;
  const text = doc.toString(LAYOUT);
  if (text.startsWith("%")) throw new Error(`YAML writer produced a directive: ${text.slice(0, 40)}`);
  return text;
}
