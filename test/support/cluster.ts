/**
 * A single-node Kubernetes cluster of real parts on this machine: the test control plane of
 * envtest.ts (etcd, kube-apiserver, kube-controller-manager with its normal controllers) plus
 * kube-scheduler, and a node: containerd with runc, the kubelet, kube-proxy and a CNI bridge.
 *
 * The node lives in a network namespace of its own, joined to the host by one veth pair: the
 * host end holds the host's address on that link, where kube-apiserver and moto listen, and a
 * route to the pod range through it. The node has no default route and the host's own routes,
 * rules and interfaces are left alone, so nothing a pod sends can leave the machine. kube-proxy
 * writes its iptables rules inside the node's namespace. Every file is under one temporary
 * folder, every process of the node (and every container) under one cgroup parent, and
 * {@link Cluster.stop} removes processes, mounts, network namespaces, links, cgroups and files;
 * {@link leaks} proves it.
 *
 * Address plan of slot n (0-31, one per cluster running at once): pods 198.18.2n.0/24, Services
 * 198.18.(2n+1).0/24, the link 198.19.n.0/30 (host .1, node .2): test ranges (RFC 2544) that no
 * real network uses.
 */
import { auditFlags } from "./audit.ts";
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startControlPlane, type ControlPlane } from "./envtest.ts";
import { issue } from "./certs.ts";
import { freePort, startProcess, waitFor, type Supervised } from "./process.ts";
import { toolPath } from "./tools.ts";

const execFileP = promisify(execFile);

/** What is needed to find and remove everything a cluster made, also from another process. */
export interface ClusterState {
  readonly slot: number;
  readonly dir: string;
  /** Name of the node's network namespace (/run/netns/<netns>). */
  readonly netns: string;
  /** The host end of the veth pair. */
  readonly hostLink: string;
  /** The cgroup parent, relative to each v1 hierarchy (and the unified one). */
  readonly cgroup: string;
  readonly ownerPid: number;
  /** Whether a person started it (`make cluster`), so `make cluster-down` may stop it. */
  readonly interactive: boolean;
}

/** A running cluster. */
export interface Cluster {
  readonly state: ClusterState;
  readonly cp: ControlPlane;
  readonly nodeName: string;
  /** The host's address on the node's link: where pods reach kube-apiserver and moto. */
  readonly hostAddress: string;
  readonly nodeAddress: string;
  readonly podCIDR: string;
  readonly serviceCIDR: string;
  /** The admin kubeconfig. */
  readonly kubeconfigPath: string;
  /** Runs crictl against the node's containerd. */
  crictl(args: string[]): Promise<string>;
  /** Imports a docker-archive into the node's containerd (the k8s.io namespace). */
  importImage(archive: string): Promise<void>;
  /** Runs a command in the node's network namespace (e.g. to reach a pod IP). */
  nodeExec(cmd: string, args: string[]): Promise<string>;
  /** Stops everything and removes what it made; resolves with what was left behind (nothing). */
  stop(): Promise<string[]>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Docker-archives to import into the node's containerd before the node registers. */
  readonly images?: readonly string[];
  /** The sandbox image's docker-archive and name (what containerd's sandbox_image names). */
  readonly pauseImage: { readonly archive: string; readonly ref: string };
  readonly interactive?: boolean;
  readonly log?: (line: string) => void;
  /** Readiness timeout per part. @default 180000 */
  readonly startTimeoutMs?: number;
}

const SLOTS = 32;
const NODE_NAME = "kubeprovisioner-node";
const STATE_FILE = "cluster.json";
const DIR_PREFIX = "kubeprovisioner-cluster-";

function sh(cmd: string, args: readonly string[]): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function trySh(cmd: string, args: readonly string[]): boolean {
  try {
    sh(cmd, args);
    return true;
  } catch {
    return false;
  }
}

/** The state of slot `slot` as a cluster there names it (for what a vanished cluster left). */
export function orphanState(slot: number): ClusterState {
  return {
    slot,
    dir: path.join(os.tmpdir(), `${DIR_PREFIX}slot-${slot}-gone`),
    netns: `kubeprovisioner-node-${slot}`,
    hostLink: `kpc${slot}h`,
    cgroup: `kubeprovisioner-cluster-${slot}`,
    ownerPid: 0,
    interactive: false,
  };
}

