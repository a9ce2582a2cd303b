/**
 * A forward proxy on loopback for proxy tests: CONNECT tunnels (https) and absolute-form
 * requests (http), counted, with the host each asked for. Every target, whatever its name, is
 * reached on 127.0.0.1 at the port asked for, so nothing leaves the machine and a name that does
 * not resolve (`apiserver.proxy.test`) can only be reached through the proxy.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";

export class CountingProxy {
  readonly #server: http.Server;
  /** CONNECT tunnels opened, by `host:port` asked for. */
  readonly tunnels: string[] = [];
  /** Absolute-form requests forwarded, by `host:port` asked for. */
  readonly forwarded: string[] = [];
  /** `Proxy-Authorization` values received. */
  readonly proxyAuthorizations: string[] = [];
  readonly #sockets = new Set<net.Socket>();

  private constructor(server: http.Server) {
    this.#server = server;
  }

  static async start(): Promise<CountingProxy> {
    const server = http.createServer();
    const proxy = new CountingProxy(server);
    server.on("connection", (s) => {
      proxy.#sockets.add(s);
      s.on("close", () => proxy.#sockets.delete(s));
    });
    server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      const target = req.url ?? "";
      proxy.tunnels.push(target);
      proxy.#noteAuth(req);
      const port = Number(target.slice(target.lastIndexOf(":") + 1));
      const upstream = net.connect(port, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      proxy.#sockets.add(upstream);
      upstream.on("close", () => proxy.#sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      let url: URL;
      try {
        url = new URL(req.url ?? "");
      } catch {
        res.writeHead(400).end();
        return;
      }
      proxy.forwarded.push(url.host);
      proxy.#noteAuth(req);
      const headers = { ...req.headers };
      delete headers["proxy-authorization"];
      delete headers["proxy-connection"];
      const upstream = http.request(
        {
          host: "127.0.0.1",
          port: Number(url.port || 80),
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("error", () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  #noteAuth(req: http.IncomingMessage): void {
    const auth = req.headers["proxy-authorization"];
    if (typeof auth === "string") this.proxyAuthorizations.push(auth);
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
