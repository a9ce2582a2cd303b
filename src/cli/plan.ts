/**
 * `kubeprovisioner plan` (also `kubectl kp plan`): what the operator would do for each object,
 * without doing it. For manifests not yet applied (`-f`) or the live objects (`--live`), per
 * object: a create, the changes with their disruption, refused changes and why, or in sync
 * (../reconcilers/common/flow/preview.ts), and a summary. `-o json` prints the documented schema
 * of docs/plan.md. Exit status: 0 when nothing would change, 2 when something would, 1 on an
 * error (a bad command line, an unreachable API server, or an object whose plan failed).
 *
 * A plan makes AWS reads only, within the operator's rate budgets, and no Kubernetes write
 * (./session.ts).
 */
import { parseArgs } from "node:util";
import type { JsonValue } from "../api/schema/openapi.ts";
import { withDefaults } from "../api/schema/defaults.ts";
import { ConfigError } from "../config/config-error.ts";
import {
  parseChoice,
  parseNamespace,
  parseNamespaceList,
  parseRegion,
  parseTagList,
  parseTagPrefixList,
  ValueError,
} from "../config/values.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import type { KindModule, ObjectPlan } from "../reconcilers/common/kind.ts";
import { ADOPTION_POLICIES } from "../reconcilers/common/ownership.ts";
import { restListerWatcher } from "../runtime/cache/lister-watcher.ts";
import { apiVersionOf } from "../runtime/kube/object.ts";
import { ManifestError, readManifests, type Manifest } from "./manifests.ts";
import { renderPlan, summarize, type Plan, type PlannedObject } from "./plan-output.ts";
import { runCommand, type CommandIo, type CommandSpec } from "./command.ts";
import type { Session } from "./session.ts";
import { inPool } from "./pool.ts";

/** The UID shown for an object that does not exist yet (its ownership tags carry the real one). */
export const PENDING_UID = "(assigned-on-create)";

/** How many objects are planned at once. */
const CONCURRENCY = 8;

/** The help text of `plan`. */
export const PLAN_HELP = `Shows what kubeprovisioner would do for each object, without doing it.

Usage:
  kubeprovisioner plan -f FILE|DIR|- [-f ...] [-R] [options]
  kubeprovisioner plan --live [-n NAMESPACE | -A] [-l SELECTOR] [options]
  kubectl kp plan ...          (the same program as a kubectl plugin)

Objects:
  -f, --filename FILE|DIR|-   manifests to plan as if applied (as kubectl apply -f reads them)
  -R, --recursive             read the folders of -f recursively
      --live                  plan the objects in the cluster
  -n, --namespace NAME        the namespace (default: the kubeconfig context's, else default)
  -A, --all-namespaces        with --live: every namespace
  -l, --selector SELECTOR     with --live: a label selector, as kubectl takes it

Output:
  -o, --output text|json      text (default) or the JSON of docs/plan.md

As the operator is installed (give the install's values):
      --kubeconfig FILE       the kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)
      --aws-region REGION     the region of the AWS credential chain's STS calls
      --adoption enabled|disabled, --adoption-namespaces a,b
      --default-tags k=v,..., --ignore-tag-prefixes p,...
      --require-account

Exit status: 0 nothing would change, 2 something would, 1 an error.
`;

/** Where the command writes. */
export type PlanIo = CommandIo;

/** The `plan` command (./command.ts). */
const PLAN: CommandSpec<PlanArgs> = {
  name: "plan",
  help: PLAN_HELP,
  parse: parsePlanArgs,
  verbose: (args) => args.verbose,
  session: (args) => ({
    kubeconfig: args.kubeconfig,
    awsRegion: args.awsRegion,
    adoption: { policy: args.adoption, namespaces: args.adoptionNamespaces },
    defaultTags: args.defaultTags,
    ignoreTagPrefixes: args.ignoreTagPrefixes,
    requireAccount: args.requireAccount,
  }),
  run: async (session, args, io, signal) => {
    const targets = args.live
      ? await liveTargets(session, args, signal)
      : await manifestTargets(session, args, io);
    const objects = await planAll(session, targets, signal);
    const plan: Plan = { schemaVersion: 1, objects, summary: summarize(objects) };
    io.stdout(args.output === "json" ? `${JSON.stringify(plan, null, 2)}\n` : renderPlan(plan));
    if (plan.summary.error > 0) return 1;
    return plan.summary.create + plan.summary.update + plan.summary.adopt > 0 ? 2 : 0;
  },
};