function addressesOf(slot: number): {
  host: string;
  node: string;
  pods: string;
  services: string;
  apiIP: string;
} {
  return {
    host: `198.19.${slot}.1`,
    node: `198.19.${slot}.2`,
    pods: `198.18.${2 * slot}.0/24`,
    services: `198.18.${2 * slot + 1}.0/24`,
    apiIP: `198.18.${2 * slot + 1}.1`,
  };
}

/** The v1 hierarchies with a controller (each once) and the unified one, as mounted folders. */
function cgroupRoots(): string[] {
  const base = "/sys/fs/cgroup";
  if (existsSync(path.join(base, "cgroup.controllers"))) return [base];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const name of readdirSync(base)) {
    const full = path.join(base, name);
    let real: string;
    try {
      real = realpathSync(full);
      if (!statSync(real).isDirectory()) continue;
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    out.push(real);
  }
  return out;
}

/** Creates `cgroup` in every hierarchy; cpuset gets its parent's CPUs and memory nodes. */
function createCgroup(cgroup: string): void {
  for (const root of cgroupRoots()) {
    let cur = root;
    for (const part of cgroup.split("/").filter(Boolean)) {
      const next = path.join(cur, part);
      mkdirSync(next, { recursive: true });
      for (const f of ["cpuset.cpus", "cpuset.mems"]) {
        const mine = path.join(next, f);
        if (existsSync(mine) && readFileSync(mine, "utf8").trim() === "") {
          writeFileSync(mine, readFileSync(path.join(cur, f), "utf8").trim());
        }
      }
      cur = next;
    }
  }
}

/** Every pid in `cgroup` or below, in any hierarchy. */
function cgroupPids(cgroup: string): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    try {
      for (const l of readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n"))
        if (l.trim() !== "") pids.add(Number(l));
    } catch {
      // gone meanwhile
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  for (const root of cgroupRoots()) walk(path.join(root, cgroup));
  return [...pids];
}

/** Removes `cgroup` and its children in every hierarchy (deepest first). */
function removeCgroup(cgroup: string): void {
  const rm = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) rm(path.join(dir, e.name));
    try {
      rmSync(dir, { recursive: false });
    } catch {
      try {
        execFileSync("rmdir", [dir], { stdio: "ignore" });
      } catch {
        // reported by leaks()
      }
    }
  };
  for (const root of cgroupRoots()) rm(path.join(root, cgroup));
}

/** Pids whose command line names `dir` (containerd's shims run outside the process tree). */
function pidsNaming(dir: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (
        readFileSync(`/proc/${p}/cmdline`, "utf8")
          .split("\0")
          .some((a) => a.includes(dir))
      )
        out.push(Number(p));
    } catch {
      // exited
    }
  }
  return out;
}

/** Mount points at or below `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const mp = line.split(" ")[4];
    if (mp !== undefined && (mp === dir || mp.startsWith(`${dir}/`))) out.push(mp.replace(/\\040/g, " "));
  }
  return out.sort((a, b) => b.length - a.length);
}

/** The network namespace inode of every process in the cgroup (the pods' sandboxes). */
function netnsInodes(cgroup: string): Set<string> {
  const out = new Set<string>();
  for (const pid of cgroupPids(cgroup)) {
    try {
      out.add(readlinkSync(`/proc/${pid}/ns/net`));
    } catch {
      // exited
    }
  }
  return out;
}

