/**
 * A real Kubernetes control plane for tests, in the spirit of controller-runtime's envtest:
 * etcd and kube-apiserver on free loopback ports, TLS with a generated CA, RBAC authorization,
 * ServiceAccount token signing, client-certificate users (an admin in system:masters), a
 * kubeconfig on disk, CRD installation, optionally kube-controller-manager running chosen
 * controllers, and a clean stop that leaves no process or folder behind.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { clientCert, createPki, type Pki } from "./certs.ts";
import {
  freePort,
  removeTempDir,
  repoRoot,
  startProcess,
  trackTempDir,
  waitFor,
  type Supervised,
} from "./process.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import { toolPath } from "./tools.ts";

const execFileP = promisify(execFile);

/** Options for {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Install the CRDs of config/crd once the API server is ready. @default false */
  installCRDs?: boolean;
  /** Extra etcd flags (`--name=value`), such as a larger `--quota-backend-bytes` for a large estate. */
  etcdFlags?: string[];
  /** Extra kube-apiserver flags (`--name=value`); a later flag overrides an earlier one. */
  apiServerFlags?: string[] | ((pki: Pki) => string[]);
  /** Extra kube-controller-manager flags. */
  controllerManagerFlags?: (pki: Pki) => string[];
  /** Folder to create the working folder in. @default the system's temporary folder */
  parentDir?: string;
  /**
   * The address kube-apiserver listens on and advertises (the `kubernetes` Service's endpoint),
   * also in its serving certificate. @default 127.0.0.1
   */
  address?: string;
  /** The Service IP range. @default 10.0.0.0/24 */
  serviceClusterIPRange?: string;
  /** Extra IP addresses in the serving certificate (e.g. the `kubernetes` Service's ClusterIP). */
  servingIPs?: string[];
  /** kube-apiserver's --authorization-mode. @default RBAC */
  authorizationMode?: string;
  /** Run the ServiceAccount admission plugin (pods get their token volume). @default false */
  serviceAccountAdmission?: boolean;
  /** Readiness timeout per component. @default 120000 */
  startTimeoutMs?: number;
  /**
   * Also run kube-controller-manager with only these controllers (its `--controllers` names,
   * for example `clusterrole-aggregation`), as the admin. @default none: no controller-manager
   */
  controllers?: string[];
}

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

