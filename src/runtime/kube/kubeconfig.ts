/**
 * Kubeconfig loading: the clientcmd `Config` file format (YAML or JSON), the `KUBECONFIG` list
 * with client-go's merge rule, and the in-cluster ServiceAccount. It selects one context and
 * hands its cluster and user entries, with every file path made absolute, to
 * {@link KubeConfigConnection}, which turns them into TLS material and credentials.
 *
 * Supported user entries: client certificates (files or inline data), bearer tokens (inline or
 * `tokenFile`, re-read on every refresh), basic auth, impersonation (`as`, `as-uid`,
 * `as-groups`) and exec credential plugins (`client.authentication.k8s.io` v1 and v1beta1).
 * Cluster entries: `server`, the CA (file or data), `insecure-skip-tls-verify` and
 * `tls-server-name`. A kubeconfig that needs `auth-provider` or `proxy-url` is refused with a
 * message saying so, rather than connecting without them.
 */
import { existsSync, readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import path from "node:path";
import { load } from "js-yaml";

/** A cluster entry as written in a kubeconfig. */
export interface KubeConfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
}

/** An exec credential plugin as written in a kubeconfig. */
export interface KubeConfigExec {
  apiVersion: string;
  command: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  provideClusterInfo?: boolean;
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
  "as-groups"?: string[];
  exec?: KubeConfigExec;
  "auth-provider"?: unknown;
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

/** A bad or unsupported kubeconfig. */
export class KubeConfigError extends Error {
  override readonly name: string = "KubeConfigError";
}

/**
 * The kubeconfig asks for something this loader does not do (an `auth-provider` user, a
 * `proxy-url` cluster): refused rather than connecting without it.
 */
export class UnsupportedKubeConfigError extends KubeConfigError {
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
    const provider = user["auth-provider"];
    if (provider !== undefined) {
      const name = (provider as { name?: unknown } | null)?.name;
      throw new UnsupportedKubeConfigError(
        `kubeconfig user ${JSON.stringify(context.user)} uses auth-provider${typeof name === "string" ? ` ${JSON.stringify(name)}` : ""}, which is not supported: ` +
          "give the user an exec credential plugin (client.authentication.k8s.io, such as kubelogin or gke-gcloud-auth-plugin), a token or a client certificate instead",
      );
    }
    if (cluster["proxy-url"] !== undefined)
      throw new UnsupportedKubeConfigError(
        `kubeconfig cluster ${JSON.stringify(context.cluster)} sets proxy-url, which is not supported: ` +
          "the operator connects to the API server directly; remove proxy-url or use a kubeconfig without it",
      );
    this.contextName = contextName;
    this.cluster = cluster;
    this.user = user;
    this.namespace = context.namespace;
  }

  /** Parses a kubeconfig (YAML or JSON); relative paths are resolved against `baseDir`. */
  static fromString(text: string, baseDir = process.cwd()): KubeConfig {
    return new KubeConfig(absolutePaths(parse(text, "kubeconfig"), baseDir));
  }

  /** A kubeconfig document already in memory; relative paths are resolved against the working folder. */
  static fromDocument(document: KubeConfigDocument): KubeConfig {
    return new KubeConfig(absolutePaths(document, process.cwd()));
  }

  /** Reads one kubeconfig file. */
  static fromFile(file: string): KubeConfig {
    return new KubeConfig(readDocument(file));
  }

  /**
   * Merges several kubeconfig files as client-go does for `KUBECONFIG`: the first file that
   * names a cluster, user or context wins it, and the first `current-context` set wins. Files
   * that do not exist are skipped; at least one must.
   */
  static fromFiles(files: readonly string[]): KubeConfig {
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
      const doc = readDocument(file);
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
            "certificate-authority": path.join(dir, "ca.crt"),
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
  static fromDefault(env: NodeJS.ProcessEnv = process.env): KubeConfig {
    const list = (env.KUBECONFIG ?? "").split(path.delimiter).filter((f) => f !== "");
    if (list.length > 0) return KubeConfig.fromFiles(list);
    return KubeConfig.fromFile(path.join(env.HOME || homedir(), ".kube", "config"));
  }

  /** The document as JSON, which is also valid kubeconfig YAML. */
  toString(): string {
    return JSON.stringify(this.document, null, 2);
  }
}

function readDocument(file: string): KubeConfigDocument {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new KubeConfigError(`reading kubeconfig ${file}: ${(err as Error).message}`);
  }
  return absolutePaths(parse(text, file), path.dirname(path.resolve(file)));
}

function parse(text: string, what: string): KubeConfigDocument {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (err) {
    throw new KubeConfigError(`${what} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new KubeConfigError(`${what} is not a kubeconfig document`);
  return doc as KubeConfigDocument;
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
