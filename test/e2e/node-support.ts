/**
 * The chart on a real node: the image built from the Dockerfile (by `make image`, before the test
 * files start), a single-node cluster (test/support/cluster.ts) with it loaded under the chart's
 * default name, moto on the host's address of the node's link, and helpers to install the chart
 * and to read what the pods do from the API server, the runtime (crictl) and moto.
 */
import { DescribeInstancesCommand } from "@aws-sdk/client-ec2";
import path from "node:path";
import { ListBucketsCommand } from "@aws-sdk/client-s3";
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { startCluster, type Cluster } from "../support/cluster.ts";
import { builtImage, builtPauseImage, type BuiltImage } from "../support/image.ts";
import { startMoto, type Moto } from "../support/moto.ts";
import { waitFor } from "../support/process.ts";
import { motoClients } from "./flow-support.ts";
import { CHART_DIR, helm } from "./helm.ts";

export const NS = "kubeprovisioner-system";
export const RELEASE = "kp";
export const DEPLOYMENT = "kp-kubeprovisioner";
export const LEASE = "c56fc483.cloud.com";
export const SECRET = "aws-credentials";

/** A running node with moto beside it. */
export interface ChartNode {
  readonly cluster: Cluster;
  readonly moto: Moto;
  readonly image: BuiltImage;
  /** kubectl as the admin; throws on a non-zero exit. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** helm against the cluster; throws on a non-zero exit, with helm's output. */
  helm(args: string[]): Promise<string>;
  /** Installs (or upgrades) the release with the values the tests use plus `set`. */
  install(set?: string[], verb?: "install" | "upgrade"): Promise<void>;
  /** The release's pods (name, ready, restarts, uid), from the API server. */
  pods(): Promise<PodInfo[]>;
  /** The identity holding the leader-election Lease (`<pod>_<uuid>`), or "". */
  leaseHolder(): Promise<string>;
  /** The host pid of a pod's manager container, from the runtime. */
  containerPid(pod: string): Promise<number>;
  /** Counts of AWS resources in moto: buckets, queues, instances not terminated. */
  awsCounts(): Promise<{ buckets: number; queues: number; instances: number }>;
  /** Stops everything; resolves with what was left behind. */
  stop(): Promise<string[]>;
}

export interface PodInfo {
  readonly name: string;
  readonly ready: boolean;
  readonly restarts: number;
  readonly uid: string;
  readonly ip: string;
  readonly deleting: boolean;
}

/** Starts the node with the images `make image` built (test/support/image.ts), and moto. */
export async function startChartNode(log: (l: string) => void = () => undefined): Promise<ChartNode> {
  const image = builtImage();
  const pause = builtPauseImage();
  const cluster = await startCluster({ images: [image.archive], pauseImage: pause, log });
  let moto: Moto;
  try {
    moto = await startMoto({ host: cluster.hostAddress });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  // helm's discovery cache (client-go's, like kubectl's) stays in the cluster's folder.
  const env = {
    KUBECONFIG: cluster.kubeconfigPath,
    KUBECACHEDIR: path.join(cluster.state.dir, "kube-cache"),
  };
  const kubectl = async (args: string[], input?: string): Promise<string> =>
    (await cluster.cp.kubectl(args, input === undefined ? {} : { input })).stdout;
  const runHelm = async (args: string[]): Promise<string> => {
    const r = await helm(args, { env });
    if (r.code !== 0) throw new Error(`helm ${args.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  try {
    await kubectl(["create", "namespace", NS]);
    await kubectl([
      "-n",
      NS,
      "create",
      "secret",
      "generic",
      SECRET,
      "--from-literal=AWS_ACCESS_KEY_ID=testing",
      "--from-literal=AWS_SECRET_ACCESS_KEY=testing",
    ]);
  } catch (err) {
    await moto.stop();
    await cluster.stop();
    throw err;
  }
  const aws = motoClients(moto);
  const node: ChartNode = {
    cluster,
    moto,
    image,
    kubectl,
    helm: runHelm,
    async install(set = [], verb = "install") {
      await runHelm([
        verb,
        RELEASE,
        CHART_DIR,
        "--namespace",
        NS,
        "--set",
        `aws.existingSecret=${SECRET}`,
        "--set",
        `aws.endpoint=${moto.endpoint}`,
        "--set",
        "aws.region=us-east-1",
        ...set.flatMap((s) => ["--set", s]),
        "--wait",
        "--timeout",
        "180s",
      ]);
    },
    async pods() {
      const out = JSON.parse(
        await kubectl(["-n", NS, "get", "pods", "-l", "app.kubernetes.io/instance=" + RELEASE, "-o", "json"]),
      ) as {
        items: {
          metadata: { name: string; uid: string; deletionTimestamp?: string };
          status: {
            podIP?: string;
            conditions?: { type: string; status: string }[];
            containerStatuses?: { restartCount: number }[];
          };
        }[];
      };
      return out.items.map((p) => ({
        name: p.metadata.name,
        uid: p.metadata.uid,
        ip: p.status.podIP ?? "",
        deleting: p.metadata.deletionTimestamp !== undefined,
        ready: (p.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
        restarts: (p.status.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0),
      }));
    },
    async leaseHolder() {
      const res = await cluster.cp.request(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`,
      );
      if (res.status !== 200) return "";
      return (res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? "";
    },
    async containerPid(pod) {
      const id = (
        await cluster.crictl([
          "ps",
          "--quiet",
          "--state",
          "running",
          "--label",
          `io.kubernetes.pod.name=${pod}`,
          "--label",
          "io.kubernetes.container.name=manager",
        ])
      ).trim();
      if (id === "" || id.includes("\n"))
        throw new Error(`no single running manager container in ${pod}: ${id}`);
      const info = JSON.parse(await cluster.crictl(["inspect", id])) as { info?: { pid?: number } };
      const pid = info.info?.pid;
      if (pid === undefined || pid <= 0) throw new Error(`crictl inspect ${id}: no pid`);
      return pid;
    },
    async awsCounts() {
      const [b, q, i] = await Promise.all([
        aws.s3.send(new ListBucketsCommand({})),
        aws.sqs.send(new ListQueuesCommand({})),
        aws.ec2.send(new DescribeInstancesCommand({})),
      ]);
      const instances = (i.Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        .filter((x) => x.State?.Name !== "terminated" && x.State?.Name !== "shutting-down").length;
      return { buckets: b.Buckets?.length ?? 0, queues: q.QueueUrls?.length ?? 0, instances };
    },
    async stop() {
      aws.destroy();
      await moto.stop();
      return await cluster.stop();
    },
  };
  return node;
}

/** Waits until the release has `n` pods, all Ready and none being deleted. */
export async function waitForReadyPods(node: ChartNode, n: number, timeoutMs = 180_000): Promise<PodInfo[]> {
  let pods: PodInfo[] = [];
  await waitFor(
    `${n} Ready pods of ${DEPLOYMENT}`,
    async () => {
      pods = await node.pods();
      return pods.length === n && pods.every((p) => p.ready && !p.deleting);
    },
    timeoutMs,
    500,
  );
  return pods;
}

/** Waits until every object of the samples is Ready (kubectl wait on each kind). */
export async function waitForSamplesReady(node: ChartNode, timeout = "180s"): Promise<void> {
  for (const kind of ["s3buckets", "sqsqueues", "ec2instances"]) {
    await node.kubectl(["wait", "--for=condition=Ready", kind, "--all", `--timeout=${timeout}`]);
  }
}
