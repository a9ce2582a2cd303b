/**
 * `kubectl get --raw /version` done the operator's way: loads the kubeconfig with the program's
 * own rules (src/kubeconfig-source.ts: `--kubeconfig`, else KUBECONFIG, else in-cluster, else
 * ~/.kube/config), connects with the program's connection code and prints the answer. Exit 0 on
 * success, 2 for a refused kubeconfig (as the operator exits), 1 otherwise; the error on stderr.
 */
import { Registry } from "prom-client";
import { ConfigError } from "../../src/config/config-error.ts";
import { apiClient, loadKubeConfig } from "../../src/kubeconfig-source.ts";

const args = process.argv.slice(2);
const at = args.indexOf("--kubeconfig");
const kubeconfig = at >= 0 ? args[at + 1] : process.env.KUBECONFIG || undefined;
try {
  const kc = await loadKubeConfig(kubeconfig, process.env);
  const rest = apiClient(kc, { registry: new Registry(), timeoutMs: 10_000 });
  const body = await rest.request<unknown>({ method: "GET", path: "/version" });
  process.stdout.write(`${JSON.stringify(body)}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(err instanceof ConfigError ? err.exitCode : 1);
}
