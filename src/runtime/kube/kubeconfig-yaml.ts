/**
 * Reads a kubeconfig file's text the way client-go does: YAML 1.1 (go-yaml v2 through
 * sigs.k8s.io/yaml), so `yes`, `no`, `on` and `off` are booleans and `0777` is octal, then a typed
 * decode into clientcmd's `Config`, which refuses a value of the wrong type (a boolean or a number
 * where a string belongs) instead of taking its text. Timestamps stay strings, as go-yaml leaves
 * them when decoding into an untyped value, and base-60 numbers are not read (go-yaml has none).
 *
 * Documents: the first one is the kubeconfig. kubectl (go-yaml v2) reads the first and ignores
 * the ones that follow; here a later document must be empty (a trailing `---`, a comment), and a file
 * with a second real document is refused rather than half read. Duplicate keys in a mapping are
 * refused too (kubectl takes the last one). The names in each list (clusters, users, contexts,
 * extensions) must be unique, as clientcmd's conversion of the lists to maps requires.
 *
 * Errors give the reason, the position and the field's path, never a value or the text around it:
 * the file holds tokens and keys.
 */
import { parseAllDocuments, YAMLError, type Tags } from "yaml";

/** A kubeconfig whose text is not YAML, or whose values do not fit clientcmd's `Config`. */
export class KubeConfigSyntaxError extends Error {
  override readonly name: string = "KubeConfigSyntaxError";
}

type Kind = "string" | "boolean" | "bytes" | "strings" | "object" | "list";

/** The typed fields of each clientcmd v1 struct, by their JSON names. */
const CLUSTER: Readonly<Record<string, Kind>> = {
  server: "string",
  "tls-server-name": "string",
  "insecure-skip-tls-verify": "boolean",
  "certificate-authority": "string",
  "certificate-authority-data": "bytes",
  "proxy-url": "string",
  "disable-compression": "boolean",
  extensions: "list",
};
const AUTH_INFO: Readonly<Record<string, Kind>> = {
  "client-certificate": "string",
  "client-certificate-data": "bytes",
  "client-key": "string",
  "client-key-data": "bytes",
  token: "string",
  tokenFile: "string",
  as: "string",
  "as-uid": "string",
  "as-groups": "strings",
  "as-user-extra": "object",
  username: "string",
  password: "string",
  "auth-provider": "object",
  exec: "object",
  extensions: "list",
};
const EXEC: Readonly<Record<string, Kind>> = {
  command: "string",
  args: "strings",
  env: "list",
  apiVersion: "string",
  installHint: "string",
  provideClusterInfo: "boolean",
  interactiveMode: "string",
};
const CONTEXT: Readonly<Record<string, Kind>> = {
  cluster: "string",
  user: "string",
  namespace: "string",
  extensions: "list",
};
const CONFIG: Readonly<Record<string, Kind>> = {
  apiVersion: "string",
  kind: "string",
  "current-context": "string",
  preferences: "object",
  clusters: "list",
  users: "list",
  contexts: "list",
  extensions: "list",
};

/** YAML 1.1's tags less the two go-yaml does not resolve in an untyped decode. */
const goYamlTags = (tags: Tags): Tags =>
  tags.filter((t) =>
    typeof t === "string"
      ? t !== "timestamp" && t !== "intTime" && t !== "floatTime"
      : t.tag !== "tag:yaml.org,2002:timestamp" && t.format !== "TIME",
  );

/** The document in `text` (`what` names it in errors): a plain object, or undefined when empty. */
export function readKubeConfigYaml(text: string, what: string): Record<string, unknown> | undefined {
  let values: unknown[];
  try {
    const docs = parseAllDocuments(text, { version: "1.1", customTags: goYamlTags, uniqueKeys: true });
    for (const d of docs) if (d.errors[0] !== undefined) throw d.errors[0];
    values = docs.map((d) => d.toJS() as unknown);
  } catch (err) {
    throw new KubeConfigSyntaxError(`${what} is not valid YAML: ${yamlProblem(err)}`);
  }
  if (values.slice(1).some((v) => v !== null && v !== undefined))
    throw new KubeConfigSyntaxError(
      `${what} holds more than one YAML document; a kubeconfig is one document (an empty one after \`---\` is ignored)`,
    );
  const doc = values[0];
  if (doc === null || doc === undefined) return undefined;
  if (!isObject(doc)) throw new KubeConfigSyntaxError(`${what} is not a kubeconfig document`);
  const problem = typeProblem(doc) ?? duplicateProblem(doc);
  if (problem !== undefined) throw new KubeConfigSyntaxError(`${what}: ${problem}`);
  return doc;
}

/** The first value of `doc` whose type clientcmd's `Config` refuses, as "<path> must be ...". */
function typeProblem(doc: Record<string, unknown>): string | undefined {
  return (
    fieldsProblem(doc, CONFIG, "") ??
    namedProblem(doc.clusters, "clusters", "cluster", (c, at) => fieldsProblem(c, CLUSTER, at)) ??
    namedProblem(doc.users, "users", "user", (u, at) => userProblem(u, at)) ??
    namedProblem(doc.contexts, "contexts", "context", (c, at) => fieldsProblem(c, CONTEXT, at))
  );
}

