/**
 * `make cluster`: a single-node cluster of real parts on this machine (test/support/cluster.ts),
 * with the operator image built from the Dockerfile and loaded under the chart's default name,
 * and moto listening where the pods reach it. Prints how to point kubectl and helm at it; Ctrl-C
 * stops everything and proves nothing is left behind.
 *
 * `make cluster-down` (`node hack/cluster.ts down`): stops the clusters `make cluster` started on
 * this machine (also when their process is gone) and checks the same.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { clusterStates, leaks, orphanState, removeCluster, startCluster } from "../test/support/cluster.ts";
import { buildImage, buildPauseImage } from "../test/support/image.ts";
import { startMoto } from "../test/support/moto.ts";
import { repoRoot, waitFor } from "../test/support/process.ts";
import { toolPath } from "../test/support/tools.ts";

const say = (msg: string): void => {
  process.stderr.write(`\x1b[1m[cluster]\x1b[0m ${msg}\n`);
};

function alive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Slots whose veth pair exists (the host ends, `kpc<n>h`). */
function linkedSlots(): number[] {
  const out = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
  return [...out.matchAll(/^\d+: kpc(\d+)h[@:]/gm)].map((m) => Number(m[1]));
}

async function down(): Promise<void> {
  // The clusters of `make cluster`, and those whose process is gone (a killed test run).
  const all = clusterStates();
  const states = all.filter((s) => s.interactive || !alive(s.ownerPid));
  if (states.length === 0) say("no cluster started by 'make cluster' is running");
  let left = 0;
  for (const s of states) {
    if (alive(s.ownerPid)) {
      say(`stopping the cluster in ${s.dir} (pid ${s.ownerPid}) ...`);
      process.kill(s.ownerPid, "SIGTERM");
      await waitFor(`pid ${s.ownerPid} to exit`, async () => !alive(s.ownerPid), 120_000, 200).catch(() =>
        process.kill(s.ownerPid, "SIGKILL"),
      );
    }
    const ids = removeCluster(s);
    const rest = leaks(s, [], ids);
    if (rest.length > 0) {
      left += rest.length;
      say(`left behind by ${s.dir}:\n  ${rest.join("\n  ")}`);
    } else {
      say(`cluster ${s.dir}: nothing left behind`);
    }
  }
  // A cluster whose folder is gone but whose link is not (its process was SIGKILLed mid-cleanup).
  const live = new Set(all.filter((s) => alive(s.ownerPid)).map((s) => s.slot));
  for (const slot of linkedSlots().filter((n) => !live.has(n))) {
    const s = orphanState(slot);
    removeCluster(s);
    const rest = leaks(s);
    left += rest.length;
    say(
      `slot ${slot} without a cluster folder: ${rest.length === 0 ? "removed" : `left ${rest.join(", ")}`}`,
    );
  }
  process.exit(left === 0 ? 0 : 1);
}

async function up(): Promise<void> {
  say("building the operator image from the Dockerfile (cached by content) ...");
  const started = Date.now();
  const image = await buildImage({ log: (l) => say(l) });
  say(
    `image ${image.ref}: ${(image.sizeBytes / 1024 / 1024).toFixed(0)} MiB${image.cached ? " (cached)" : ` built in ${Math.round((Date.now() - started) / 1000)} s`}`,
  );
  const pause = await buildPauseImage({ log: (l) => say(l) });
  const cluster = await startCluster({
    images: [image.archive],
    pauseImage: pause,
    interactive: true,
    log: say,
  });
  const moto = await startMoto({ host: cluster.hostAddress });
  // The hardened instance sample names an instance profile; moto needs it to exist.
  await moto.createInstanceProfile("kubeprovisioner-sample-web");
  say(`node Ready; moto ${moto.endpoint} (reachable from the pods)`);

  const chart = path.relative(process.cwd(), path.join(repoRoot, "charts/kubeprovisioner")) || ".";
  process.stdout.write(`
  export KUBECONFIG=${cluster.kubeconfigPath}
  export PATH=${path.dirname(toolPath("kubectl"))}:$PATH

  # the chart as a user installs it (no AWS credentials: Ready while it has no objects)
  helm install kubeprovisioner ${chart} --namespace kubeprovisioner-system --create-namespace

  # or against moto: a credentials Secret and the emulator's endpoint
  kubectl create namespace kubeprovisioner-system
  kubectl -n kubeprovisioner-system create secret generic aws-credentials \\
    --from-literal=AWS_ACCESS_KEY_ID=testing --from-literal=AWS_SECRET_ACCESS_KEY=testing
  helm install kubeprovisioner ${chart} --namespace kubeprovisioner-system \\
    --set aws.existingSecret=aws-credentials --set aws.endpoint=${moto.endpoint} --set aws.region=us-east-1
  kubectl apply -k config/samples
\n`);
  say("Ctrl-C (or 'make cluster-down' from another shell) stops everything");

  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say("stopping ...");
    await moto.stop();
    const rest = await cluster.stop();
    if (rest.length > 0) {
      say(`left behind:\n  ${rest.join("\n  ")}`);
      process.exit(1);
    }
    say("stopped; nothing left behind (processes, mounts, network namespaces, links, cgroups, files)");
    process.exit(0);
  };
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
  await new Promise(() => {});
}

if (process.argv[2] === "down") await down();
else await up();
