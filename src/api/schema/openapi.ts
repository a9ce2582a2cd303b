/**
 * The subset of the apiextensions.k8s.io/v1 `JSONSchemaProps` (OpenAPI v3, structural) that the
 * schema builder emits. Field names and meanings follow the Kubernetes API exactly, so a value of
 * {@link JSONSchemaProps} can be written into a CustomResourceDefinition as it is.
 */

/** A JSON value, as it may appear in `default` or `enum`. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether `v` is a JSON object (not null, not a list). */
export function isJsonObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * One CEL rule (`x-kubernetes-validations` entry). Rules see the field they are attached to as
 * `self`; transition rules also read `oldSelf` and run on updates only.
 */
export interface ValidationRule {
  /** The CEL expression; it must evaluate to true for the object to be admitted. */
  rule: string;
  /** Fixed message shown when the rule fails. Prefer it over `messageExpression`: it costs nothing. */
  message?: string;
  /** CEL expression producing the message; evaluated only when the rule fails. */
  messageExpression?: string;
  /** The machine-readable reason reported with the failure. @default "FieldValueInvalid" */
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  /** Path, relative to the field carrying the rule, that the error is reported on (`.spec.x`). */
  fieldPath?: string;
  /** Evaluate the transition rule even when the old value is absent (`oldSelf` is then optional). */
  optionalOldSelf?: boolean;
}

/** A structural OpenAPI v3 schema node, as accepted by apiextensions.k8s.io/v1. */
export interface JSONSchemaProps {
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  enum?: JsonValue[];
  default?: JsonValue;
  nullable?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-validations"?: ValidationRule[];
}
