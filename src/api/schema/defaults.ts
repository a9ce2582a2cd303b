/**
 * Structural defaulting, as kube-apiserver applies a CRD's `default` values to an object it
 * reads or is sent: a property that is absent and has a default gets a copy of it, at every depth
 * where the parent is present (in an object's properties, in each element of an array, in each
 * value of a map), and the defaults themselves are defaulted in turn. `null` is left as it is,
 * except that a property not declared `nullable` whose value is `null` and that has a default gets
 * the default, as the API server does. Pure: returns a new value.
 */
import type { JSONSchemaProps, JsonValue } from "./openapi.ts";

/** `value` with the defaults of `schema` applied; see the module comment. */
export function withDefaults(schema: Readonly<JSONSchemaProps>, value: JsonValue): JsonValue {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items === undefined ? value.map(clone) : value.map((v) => withDefaults(items, v));
  }
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, JsonValue> = {};
  const props = schema.properties;
  for (const [k, v] of Object.entries(value)) {
    const prop = props?.[k] ?? schema.additionalProperties;
    if (prop === undefined) {
      out[k] = clone(v);
    } else if (v === null && prop.default !== undefined && prop.nullable !== true) {
      out[k] = withDefaults(prop, clone(prop.default));
    } else {
      out[k] = withDefaults(prop, v);
    }
  }
  for (const [k, prop] of Object.entries(props ?? {})) {
    if (!(k in out) && prop.default !== undefined) out[k] = withDefaults(prop, clone(prop.default));
  }
  return out;
}

function clone(v: JsonValue): JsonValue {
  return structuredClone(v);
}
