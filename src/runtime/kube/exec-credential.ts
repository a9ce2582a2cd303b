/**
 * Exec credential plugins (`users[].user.exec` in a kubeconfig), run as client-go runs them: the
 * command gets the process environment plus the entry's `env` and `KUBERNETES_EXEC_INFO` (an
 * `ExecCredential` request, with the cluster when `provideClusterInfo` is set), no stdin (the
 * operator is never interactive), and prints an `ExecCredential` of the same apiVersion with a
 * bearer token and/or a client certificate and key, and optionally when it expires. The
 * credential is reused until then (or until {@link ExecCredentials.invalidate}, after a 401);
 * without an expiry it is reused until invalidated.
 *
 * Error messages name the command and its exit code (and the entry's `installHint` when the
 * command is missing), never its arguments, its output or its stderr: those can hold secrets.
 */
import { execFile } from "node:child_process";
import { systemClock, type Clock } from "../clock.ts";
import {
  EXEC_API_VERSIONS,
  EXEC_EXTENSION,
  type KubeConfigCluster,
  type KubeConfigExec,
} from "./kubeconfig.ts";

/** What a plugin run yields. */
export interface ExecCredential {
  token?: string;
  /** PEM text. */
  clientCertificateData?: string;
  /** PEM text. */
  clientKeyData?: string;
}

/** A credential with the time it stops being used (ms since the epoch; Infinity: never). */
export interface TimedExecCredential {
  readonly credential: ExecCredential;
  readonly expiresAt: number;
}

/** An exec plugin that could not be run or printed no usable credential. */
export class ExecPluginError extends Error {
  override readonly name = "ExecPluginError";
}

/** How long a plugin may run before it is stopped. */
const PLUGIN_TIMEOUT_MS = 60_000;

/** Runs one plugin and caches its credential. */
export class ExecCredentials {
  readonly #exec: KubeConfigExec;
  readonly #cluster: Readonly<KubeConfigCluster>;
  readonly #caData: () => Promise<Buffer | undefined>;
  readonly #clock: Clock;
  #cached: TimedExecCredential | undefined;

  /**
   * @param caData the cluster's CA as loaded for the connection (data or file), handed to the
   *   plugin as `certificate-authority-data` when it asks for the cluster.
   */
  constructor(
    exec: KubeConfigExec,
    cluster: Readonly<KubeConfigCluster>,
    caData: () => Promise<Buffer | undefined>,
    clock: Clock = systemClock,
  ) {
    if (!EXEC_API_VERSIONS.has(exec.apiVersion))
      throw new ExecPluginError(`exec plugin apiVersion ${JSON.stringify(exec.apiVersion)} is not supported`);
    this.#exec = exec;
    this.#cluster = cluster;
    this.#caData = caData;
    this.#clock = clock;
  }

  /** The current credential, running the plugin when there is none or it has expired. */
  async get(): Promise<TimedExecCredential> {
    const c = this.#cached;
    if (c !== undefined && this.#clock.now() <= c.expiresAt) return c;
    const fresh = await this.#run();
    this.#cached = fresh;
    return fresh;
  }

  /** Drops the cached credential: the next {@link get} runs the plugin. */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #request(): Promise<string> {
    const exec = this.#exec;
    const spec: Record<string, unknown> = {};
    if (exec.provideClusterInfo === true) {
      const cl = this.#cluster;
      const ca = await this.#caData();
      const config = cl.extensions?.find((e) => e.name === EXEC_EXTENSION)?.extension;
      spec.cluster = {
        server: cl.server,
        ...(cl["tls-server-name"] ? { "tls-server-name": cl["tls-server-name"] } : {}),
        ...(cl["insecure-skip-tls-verify"] === true ? { "insecure-skip-tls-verify": true } : {}),
        ...(ca !== undefined && ca.length > 0 ? { "certificate-authority-data": ca.toString("base64") } : {}),
        ...(cl["proxy-url"] ? { "proxy-url": cl["proxy-url"] } : {}),
        ...(cl["disable-compression"] === true ? { "disable-compression": true } : {}),
        ...(config !== undefined && config !== null ? { config } : {}),
      };
    }
    spec.interactive = false;
    return JSON.stringify({ kind: "ExecCredential", apiVersion: exec.apiVersion, spec });
  }

