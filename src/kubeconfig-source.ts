/**
 * Where the program's Kubernetes configuration comes from, and the refusals that make it exit
 * with 2: the explicit kubeconfig (flag, KUBEPROVISIONER_KUBECONFIG, KUBECONFIG), else the
 * in-cluster ServiceAccount, else ~/.kube/config (controller-runtime's order); and the proxy
 * environment (HTTPS_PROXY, HTTP_PROXY) it connects through, which the AWS clients share.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./config/config-error.ts";
import { InvalidKubeConfigError, KubeConfig, SERVICE_ACCOUNT_DIR } from "./runtime/kube/kubeconfig.ts";
import { checkProxyEnvironment, ProxyConfigError, proxyEnvironment } from "./runtime/proxy.ts";
import { RestClient, type FromKubeConfigOptions } from "./runtime/kube/rest.ts";

/**
 * The kubeconfig to use. A list of files (path-list syntax) is merged as kubectl merges
 * `KUBECONFIG`; a single file must exist.
 * @throws ConfigError (exit 2) for a kubeconfig that is found but refused (not YAML, not a
 *   kubeconfig document), and for a proxy variable Node cannot use (`socks5://`); Error when none
 *   is usable.
 */
export async function loadKubeConfig(
  kubeconfig: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<KubeConfig> {
  try {
    checkProxyEnvironment(proxyEnvironment(env));
  } catch (err) {
    if (err instanceof ProxyConfigError) throw new ConfigError(err.message, { cause: err });
    throw err;
  }
  try {
    if (kubeconfig !== undefined) {
      const files = kubeconfig.split(path.delimiter).filter((f) => f !== "");
      return files.length === 1 && files[0] !== undefined
        ? await KubeConfig.fromFile(files[0])
        : await KubeConfig.fromFiles(files);
    }
    if (env.KUBERNETES_SERVICE_HOST && existsSync(`${SERVICE_ACCOUNT_DIR}/token`))
      return KubeConfig.inCluster(env);
    return await KubeConfig.fromDefault(env);
  } catch (err) {
    if (err instanceof InvalidKubeConfigError)
      throw new ConfigError(`unusable kubeconfig: ${err.message}`, { cause: err });
    throw new Error(
      `no usable Kubernetes configuration (pass --kubeconfig, set KUBECONFIG, or run in a cluster): ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * The API client for `kc`.
 * @throws ConfigError (exit 2) when client-go would refuse the selected context's cluster or
 *   user (or it asks for what the operator does not do), naming the entry and the field.
 */
export function apiClient(kc: KubeConfig, opts: FromKubeConfigOptions = {}): RestClient {
  try {
    return RestClient.fromKubeConfig(kc, opts);
  } catch (err) {
    if (err instanceof InvalidKubeConfigError)
      throw new ConfigError(`unusable kubeconfig: ${err.message}`, { cause: err });
    throw err;
  }
}