interface Admin {
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

function adminRequest(
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

/** Status code of a GET to a local HTTPS endpoint serving a self-signed certificate. */
function insecureGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** Starts etcd and kube-apiserver (and kube-controller-manager when asked) and waits until ready. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  // Generous: three test files start their back ends at once (TEST_CONCURRENCY) on two cores.
  const timeout = opts.startTimeoutMs ?? 120_000;
  const dir = mkdtempSync(path.join(opts.parentDir ?? os.tmpdir(), "kubeprovisioner-envtest-"));
  const address = opts.address ?? "127.0.0.1";
  trackTempDir(dir);
  let etcd: Supervised | undefined;
  let apiserver: Supervised | undefined;
  let controllerManager: Supervised | undefined;
  try {
    const pki: Pki = createPki(dir, [
      ...(address === "127.0.0.1" ? [] : [address]),
      ...(opts.servingIPs ?? []),
    ]);
    const ca = readFileSync(pki.caCert, "utf8");
    const adminPem = clientCert(pki, "admin", ["system:masters"]);
    const admin: Admin = { ...adminPem, ca };

    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    etcd = startProcess(
      toolPath("etcd"),
      [
        `--data-dir=${path.join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        "--unsafe-no-fsync=true",
        "--log-level=warn",
        ...(opts.etcdFlags ?? []),
      ],
      { logFile: path.join(dir, "etcd.log") },
    );
    const etcdProc = etcd;
    await waitFor(
      "etcd health",
      async () => {
        if (etcdProc.proc.exitCode !== null) throw new Error(`etcd exited; see ${etcdProc.logFile}`);
        const res = await fetch(`${etcdUrl}/health`);
        return res.ok;
      },
      timeout,
    );

    const server = `https://${address}:${apiPort}`;
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${address}`,
      `--advertise-address=${address}`,
      `--secure-port=${apiPort}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--authorization-mode=${opts.authorizationMode ?? "RBAC"}`,
      `--service-cluster-ip-range=${opts.serviceClusterIPRange ?? "10.0.0.0/24"}`,
      `--allow-privileged=true`,
      ...(opts.serviceAccountAdmission ? [] : [`--disable-admission-plugins=ServiceAccount`]),
      `--profiling=false`,
      ...(typeof opts.apiServerFlags === "function" ? opts.apiServerFlags(pki) : (opts.apiServerFlags ?? [])),
    ];
    const apiLog = path.join(dir, "kube-apiserver.log");
    const launchApi = async (): Promise<void> => {
      const proc = startProcess(toolPath("kube-apiserver"), apiArgs, { logFile: apiLog });
      apiserver = proc;
      await waitFor(
        "kube-apiserver /readyz",
        async () => {
          if (proc.proc.exitCode !== null) throw new Error(`kube-apiserver exited; see ${apiLog}`);
          const res = await adminRequest(server, admin, "GET", "/readyz");
          return res.status === 200 && res.text === "ok";
        },
        timeout,
        200,
      );
    };
    await launchApi();

    const kubeconfigPath = path.join(dir, "admin.kubeconfig");
    const adminKc = (): KubeConfig => kubeConfigFor(server, ca, { name: "admin", ...adminPem });
    writeFileSync(kubeconfigPath, adminKc().toString());

    if (opts.controllers !== undefined && opts.controllers.length > 0) {
      const port = await freePort();
      const log = path.join(dir, "kube-controller-manager.log");
      const kcm = startProcess(
        toolPath("kube-controller-manager"),
        [
          `--kubeconfig=${kubeconfigPath}`,
          `--authentication-kubeconfig=${kubeconfigPath}`,
          `--authorization-kubeconfig=${kubeconfigPath}`,
          `--controllers=${opts.controllers.join(",")}`,
          "--leader-elect=false",
          "--bind-address=127.0.0.1",
          `--secure-port=${port}`,
          `--cert-dir=${path.join(dir, "kube-controller-manager")}`,
          "--profiling=false",
          ...(opts.controllerManagerFlags?.(pki) ?? []),
        ],
        { logFile: log },
      );
      controllerManager = kcm;
      await waitFor(
        "kube-controller-manager /healthz",
        async () => {
          if (kcm.proc.exitCode !== null) throw new Error(`kube-controller-manager exited; see ${log}`);
          try {
            return (await insecureGet(`https://127.0.0.1:${port}/healthz`)) === 200;
          } catch {
            return false;
          }
        },
        timeout,
        200,
      );
    }

    const req = (
      method: string,
      urlPath: string,
      body?: unknown,
      contentType?: string,
    ): Promise<RawResponse> => adminRequest(server, admin, method, urlPath, body, contentType);

    let stopped = false;
    const cp: ControlPlane = {
      server,
      kubeconfigPath,
      dir,
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
      async stopApiServer() {
        await apiserver?.stop();
      },
      async startApiServer() {
        await launchApi();
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await controllerManager?.stop();
        await apiserver?.stop();
        await etcd?.stop();
        removeTempDir(dir);
      },
    };
    if (opts.installCRDs) await cp.installCRDs();
    return cp;
  } catch (err) {
    await controllerManager?.stop();
    await apiserver?.stop();
    await etcd?.stop();
    // Keep the logs when a start fails: they say why.
    const logs = ["etcd.log", "kube-apiserver.log", "kube-controller-manager.log"]
      .map((f) => {
        try {
          return `--- ${f} (tail)\n${readFileSync(path.join(dir, f), "utf8").split("\n").slice(-20).join("\n")}`;
        } catch {
          return "";
        }
      })
      .join("\n");
    removeTempDir(dir);
    throw new Error(`starting the test control plane failed: ${(err as Error).message}\n${logs}`, {
      cause: err,
    });
  }
}
