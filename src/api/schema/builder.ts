/**
 * A small typed builder for structural OpenAPI v3 schemas (the dialect of CustomResourceDefinition
 * validation). Each builder returns a {@link Schema}: the JSON node that goes into the CRD, plus
 * phantom types from which {@link Static} (the object as the API server serves it, defaults
 * applied) and {@link Input} (the object as a client may write it) are inferred. The schema is
 * therefore the only place a field is declared; the TypeScript types cannot drift from the CRD.
 *
 * Every node must carry a `description`, so `kubectl explain` documents every field.
 *
 * Presence of an object property is decided by its own options:
 * - `required: true`: listed in the parent's `required`; present in both types.
 * - `default: v`: the API server fills it in, so it is present in {@link Static} and optional in
 *   {@link Input}. Nested defaults apply only when the parent object exists (give the parent a
 *   `default: {}` to always materialise it).
 * - neither: optional in both types.
 */
import type { JSONSchemaProps, JsonValue, ValidationRule } from "./openapi.ts";

declare const servedType: unique symbol;
declare const inputType: unique symbol;

/** How an object property comes to be present. See the module documentation. */
export type Presence = "required" | "defaulted" | "optional";

/**
 * A schema node with its inferred TypeScript types. `S` is the served (defaulted) type, `I` the
 * input type, `P` the presence of the node when it is an object property.
 * Schemas are immutable values; builders never mutate their arguments.
 */
export interface Schema<S, I = S, P extends Presence = Presence> {
  /** The OpenAPI node, with keys in canonical order. */
  readonly node: Readonly<JSONSchemaProps>;
  /** Whether the node is required, defaulted or optional when used as an object property. */
  readonly presence: P;
  /** Phantom: never set at run time. */
  readonly [servedType]?: S;
  /** Phantom: never set at run time. */
  readonly [inputType]?: I;
}

/** Any schema, for generic constraints. */
export type AnySchema = Schema<unknown, unknown, Presence>;

/** The type of a value as served by the API server: required and defaulted fields are present. */
export type Static<T> = T extends Schema<infer S, unknown, Presence> ? S : never;

/** The type of a value as a client writes it: only required fields must be present. */
export type Input<T> = T extends Schema<unknown, infer I, Presence> ? I : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type PresentKeys<P> = { [K in keyof P]: P[K] extends { presence: "optional" } ? never : K }[keyof P];
type RequiredKeys<P> = { [K in keyof P]: P[K] extends { presence: "required" } ? K : never }[keyof P];

/** Served type of an object with properties `P`. */
export type StaticObject<P extends Record<string, AnySchema>> = Simplify<
  { [K in PresentKeys<P>]: Static<P[K]> } & { [K in Exclude<keyof P, PresentKeys<P>>]?: Static<P[K]> }
>;

/** Input type of an object with properties `P`. */
export type InputObject<P extends Record<string, AnySchema>> = Simplify<
  { [K in RequiredKeys<P>]: Input<P[K]> } & { [K in Exclude<keyof P, RequiredKeys<P>>]?: Input<P[K]> }
>;

/** The presence implied by a set of options. */
export type PresenceOf<O> = O extends { required: true }
  ? "required"
  : O extends { default: unknown }
    ? "defaulted"
    : "optional";

/** Options every builder accepts. */
export interface CommonOptions<T> {
  /** What the field means, shown by `kubectl explain`. Mandatory. */
  description: string;
  /** List the field in the parent's `required`. Mutually exclusive with `default`. */
  required?: boolean;
  /** Value the API server fills in when the field is absent. */
  default?: T;
  /** CEL rules attached to this node. */
  validations?: readonly ValidationRule[];
}

/** Options of {@link string}. */
export interface StringOptions extends CommonOptions<string> {
  /** RE2 regular expression the whole value must match (anchor it yourself). */
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  /** OpenAPI format, for example `date-time`. */
  format?: string;
}

/** Options of {@link integer}. */
export interface IntegerOptions extends CommonOptions<number> {
  minimum?: number;
  maximum?: number;
  /** @default "int32" */
  format?: "int32" | "int64";
}

/** Options of {@link array}. */
export interface ArrayOptions<E> extends CommonOptions<E[]> {
  minItems?: number;
  /** Bound every list: CEL cost estimates depend on it. */
  maxItems: number;
  /** @default "atomic" */
  listType?: "atomic" | "set" | "map";
  /** With `listType: "map"`: the item properties that identify an entry (each must be required). */
  listMapKeys?: readonly string[];
}

