/**
 * The client side of a test control plane: what a test does with a running kube-apiserver
 * (admin and user kubeconfigs, ServiceAccount tokens, CRD installation, admin requests, kubectl),
 * the same whether the file started the control plane itself or leased a shared one
 * (shared-backends.ts). Starting and stopping the processes is the caller's part.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { clientCert, type Pki } from "./certs.ts";
import { repoRoot, waitFor } from "./process.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import { toolPath } from "./tools.ts";

const execFileP = promisify(execFile);

/** A JSON response from {@link ControlPlane.request}. */
export interface RawResponse {
  status: number;
  body: unknown;
  text: string;
}

/** A running test control plane. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** etcd's client URL, `http://127.0.0.1:<port>`. */
  readonly etcdEndpoint: string;
  /** Admin kubeconfig file (system:masters). */
  readonly kubeconfigPath: string;
  /** Working folder holding certificates, logs and data; removed by {@link stop}. */
  readonly dir: string;
  /** A fresh admin KubeConfig. */
  kubeConfig(): KubeConfig;
  /** A KubeConfig for a client-certificate user in `groups` (for RBAC tests). */
  userKubeConfig(user: string, groups?: string[]): KubeConfig;
  /** A bearer token of ServiceAccount `ns/name` (created if missing) via TokenRequest. */
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  /** A KubeConfig authenticating as ServiceAccount `ns/name`. */
  tokenKubeConfig(namespace: string, name: string): Promise<KubeConfig>;
  /** Writes a kubeconfig file for `kc` into the working folder and returns its path. */
  writeKubeConfig(kc: KubeConfig, name: string): string;
  /** Applies every CRD in `dir` (default config/crd) and waits until each one is served. */
  installCRDs(dir?: string): Promise<void>;
  /** An admin request to the API server. Does not throw on non-2xx. */
  request(method: string, urlPath: string, body?: unknown, contentType?: string): Promise<RawResponse>;
  /** Runs bin/kubectl with the admin kubeconfig. */
  kubectl(args: string[], opts?: { input?: string }): Promise<{ stdout: string; stderr: string }>;
  /** Stops kube-apiserver only (etcd keeps the data). */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits for readiness. */
  startApiServer(): Promise<void>;
  /** Stops everything and removes the working folder. Safe to call twice. */
  stop(): Promise<void>;
}

export interface Admin {
  cert: string;
  key: string;
  ca: string;
}

function kubeConfigFor(
  server: string,
  ca: string,
  user: { name: string; cert?: string; key?: string; token?: string },
): KubeConfig {
  const b64 = (s: string): string => Buffer.from(s).toString("base64");
  const u: Record<string, string> = {};
  if (user.cert !== undefined && user.key !== undefined) {
    u["client-certificate-data"] = b64(user.cert);
    u["client-key-data"] = b64(user.key);
  }
  if (user.token !== undefined) u.token = user.token;
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "envtest", cluster: { server, "certificate-authority-data": b64(ca) } }],
    users: [{ name: user.name, user: u }],
    contexts: [{ name: "envtest", context: { cluster: "envtest", user: user.name, namespace: "default" } }],
    "current-context": "envtest",
  };
  return KubeConfig.fromDocument(doc);
}