function userProblem(user: Record<string, unknown>, at: string): string | undefined {
  const own = fieldsProblem(user, AUTH_INFO, at);
  if (own !== undefined) return own;
  const exec = user.exec;
  if (isObject(exec)) {
    const execProblem = fieldsProblem(exec, EXEC, `${at}.exec`);
    if (execProblem !== undefined) return execProblem;
    const env = exec.env;
    if (Array.isArray(env))
      for (const [i, e] of env.entries()) {
        const p = isObject(e)
          ? fieldsProblem(e, { name: "string", value: "string" }, `${at}.exec.env[${i}]`)
          : `${at}.exec.env[${i}] must be a mapping`;
        if (p !== undefined) return p;
      }
  }
  const provider = user["auth-provider"];
  if (isObject(provider)) {
    const p = fieldsProblem(provider, { name: "string", config: "object" }, `${at}.auth-provider`);
    if (p !== undefined) return p;
    if (isObject(provider.config))
      for (const [k, v] of Object.entries(provider.config))
        if (v !== null && typeof v !== "string") return `${at}.auth-provider.config.${k} ${mustBe("string")}`;
  }
  const extra = user["as-user-extra"];
  if (isObject(extra))
    for (const [k, v] of Object.entries(extra)) {
      const p = kindProblem(v, "strings", `${at}.as-user-extra.${k}`);
      if (p !== undefined) return p;
    }
  return undefined;
}

/**
 * The first list whose entries share a name, as "<list> has more than one entry named <name>":
 * clientcmd turns each list into a map by name and refuses the file on a repeated one. Only the
 * name is given, never an entry (clientcmd's own message prints the whole list, credentials
 * included).
 */
function duplicateProblem(doc: Record<string, unknown>): string | undefined {
  const lists: [unknown, string][] = [
    [doc.clusters, "clusters"],
    [doc.users, "users"],
    [doc.contexts, "contexts"],
    [doc.extensions, "extensions"],
    [isObject(doc.preferences) ? doc.preferences.extensions : undefined, "preferences.extensions"],
  ];
  for (const [key, inner] of [
    ["clusters", "cluster"],
    ["users", "user"],
    ["contexts", "context"],
  ] as const) {
    const list = doc[key];
    if (!Array.isArray(list)) continue;
    for (const [i, item] of list.entries()) {
      const value: unknown = isObject(item) ? item[inner] : undefined;
      const at = isObject(item) && typeof item.name === "string" ? JSON.stringify(item.name) : String(i);
      if (isObject(value)) lists.push([value.extensions, `${key}[${at}].${inner}.extensions`]);
    }
  }
  for (const [list, at] of lists) {
    if (!Array.isArray(list)) continue;
    const seen = new Set<string>();
    for (const item of list) {
      const name: unknown = isObject(item) ? (item.name ?? "") : "";
      if (typeof name !== "string") continue;
      if (seen.has(name))
        return `${at} has more than one entry named ${JSON.stringify(name)}; names must be unique`;
      seen.add(name);
    }
  }
  return undefined;
}

/** Each `{name, <inner>}` entry of the list `list` (named `key`), its inner mapping checked by `check`. */
function namedProblem(
  list: unknown,
  key: string,
  inner: string,
  check: (entry: Record<string, unknown>, at: string) => string | undefined,
): string | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const [i, item] of list.entries()) {
    if (!isObject(item)) return `${key}[${i}] must be a mapping`;
    if (item.name !== undefined && item.name !== null && typeof item.name !== "string")
      return `${key}[${i}].name ${mustBe("string")}`;
    const at = typeof item.name === "string" ? `${key}[${JSON.stringify(item.name)}]` : `${key}[${i}]`;
    const value = item[inner];
    if (value === undefined || value === null) continue;
    if (!isObject(value)) return `${at}.${inner} must be a mapping`;
    const p = check(value, `${at}.${inner}`);
    if (p !== undefined) return p;
  }
  return undefined;
}

function fieldsProblem(
  obj: Record<string, unknown>,
  fields: Readonly<Record<string, Kind>>,
  at: string,
): string | undefined {
  for (const [name, kind] of Object.entries(fields)) {
    const p = kindProblem(obj[name], kind, at === "" ? name : `${at}.${name}`);
    if (p !== undefined) return p;
  }
  return undefined;
}

function kindProblem(value: unknown, kind: Kind, at: string): string | undefined {
  if (value === undefined || value === null) return undefined; // JSON null leaves the zero value
  switch (kind) {
    case "string":
      return typeof value === "string" ? undefined : `${at} ${mustBe("string")}`;
    case "boolean":
      return typeof value === "boolean" ? undefined : `${at} must be true or false`;
    case "bytes":
      if (typeof value !== "string") return `${at} ${mustBe("string")}`;
      return isBase64(value) ? undefined : `${at} is not valid base64`;
    case "strings":
      if (!Array.isArray(value)) return `${at} must be a list of strings`;
      return value.every((v) => typeof v === "string") ? undefined : `${at} ${mustBe("list of strings")}`;
    case "object":
      return isObject(value) ? undefined : `${at} must be a mapping`;
    case "list":
      return Array.isArray(value) ? undefined : `${at} must be a list`;
  }
}

/** The refusal for a value YAML 1.1 read as another type, with what to do about it. */
function mustBe(what: string): string {
  return `must be a ${what} (YAML 1.1, as kubectl reads it, takes yes, no, on, off and numbers such as 0777 for other types: quote the value)`;
}

/** Go's encoding/json reads []byte as standard base64, with padding. */
function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * What is wrong and where, without the text around it: the YAML library's message quotes the
 * neighbouring lines (tokens and keys included), so only its error code and position are kept.
 */
function yamlProblem(err: unknown): string {
  if (!(err instanceof YAMLError)) return "unreadable document";
  const reason = err.code.toLowerCase().replace(/_/g, " ");
  const pos = err.linePos?.[0];
  return pos !== undefined ? `${reason} at line ${pos.line}, column ${pos.col}` : reason;
}
