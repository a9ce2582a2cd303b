/**
 * Exec credential plugins (`users[].user.exec` in a kubeconfig, as kubectl and client-go run
 * them): the command prints an `ExecCredential` with a bearer token or a client certificate and
 * key, and optionally when it expires. The credential is reused until then (or until
 * {@link ExecCredentials.invalidate}, after a 401); without an expiry it is reused until
 * invalidated.
 */
import { execFile } from "node:child_process";
import { systemClock, type Clock } from "../clock.ts";
import type { KubeConfigCluster, KubeConfigExec } from "./kubeconfig.ts";

/** What a plugin run yields. */
export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
}

const API_VERSIONS = new Set(["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]);

/** Runs one plugin and caches its credential. */
export class ExecCredentials {
  readonly #exec: KubeConfigExec;
  readonly #cluster: Readonly<KubeConfigCluster>;
  readonly #clock: Clock;
  #cached: { credential: ExecCredential; expiresAt: number } | undefined;

  constructor(exec: KubeConfigExec, cluster: Readonly<KubeConfigCluster>, clock: Clock = systemClock) {
    if (!API_VERSIONS.has(exec.apiVersion))
      throw new Error(`exec plugin apiVersion ${JSON.stringify(exec.apiVersion)} is not supported`);
    this.#exec = exec;
    this.#cluster = cluster;
    this.#clock = clock;
  }

  /** The current credential, running the plugin when there is none or it has expired. */
  async get(): Promise<ExecCredential> {
    const c = this.#cached;
    if (c !== undefined && this.#clock.now() < c.expiresAt) return c.credential;
    const { credential, expiresAt } = await this.#run();
    this.#cached = { credential, expiresAt };
    return credential;
  }

  /** Drops the cached credential: the next {@link get} runs the plugin. */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<{ credential: ExecCredential; expiresAt: number }> {
    const exec = this.#exec;
    const info = {
      apiVersion: exec.apiVersion,
      kind: "ExecCredential",
      spec: {
        interactive: false,
        ...(exec.provideClusterInfo
          ? {
              cluster: {
                server: this.#cluster.server,
                ...(this.#cluster["certificate-authority-data"] !== undefined
                  ? { "certificate-authority-data": this.#cluster["certificate-authority-data"] }
                  : {}),
                ...(this.#cluster["insecure-skip-tls-verify"] !== undefined
                  ? { "insecure-skip-tls-verify": this.#cluster["insecure-skip-tls-verify"] }
                  : {}),
                ...(this.#cluster["tls-server-name"] !== undefined
                  ? { "tls-server-name": this.#cluster["tls-server-name"] }
                  : {}),
              },
            }
          : {}),
      },
    };
    const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    for (const { name, value } of exec.env ?? []) env[name] = value;
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        exec.command,
        exec.args ?? [],
        { env, timeout: 60_000, maxBuffer: 1 << 20 },
        (err, out, errOut) => {
          if (err !== null) {
            reject(
              new Error(
                `exec plugin ${exec.command} failed: ${err.message}${errOut ? `: ${errOut.trim()}` : ""}`,
              ),
            );
          } else resolve(out);
        },
      );
    });
    let parsed: { kind?: string; status?: ExecCredential & { expirationTimestamp?: string } };
    try {
      parsed = JSON.parse(stdout) as typeof parsed;
    } catch {
      throw new Error(`exec plugin ${exec.command} did not print an ExecCredential`);
    }
    const status = parsed.status;
    if (parsed.kind !== "ExecCredential" || status === undefined)
      throw new Error(`exec plugin ${exec.command} did not print an ExecCredential`);
    const hasCert = status.clientCertificateData !== undefined || status.clientKeyData !== undefined;
    if (hasCert && (status.clientCertificateData === undefined || status.clientKeyData === undefined))
      throw new Error(
        `exec plugin ${exec.command} returned a client certificate without its key, or a key without its certificate`,
      );
    if (status.token === undefined && !hasCert)
      throw new Error(`exec plugin ${exec.command} returned neither a token nor a client certificate`);
    const expiresAt =
      status.expirationTimestamp !== undefined
        ? Date.parse(status.expirationTimestamp)
        : Number.POSITIVE_INFINITY;
    return {
      credential: {
        ...(status.token !== undefined ? { token: status.token } : {}),
        ...(hasCert
          ? { clientCertificateData: status.clientCertificateData, clientKeyData: status.clientKeyData }
          : {}),
      },
      expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt,
    };
  }
}
