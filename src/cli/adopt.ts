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
import { ConfigError } from "../config/config-error.ts";
import { parseNamespace } from "../config/values.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import { restListerWatcher } from "../runtime/cache/lister-watcher.ts";
import { runCommand, type CommandIo, type CommandSpec } from "./command.ts";

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

/** The parsed command line of `adopt`. */
export interface AdoptArgs {
  readonly help: boolean;
  readonly selector: string;
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
  readonly dryRun: boolean;
  readonly kubeconfig: string | undefined;
}

/** Parses the arguments of `adopt`. @throws ConfigError, ValueError, or node's parseArgs error */
export function parseAdoptArgs(argv: readonly string[]): AdoptArgs {
  const { values } = parseArgs({
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
  });
  const help = values.help === true;
  if (!help && (values.selector === undefined || values.selector === ""))
    throw new ConfigError("give -l SELECTOR");
  if (values["all-namespaces"] === true && values.namespace !== undefined)
    throw new ConfigError("-n and -A exclude each other");
  return {
    help,
    selector: values.selector ?? "",
    namespace: values.namespace === undefined ? undefined : parseNamespace(values.namespace),
    allNamespaces: values["all-namespaces"] === true,
    dryRun: values["dry-run"] === true,
    kubeconfig: values.kubeconfig,
  };
}

/** The `adopt` command (./command.ts). */
const ADOPT: CommandSpec<AdoptArgs> = {
  name: "adopt",
  help: ADOPT_HELP,
  parse: parseAdoptArgs,
  session: (args) => ({ kubeconfig: args.kubeconfig, adoption: { policy: "disabled", namespaces: [] } }),
  run: async (session, args, io, signal) => {
    const namespace = args.allNamespaces
      ? undefined
      : (args.namespace ?? session.kubeconfig.namespace ?? "default");
    let switched = 0;
    for (const kind of session.kinds) {
      const lw = restListerWatcher<ManagedObject>(session.rest, kind.resource, namespace, args.selector);
      const objects = session.client.resource<ManagedObject>(kind.resource);
      let cont: string | undefined;
      do {
        const page = await lw.list({ limit: 500, ...(cont !== undefined ? { continue: cont } : {}) }, signal);
        for (const obj of page.items) {
          const where = `${kind.resource.kind} ${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
          if (obj.spec.managementPolicy !== "ObserveOnly") {
            io.stdout(`${where}: already Full\n`);
            continue;
          }
          if (!args.dryRun) {
            await objects.patch(
              obj,
              {
                type: "merge",
                patch: {
                  metadata: { resourceVersion: obj.metadata.resourceVersion },
                  spec: { managementPolicy: "Full", adoptExisting: true },
                },
              },
              { signal },
            );
          }
          switched += 1;
          io.stdout(`${where}: ${args.dryRun ? "would be switched" : "switched"} to Full\n`);
        }
        cont = page.metadata?.continue || undefined;
      } while (cont !== undefined);
    }
    io.stderr(`adopt: ${switched} object(s) ${args.dryRun ? "would be " : ""}switched to Full\n`);
    return 0;
  },
};

/** Runs `adopt` with `argv` (the arguments after `adopt`); resolves with the exit status. */
export function runAdopt(argv: readonly string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  return runCommand(ADOPT, argv, env, io);
}
