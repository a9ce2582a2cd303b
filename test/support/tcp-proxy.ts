/**
 * A loopback TCP proxy between a client and a server (the operator and kube-apiserver): TLS passes
 * through untouched, and the proxy can cut every connection at once, as a network partition or a
 * load balancer restart would, then accept connections again on the same port.
 */
import net from "node:net";

/** A loopback TCP proxy that can be cut (connections dropped and refused) and restored. */
export class CuttableProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<net.Socket>();
  #server: net.Server | undefined;
  port = 0;

  constructor(target: URL) {
    this.#target = { host: target.hostname, port: Number(target.port) };
  }

  async listen(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.#target);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  /** `https://127.0.0.1:<port>`, once listening. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Drops every open connection and keeps accepting new ones. */
  drop(): void {
    for (const s of this.#sockets) s.destroy();
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
