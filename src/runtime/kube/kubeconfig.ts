/**
 * Kubeconfig loading: the clientcmd `Config` file format (YAML or JSON), the `KUBECONFIG` list
 * with client-go's merge rule, and the in-cluster ServiceAccount. It selects one context and
 * hands its cluster and user entries, with every file path made absolute, to
 * {@link KubeConfigConnection}, which checks them with client-go's rules ({@link validate}) and
 * turns them into TLS material and credentials.
 *
 * Supported user entries: client certificates (files or inline data), bearer tokens (inline or
 * `tokenFile`, re-read on every refresh), basic auth, impersonation (`as`, `as-uid`,
 * `as-groups`, `as-user-extra`), exec credential plugins (`client.authentication.k8s.io` v1 and
 * v1beta1) and the `oidc` auth-provider's current id-token. Cluster entries: `server`, the CA
 * (file or data), `insecure-skip-tls-verify`, `tls-server-name` and `proxy-url` (http and https
 * proxies).
 *
 * Files are read as YAML 1.1 with clientcmd's field types, as client-go reads them
 * (./kubeconfig-yaml.ts). That module, and the YAML parser behind it, is imported when the first
 * kubeconfig text is read: the in-cluster configuration (the image's) never loads it. Error
 * messages name files, entries and fields, never the contents of a file: a YAML error gives the
 * line and column only.
 */
import { closeSync, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import path from "node:path";

/** A cluster entry as written in a kubeconfig. */
export interface KubeConfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
  "disable-compression"?: boolean;
  extensions?: { name: string; extension: unknown }[];
}

/** An exec credential plugin as written in a kubeconfig. */
export interface KubeConfigExec {
  apiVersion: string;
  command: string;
  args?: string[] | null;
  env?: { name: string; value: string }[] | null;
  provideClusterInfo?: boolean;
  installHint?: string;
  /** `Never`, `IfAvailable` or `Always`; v1beta1 defaults to `IfAvailable`, v1 requires it. */
  interactiveMode?: string;
}

/** An auth-provider entry as written in a kubeconfig. */
export interface KubeConfigAuthProvider {
  name: string;
  config?: Record<string, string> | null;
}

/** A user entry as written in a kubeconfig. */
export interface KubeConfigUser {
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  as?: string;
  "as-uid"?: string;
  "as-groups"?: string[] | null;
  "as-user-extra"?: Record<string, string[] | null> | null;
  exec?: KubeConfigExec | null;
  "auth-provider"?: KubeConfigAuthProvider | null;
}

/** A context entry as written in a kubeconfig. */
export interface KubeConfigContext {
  cluster: string;
  user: string;
  namespace?: string;
}

/** A kubeconfig document (clientcmd v1 `Config`), the parts the operator reads. */
export interface KubeConfigDocument {
  apiVersion?: string;
  kind?: string;
  clusters?: { name: string; cluster: KubeConfigCluster }[];
  users?: { name: string; user: KubeConfigUser }[];
  contexts?: { name: string; context: KubeConfigContext }[];
  "current-context"?: string;
}

/** Where the ServiceAccount's token, CA and namespace are mounted in a pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The cluster extension whose value an exec plugin receives as `spec.cluster.config`. */
export const EXEC_EXTENSION = "client.authentication.k8s.io/exec";

/** A bad, unreadable or unsupported kubeconfig. */
export class KubeConfigError extends Error {
  override readonly name: string = "KubeConfigError";
}

/**
 * A kubeconfig that client-go refuses (see {@link validate}), or that asks for what this loader
 * does not do: refused rather than connecting with less than configured. The message names the
 * entry and the field.
 */
export class InvalidKubeConfigError extends KubeConfigError {
  override readonly name: string = "InvalidKubeConfigError";
}

/**
 * The kubeconfig asks for something this loader does not do (a SOCKS `proxy-url`, an
 * auth-provider other than oidc): refused rather than connecting without it.
 */
