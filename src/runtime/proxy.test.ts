import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  checkProxyEnvironment,
  nodeNoProxy,
  parseProxyUrl,
  proxyEnvironment,
  proxyFor,
  ProxyConfigError,
} from "./proxy.ts";

const P = "http://proxy:3128/";
const choose = (target: string, noProxy: string, env: Record<string, string> = {}): string | undefined =>
  proxyFor(new URL(target), { ...proxyEnvironment({ HTTPS_PROXY: P, HTTP_PROXY: P, ...env }), noProxy })
    ?.href;

describe("proxyFor (Go's ProxyFromEnvironment rules)", () => {
  it("uses HTTPS_PROXY for https and HTTP_PROXY for http, upper case first", () => {
    const env = proxyEnvironment({ HTTPS_PROXY: "http://a:1", https_proxy: "http://b:1", http_proxy: "c:2" });
    assert.equal(proxyFor(new URL("https://api.example.com"), env)?.href, "http://a:1/");
    // A value without a scheme is http://.
    assert.equal(proxyFor(new URL("http://api.example.com"), env)?.href, "http://c:2/");
    assert.equal(
      proxyFor(new URL("https://x.example.com"), proxyEnvironment({ HTTP_PROXY: "http://a:1" })),
      undefined,
    );
  });

  it("never proxies localhost or loopback addresses from the environment", () => {
    for (const t of [
      "https://localhost:6443",
      "https://127.0.0.1",
      "https://127.8.9.10:1",
      "https://[::1]:6443",
    ])
      assert.equal(choose(t, ""), undefined, t);
    assert.equal(choose("https://10.0.0.1", ""), P);
  });

  it("matches NO_PROXY entries as Go does", () => {
    const cases: [string, string, boolean][] = [
      ["https://api.example.com", "example.com", false],
      ["https://example.com", "example.com", false],
      ["https://api.example.com", ".example.com", false],
      ["https://example.com", ".example.com", true],
      ["https://example.com", "*.example.com", true],
      ["https://a.b.example.com", "*.example.com", false],
      ["https://notexample.com", "example.com", true],
      ["https://api.example.com:6443", "example.com:6443", false],
      ["https://api.example.com:443", "example.com:6443", true],
      ["https://10.1.2.3", "10.0.0.0/8", false],
      ["https://11.1.2.3", "10.0.0.0/8", true],
      ["https://10.1.2.3", "10.1.2.3", false],
      ["https://[fd00::5]", "fd00::/64", false],
      ["https://10.1.2.3", "example.com", true],
      ["https://anything.io", "*", false],
      ["https://anything.io", " foo.com , anything.io ", false],
    ];
    for (const [target, noProxy, proxied] of cases)
      assert.equal(choose(target, noProxy) !== undefined, proxied, `${target} with NO_PROXY=${noProxy}`);
  });

  it("refuses a proxy URL Node cannot use, without quoting it", () => {
    assert.throws(
      () => parseProxyUrl("socks5://user:secret@p:1080", "HTTPS_PROXY"),
      (e: unknown) =>
        e instanceof ProxyConfigError &&
        !e.message.includes("secret") &&
        /HTTPS_PROXY uses scheme "socks5"/.test(e.message),
    );
  });

  it("checks both proxy variables whatever they would be used for, naming the variable only", () => {
    checkProxyEnvironment(proxyEnvironment({ HTTPS_PROXY: "https://p:443", http_proxy: "p:3128" }));
    checkProxyEnvironment(proxyEnvironment({}));
    for (const [env, name] of [
      [{ HTTPS_PROXY: "socks5://user:secret@p:1080", NO_PROXY: "*" }, "HTTPS_PROXY"],
      [{ https_proxy: "socks5h://p:1080" }, "HTTPS_PROXY"],
      [{ HTTP_PROXY: "socks4://p:1080" }, "HTTP_PROXY"],
    ] as const)
      assert.throws(
        () => checkProxyEnvironment(proxyEnvironment(env)),
        (e: unknown) =>
          e instanceof ProxyConfigError &&
          !e.message.includes("secret") &&
          new RegExp(
            `^${name} uses scheme "socks[45h]*"; only http and https proxies are supported \\(Node\\.js has no SOCKS client\\)$`,
          ).test(e.message),
      );
  });

  it("translates NO_PROXY into Node's list, loopback included", () => {
    assert.equal(
      nodeNoProxy("example.com, .internal, *.corp, 10.0.0.0/8, 192.168.1.1, svc:8443"),
      "localhost,127.0.0.0-127.255.255.255,::1,.example.com,*.internal,*.corp,10.0.0.0-10.255.255.255,192.168.1.1,svc:8443",
    );
    assert.equal(nodeNoProxy("a.com,*"), "*");
  });
});
