/**
 * HTTP proxies as Go programs choose them (net/http's ProxyFromEnvironment, which client-go and
 * the AWS SDK for Go use): `HTTPS_PROXY` for https URLs, `HTTP_PROXY` for http URLs (upper case
 * first, then lower case), `NO_PROXY` for exclusions, and never a proxy for `localhost` or a
 * loopback address. The result is handed to Node's own proxy support (`proxyEnv` of
 * `http.Agent`/`https.Agent`, Node 24), which tunnels https through CONNECT and sends http in
 * absolute form.
 *
 * `NO_PROXY` follows Go: entries are separated by commas; `*` turns the proxy off; an IP address
 * or a CIDR range matches addresses; a domain name matches itself and its subdomains, one with a
 * leading `.` or `*.` its subdomains only; an entry may end in `:port` and then matches only
 * that port.
 */
import { BlockList, isIP } from "node:net";

/** The proxy environment variables, as read by {@link proxyFromEnvironment}. */
export interface ProxyEnvironment {
  readonly httpsProxy: string | undefined;
  readonly httpProxy: string | undefined;
  readonly noProxy: string;
}

/** Reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY (upper case first, then lower case). */
export function proxyEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProxyEnvironment {
  const firstSet = (...names: string[]): string | undefined => {
    for (const n of names) {
      const v = env[n];
      if (v !== undefined && v !== "") return v;
    }
    return undefined;
  };
  return {
    httpsProxy: firstSet("HTTPS_PROXY", "https_proxy"),
    httpProxy: firstSet("HTTP_PROXY", "http_proxy"),
    noProxy: firstSet("NO_PROXY", "no_proxy") ?? "",
  };
}

/**
 * The proxy URL for a request to `target` under `proxies`, or undefined for a direct
 * connection. A proxy value without a scheme is taken as `http://`, as Go does.
 * @throws ProxyConfigError when the proxy value is not a usable URL.
 */