export class UnsupportedKubeConfigError extends InvalidKubeConfigError {
  override readonly name: string = "UnsupportedKubeConfigError";
}

/**
 * One kubeconfig, resolved to its current context. Paths inside it are absolute (relative ones
 * are resolved against the folder of the file that named them, as kubectl does).
 */
export class KubeConfig {
  /** The document, with paths made absolute. */
  readonly document: KubeConfigDocument;
  readonly contextName: string;
  readonly clusterName: string;
  readonly userName: string;
  readonly cluster: Readonly<KubeConfigCluster>;
  readonly user: Readonly<KubeConfigUser>;
  /** The context's namespace, if it names one. */
  readonly namespace: string | undefined;

  constructor(document: KubeConfigDocument) {
    this.document = document;
    const contextName = document["current-context"];
    if (!contextName) throw new KubeConfigError("kubeconfig has no current-context");
    const context = document.contexts?.find((c) => c.name === contextName)?.context;
    if (context === undefined)
      throw new KubeConfigError(`kubeconfig has no context ${JSON.stringify(contextName)}`);
    const cluster = document.clusters?.find((c) => c.name === context.cluster)?.cluster;
    if (cluster?.server === undefined || cluster.server === "")
      throw new KubeConfigError(`kubeconfig has no cluster ${JSON.stringify(context.cluster)} with a server`);
    // A context may name a user that is not listed: it then connects without credentials.
    const user = document.users?.find((u) => u.name === context.user)?.user ?? {};
    this.contextName = contextName;
    this.clusterName = context.cluster;
    this.userName = context.user;
    this.cluster = cluster;
    this.user = user;
    this.namespace = context.namespace;
  }

  /** Parses a kubeconfig (YAML or JSON); relative paths are resolved against `baseDir`. */
  static async fromString(text: string, baseDir = process.cwd()): Promise<KubeConfig> {
    return new KubeConfig(absolutePaths(await parse(text, "kubeconfig"), baseDir));
  }

  /** A kubeconfig document already in memory; relative paths are resolved against the working folder. */
  static fromDocument(document: KubeConfigDocument): KubeConfig {
    return new KubeConfig(absolutePaths(document, process.cwd()));
  }

  /** Reads one kubeconfig file. */
  static async fromFile(file: string): Promise<KubeConfig> {
    return new KubeConfig(await readDocument(file));
  }

  /**
   * Merges several kubeconfig files as client-go does for `KUBECONFIG`: the first file that
   * names a cluster, user or context wins it, and the first `current-context` set wins. Files
   * that do not exist are skipped; at least one must.
   */
  static async fromFiles(files: readonly string[]): Promise<KubeConfig> {
    const merged: Required<Pick<KubeConfigDocument, "clusters" | "users" | "contexts">> & KubeConfigDocument =
      {
        clusters: [],
        users: [],
        contexts: [],
      };
    let found = 0;
    for (const file of files) {
      if (!existsSync(file)) continue;
      found++;
      const doc = await readDocument(file);
      for (const key of ["clusters", "users", "contexts"] as const) {
        const have = new Set(merged[key].map((e) => e.name));
        for (const entry of doc[key] ?? [])
          if (!have.has(entry.name)) (merged[key] as { name: string }[]).push(entry);
      }
      merged["current-context"] ??= doc["current-context"] || undefined;
    }
    if (found === 0) throw new KubeConfigError(`none of the kubeconfig files exists: ${files.join(", ")}`);
    return new KubeConfig(merged);
  }

