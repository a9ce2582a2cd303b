/**
 * Idle footprint of one operator build: control plane with the CRDs, moto, the operator with
 * zero objects; after it reports ready and `--settle` seconds pass, prints its RSS, peak RSS and
 * CPU as one JSON line.
 *
 *   node bench/footprint/startup-rss.ts [--entry src/main.ts|dist/kubeprovisioner.mjs] [--settle 20] [-- node flags]
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startControlPlane } from "../../test/support/envtest.ts";
import { startMoto } from "../../test/support/moto.ts";
import { startOperator } from "../../test/support/operator.ts";
import { childPid, procStats } from "../support/proc-stats.ts";

const { values, positionals } = parseArgs({
  options: { entry: { type: "string", default: "src/main.ts" }, settle: { type: "string", default: "20" } },
  allowPositionals: true,
});
const cp = await startControlPlane({ installCRDs: true });
const moto = await startMoto();
const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bench-"));
try {
  const op = await startOperator({
    kubeconfig: cp.kubeconfigPath,
    env: moto.env,
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
    JSON.stringify({ entry: values.entry, nodeArgs: positionals, atReady: ready, idle }) + "\n",
  );
  await op.stop();
} finally {
  await moto.stop();
  await cp.stop();
}