/** The named network namespaces (/run/netns/cni-*) whose inode is in `inodes`. */
function podNetns(inodes: Set<string>): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync("/run/netns");
  } catch {
    return out;
  }
  for (const n of names) {
    if (!n.startsWith("cni-")) continue;
    try {
      if (inodes.has(`net:[${statSync(path.join("/run/netns", n)).ino}]`)) out.push(n);
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

/** Unmounts `mp`, lazily when it is busy. */
function unmount(mp: string): void {
  if (!trySh("umount", [mp])) trySh("umount", ["-l", mp]);
}

function removeNetns(name: string): void {
  const file = path.join("/run/netns", name);
  unmount(file);
  rmSync(file, { force: true });
}

function alive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The pod sandboxes containerd knows (their ids), read from its folder. */
function sandboxIds(state: ClusterState): string[] {
  try {
    return readdirSync(path.join(state.dir, "containerd/root/io.containerd.grpc.v1.cri/sandboxes"));
  } catch {
    return [];
  }
}

/**
 * What containerd and the CNI plugins keep outside the cluster's folder, per sandbox: the shim's
 * socket (/run/containerd/s/<sha256 of address/namespace/id>) and the CNI result cache.
 */
function hostFilesOf(state: ClusterState, ids: readonly string[]): string[] {
  const sock = path.join(state.dir, "containerd.sock");
  const out: string[] = [];
  for (const id of ids) {
    out.push(
      path.join("/run/containerd/s", createHash("sha256").update(`${sock}/k8s.io/${id}`).digest("hex")),
    );
    out.push(path.join("/var/lib/cni/results", `kubeprovisioner-${id}-eth0`));
    out.push(path.join("/var/lib/cni/results", `cni-loopback-${id}-lo`));
  }
  // The kubelet's device-plugin socket has a fixed path, and so has its folder of links to the
  // containers' logs (which are in the cluster's folder).
  out.push("/var/lib/kubelet/device-plugins/kubelet.sock");
  try {
    for (const name of readdirSync(CONTAINER_LOG_LINKS)) {
      const link = path.join(CONTAINER_LOG_LINKS, name);
      try {
        if (readlinkSync(link).startsWith(`${state.dir}/`)) out.push(link);
      } catch {
        // not a link
      }
    }
  } catch {
    // no such folder
  }
  return out;
}

const CONTAINER_LOG_LINKS = "/var/log/containers";

/** Folders on the host that only exist for the node's parts; removed when empty. */
const HOST_FOLDERS = [
  CONTAINER_LOG_LINKS,
  "/var/lib/kubelet/device-plugins",
  "/var/lib/kubelet",
  "/var/lib/cni/results",
  "/var/lib/cni",
  "/run/containerd/s",
  "/run/containerd",
];

/**
 * Removes everything the cluster of `state` made, synchronously (it also runs in an exit hook):
 * kills its processes (by cgroup and by command line), unmounts under its folder, deletes the pod
 * network namespaces, the node's namespace, the veth pair (and with it the host's route), the
 * cgroups, the sandboxes' files on the host and the folder. `podNamespaces` are the pod
 * namespaces seen while the pods ran. Returns the ids of the sandboxes it found.
 */
export function removeCluster(state: ClusterState, podNamespaces: Iterable<string> = []): string[] {
  const pods = new Set(podNamespaces);
  const ids = sandboxIds(state);
  for (const n of podNetns(netnsInodes(state.cgroup))) pods.add(n);
  for (let round = 0; round < 50; round++) {
    const pids = [...new Set([...cgroupPids(state.cgroup), ...pidsNaming(state.dir)])].filter(
      (p) => p !== process.pid && alive(p),
    );
    if (pids.length === 0) break;
    killAll(pids);
    sleepSync(100);
  }
  for (const mp of mountsUnder(state.dir)) unmount(mp);
  for (const n of pods) removeNetns(n);
  if (existsSync(path.join("/run/netns", state.netns))) {
    if (!trySh("ip", ["netns", "delete", state.netns])) removeNetns(state.netns);
  }
  trySh("ip", ["link", "delete", state.hostLink]);
  removeCgroup(state.cgroup);
  const others = clusterStates().some((o) => o.dir !== state.dir && alive(o.ownerPid));
  for (const f of hostFilesOf(state, ids)) {
    if (f.startsWith("/var/lib/kubelet/") && others) continue; // another kubelet's
    rmSync(f, { force: true });
  }
  if (!others) for (const d of HOST_FOLDERS) trySh("rmdir", [d]);
  rmSync(state.dir, { recursive: true, force: true });
  return ids;
}

/**
 * What of the cluster of `state` is still there: processes, mounts, network namespaces, links,
 * cgroups, files (with `sandboxes`, the ids {@link removeCluster} returned).
 */
export function leaks(
  state: ClusterState,
  podNamespaces: Iterable<string> = [],
  sandboxes: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const f of hostFilesOf(state, sandboxes)) {
    if (f.startsWith("/var/lib/kubelet/")) continue; // shared by every kubelet on the machine
    if (existsSync(f)) out.push(`file ${f}`);
  }
  const pids = [...new Set([...cgroupPids(state.cgroup), ...pidsNaming(state.dir)])].filter(
    (p) => p !== process.pid,
  );
  if (pids.length > 0) out.push(`processes ${pids.join(", ")}`);
  for (const mp of mountsUnder(state.dir)) out.push(`mount ${mp}`);
  for (const n of [state.netns, ...podNamespaces])
    if (existsSync(path.join("/run/netns", n))) out.push(`network namespace ${n}`);
  if (trySh("ip", ["link", "show", "dev", state.hostLink])) out.push(`link ${state.hostLink}`);
  for (const root of cgroupRoots())
    if (existsSync(path.join(root, state.cgroup))) out.push(`cgroup ${path.join(root, state.cgroup)}`);
  if (existsSync(state.dir)) out.push(`folder ${state.dir}`);
  return out;
}

/** The states of the clusters on this machine (from their folders' state files). */
export function clusterStates(): ClusterState[] {
  const out: ClusterState[] = [];
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    try {
      out.push(JSON.parse(readFileSync(path.join(os.tmpdir(), name, STATE_FILE), "utf8")) as ClusterState);
    } catch {
      // no state file yet, or not a cluster folder
    }
  }
  return out;
}

