/**
 * Whether a resource policy (a bucket's, a queue's) can be exported into spec.policy unchanged:
 * the CRD's policy field (api/v1/common.ts iamPolicyField) defaults a missing Version and the API
 * server drops the fields it does not define, so a document the field cannot hold as it is would
 * be written back changed when the exported object is adopted.
 */
import { isJsonObject, type JSONSchemaProps, type JsonValue } from "../../api/schema/openapi.ts";

/** A policy document spec.policy holds unchanged. */
export type PolicyDocument = { Statement: JsonValue[] } & { [key: string]: JsonValue };

/**
 * `doc` as spec.policy (whose schema is `field`) holds it: `inexpressible` when it is not an
 * object, has no Version, a Statement that is not a list or is longer than the field allows, or
 * fields the field does not define (in the document or a statement).
 */
export function expressiblePolicy(
  doc: JsonValue,
  field: JSONSchemaProps | undefined,
): PolicyDocument | "inexpressible" {
  if (!isJsonObject(doc) || typeof doc["Version"] !== "string") return "inexpressible";
  const statements = doc["Statement"];
  if (!Array.isArray(statements)) return "inexpressible";
  const keys = new Set(Object.keys(field?.properties ?? {}));
  if (!Object.keys(doc).every((k) => keys.has(k))) return "inexpressible";
  const statementField = field?.properties?.["Statement"];
  if (statements.length > (statementField?.maxItems ?? Infinity)) return "inexpressible";
  const statementKeys = new Set(Object.keys(statementField?.items?.properties ?? {}));
  if (!statements.every((st) => isJsonObject(st) && Object.keys(st).every((k) => statementKeys.has(k))))
    return "inexpressible";
  return { ...doc, Statement: statements };
}