/** Runs `plan` with `argv` (the arguments after `plan`); resolves with the exit status. */
export function runPlan(argv: readonly string[], env: NodeJS.ProcessEnv, io: PlanIo): Promise<number> {
  return runCommand(PLAN, argv, env, io);
}

/** The parsed command line of `plan`. */
export interface PlanArgs {
  readonly help: boolean;
  readonly files: readonly string[];
  readonly recursive: boolean;
  readonly live: boolean;
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
  readonly selector: string | undefined;
  readonly output: "text" | "json";
  readonly kubeconfig: string | undefined;
  readonly awsRegion: string | undefined;
  readonly adoption: (typeof ADOPTION_POLICIES)[number];
  readonly adoptionNamespaces: readonly string[];
  readonly defaultTags: Readonly<Record<string, string>>;
  readonly ignoreTagPrefixes: readonly string[];
  readonly requireAccount: boolean;
  readonly verbose: boolean;
}

/** Parses the arguments of `plan`. @throws ConfigError, or node's parseArgs error */
export function parsePlanArgs(argv: readonly string[]): PlanArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: "boolean", short: "h" },
      filename: { type: "string", short: "f", multiple: true },
      recursive: { type: "boolean", short: "R" },
      live: { type: "boolean" },
      namespace: { type: "string", short: "n" },
      "all-namespaces": { type: "boolean", short: "A" },
      selector: { type: "string", short: "l" },
      output: { type: "string", short: "o" },
      kubeconfig: { type: "string" },
      "aws-region": { type: "string" },
      adoption: { type: "string" },
      "adoption-namespaces": { type: "string" },
      "default-tags": { type: "string" },
      "ignore-tag-prefixes": { type: "string" },
      "require-account": { type: "boolean" },
      verbose: { type: "boolean", short: "v" },
    },
  });
  if (positionals.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const files = values.filename ?? [];
  const live = values.live === true;
  const help = values.help === true;
  if (!help && live === files.length > 0) throw new ConfigError("give either -f FILE|DIR|- or --live");
  if (!live && (values["all-namespaces"] === true || values.selector !== undefined))
    throw new ConfigError("-A and -l go with --live");
  if (values["all-namespaces"] === true && values.namespace !== undefined)
    throw new ConfigError("-n and -A exclude each other");
  /** The value of `--flag`, parsed as the operator parses its flag of that name; `fallback` when absent. */
  const value = <T>(flag: keyof typeof values, parse: (text: string) => T, fallback: T): T => {
    const text = values[flag];
    if (typeof text !== "string") return fallback;
    try {
      return parse(text);
    } catch (err) {
      if (err instanceof ValueError)
        throw new ConfigError(
          `invalid value ${JSON.stringify(text)} for --${flag}: expected ${err.accepted}`,
          { cause: err },
        );
      throw err;
    }
  };
  return {
    help,
    files,
    recursive: values.recursive === true,
    live,
    namespace: value("namespace", parseNamespace, undefined),
    allNamespaces: values["all-namespaces"] === true,
    selector: values.selector,
    output: value("output", (t) => parseChoice(t, ["text", "json"] as const), "text"),
    kubeconfig: values.kubeconfig,
    awsRegion: value("aws-region", parseRegion, undefined),
    adoption: value("adoption", (t) => parseChoice(t, ADOPTION_POLICIES), "disabled"),
    adoptionNamespaces: value("adoption-namespaces", parseNamespaceList, []),
    defaultTags: value("default-tags", parseTagList, {}),
    ignoreTagPrefixes: value("ignore-tag-prefixes", parseTagPrefixList, []),
    requireAccount: values["require-account"] === true,
    verbose: values.verbose === true,
  };
}

/** One object to plan, with its kind and where it came from. */
interface Target {
  readonly kind: KindModule;
  readonly object: ManagedObject;
  readonly source?: string;
}

/** The live objects `args` selects, in kind order, then by namespace and name. */
async function liveTargets(session: Session, args: PlanArgs, signal: AbortSignal): Promise<Target[]> {
  const namespace = args.allNamespaces
    ? undefined
    : (args.namespace ?? session.kubeconfig.namespace ?? "default");
  const out: Target[] = [];
  for (const kind of session.kinds) {
    const lw = restListerWatcher<ManagedObject>(session.rest, kind.resource, namespace, args.selector);
    let cont: string | undefined;
    do {
      const page = await lw.list({ limit: 500, ...(cont !== undefined ? { continue: cont } : {}) }, signal);
      for (const item of page.items) {
        out.push({
          kind,
          object: { ...item, apiVersion: apiVersionOf(kind.resource), kind: kind.resource.kind },
        });
      }
      cont = page.metadata?.continue || undefined;
    } while (cont !== undefined);
  }
  return out;
}

