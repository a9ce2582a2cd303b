/**
 * `kubeprovisioner adopt` (also `kubectl kp adopt`): the step from an exported set to full
 * management. Every object the label selector picks that only observes its resource
 * (`managementPolicy: ObserveOnly`) is switched to `Full` with `adoptExisting: true`, one merge
 * patch each, carrying the resourceVersion it was read at. The operator then takes each resource
 * over under the ownership rules and the adoption rights the cluster admin granted: it writes the
 * ownership tags, and nothing else when the spec is what the export wrote (`kubeprovisioner plan
 * --live -l <selector>` shows that first). This command writes to Kubernetes, never to AWS.
 */
import { parseArgs } from "node:util";
import pino from "pino";
import { ConfigError } from "../config/config-error.ts";
import { parseNamespace, ValueError } from "../config/values.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import { restListerWatcher } from "../runtime/cache/lister-watcher.ts";
import { createLogger } from "../runtime/logging.ts";
import { openSession, type Session } from "./session.ts";

/** The help text of `adopt`. */
export const ADOPT_HELP = `Switches the observe-only objects a label selector picks to full management.

Usage:
  kubeprovisioner adopt -l SELECTOR [-n NAMESPACE | -A] [--dry-run]
  kubectl kp adopt ...          (the same program as a kubectl plugin)

  -l, --selector SELECTOR      the objects, as kubectl takes a label selector (required),
                               e.g. compute.cloud.com/export=export
  -n, --namespace NAME         the namespace (default: the kubeconfig context's, else default)
  -A, --all-namespaces         every namespace
      --dry-run                say what would be switched, and switch nothing
      --kubeconfig FILE        the kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)

Each object with managementPolicy ObserveOnly gets managementPolicy Full and adoptExisting true;
the operator then writes the resource's ownership tags. Exit status: 0, or 1 on an error.
`;

/** Where the command writes. */
export interface AdoptIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** Runs `adopt` with `argv` (the arguments after `adopt`); resolves with the exit status. */
export async function runAdopt(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: AdoptIo,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        help: { type: "boolean", short: "h" },
        selector: { type: "string", short: "l" },
        namespace: { type: "string", short: "n" },
        "all-namespaces": { type: "boolean", short: "A" },
        "dry-run": { type: "boolean" },
        kubeconfig: { type: "string" },
      },
    }));
    if (values.help === true) {
      io.stdout(ADOPT_HELP);
      return 0;
    }
    if (values.selector === undefined || values.selector === "") throw new ConfigError("give -l SELECTOR");
    if (values["all-namespaces"] === true && values.namespace !== undefined)
      throw new ConfigError("-n and -A exclude each other");
    if (values.namespace !== undefined) parseNamespace(values.namespace);
  } catch (err) {
    if (
      err instanceof ConfigError ||
      err instanceof ValueError ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      io.stderr(`kubeprovisioner adopt: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
  const logger = createLogger({ level: "error", destination: pino.destination({ dest: 2, sync: true }) });
  const abort = new AbortController();
  let session: Session | undefined;
  try {
    session = await openSession(
      {
        kubeconfig: values.kubeconfig,
        env,
        logger,
        userAgent: "kubeprovisioner-adopt",
        adoption: { policy: "disabled", namespaces: [] },
      },
      abort.signal,
    );
    const namespace =
      values["all-namespaces"] === true
        ? undefined
        : (values.namespace ?? session.kubeconfig.namespace ?? "default");
    let switched = 0;
    for (const kind of session.kinds) {
      const lw = restListerWatcher<ManagedObject>(session.rest, kind.resource, namespace, values.selector);
      const objects = session.client.resource<ManagedObject>(kind.resource);
      let cont: string | undefined;
      do {
        const page = await lw.list(
          { limit: 500, ...(cont !== undefined ? { continue: cont } : {}) },
          abort.signal,
        );
        for (const obj of page.items) {
          const where = `${kind.resource.kind} ${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
          if (obj.spec.managementPolicy !== "ObserveOnly") {
            io.stdout(`${where}: already Full\n`);
            continue;
          }
          if (values["dry-run"] !== true) {
            await objects.patch(
              obj,
              {
                type: "merge",
                patch: {
                  metadata: { resourceVersion: obj.metadata.resourceVersion },
                  spec: { managementPolicy: "Full", adoptExisting: true },
                },
              },
              { signal: abort.signal },
            );
          }
          switched += 1;
          io.stdout(`${where}: ${values["dry-run"] === true ? "would be switched" : "switched"} to Full\n`);
        }
        cont = page.metadata?.continue || undefined;
      } while (cont !== undefined);
    }
    io.stderr(
      `adopt: ${switched} object(s) ${values["dry-run"] === true ? "would be " : ""}switched to Full\n`,
    );
    return 0;
  } catch (err) {
    io.stderr(`kubeprovisioner adopt: ${(err as Error).message}\n`);
    return 1;
  } finally {
    session?.close();
  }
}
