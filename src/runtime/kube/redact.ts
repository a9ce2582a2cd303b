/**
 * Credentials out of server answers. An API server, a webhook behind it or a proxy may repeat in
 * its error message what the request sent (a 401 quoting the bearer token, an echo of the
 * `Authorization` header). The REST client removes the request's own credentials from every
 * answer it turns into an error or a watch ERROR event, before a log line or error message can
 * quote it.
 */

/** What stands in for a removed credential. */
export const REDACTED = "[redacted]";

/**
 * The strings to remove for a request that sent the bearer token `token`, basic auth `auth`
 * (`user:password`) and went through `proxy`, whose URL may hold a user name and password: the
 * token, each password, and each `user:password` in base64 as a `Basic` header carries it. Empty
 * values are left out.
 */
export function credentialsOf(opts: {
  token?: string | undefined;
  auth?: string | undefined;
  proxy?: URL | undefined;
}): string[] {
  const out = new Set<string>();
  if (opts.token !== undefined && opts.token !== "") out.add(opts.token);
  const basic = (pair: string): void => {
    const colon = pair.indexOf(":");
    const password = colon >= 0 ? pair.slice(colon + 1) : "";
    if (password !== "") out.add(password);
    out.add(Buffer.from(pair, "utf8").toString("base64"));
  };
  if (opts.auth !== undefined && opts.auth !== "") basic(opts.auth);
  const proxy = opts.proxy;
  if (proxy !== undefined && (proxy.username !== "" || proxy.password !== "")) {
    basic(`${decoded(proxy.username)}:${decoded(proxy.password)}`);
    if (proxy.password !== "") out.add(proxy.password); // as written in the URL, percent-encoded
  }
  return [...out];
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
}

/** `text` with every occurrence of each of `secrets` replaced by {@link REDACTED}. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so that a secret holding another is removed whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length))
    if (s !== "" && out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** A copy of the JSON value `value` with {@link redactText} applied to every string in it, keys included. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === "object" && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secrets), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