export function proxyFor(target: URL, proxies: ProxyEnvironment): URL | undefined {
  const raw =
    target.protocol === "https:"
      ? proxies.httpsProxy
      : target.protocol === "http:"
        ? proxies.httpProxy
        : undefined;
  if (raw === undefined) return undefined;
  const host = bareHost(target.hostname).toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  if (host === "localhost" || isLoopback(host)) return undefined;
  if (excluded(host, port, proxies.noProxy)) return undefined;
  return parseProxyUrl(raw, target.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY");
}

/** A proxy setting that is not a URL Node can use. Its message names the setting, never its value. */
export class ProxyConfigError extends Error {
  override readonly name = "ProxyConfigError";
}

/**
 * Parses a proxy URL as Go does (`http://` assumed when the scheme is missing). Only `http:`
 * and `https:` proxies are accepted: Node does not speak SOCKS.
 */
export function parseProxyUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new ProxyConfigError(`${what} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const scheme = url.protocol.replace(/:$/, "");
    const socks = /^socks/i.test(scheme) ? " (Node.js has no SOCKS client)" : "";
    throw new ProxyConfigError(
      `${what} uses scheme ${JSON.stringify(scheme)}; only http and https proxies are supported${socks}`,
    );
  }
  return url;
}

/**
 * Checks that each proxy of `proxies` is one Node can use, whatever it would be used for: the
 * API server's connection takes HTTPS_PROXY or HTTP_PROXY by its scheme and NO_PROXY, the AWS
 * clients take both. Go programs also accept `socks5://`; this one refuses it before it starts.
 * @throws ProxyConfigError naming the variable, never its value.
 */
export function checkProxyEnvironment(proxies: ProxyEnvironment): void {
  if (proxies.httpsProxy !== undefined) parseProxyUrl(proxies.httpsProxy, "HTTPS_PROXY");
  if (proxies.httpProxy !== undefined) parseProxyUrl(proxies.httpProxy, "HTTP_PROXY");
}

/** The proxy URL without user name and password, for messages and logs. */
export function redactedProxyUrl(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/**
 * The `proxyEnv` option for a Node agent that sends every request through `proxy` (or none).
 * The proxy's user name and password, if any, become Node's `Proxy-Authorization`.
 */
export function agentProxyOptions(proxy: URL | undefined): { proxyEnv?: NodeJS.ProcessEnv } {
  if (proxy === undefined) return {};
  return { proxyEnv: { HTTPS_PROXY: proxy.href, HTTP_PROXY: proxy.href } };
}

/**
 * The `proxyEnv` option for an agent shared by requests to many hosts (the AWS clients): the
 * proxies of `proxies` with a `NO_PROXY` list in Node's syntax that excludes what Go excludes.
 * Go's rules map onto Node's list except for two cases, where Node's list is wider or narrower:
 * a domain entry with a port matches only that exact host and port (Go: its subdomains too), and
 * IPv6 CIDR ranges are dropped (Node has none).
 */
export function sharedAgentProxyOptions(proxies: ProxyEnvironment): { proxyEnv?: NodeJS.ProcessEnv } {
  if (proxies.httpsProxy === undefined && proxies.httpProxy === undefined) return {};
  const env: NodeJS.ProcessEnv = { NO_PROXY: nodeNoProxy(proxies.noProxy) };
  if (proxies.httpsProxy !== undefined)
    env.HTTPS_PROXY = parseProxyUrl(proxies.httpsProxy, "HTTPS_PROXY").href;
  if (proxies.httpProxy !== undefined) env.HTTP_PROXY = parseProxyUrl(proxies.httpProxy, "HTTP_PROXY").href;
  return { proxyEnv: env };
}

/** Go's NO_PROXY (plus the loopback rule) in the syntax of Node's bypass list. */
export function nodeNoProxy(goList: string): string {
  const out = ["localhost", "127.0.0.0-127.255.255.255", "::1"];
  for (const entry of entries(goList)) {
    if (entry.host === "*") return "*";
    const suffix = entry.port !== undefined ? `:${entry.port}` : "";
    if (entry.cidr !== undefined) {
      const range = ipv4Range(entry.cidr);
      if (range !== undefined) out.push(range);
    } else if (entry.ip) {
      out.push(`${entry.host}${suffix}`);
    } else if (entry.port !== undefined) {
      out.push(`${entry.host}${suffix}`);
    } else if (entry.subdomainsOnly) {
      out.push(`*.${entry.host}`);
    } else {
      out.push(`.${entry.host}`);
    }
  }
  return out.join(",");
}

interface NoProxyEntry {
  host: string;
  port: string | undefined;
  ip: boolean;
  cidr: string | undefined;
  subdomainsOnly: boolean;
}

function entries(list: string): NoProxyEntry[] {
  const out: NoProxyEntry[] = [];
  for (let raw of list.split(",")) {
    raw = raw.trim().toLowerCase();
    if (raw === "") continue;
    if (raw === "*") {
      out.push({ host: "*", port: undefined, ip: false, cidr: undefined, subdomainsOnly: false });
      continue;
    }
    if (/^[0-9a-f:.]+\/\d+$/.test(raw)) {
      out.push({ host: raw, port: undefined, ip: true, cidr: raw, subdomainsOnly: false });
      continue;
    }
    let host = raw;
    let port: string | undefined;
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(raw);
    if (m !== null && m[1] !== undefined) {
      host = m[1];
      port = m[2];
    }
    host = bareHost(host);
    if (isIP(host) !== 0) {
      out.push({ host, port, ip: true, cidr: undefined, subdomainsOnly: false });
      continue;
    }
    let subdomainsOnly = false;
    if (host.startsWith("*.")) host = host.slice(1);
    if (host.startsWith(".")) {
      subdomainsOnly = true;
      host = host.slice(1);
    }
    if (host !== "") out.push({ host, port, ip: false, cidr: undefined, subdomainsOnly });
  }
  return out;
}

function excluded(host: string, port: string, list: string): boolean {
  const ip = isIP(host) !== 0;
  for (const e of entries(list)) {
    if (e.host === "*") return true;
    if (e.port !== undefined && e.port !== port) continue;
    if (e.cidr !== undefined) {
      if (ip && inCidr(host, e.cidr)) return true;
    } else if (e.ip) {
      if (ip && sameIp(host, e.host)) return true;
    } else if (!ip) {
      if (host.endsWith(`.${e.host}`) || (!e.subdomainsOnly && host === e.host)) return true;
    }
  }
  return false;
}

function bareHost(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) {
    const list = new BlockList();
    list.addAddress("::1", "ipv6");
    list.addSubnet("::ffff:127.0.0.0", 104, "ipv6");
    return list.check(host, "ipv6");
  }
  return false;
}

function sameIp(a: string, b: string): boolean {
  const family = isIP(a) === 4 ? "ipv4" : "ipv6";
  if (isIP(a) !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(b, family);
  return list.check(a, family);
}

function inCidr(host: string, cidr: string): boolean {
  const [net, bits] = cidr.split("/");
  if (net === undefined || bits === undefined || isIP(net) === 0 || isIP(net) !== isIP(host)) return false;
  const family = isIP(net) === 4 ? "ipv4" : "ipv6";
  const list = new BlockList();
  try {
    list.addSubnet(net, Number(bits), family);
  } catch {
    return false;
  }
  return list.check(host, family);
}

function ipv4Range(cidr: string): string | undefined {
  const [net, bitsText] = cidr.split("/");
  if (net === undefined || bitsText === undefined || isIP(net) !== 4) return undefined;
  const bits = Number(bitsText);
  if (!(bits >= 0 && bits <= 32)) return undefined;
  const n = net.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
  const size = 2 ** (32 - bits);
  const start = Math.floor(n / size) * size;
  const toIp = (v: number): string => [24, 16, 8, 0].map((s) => Math.floor(v / 2 ** s) % 256).join(".");
  return `${toIp(start)}-${toIp(start + size - 1)}`;
}