  /**
   * The in-cluster configuration: the API server from `KUBERNETES_SERVICE_HOST` and
   * `KUBERNETES_SERVICE_PORT`, the ServiceAccount's CA, token file (re-read on every refresh, as
   * the kubelet rotates it) and namespace.
   */
  static inCluster(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): KubeConfig {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT;
    if (!host || !port)
      throw new KubeConfigError(
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set in a cluster",
      );
    let namespace: string | undefined;
    try {
      namespace = readFileSync(path.join(dir, "namespace"), "utf8").trim() || undefined;
    } catch {
      namespace = undefined;
    }
    return new KubeConfig({
      clusters: [
        {
          name: "in-cluster",
          cluster: {
            server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
            // client-go goes on without a CA when ca.crt cannot be read (the system roots apply).
            ...(isFile(path.join(dir, "ca.crt"))
              ? { "certificate-authority": path.join(dir, "ca.crt") }
              : {}),
          },
        },
      ],
      users: [{ name: "in-cluster", user: { tokenFile: path.join(dir, "token") } }],
      contexts: [
        {
          name: "in-cluster",
          context: { cluster: "in-cluster", user: "in-cluster", ...(namespace ? { namespace } : {}) },
        },
      ],
      "current-context": "in-cluster",
    });
  }

  /** `KUBECONFIG` (a path list) when set, else `~/.kube/config`. */
  static async fromDefault(env: NodeJS.ProcessEnv = process.env): Promise<KubeConfig> {
    const list = (env.KUBECONFIG ?? "").split(path.delimiter).filter((f) => f !== "");
    if (list.length > 0) return KubeConfig.fromFiles(list);
    return KubeConfig.fromFile(path.join(env.HOME || homedir(), ".kube", "config"));
  }

  /** The document as JSON, which is also valid kubeconfig YAML. */
  toString(): string {
    return JSON.stringify(this.document, null, 2);
  }
}

async function readDocument(file: string): Promise<KubeConfigDocument> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new KubeConfigError(`reading kubeconfig ${file}: ${(err as Error).message}`);
  }
  return absolutePaths(await parse(text, file), path.dirname(path.resolve(file)));
}

