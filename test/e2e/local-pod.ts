/**
 * Plays the kubelet for a Deployment installed by the chart, on a control plane without nodes:
 * takes the manager container's args and env from the API server (resolving Secret and field
 * references as the kubelet would), moves the listeners to free loopback ports, and runs
 * the operator program under test (../support/operator-program.ts: the bundle the image runs,
 * under `make test`) with them. So the test exercises the flags and environment the chart really
 * renders, not a copy of them.
 */
import type { ControlPlane } from "../support/envtest.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { freePort, startProcess, type Supervised } from "../support/process.ts";

type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
};
type ContainerSpec = { name: string; args?: string[]; env?: EnvVar[] };

/** The operator running from source as the Deployment's pod would. */
export interface LocalPod {
  readonly process: Supervised;
  /** The args it was started with (the Deployment's, with loopback listeners and --kubeconfig). */
  readonly args: readonly string[];
  /** The environment taken from the pod spec (Secret values resolved). */
  readonly podEnv: Readonly<Record<string, string>>;
  /** `https://127.0.0.1:<port>` or `http://...`, from the container's --metrics-secure. */
  readonly metricsUrl: string;
  /** `http://127.0.0.1:<port>` */
  readonly probeUrl: string;
}

/** Options of {@link startLocalPod}. */
export interface LocalPodOptions {
  readonly namespace: string;
  readonly deployment: string;
  /** Kubeconfig the process authenticates with (the chart's ServiceAccount token). */
  readonly kubeconfigPath: string;
  readonly logFile: string;
  /** Added to the environment after the pod's own (e.g. AWS_EC2_METADATA_DISABLED). */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

/**
 * The pod's environment as the kubelet resolves it: values, Secret keys, and the downward API's
 * namespace and name (`podName`: the name the local process plays).
 */
async function resolveEnv(
  cp: ControlPlane,
  pod: { namespace: string; podName: string },
  vars: readonly EnvVar[],
): Promise<Record<string, string>> {
  const { namespace } = pod;
  const out: Record<string, string> = {};
  for (const v of vars) {
    if (v.value !== undefined) {
      out[v.name] = v.value;
    } else if (v.valueFrom?.secretKeyRef) {
      const ref = v.valueFrom.secretKeyRef;
      const res = await cp.request("GET", `/api/v1/namespaces/${namespace}/secrets/${ref.name}`);
      const data = (res.body as { data?: Record<string, string> }).data ?? {};
      const b64 = res.status === 200 ? data[ref.key] : undefined;
      if (b64 === undefined) {
        if (ref.optional) continue;
        throw new Error(
          `env ${v.name}: Secret ${namespace}/${ref.name} key ${ref.key} not found (HTTP ${res.status})`,
        );
      }
      out[v.name] = Buffer.from(b64, "base64").toString("utf8");
    } else if (v.valueFrom?.fieldRef?.fieldPath === "metadata.namespace") {
      out[v.name] = namespace;
    } else if (v.valueFrom?.fieldRef?.fieldPath === "metadata.name") {
      out[v.name] = pod.podName;
    } else {
      throw new Error(`env ${v.name}: unsupported source ${JSON.stringify(v.valueFrom)}`);
    }
  }
  return out;
}

/** Reads the Deployment and starts its manager container as a local process. */
export async function startLocalPod(cp: ControlPlane, opts: LocalPodOptions): Promise<LocalPod> {
  const res = await cp.request(
    "GET",
    `/apis/apps/v1/namespaces/${opts.namespace}/deployments/${opts.deployment}`,
  );
  if (res.status !== 200)
    throw new Error(`reading Deployment ${opts.namespace}/${opts.deployment}: ${res.text}`);
  const containers = (res.body as { spec: { template: { spec: { containers: ContainerSpec[] } } } }).spec
    .template.spec.containers;
  const manager = containers.find((c) => c.name === "manager");
  if (manager === undefined) throw new Error("the Deployment has no manager container");

  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const chartArgs = manager.args ?? [];
  const secure = !chartArgs.includes("--metrics-secure=false");
  const args = [
    ...chartArgs.map((a) => {
      if (a.startsWith("--metrics-bind-address=") && a !== "--metrics-bind-address=0")
        return `--metrics-bind-address=127.0.0.1:${metricsPort}`;
      if (a.startsWith("--health-probe-bind-address="))
        return `--health-probe-bind-address=127.0.0.1:${probePort}`;
      return a;
    }),
    `--kubeconfig=${opts.kubeconfigPath}`,
  ];
  const podEnv = await resolveEnv(
    cp,
    { namespace: opts.namespace, podName: `${opts.deployment}-local` },
    manager.env ?? [],
  );
  // Only what a container would have: no KUBECONFIG, no AWS_* of the test process.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...podEnv,
    ...opts.extraEnv,
  };
  const proc = startProcess(process.execPath, [operatorProgram(), ...args], {
    logFile: opts.logFile,
    env,
  });
  return {
    process: proc,
    args,
    podEnv,
    metricsUrl: `${secure ? "https" : "http"}://127.0.0.1:${metricsPort}`,
    probeUrl: `http://127.0.0.1:${probePort}`,
  };
}