/** Takes a free slot by creating its veth pair (creation fails when another cluster holds it). */
function takeSlot(): number {
  for (let slot = 0; slot < SLOTS; slot++) {
    if (trySh("ip", ["link", "add", `kpc${slot}h`, "type", "veth", "peer", "name", `kpc${slot}n`]))
      return slot;
  }
  throw new Error(`all ${SLOTS} cluster slots are taken (kpc*h links); run 'make cluster-down'`);
}

function ipIn(netns: string, args: string[]): void {
  sh("ip", ["-n", netns, ...args]);
}

/** Starts a cluster and waits until its node is Ready. */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const log = opts.log ?? ((): void => undefined);
  const timeout = opts.startTimeoutMs ?? 180_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), DIR_PREFIX));
  const slot = takeSlot();
  const a = addressesOf(slot);
  const state: ClusterState = {
    ...orphanState(slot),
    dir,
    ownerPid: process.pid,
    interactive: opts.interactive ?? false,
  };
  writeFileSync(path.join(dir, STATE_FILE), JSON.stringify(state, null, 2));
  const seenPodNetns = new Set<string>();
  let sandboxesSeen: string[] = [];
  let removed = false;
  const onExit = (): void => {
    if (!removed) removeCluster(state, seenPodNetns);
  };
  process.on("exit", onExit);

  const procs: Supervised[] = [];
  let cp: ControlPlane | undefined;
  try {
    // ---- network: the node's namespace and its link to the host
    const nodeLink = `kpc${slot}n`;
    if (existsSync(path.join("/run/netns", state.netns))) removeNetns(state.netns); // a crashed run's
    sh("ip", ["netns", "add", state.netns]);
    sh("ip", ["link", "set", nodeLink, "netns", state.netns]);
    sh("ip", ["addr", "add", `${a.host}/30`, "dev", state.hostLink]);
    sh("ip", ["link", "set", state.hostLink, "up"]);
    ipIn(state.netns, ["link", "set", "lo", "up"]);
    ipIn(state.netns, ["addr", "add", `${a.node}/30`, "dev", nodeLink]);
    ipIn(state.netns, ["link", "set", nodeLink, "up"]);
    // Service IPs need a route for the node's own connections before kube-proxy rewrites them.
    ipIn(state.netns, ["route", "add", a.services, "dev", nodeLink]);
    sh("ip", ["route", "add", a.pods, "via", a.node, "dev", state.hostLink]);
    const inNode = ["nsenter", `--net=/run/netns/${state.netns}`];
    for (const kv of ["net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"]) {
      sh(inNode[0] ?? "nsenter", [...inNode.slice(1), "sysctl", "-qw", kv]);
    }
    createCgroup(`${state.cgroup}/system`);

    // Node processes start inside the cgroup parent and the node's network namespace.
    const cgroupProcs = cgroupRoots()
      .map((r) => path.join(r, state.cgroup, "system", "cgroup.procs"))
      .filter((f) => existsSync(f));
    const nodeProcess = (name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Supervised => {
      const script = `for f in ${cgroupProcs.map((f) => `'${f}'`).join(" ")}; do echo $$ > "$f"; done; exec "$@"`;
      const p = startProcess("sh", ["-c", script, name, ...inNode, cmd, ...args], {
        logFile: path.join(dir, `${name}.log`),
        env: env ?? process.env,
      });
      procs.push(p);
      return p;
    };

    // ---- control plane on the host's address of the link
    log("starting etcd, kube-apiserver and kube-controller-manager ...");
    cp = await startControlPlane({
      parentDir: dir,
      address: a.host,
      serviceClusterIPRange: a.services,
      servingIPs: [a.apiIP],
      serviceAccountAdmission: true,
      authorizationMode: "Node,RBAC",
      controllers: ["*"],
      startTimeoutMs: timeout,
      apiServerFlags: (pki) => {
        issueKubeletClient(pki);
        const kc = path.join(pki.dir, "apiserver-kubelet-client");
        return [
          "--enable-admission-plugins=NodeRestriction",
          `--kubelet-client-certificate=${kc}.crt`,
          `--kubelet-client-key=${kc}.key`,
          "--kubelet-preferred-address-types=InternalIP",
          ...auditFlags({ reads: true, dir: pki.dir }).flags,
        ];
      },
      controllerManagerFlags: (pki) => [
        `--root-ca-file=${pki.caCert}`,
        `--service-account-private-key-file=${pki.saKey}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        `--service-cluster-ip-range=${a.services}`,
      ],
    });
    const cpDir = cp.dir;
    const kcFile = (user: string, groups: string[] = []): string =>
      (cp as ControlPlane).writeKubeConfig(
        (cp as ControlPlane).userKubeConfig(user, groups),
        user.replace(/[^a-z0-9-]/gi, "_"),
      );

    // ---- kube-scheduler
    log("starting kube-scheduler, containerd, kubelet and kube-proxy ...");
    const schedPort = await freePort();
    const schedKc = kcFile("system:kube-scheduler");
    const sched = startProcess(
      toolPath("kube-scheduler"),
      [
        `--kubeconfig=${schedKc}`,
        `--authentication-kubeconfig=${schedKc}`,
        `--authorization-kubeconfig=${schedKc}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${schedPort}`,
        "--profiling=false",
      ],
      { logFile: path.join(dir, "kube-scheduler.log") },
    );
    procs.push(sched);

    // ---- containerd
    const sock = path.join(dir, "containerd.sock");
    const cniConf = path.join(dir, "cni/net.d");
    mkdirSync(cniConf, { recursive: true });
    writeFileSync(
      path.join(cniConf, "10-kubeprovisioner.conflist"),
      JSON.stringify(
        {
          cniVersion: "0.4.0",
          name: "kubeprovisioner",
          plugins: [
            {
              type: "bridge",
              bridge: "cni0",
              isGateway: true,
              ipMasq: false,
              hairpinMode: true,
              ipam: {
                type: "host-local",
                ranges: [[{ subnet: a.pods }]],
                routes: [{ dst: "0.0.0.0/0" }],
                dataDir: path.join(dir, "cni/ipam"),
              },
            },
            { type: "portmap", capabilities: { portMappings: true } },
          ],
        },
        null,
        2,
      ),
    );
    const containerdConfig = path.join(dir, "containerd.toml");
    writeFileSync(containerdConfig, containerdToml(dir, sock, cniConf, opts.pauseImage.ref));
    const containerd = nodeProcess("containerd", "containerd", ["--config", containerdConfig]);
    await waitFor(
      "containerd",
      async () => {
        if (containerd.proc.exitCode !== null)
          throw new Error(`containerd exited; see ${containerd.logFile}`);
        await execFileP("ctr", ["--address", sock, "version"]);
        return true;
      },
      timeout,
      200,
    );
    const ctr = (args: string[]): Promise<{ stdout: string }> =>
      execFileP("ctr", ["--address", sock, "-n", "k8s.io", ...args], { maxBuffer: 16 * 1024 * 1024 });
    const importImage = async (archive: string): Promise<void> => {
      await ctr(["images", "import", archive]);
    };
    for (const archive of [opts.pauseImage.archive, ...(opts.images ?? [])]) {
      log(`importing ${path.basename(archive)} into the node's containerd`);
      await importImage(archive);
    }

    // ---- kubelet
    const kubeletDir = path.join(dir, "kubelet");
    mkdirSync(path.join(kubeletDir, "root"), { recursive: true });
    const kubeletKc = kcFile(`system:node:${NODE_NAME}`, ["system:nodes"]);
    const kubeletConfig = path.join(kubeletDir, "config.yaml");
    writeFileSync(
      kubeletConfig,
      JSON.stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        address: a.node,
        readOnlyPort: 0,
        healthzBindAddress: "127.0.0.1",
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: path.join(cpDir, "ca.crt") },
        },
        authorization: { mode: "Webhook" },
        cgroupDriver: "cgroupfs",
        cgroupRoot: `/${state.cgroup}`,
        cgroupsPerQOS: true,
        failCgroupV1: false,
        failSwapOn: false,
        containerRuntimeEndpoint: `unix://${sock}`,
        podLogsDir: path.join(kubeletDir, "pod-logs"),
        // The machine's disk is shared: no eviction and no image garbage collection.
        evictionHard: { "memory.available": "1Mi", "nodefs.available": "0%", "imagefs.available": "0%" },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        resolvConf: "/etc/resolv.conf",
        clusterDomain: "cluster.local",
        serializeImagePulls: false,
        enforceNodeAllocatable: ["pods"],
        tlsCertFile: path.join(cpDir, "kubelet-serving.crt"),
        tlsPrivateKeyFile: path.join(cpDir, "kubelet-serving.key"),
        shutdownGracePeriod: "0s",
        registerNode: true,
      }),
    );
    issueKubeletServing(cpDir, a.node);
    const kubelet = nodeProcess("kubelet", toolPath("kubelet"), [
      `--config=${kubeletConfig}`,
      `--kubeconfig=${kubeletKc}`,
      `--root-dir=${path.join(kubeletDir, "root")}`,
      `--cert-dir=${path.join(kubeletDir, "pki")}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${a.node}`,
      "--v=1",
    ]);

    // ---- kube-proxy: iptables mode, inside the node's namespace
    const proxyConfig = path.join(dir, "kube-proxy.yaml");
    writeFileSync(
      proxyConfig,
      JSON.stringify({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: kcFile("system:kube-proxy") },
        mode: "iptables",
        clusterCIDR: a.pods,
        hostnameOverride: NODE_NAME,
        bindAddress: a.node,
        healthzBindAddress: "127.0.0.1:10256",
        metricsBindAddress: "127.0.0.1:10249",
        // Zero leaves the machine-wide conntrack settings alone.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
        iptables: { syncPeriod: "10s", minSyncPeriod: "1s" },
        nodePortAddresses: [`${a.node}/32`],
      }),
    );
    const proxy = nodeProcess("kube-proxy", toolPath("kube-proxy"), [`--config=${proxyConfig}`]);

    const admin = cp;
    await waitFor(
      `node ${NODE_NAME} Ready`,
      async () => {
        for (const p of [kubelet, proxy, containerd, sched])
          if (p.proc.exitCode !== null) throw new Error(`a node process exited; see ${p.logFile}`);
        const res = await admin.request("GET", `/api/v1/nodes/${NODE_NAME}`);
        const conds = (res.body as { status?: { conditions?: { type: string; status: string }[] } }).status
          ?.conditions;
        return (conds ?? []).some((c) => c.type === "Ready" && c.status === "True");
      },
      timeout,
      500,
    );
    // The default ServiceAccount exists once the controller-manager has seen the namespace.
    await waitFor(
      "ServiceAccount default/default",
      async () =>
        (await admin.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
      timeout,
      200,
    );
    log(`node ${NODE_NAME} is Ready`);

    const crictlArgs = [
      `--runtime-endpoint=unix://${sock}`,
      `--image-endpoint=unix://${sock}`,
      "--timeout=30s",
    ];
    const crictl = async (args: string[]): Promise<string> =>
      (await execFileP(toolPath("crictl"), [...crictlArgs, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    const remember = (): void => {
      for (const n of podNetns(netnsInodes(state.cgroup))) seenPodNetns.add(n);
    };
    const remembering = setInterval(remember, 2000);
    remembering.unref();

    return {
      state,
      cp,
      nodeName: NODE_NAME,
      hostAddress: a.host,
      nodeAddress: a.node,
      podCIDR: a.pods,
      serviceCIDR: a.services,
      kubeconfigPath: cp.kubeconfigPath,
      crictl,
      importImage,
      async nodeExec(cmd, args) {
        return (await execFileP("nsenter", [`--net=/run/netns/${state.netns}`, cmd, ...args])).stdout;
      },
      async stop() {
        if (removed) return leaks(state, seenPodNetns, sandboxesSeen);
        clearInterval(remembering);
        remember();
        // The kubelet first (it would restart the pods), then the pods through the runtime so
        // containerd tears down their networks, then the rest.
        await kubelet.stop(10_000);
        await crictl(["rmp", "--force", "--all"]).catch((err: unknown) =>
          log(`crictl rmp: ${(err as Error).message}`),
        );
        await proxy.stop();
        await containerd.stop(10_000);
        await sched.stop();
        await admin.stop();
        sandboxesSeen = removeCluster(state, seenPodNetns);
        removed = true;
        process.removeListener("exit", onExit);
        return leaks(state, seenPodNetns, sandboxesSeen);
      },
    };
  } catch (err) {
    const tails = [...procs.map((p) => p.logFile)]
      .map((f) => {
        try {
          return `--- ${path.basename(f)} (tail)\n${readFileSync(f, "utf8").split("\n").slice(-15).join("\n")}`;
        } catch {
          return "";
        }
      })
      .join("\n");
    for (const p of procs) await p.stop(2000);
    await cp?.stop();
    removeCluster(state, seenPodNetns);
    removed = true;
    process.removeListener("exit", onExit);
    throw new Error(`starting the cluster failed: ${(err as Error).message}\n${tails}`, { cause: err });
  }
}

function containerdToml(dir: string, sock: string, cniConf: string, sandboxImage: string): string {
  const q = JSON.stringify;
  return `version = 2
root = ${q(path.join(dir, "containerd/root"))}
state = ${q(path.join(dir, "containerd/state"))}
[grpc]
  address = ${q(sock)}
[ttrpc]
  address = ${q(`${sock}.ttrpc`)}
[debug]
  level = "warn"
[plugins."io.containerd.internal.v1.opt"]
  path = ${q(path.join(dir, "containerd/opt"))}
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  # The machine lacks CAP_SYS_RESOURCE: without this every sandbox fails in runc.
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${q(path.join(dir, "runc"))}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ${q(cniConf)}
`;
}

/** kube-apiserver's client certificate towards the kubelet (logs, exec). */
function issueKubeletClient(pki: { dir: string }): void {
  issue(
    pki.dir,
    "apiserver-kubelet-client",
    "/O=system:masters/CN=kube-apiserver-kubelet-client",
    "extendedKeyUsage=clientAuth\n",
  );
}

/** The kubelet's serving certificate for the node's address. */
function issueKubeletServing(dir: string, nodeIP: string): void {
  issue(
    dir,
    "kubelet-serving",
    `/CN=system:node:${NODE_NAME}`,
    `subjectAltName=IP:${nodeIP}\nextendedKeyUsage=serverAuth\n`,
  );
}