export function adminRequest(
  server: string,
  admin: Admin,
  method: string,
  urlPath: string,
  body?: unknown,
  contentType = "application/json",
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const req = httpsRequest(
      new URL(urlPath, server),
      {
        method,
        ca: admin.ca,
        cert: admin.cert,
        key: admin.key,
        headers: {
          Accept: "application/json",
          ...(payload !== undefined
            ? { "Content-Type": contentType, "Content-Length": Buffer.byteLength(payload) }
            : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain text body (readyz)
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Where a running control plane is and how to reach it as the admin. */
export interface ControlPlaneAccess {
  server: string;
  /** etcd's client URL. */
  etcdEndpoint: string;
  /** The working folder: kubeconfigs and kubectl's cache are written here. */
  dir: string;
  /** The admin kubeconfig file. */
  kubeconfigPath: string;
  /** The CA that signs client certificates issued by {@link ControlPlane.userKubeConfig}. */
  pki: Pki;
  /** The admin's client certificate and key, and the CA certificate, as PEM. */
  admin: Admin;
  /** How long a wait for the API server (a namespace, a CRD) may take. */
  timeoutMs: number;
}

/** What starting and stopping means for a control plane: its owner's part. */
export type ControlPlaneLifecycle = Pick<ControlPlane, "stopApiServer" | "startApiServer" | "stop">;

/** The admin kubeconfig of `access`, as written to {@link ControlPlaneAccess.kubeconfigPath}. */
export function adminKubeConfig(access: Pick<ControlPlaneAccess, "server" | "admin">): KubeConfig {
  const { cert, key, ca } = access.admin;
  return kubeConfigFor(access.server, ca, { name: "admin", cert, key });
}

/** The {@link ControlPlane} of `access`, with `life` as its start and stop. */
export function controlPlaneApi(access: ControlPlaneAccess, life: ControlPlaneLifecycle): ControlPlane {
  const { server, etcdEndpoint, dir, kubeconfigPath, pki, admin, timeoutMs: timeout } = access;
  const ca = admin.ca;
  const req = (method: string, urlPath: string, body?: unknown, contentType?: string): Promise<RawResponse> =>
    adminRequest(server, admin, method, urlPath, body, contentType);

  const adminKc = (): KubeConfig => adminKubeConfig(access);
  const cp: ControlPlane = {
    server,
    kubeconfigPath,
    dir,
    etcdEndpoint,
    kubeConfig: adminKc,
    userKubeConfig(user, groups = []) {
      return kubeConfigFor(server, ca, { name: user, ...clientCert(pki, user, groups) });
    },
    async serviceAccountToken(namespace, name, expirationSeconds = 3600) {
      await waitFor(
        `namespace ${namespace}`,
        async () => (await req("GET", `/api/v1/namespaces/${namespace}`)).status === 200,
        timeout,
      );
      const sa = await req("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name },
      });
      if (sa.status !== 201 && sa.status !== 409)
        throw new Error(`creating ServiceAccount ${namespace}/${name}: ${sa.text}`);
      const tr = await req("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds },
      });
      const token = (tr.body as { status?: { token?: string } }).status?.token;
      if (tr.status !== 201 || !token) throw new Error(`TokenRequest for ${namespace}/${name}: ${tr.text}`);
      return token;
    },
    async tokenKubeConfig(namespace, name) {
      const token = await cp.serviceAccountToken(namespace, name);
      return kubeConfigFor(server, ca, { name: `system:serviceaccount:${namespace}:${name}`, token });
    },
    writeKubeConfig(kc, name) {
      const file = path.join(dir, `${name}.kubeconfig`);
      writeFileSync(file, kc.toString());
      return file;
    },
    async installCRDs(crdDir = path.join(repoRoot, "config/crd")) {
      const files = readdirSync(crdDir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"));
      const crds: {
        metadata: { name: string };
        spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
      }[] = [];
      for (const f of files) {
        for (const doc of parseAllDocuments(readFileSync(path.join(crdDir, f), "utf8"))) {
          const obj = doc.toJS() as (typeof crds)[number] & { kind?: string };
          if (obj?.kind === "CustomResourceDefinition") crds.push(obj);
        }
      }
      for (const crd of crds) {
        const res = await req(
          "PATCH",
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=envtest&force=true`,
          crd,
          "application/apply-patch+yaml",
        );
        if (res.status >= 300) throw new Error(`applying CRD ${crd.metadata.name}: ${res.text}`);
      }
      for (const crd of crds) {
        await waitFor(
          `CRD ${crd.metadata.name} served`,
          async () => {
            const got = await req(
              "GET",
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
            );
            const conds =
              (got.body as { status?: { conditions?: { type: string; status: string }[] } }).status
                ?.conditions ?? [];
            if (!conds.some((c) => c.type === "Established" && c.status === "True")) return false;
            for (const v of crd.spec.versions.filter((x) => x.served)) {
              const disc = await req("GET", `/apis/${crd.spec.group}/${v.name}`);
              const resources = (disc.body as { resources?: { name: string }[] }).resources ?? [];
              if (!resources.some((r) => r.name === crd.spec.names.plural)) return false;
              // Discovery can list the resource before its storage accepts requests (429,
              // "storage is (re)initializing"). resourceVersion=0 is served by the watch cache,
              // the part that is initialized last; a list from etcd can succeed before it.
              const list = await req(
                "GET",
                `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}?limit=1&resourceVersion=0`,
              );
              if (list.status !== 200) return false;
            }
            return true;
          },
          timeout,
        );
      }
    },
    request: req,
    async kubectl(args, kopts = {}) {
      // Its discovery cache stays in the working folder, which stop() removes.
      const cacheDir = path.join(dir, "kubectl-cache");
      const child = execFileP(
        toolPath("kubectl"),
        ["--kubeconfig", kubeconfigPath, `--cache-dir=${cacheDir}`, ...args],
        {
          maxBuffer: 32 * 1024 * 1024,
        },
      );
      if (kopts.input !== undefined) {
        child.child.stdin?.end(kopts.input);
      }
      return await child;
    },
    stopApiServer: () => life.stopApiServer(),
    startApiServer: () => life.startApiServer(),
    stop: () => life.stop(),
  };
  return cp;
}