  async #run(): Promise<TimedExecCredential> {
    const exec = this.#exec;
    const name = exec.command;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const { name: key, value } of exec.env ?? []) env[key] = value;
    env.KUBERNETES_EXEC_INFO = await this.#request();
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        name,
        exec.args ?? [],
        { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 1 << 20, killSignal: "SIGKILL" },
        (err, out) => {
          if (err === null) {
            resolve(out);
            return;
          }
          reject(new ExecPluginError(runFailure(name, err, exec.installHint)));
        },
      );
      // client-go gives a non-interactive plugin no stdin: reading it sees end of file at once.
      child.stdin?.end();
    });
    let parsed: {
      apiVersion?: unknown;
      kind?: unknown;
      status?: {
        token?: unknown;
        clientCertificateData?: unknown;
        clientKeyData?: unknown;
        expirationTimestamp?: unknown;
      } | null;
    };
    try {
      parsed = JSON.parse(stdout) as typeof parsed;
    } catch {
      throw new ExecPluginError(
        `exec plugin ${name} did not print an ExecCredential (its output is not JSON)`,
      );
    }
    if (typeof parsed !== "object" || parsed === null || parsed.kind !== "ExecCredential")
      throw new ExecPluginError(`exec plugin ${name} did not print an ExecCredential`);
    if (parsed.apiVersion !== exec.apiVersion)
      throw new ExecPluginError(
        `exec plugin ${name} is configured to use API version ${exec.apiVersion}, plugin returned version ${typeof parsed.apiVersion === "string" ? JSON.stringify(parsed.apiVersion) : "none"}`,
      );
    const status = parsed.status;
    if (status === undefined || status === null || typeof status !== "object")
      throw new ExecPluginError(`exec plugin ${name} didn't return a status field`);
    const text = (v: unknown): string => (typeof v === "string" ? v : "");
    const token = text(status.token);
    const cert = text(status.clientCertificateData);
    const key = text(status.clientKeyData);
    if (token === "" && cert === "" && key === "")
      throw new ExecPluginError(`exec plugin ${name} didn't return a token or cert/key pair`);
    if ((cert === "") !== (key === ""))
      throw new ExecPluginError(`exec plugin ${name} returned only certificate or key, not both`);
    let expiresAt = Number.POSITIVE_INFINITY;
    if (typeof status.expirationTimestamp === "string" && status.expirationTimestamp !== "") {
      expiresAt = Date.parse(status.expirationTimestamp);
      if (Number.isNaN(expiresAt))
        throw new ExecPluginError(`exec plugin ${name} returned an expirationTimestamp that is not a time`);
    }
    return {
      credential: {
        ...(token !== "" ? { token } : {}),
        ...(cert !== "" ? { clientCertificateData: cert, clientKeyData: key } : {}),
      },
      expiresAt,
    };
  }
}

/** Why a plugin run failed, from the command name, exit status and install hint only. */
function runFailure(name: string, err: Error, installHint: string | undefined): string {
  const e = err as NodeJS.ErrnoException & {
    killed?: boolean;
    signal?: NodeJS.Signals | null;
    code?: unknown;
  };
  if (e.code === "ENOENT" || e.code === "EACCES") {
    const hint = installHint?.trim() ? `: ${cleanHint(installHint)}` : "";
    return `exec plugin: executable ${name} ${e.code === "ENOENT" ? "not found" : "is not executable"}${hint}`;
  }
  if (e.killed === true && e.signal === "SIGKILL")
    return `exec plugin: executable ${name} was stopped after ${PLUGIN_TIMEOUT_MS / 1000} s`;
  if (typeof e.code === "number") return `exec plugin: executable ${name} failed with exit code ${e.code}`;
  if (e.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER")
    return `exec plugin: executable ${name} printed more than 1 MiB`;
  if (e.signal) return `exec plugin: executable ${name} was killed by ${e.signal}`;
  return `exec plugin: executable ${name} could not be run (${typeof e.code === "string" ? e.code : "error"})`;
}

/** The install hint on one line, without terminal escape sequences (client-go strips them too). */
function cleanHint(hint: string): string {
  const escape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g");
  return hint.replace(escape, "").replace(/\s+/g, " ").trim();
}