/** Options of {@link record}. */
export interface RecordOptions<V> extends CommonOptions<Record<string, V>> {
  minProperties?: number;
  /** Bound every map: CEL cost estimates depend on it. */
  maxProperties: number;
}

/** Options of {@link object}. */
export interface ObjectOptions<I> extends CommonOptions<I> {
  minProperties?: number;
  maxProperties?: number;
}

const KEY_ORDER: readonly (keyof JSONSchemaProps)[] = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "nullable",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "items",
  "properties",
  "additionalProperties",
  "required",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-validations",
];

/**
 * Returns a copy of `node` with keys in a fixed order, `properties` sorted by name and undefined
 * keys dropped, so rendering is deterministic whatever order the schema was written in.
 */
export function canonicalNode(node: Readonly<JSONSchemaProps>): JSONSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === "properties") {
      const props = value as Record<string, JSONSchemaProps>;
      out[key] = Object.fromEntries(
        Object.keys(props)
          .sort()
          .map((name) => [name, canonicalNode(props[name] as JSONSchemaProps)]),
      );
    } else if (key === "items" || key === "additionalProperties") {
      out[key] = canonicalNode(value as JSONSchemaProps);
    } else if (key === "x-kubernetes-validations") {
      out[key] = (value as ValidationRule[]).map(canonicalRule);
    } else {
      out[key] = value;
    }
  }
  const unknownKeys = Object.keys(node).filter((k) => !(KEY_ORDER as readonly string[]).includes(k));
  if (unknownKeys.length > 0) throw new SchemaError(`unsupported schema keys: ${unknownKeys.join(", ")}`);
  return out as JSONSchemaProps;
}

function canonicalRule(r: ValidationRule): ValidationRule {
  const out: ValidationRule = { rule: r.rule };
  if (r.message !== undefined) out.message = r.message;
  if (r.messageExpression !== undefined) out.messageExpression = r.messageExpression;
  if (r.reason !== undefined) out.reason = r.reason;
  if (r.fieldPath !== undefined) out.fieldPath = r.fieldPath;
  if (r.optionalOldSelf !== undefined) out.optionalOldSelf = r.optionalOldSelf;
  return out;
}

/** Raised when a schema is built with contradictory or incomplete options. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaError";
  }
}

/** Copies a plain data value into a {@link JsonValue}, rejecting anything JSON cannot carry. */
export function toJson(value: unknown): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new SchemaError(`not a JSON number: ${value}`);
    return value;
  }
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === "object") {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toJson(v);
    return out;
  }
  throw new SchemaError(`not a JSON value: ${typeof value}`);
}

function build<S, I, P extends Presence>(
  opts: CommonOptions<unknown>,
  node: JSONSchemaProps,
): Schema<S, I, P> {
  if (!opts.description.trim()) throw new SchemaError("every schema node needs a description");
  if (opts.required === true && opts.default !== undefined) {
    throw new SchemaError(`a field cannot be both required and defaulted: ${opts.description}`);
  }
  const full: JSONSchemaProps = { ...node, description: opts.description };
  if (opts.default !== undefined) full.default = toJson(opts.default);
  if (opts.validations && opts.validations.length > 0)
    full["x-kubernetes-validations"] = [...opts.validations];
  const presence = (
    opts.required === true ? "required" : opts.default !== undefined ? "defaulted" : "optional"
  ) as P;
  return Object.freeze({ node: Object.freeze(canonicalNode(full)), presence });
}

/** A string. */
export function string<const O extends StringOptions>(opts: O): Schema<string, string, PresenceOf<O>> {
  if (opts.minLength !== undefined && opts.maxLength !== undefined && opts.minLength > opts.maxLength) {
    throw new SchemaError(`minLength > maxLength: ${opts.description}`);
  }
  return build(opts, {
    type: "string",
    format: opts.format,
    pattern: opts.pattern,
    minLength: opts.minLength,
    maxLength: opts.maxLength,
  });
}

/** An RFC 3339 timestamp carried as a string (`metav1.Time`). */
export function dateTime<const O extends CommonOptions<string>>(
  opts: O,
): Schema<string, string, PresenceOf<O>> {
  return build(opts, { type: "string", format: "date-time" });
}

/** A string restricted to `values`; the TypeScript type is their union. */
export function enumOf<
  const V extends readonly [string, ...string[]],
  const O extends CommonOptions<V[number]>,
