/**
 * Idle footprint of one operator build: control plane with the CRDs, moto, the operator with
 * zero objects; after it reports ready and `--settle` seconds pass, prints its RSS, peak RSS and
 * CPU as one JSON line.
 *
 *   node bench/footprint/startup-rss.ts [--entry src/main.ts|dist/kubeprovisioner.mjs] [--settle 20]
 *     [--in-cluster] [--env NAME=value ...] [-- node flags]
 *
 * The operator reads the admin kubeconfig file, or with `--in-cluster` the configuration a pod
 * has, as the image runs: a ServiceAccount's token and the cluster's CA mounted at the
 * in-cluster path (a private mount namespace, so it needs root), the ServiceAccount bound to
 * cluster-admin.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator } from "../../test/support/operator.ts";
import { podServiceAccount } from "../../test/support/service-account-namespace.ts";
import { childPid, procStats } from "../support/proc-stats.ts";

const { values, positionals } = parseArgs({
  options: {
    entry: { type: "string", default: "src/main.ts" },
    settle: { type: "string", default: "20" },
    "in-cluster": { type: "boolean", default: false },
    /** `NAME=value` for the operator's environment (the image's, e.g. MALLOC_ARENA_MAX); repeatable. */
    env: { type: "string", multiple: true, default: [] },
  },
  allowPositionals: true,
});
const env = Object.fromEntries(
  values.env.map((e) => {
    const at = e.indexOf("=");
    if (at <= 0) throw new Error(`--env ${e}: want NAME=value`);
    return [e.slice(0, at), e.slice(at + 1)];
  }),
);
const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bench-"));
try {
  const op = await startOperator({
    kubeconfig: cp.kubeconfigPath,
    ...(values["in-cluster"]
      ? {
          inCluster: {
            server: cp.server,
            serviceAccountDir: await podServiceAccount(cp, dir, "kubeprovisioner"),
          },
        }
      : {}),
    env: { ...moto.env, ...env },
    dir,
    entry: values.entry,
    nodeArgs: positionals,
    args: ["--log-level=info"],
  });
  const pid = childPid(op.process.proc.pid ?? 0, path.basename(values.entry));
  const ready = procStats(pid);
  await new Promise((r) => setTimeout(r, Number(values.settle) * 1000));
  const idle = procStats(pid);
  process.stdout.write(
    JSON.stringify({
      entry: values.entry,
      nodeArgs: positionals,
      env,
      kubeconfig: values["in-cluster"] ? "in-cluster" : "file",
      atReady: ready,
      idle,
    }) + "\n",
  );
  await op.stop();
} finally {
  await moto.stop();
  await cp.stop();
}
