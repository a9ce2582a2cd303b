/**
 * A real Kubernetes control plane for tests, in the spirit of controller-runtime's envtest:
 * etcd and kube-apiserver on free loopback ports, TLS with a generated CA, RBAC authorization,
 * ServiceAccount token signing, client-certificate users (an admin in system:masters), a
 * kubeconfig on disk, CRD installation, optionally kube-controller-manager running chosen
 * controllers, and a clean stop that leaves no process or folder behind.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import os from "node:os";
import path from "node:path";
import { clientCert, createPki, type Pki } from "./certs.ts";
import {
  adminKubeConfig,
  adminRequest,
  controlPlaneApi,
  type Admin,
  type ControlPlane,
  type ControlPlaneAccess,
} from "./control-plane-api.ts";
import { freePort, removeTempDir, startProcess, trackTempDir, waitFor, type Supervised } from "./process.ts";
import { leaseBackends, sharedKind } from "./shared-backends.ts";
import { toolPath } from "./tools.ts";

export type { ControlPlane, RawResponse } from "./control-plane-api.ts";

/** A control plane this process started, with what another process needs to reach it. */
export type LaunchedControlPlane = ControlPlane & { readonly access: ControlPlaneAccess };

/** Options for {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Install the CRDs of config/crd once the API server is ready. @default false */
  installCRDs?: boolean;
  /**
   * Start a control plane of this file's own even where a shared one would do (see
   * {@link startControlPlane}): for a file that restarts kube-apiserver, removes or replaces the
   * project's CRDs, or must not see them. @default false
   */
  private?: boolean;
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

/**
 * A control plane for one test file. Under the test runner's shared back ends
 * (test/support/global-setup.ts), a file asking for the project's CRDs or for nothing leases one of
 * the runner's control planes: the same API, a working folder of its own, and everything the file
 * wrote to the API server undone when it stops (shared-backends.ts). Any other options, or
 * `private`, start one of the file's own ({@link launchControlPlane}).
 */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const kind = sharedKind(opts);
  if (kind !== undefined) return (await leaseBackends({ moto: false, kind })).cp;
  return await launchControlPlane(opts);
}

/**
 * Built-in resources whose watch cache the test API servers leave off (`--watch-cache-sizes` with
 * size 0): neither the operator, the chart nor the tests watch them, and each cached resource costs
 * an idle API server a reflector on etcd. Reads and watches of them go to etcd instead, as with
 * `--watch-cache=false`. Every resource the operator, the chart or a test lists or watches keeps
 * its cache, as on a real cluster. With these off and one Go thread each (GOMAXPROCS=1), an idle
 * control plane used 0.90 CPU-s a minute against 1.45.
 */
const UNCACHED_RESOURCES = [
  "limitranges",
  "persistentvolumeclaims",
  "persistentvolumes",
  "podtemplates",
  "replicationcontrollers",
  "resourcequotas",
  "mutatingadmissionpolicies.admissionregistration.k8s.io",
  "mutatingadmissionpolicybindings.admissionregistration.k8s.io",
  "mutatingwebhookconfigurations.admissionregistration.k8s.io",
  "validatingadmissionpolicies.admissionregistration.k8s.io",
  "validatingadmissionpolicybindings.admissionregistration.k8s.io",
  "validatingwebhookconfigurations.admissionregistration.k8s.io",
  "apiservices.apiregistration.k8s.io",
  "controllerrevisions.apps",
  "daemonsets.apps",
  "statefulsets.apps",
  "horizontalpodautoscalers.autoscaling",
  "cronjobs.batch",
  "jobs.batch",
  "certificatesigningrequests.certificates.k8s.io",
  "events.events.k8s.io",
  "flowschemas.flowcontrol.apiserver.k8s.io",
  "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
  "ingressclasses.networking.k8s.io",
  "ingresses.networking.k8s.io",
  "ipaddresses.networking.k8s.io",
  "networkpolicies.networking.k8s.io",
  "servicecidrs.networking.k8s.io",
  "runtimeclasses.node.k8s.io",
  "poddisruptionbudgets.policy",
  "clusterrolebindings.rbac.authorization.k8s.io",
  "clusterroles.rbac.authorization.k8s.io",
  "rolebindings.rbac.authorization.k8s.io",
  "roles.rbac.authorization.k8s.io",
  "deviceclasses.resource.k8s.io",
  "resourceclaims.resource.k8s.io",
  "resourceclaimtemplates.resource.k8s.io",
  "resourceslices.resource.k8s.io",
  "priorityclasses.scheduling.k8s.io",
  "csidrivers.storage.k8s.io",
  "csinodes.storage.k8s.io",
  "csistoragecapacities.storage.k8s.io",
  "storageclasses.storage.k8s.io",
  "volumeattachments.storage.k8s.io",
  "volumeattributesclasses.storage.k8s.io",
];

/**
 * The environment of the control plane's Go programs: one thread running Go code (GOMAXPROCS=1),
 * as many control planes share two cores.
 */
function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOMAXPROCS: "1" };
}

/** Starts etcd and kube-apiserver (and kube-controller-manager when asked) and waits until ready. */
export async function launchControlPlane(opts: ControlPlaneOptions = {}): Promise<LaunchedControlPlane> {
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
      { logFile: path.join(dir, "etcd.log"), env: goEnv() },
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
      `--watch-cache-sizes=${UNCACHED_RESOURCES.map((r) => `${r}#0`).join(",")}`,
      ...(typeof opts.apiServerFlags === "function" ? opts.apiServerFlags(pki) : (opts.apiServerFlags ?? [])),
    ];
    const apiLog = path.join(dir, "kube-apiserver.log");
    const launchApi = async (): Promise<void> => {
      const proc = startProcess(toolPath("kube-apiserver"), apiArgs, { logFile: apiLog, env: goEnv() });
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
    writeFileSync(kubeconfigPath, adminKubeConfig({ server, admin }).toString());

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
        { logFile: log, env: goEnv() },
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

    const access: ControlPlaneAccess = {
      server,
      etcdEndpoint: etcdUrl,
      dir,
      kubeconfigPath,
      pki,
      admin,
      timeoutMs: timeout,
    };
    let stopped = false;
    const cp = controlPlaneApi(access, {
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
    });
    if (opts.installCRDs) await cp.installCRDs();
    return Object.assign(cp, { access });
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