/** The document in `text`, read as client-go reads it (./kubeconfig-yaml.ts). */
async function parse(text: string, what: string): Promise<KubeConfigDocument> {
  const { KubeConfigSyntaxError, readKubeConfigYaml } = await import("./kubeconfig-yaml.ts");
  try {
    return (readKubeConfigYaml(text, what) ?? {}) as KubeConfigDocument;
  } catch (err) {
    if (err instanceof KubeConfigSyntaxError) throw new InvalidKubeConfigError(err.message);
    throw err;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** A copy of `doc` with the file paths of its clusters and users resolved against `baseDir`. */
function absolutePaths(doc: KubeConfigDocument, baseDir: string): KubeConfigDocument {
  const abs = (p: string | undefined): string | undefined =>
    p === undefined || p === "" ? p : path.resolve(baseDir, p);
  return {
    ...doc,
    ...(doc.clusters !== undefined
      ? {
          clusters: doc.clusters.map((c) => ({
            ...c,
            cluster: withPath(c.cluster, "certificate-authority", abs(c.cluster?.["certificate-authority"])),
          })),
        }
      : {}),
    ...(doc.users !== undefined
      ? {
          users: doc.users.map((u) => {
            let user: KubeConfigUser = u.user ?? {};
            user = withPath(user, "client-certificate", abs(user["client-certificate"]));
            user = withPath(user, "client-key", abs(user["client-key"]));
            user = withPath(user, "tokenFile", abs(user.tokenFile));
            // An exec command with a path separator is relative to the kubeconfig; a bare name is looked up on PATH.
            if (user.exec?.command !== undefined && user.exec.command.includes(path.sep))
              user = { ...user, exec: { ...user.exec, command: path.resolve(baseDir, user.exec.command) } };
            return { ...u, user };
          }),
        }
      : {}),
  };
}

function withPath<T extends object, K extends keyof T>(entry: T, key: K, value: T[K] | undefined): T {
  return value === undefined ? entry : { ...entry, [key]: value };
}

/** The exec plugin API versions this loader speaks. */
export const EXEC_API_VERSIONS: ReadonlySet<string> = new Set([
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
]);

/**
 * The interactive mode of an exec plugin: as written, else `IfAvailable` for v1beta1 (client-go's
 * default); v1 has no default. The operator never has a terminal, so `IfAvailable` and `Never`
 * both run the plugin without stdin.
 */
export function interactiveModeOf(exec: Readonly<KubeConfigExec>): string | undefined {
  if (exec.interactiveMode !== undefined && exec.interactiveMode !== "") return exec.interactiveMode;
  return exec.apiVersion === "client.authentication.k8s.io/v1beta1" ? "IfAvailable" : undefined;
}

/**
 * Checks the selected cluster and user as client-go does before it connects (clientcmd's
 * `ConfirmUsable` and the transport's checks), plus what this loader cannot do, and throws one
 * {@link InvalidKubeConfigError} naming each problem's entry and field. Files named by the entry
 * must be readable. Nothing of a file's contents or of a credential is quoted.
 */
export function validate(kc: KubeConfig): void {
  const problems: string[] = [];
  let unsupported = false;
  const { cluster, user } = kc;
  const c = JSON.stringify(kc.clusterName);
  const u = JSON.stringify(kc.userName);
  const has = (v: string | undefined | null): v is string => v !== undefined && v !== null && v !== "";
  const readable = (file: string, what: string, entry: string): void => {
    try {
      closeSync(openSync(file, "r"));
    } catch (err) {
      problems.push(
        `cannot read ${what} ${file} of ${entry}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
  };

  let server: URL | undefined;
  try {
    server = new URL(cluster.server);
  } catch {
    problems.push(`cluster ${c} has a server that is not a URL`);
  }
  if (server !== undefined && server.protocol !== "https:" && server.protocol !== "http:")
    problems.push(`cluster ${c} has a server with scheme ${JSON.stringify(server.protocol)}; use https`);
  // Go would send a user name and password in the server URL as basic auth (over http too, and
  // over the user's token); the operator takes credentials from the user entry only.
  if (server !== undefined && (server.username !== "" || server.password !== ""))
    problems.push(
      `cluster ${c} has a user name or password in its server URL, which the operator does not send: remove it and give the user entry a username and password (or another credential)`,
    );
  const proxyUrl = cluster["proxy-url"];
  if (has(proxyUrl)) {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(proxyUrl)?.[1]?.toLowerCase();
    if (scheme === "socks5") {
      problems.push(
        `cluster ${c} sets a socks5 proxy-url, which is not supported: use an http or https proxy`,
      );
      unsupported = true;
    } else if (scheme !== "http" && scheme !== "https") {
      problems.push(`cluster ${c} has an invalid proxy-url: the scheme must be http, https or socks5`);
    } else {
      try {
        new URL(proxyUrl);
      } catch {
        problems.push(`cluster ${c} has an invalid proxy-url: not a URL`);
      }
    }
  }
  if (has(cluster["certificate-authority"]) && has(cluster["certificate-authority-data"]))
    problems.push(`cluster ${c} sets both certificate-authority-data and certificate-authority`);
  if (has(cluster["certificate-authority"]))
    readable(cluster["certificate-authority"], "certificate-authority", `cluster ${c}`);

  const secure = server?.protocol === "https:";
  const hasCa = has(cluster["certificate-authority"]) || has(cluster["certificate-authority-data"]);
  if (secure && hasCa && cluster["insecure-skip-tls-verify"] === true)
    problems.push(
      `cluster ${c} sets insecure-skip-tls-verify together with a certificate-authority; set only one`,
    );

  // client-go reads a tokenFile when it builds the client unless a token is also set, and refuses
  // a file it cannot read or that is empty ("read empty token from file"); it never sends an
  // empty bearer token. Whitespace around the token is trimmed.
  if (secure && has(user.tokenFile) && !has(user.token)) {
    let text: string | undefined;
    try {
      text = readFileSync(user.tokenFile, "utf8");
    } catch (err) {
      problems.push(
        `cannot read tokenFile ${user.tokenFile} of user ${u}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    if (text !== undefined && text.trim() === "")
      problems.push(`user ${u} has an empty tokenFile ${user.tokenFile} (read empty token from file)`);
  }
  if (has(user.token) && (has(user.username) || has(user.password)))
    problems.push(
      `user ${u} sets more than one authentication method (token and username/password); set only one`,
    );
  else if (secure && has(user.tokenFile) && has(user.username))
    problems.push(`user ${u} sets both tokenFile and username/password; set only one`);
  if (has(user["client-certificate"]) || has(user["client-certificate-data"])) {
    if (has(user["client-certificate"]) && has(user["client-certificate-data"]))
      problems.push(`user ${u} sets both client-certificate-data and client-certificate`);
    if (has(user["client-key"]) && has(user["client-key-data"]))
      problems.push(`user ${u} sets both client-key-data and client-key`);
    if (!has(user["client-key"]) && !has(user["client-key-data"]))
      problems.push(`user ${u} has a client certificate without client-key or client-key-data`);
    if (has(user["client-certificate"]))
      readable(user["client-certificate"], "client-certificate", `user ${u}`);
    if (has(user["client-key"])) readable(user["client-key"], "client-key", `user ${u}`);
  }
  const exec = user.exec ?? undefined;
  const provider = user["auth-provider"] ?? undefined;
  if (exec !== undefined) {
    if (provider !== undefined) problems.push(`user ${u} sets both exec and auth-provider; set only one`);
    if (!has(exec.command)) problems.push(`user ${u} has an exec plugin without a command`);
    if (!has(exec.apiVersion)) problems.push(`user ${u} has an exec plugin without an apiVersion`);
    else if (!EXEC_API_VERSIONS.has(exec.apiVersion))
      problems.push(
        `user ${u} has an exec plugin with apiVersion ${JSON.stringify(exec.apiVersion)}; use client.authentication.k8s.io/v1 or v1beta1`,
      );
    for (const e of exec.env ?? [])
      if (!has(e?.name)) problems.push(`user ${u} has an exec env entry without a name`);
    const mode = interactiveModeOf(exec);
    if (mode === undefined)
      problems.push(`user ${u} has an exec plugin without interactiveMode (required in v1)`);
    else if (mode === "Always")
      problems.push(
        `user ${u} has an exec plugin with interactiveMode Always, which needs a terminal the operator does not have`,
      );
    else if (mode !== "Never" && mode !== "IfAvailable")
      problems.push(`user ${u} has an exec plugin with an invalid interactiveMode`);
  }
  // client-go builds the auth-provider only for a TLS server.
  if (secure && provider !== undefined && exec === undefined) {
    const name = provider.name;
    if (name === "gcp" || name === "azure") {
      problems.push(
        `user ${u} uses auth-provider ${JSON.stringify(name)}, which client-go removed: use its exec plugin (${name === "gcp" ? "gke-gcloud-auth-plugin" : "kubelogin"}) instead`,
      );
      unsupported = true;
    } else if (name !== "oidc") {
      problems.push(`user ${u} uses auth-provider ${JSON.stringify(String(name))}, which is not known`);
      unsupported = true;
    } else {
      if (!has(provider.config?.["idp-issuer-url"]))
        problems.push(`user ${u} uses auth-provider oidc without idp-issuer-url`);
      if (!has(provider.config?.["client-id"]))
        problems.push(`user ${u} uses auth-provider oidc without client-id`);
    }
  }
  const extra = user["as-user-extra"] ?? {};
  if (
    !has(user.as) &&
    (has(user["as-uid"]) || (user["as-groups"]?.length ?? 0) > 0 || Object.keys(extra).length > 0)
  )
    problems.push(`user ${u} sets as-uid, as-groups or as-user-extra without as`);
  if (problems.length === 0) return;
  const message = `kubeconfig context ${JSON.stringify(kc.contextName)}: ${problems.join("; ")}`;
  throw unsupported && problems.length === 1
    ? new UnsupportedKubeConfigError(message)
    : new InvalidKubeConfigError(message);
}