/**
 * The objects of the manifests `args` names, each as the API server would hold it once applied:
 * the CRD's defaults applied, and, for one that exists, its live metadata and status.
 */
async function manifestTargets(session: Session, args: PlanArgs, io: PlanIo): Promise<Target[]> {
  const manifests = await readManifests(args.files, { recursive: args.recursive, stdin: io.stdin });
  const fallback = args.namespace ?? session.kubeconfig.namespace ?? "default";
  const out: Target[] = [];
  let others = 0;
  for (const m of manifests) {
    const kind = kindOf(session.kinds, m);
    if (kind === undefined) {
      others += 1;
      continue;
    }
    out.push({
      kind,
      object: asApplied(session, kind, m, fallback, args.namespace),
      source: m.source,
    });
  }
  if (others > 0) io.stderr(`kubeprovisioner plan: ${others} object(s) of other kinds not planned\n`);
  return out;
}

/** The kind of the registry a manifest is of, or undefined. */
function kindOf(kinds: readonly KindModule[], m: Manifest): KindModule | undefined {
  return kinds.find(
    (k) => apiVersionOf(k.resource) === m.object.apiVersion && k.resource.kind === m.object.kind,
  );
}

/** The object the manifest `m` of `kind` becomes when applied; see {@link manifestTargets}. */
function asApplied(
  session: Session,
  kind: KindModule,
  m: Manifest,
  fallback: string,
  asked: string | undefined,
): ManagedObject {
  const meta = (m.object.metadata ?? {}) as Record<string, JsonValue>;
  const name = meta.name;
  if (typeof name !== "string" || name === "")
    throw new ManifestError(`${m.source}: metadata.name is required`);
  const given = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined;
  if (given !== undefined && asked !== undefined && given !== asked) {
    throw new ManifestError(
      `${m.source}: the namespace from the provided object "${given}" does not match the namespace "${asked}"`,
    );
  }
  const namespace = given ?? fallback;
  const schema = kind.crd().spec.versions[0]?.schema.openAPIV3Schema;
  const defaulted = (schema === undefined
    ? m.object
    : withDefaults(schema, m.object)) as unknown as ManagedObject;
  // The session's cache holds every object of the kind, synced when it opened.
  const live = session.client.resource<ManagedObject>(kind.resource).get({ namespace, name });
  const labels = meta.labels as Record<string, string> | undefined;
  const annotations = meta.annotations as Record<string, string> | undefined;
  if (live !== undefined) {
    return {
      ...live,
      apiVersion: apiVersionOf(kind.resource),
      kind: kind.resource.kind,
      metadata: {
        ...live.metadata,
        ...(labels !== undefined ? { labels } : {}),
        annotations: { ...live.metadata.annotations, ...annotations },
      },
      spec: defaulted.spec,
    };
  }
  return {
    ...defaulted,
    metadata: { ...defaulted.metadata, name, namespace, uid: PENDING_UID, generation: 1 },
  } as ManagedObject;
}

/**
 * The plans of `targets`, in order, {@link CONCURRENCY} at a time, kind after kind: an EC2
 * instance's lookup joins those of the instances planned beside it in one DescribeInstances.
 */
async function planAll(
  session: Session,
  targets: readonly Target[],
  signal: AbortSignal,
): Promise<PlannedObject[]> {
  const planners = new Map(session.kinds.map((k) => [k.name, k.planner(session.deps)]));
  const out: PlannedObject[] = new Array(targets.length);
  await inPool(targets.length, CONCURRENCY, async (i) => {
    const t = targets[i] as Target;
    const planner = planners.get(t.kind.name);
    const plan: ObjectPlan =
      planner === undefined
        ? { action: "error", changes: [], message: "no planner" }
        : await planner(t.object, signal);
    out[i] = {
      kind: t.kind.resource.kind,
      namespace: t.object.metadata.namespace ?? "",
      name: t.object.metadata.name ?? "",
      ...(t.source !== undefined ? { source: t.source } : {}),
      ...plan,
    };
  });
  return out;
}
