/**
 * `make dev`: the whole system on this machine. Starts etcd + kube-apiserver and moto, installs
 * the CRDs, runs the operator from source in the foreground with readable logs, applies
 * config/samples and prints how to point kubectl at it. Ctrl-C stops everything.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { KINDS } from "../src/kinds.ts";
import { startControlPlane } from "../test/support/envtest.ts";
import { startMoto } from "../test/support/moto.ts";
import { freePort, repoRoot } from "../test/support/process.ts";
import { toolPath } from "../test/support/tools.ts";

const say = (msg: string): void => {
  process.stderr.write(`\x1b[1m[dev]\x1b[0m ${msg}\n`);
};

say("starting etcd, kube-apiserver and moto ...");
const [cp, moto] = await Promise.all([
  startControlPlane({ installCRDs: existsSync(path.join(repoRoot, "config/crd")) }),
  startMoto(),
]);
say(`API server ${cp.server}, moto ${moto.endpoint}`);

const stopAll = async (): Promise<void> => {
  await Promise.allSettled([cp.stop(), moto.stop()]);
};

const main = path.join(repoRoot, "src/main.ts");
let operator: ReturnType<typeof spawn> | undefined;
if (existsSync(main)) {
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const env = { ...process.env, ...moto.env, KUBECONFIG: cp.kubeconfigPath };
  operator = spawn(
    process.execPath,
    [
      main,
      `--kubeconfig=${cp.kubeconfigPath}`,
      "--leader-elect=false",
      "--metrics-secure=false",
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      "--log-level=debug",
    ],
    { env, stdio: ["ignore", "pipe", "inherit"] },
  );
  const pretty = spawn(
    path.join(repoRoot, "node_modules/.bin/pino-pretty"),
    ["--colorize", "--translateTime", "SYS:HH:MM:ss.l", "--ignore", "pid,hostname"],
    {
      stdio: ["pipe", "inherit", "inherit"],
    },
  );
  operator.stdout?.pipe(pretty.stdin);
  operator.once("exit", (code) => {
    say(`operator exited with code ${code}`);
  });
  say(
    `operator running: metrics http://127.0.0.1:${metricsPort}/metrics, probes http://127.0.0.1:${probePort}/readyz`,
  );
} else {
  say("the operator (src/main.ts) is not there yet: the environment runs without it");
}

const samples = path.join(repoRoot, "config/samples");
if (existsSync(samples)) {
  // The hardened instance sample names an instance profile; moto needs it to exist.
  await moto.createInstanceProfile("kubeprovisioner-sample-web");
  const { stdout } = await cp.kubectl(["apply", "-k", samples]);
  say(`applied config/samples:\n${stdout.trim()}`);
}

say("use it from another shell:");
process.stdout.write(`\n  export KUBECONFIG=${cp.kubeconfigPath}\n`);
process.stdout.write(`  export PATH=${path.dirname(toolPath("kubectl"))}:$PATH\n`);
const shortNames = KINDS.map((k) => k.crd().spec.names.shortNames?.[0] ?? k.resource.plural).join(",");
process.stdout.write(`  kubectl get ${shortNames} -w\n\n`);
say("Ctrl-C stops everything");

let stopping = false;
const shutdown = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  say("stopping ...");
  if (operator && operator.exitCode === null) {
    operator.kill("SIGTERM");
    await new Promise((r) => operator?.once("exit", r));
  }
  await stopAll();
  process.exit(0);
};
process.removeAllListeners("SIGINT");
process.removeAllListeners("SIGTERM");
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
await new Promise(() => {});