>(values: V, opts: O): Schema<V[number], V[number], PresenceOf<O>> {
  if (new Set(values).size !== values.length)
    throw new SchemaError(`duplicate enum values: ${opts.description}`);
  return build(opts, { type: "string", enum: [...values] });
}

/** An integer (`int32` unless said otherwise). */
export function integer<const O extends IntegerOptions>(opts: O): Schema<number, number, PresenceOf<O>> {
  if (opts.minimum !== undefined && opts.maximum !== undefined && opts.minimum > opts.maximum) {
    throw new SchemaError(`minimum > maximum: ${opts.description}`);
  }
  return build(opts, {
    type: "integer",
    format: opts.format ?? "int32",
    minimum: opts.minimum,
    maximum: opts.maximum,
  });
}

/** A boolean. */
export function boolean<const O extends CommonOptions<boolean>>(
  opts: O,
): Schema<boolean, boolean, PresenceOf<O>> {
  return build(opts, { type: "boolean" });
}

/** A list of `items`. */
export function array<E extends AnySchema, const O extends ArrayOptions<Input<E>>>(
  items: E,
  opts: O,
): Schema<Static<E>[], Input<E>[], PresenceOf<O>> {
  const listType = opts.listType ?? "atomic";
  const keys = opts.listMapKeys ?? [];
  if (listType === "map") {
    if (keys.length === 0) throw new SchemaError(`listType map needs listMapKeys: ${opts.description}`);
    const required = items.node.required ?? [];
    for (const key of keys) {
      if (!items.node.properties?.[key]) throw new SchemaError(`list map key ${key} is not a property`);
      if (!required.includes(key) && items.node.properties[key]?.default === undefined) {
        throw new SchemaError(`list map key ${key} must be required or defaulted: ${opts.description}`);
      }
    }
  } else if (keys.length > 0) {
    throw new SchemaError(`listMapKeys need listType map: ${opts.description}`);
  }
  if (listType === "set" && items.node.type === "object") {
    throw new SchemaError(`listType set needs scalar items: ${opts.description}`);
  }
  return build(opts, {
    type: "array",
    minItems: opts.minItems,
    maxItems: opts.maxItems,
    items: items.node,
    "x-kubernetes-list-type": listType,
    "x-kubernetes-list-map-keys": listType === "map" ? [...keys] : undefined,
  });
}

/** A map from string keys to `values` (`additionalProperties`). Keys are validated by CEL only. */
export function record<V extends AnySchema, const O extends RecordOptions<Input<V>>>(
  values: V,
  opts: O,
): Schema<Record<string, Static<V>>, Record<string, Input<V>>, PresenceOf<O>> {
  return build(opts, {
    type: "object",
    minProperties: opts.minProperties,
    maxProperties: opts.maxProperties,
    additionalProperties: values.node,
  });
}

/**
 * Any JSON value, kept as written (`x-kubernetes-preserve-unknown-fields`): for the parts of a
 * document whose shape another system defines, such as the principal or condition of an IAM
 * policy statement. Use sparingly; everything the operator reads should have a schema.
 */
export function json<const O extends CommonOptions<JsonValue>>(
  opts: O,
): Schema<JsonValue, JsonValue, PresenceOf<O>> {
  return build(opts, { "x-kubernetes-preserve-unknown-fields": true });
}

/** An object with the given properties; unknown properties are pruned by the API server. */
export function object<
  const P extends Record<string, AnySchema>,
  const O extends ObjectOptions<InputObject<P>>,
>(props: P, opts: O): Schema<StaticObject<P>, InputObject<P>, PresenceOf<O>> {
  const names = Object.keys(props);
  const required = names.filter((n) => props[n]?.presence === "required").sort();
  return build(opts, {
    type: "object",
    minProperties: opts.minProperties,
    maxProperties: opts.maxProperties,
    properties: Object.fromEntries(names.map((n) => [n, (props[n] as AnySchema).node])),
    required: required.length > 0 ? required : undefined,
  });
}

/**
 * A transition rule that rejects any change of the field it is attached to. It runs only when
 * both the old and new value exist; pair it with {@link immutablePresence} on the parent when the
 * field is optional.
 */
export function immutable(message: string): ValidationRule {
  return { rule: "self == oldSelf", message };
}

/**
 * A transition rule for the parent object that rejects adding, removing or changing the optional
 * property `field` after creation. The error is reported on the property itself.
 */
export function immutablePresence(field: string, message: string): ValidationRule {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new SchemaError(`not a simple property name: ${field}`);
  return {
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message,
    fieldPath: `.${field}`,
  };
}
