/**
 * `kubeprovisioner export` (also `kubectl kp export`): an account's buckets, queues and instances
 * as manifests, to bring an existing estate under the operator without writing its YAML by hand.
 * Each kind lists and reads its resources through its own read paths
 * (../reconcilers/common/export.ts); this command picks the regions, kinds and filters, lists
 * everything first (so that references between exported resources are written as references),
 * skips what another object owns, names the objects (./export-names.ts) and writes one manifest
 * per resource: the full spec, `managementPolicy: ObserveOnly`, `deletionPolicy: Retain`,
 * `adoptExisting: true`, and the label `compute.cloud.com/export` naming the export. Output is
 * deterministic: the same estate gives byte-identical files. A failure on one resource does not
 * stop the others; they are reported at the end and the exit status is 1.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { JsonValue } from "../api/schema/openapi.ts";
import { AwsAccountResource, type AwsAccount } from "../api/v1/aws-account.ts";
import { ConfigError } from "../config/config-error.ts";
import {
  parseChoice,
  parseNamespace,
  parseObjectName,
  parseRegion,
  parseTagList,
  ValueError,
} from "../config/values.ts";
import { toYaml } from "../gen/yaml.ts";
import type { AwsClientSource } from "../aws/clients.ts";
import type { ExportedRef, ExportedResource, ListedResource } from "../reconcilers/common/export.ts";
import type { KindModule } from "../reconcilers/common/kind.ts";
import { taggedOwner } from "../reconcilers/common/ownership.ts";
import { apiVersionOf } from "../runtime/kube/object.ts";
import { objectNames } from "./export-names.ts";
import { runCommand, type CommandIo, type CommandSpec } from "./command.ts";
import type { Session } from "./session.ts";
import { inPool } from "./pool.ts";

/** The label every exported object carries: the export's name, to select the set later. */
export const EXPORT_LABEL = "compute.cloud.com/export";

/** How many resources are read at once. */
const CONCURRENCY = 8;

/** The help text of `export`. */
export const EXPORT_HELP = `Writes manifests for the buckets, queues and instances an AWS account already has.

Usage:
  kubeprovisioner export --region REGION [--region ...] [filters] [-o DIR|-] [options]
  kubectl kp export ...         (the same program as a kubectl plugin)

What:
      --region REGION          a region to export (repeatable; required)
      --kind KIND              S3Bucket, SqsQueue or Ec2Instance (repeatable; default: all)
      --tag KEY=VALUE          only resources carrying this tag (repeatable: all of them)
      --prefix PREFIX          only resources whose AWS name starts with PREFIX
      --account NAME           read with the role of this AwsAccount (default: the operator's credentials)

Output:
  -o, --output DIR|-           a folder, one file per resource (<kind>/<name>.yaml), or - for one stream (default -)
  -n, --namespace NAME         the namespace of the objects (default: the kubeconfig context's, else default)
      --name NAME              the export's name, the value of the label ${EXPORT_LABEL} (default: export)

      --kubeconfig FILE        the kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)
      --aws-region REGION      the region of the AWS credential chain's STS calls

Exit status: 0 when every resource was written, 1 when one failed or on an error.
`;

/** Where the command writes. */
export type ExportIo = CommandIo;

/** The parsed command line of `export`. */
export interface ExportArgs {
  readonly help: boolean;
  readonly regions: readonly string[];
  readonly kinds: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  readonly prefix: string | undefined;
  readonly account: string | undefined;
  readonly output: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly kubeconfig: string | undefined;
  readonly awsRegion: string | undefined;
}

const KIND_NAMES = ["S3Bucket", "SqsQueue", "Ec2Instance"] as const;

/** Parses the arguments of `export`. @throws ConfigError, or node's parseArgs error */
export function parseExportArgs(argv: readonly string[]): ExportArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: "boolean", short: "h" },
      region: { type: "string", multiple: true },
      kind: { type: "string", multiple: true },
      tag: { type: "string", multiple: true },
      prefix: { type: "string" },
      account: { type: "string" },
      output: { type: "string", short: "o" },
      namespace: { type: "string", short: "n" },
      name: { type: "string" },
      kubeconfig: { type: "string" },
      "aws-region": { type: "string" },
    },
  });
  if (positionals.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const parse = <T>(flag: string, text: string, p: (t: string) => T): T => {
    try {
      return p(text);
    } catch (err) {
      if (err instanceof ValueError)
        throw new ConfigError(
          `invalid value ${JSON.stringify(text)} for --${flag}: expected ${err.accepted}`,
          {
            cause: err,
          },
        );
      throw err;
    }
  };
  const help = values.help === true;
  const regions = (values.region ?? []).map((r) => parse("region", r, parseRegion));
  if (!help && regions.length === 0) throw new ConfigError("give at least one --region");
  const tags: Record<string, string> = {};
  for (const t of values.tag ?? []) Object.assign(tags, parse("tag", t, parseTagList));
  return {
    help,
    regions: [...new Set(regions)].sort(),
    kinds: (values.kind ?? []).map((k) => parse("kind", k, (t) => parseChoice(t, KIND_NAMES))),
    tags,
    prefix: values.prefix,
    account: values.account === undefined ? undefined : parse("account", values.account, parseObjectName),
    output: values.output ?? "-",
    namespace:
      values.namespace === undefined ? undefined : parse("namespace", values.namespace, parseNamespace),
    name: values.name === undefined ? "export" : parse("name", values.name, parseObjectName),
    kubeconfig: values.kubeconfig,
    awsRegion:
      values["aws-region"] === undefined ? undefined : parse("aws-region", values["aws-region"], parseRegion),
  };
}

/** One resource listed for export, with its kind. */
interface Found {
  readonly kind: KindModule;
  readonly listed: ListedResource;
}

/** What became of one resource. */
type Outcome =
  | {
      readonly kind: string;
      readonly awsName: string;
      readonly written: ExportedResource;
      readonly name: string;
    }
  | { readonly kind: string; readonly awsName: string; readonly skipped: string }
  | { readonly kind: string; readonly awsName: string; readonly failed: string };

/** The `export` command (./command.ts). */
const EXPORT: CommandSpec<ExportArgs> = {
  name: "export",
  help: EXPORT_HELP,
  parse: parseExportArgs,
  session: (args) => ({
    kubeconfig: args.kubeconfig,
    awsRegion: args.awsRegion,
    adoption: { policy: "disabled", namespaces: [] },
  }),
  run: async (session, args, io, signal) => {
    const result = await exportEstate(session, args, io, signal);
    for (const o of result.outcomes) {
      if ("written" in o)
        for (const left of o.written.omitted) io.stderr(`left out of ${o.kind} ${o.awsName}: ${left}\n`);
      if ("skipped" in o) io.stderr(`skipped ${o.kind} ${o.awsName}: ${o.skipped}\n`);
      if ("failed" in o) io.stderr(`failed ${o.kind} ${o.awsName}: ${o.failed}\n`);
    }
    const count = (what: "written" | "skipped" | "failed"): number =>
      result.outcomes.filter((o) => what in o).length;
    io.stderr(
      `export ${args.name}: ${count("written")} written, ${count("skipped")} skipped, ${count("failed")} failed\n`,
    );
    return count("failed") > 0 ? 1 : 0;
  },
};

/** Runs `export` with `argv` (the arguments after `export`); resolves with the exit status. */
export function runExport(argv: readonly string[], env: NodeJS.ProcessEnv, io: ExportIo): Promise<number> {
  return runCommand(EXPORT, argv, env, io);
}

/** Lists, reads and writes the estate `args` selects; returns what became of each resource. */
export async function exportEstate(
  session: Session,
  args: ExportArgs,
  io: Pick<ExportIo, "stdout" | "stderr">,
  signal: AbortSignal,
): Promise<{ outcomes: Outcome[] }> {
  const aws = clientsOf(session, args.account);
  const kinds = session.kinds.filter(
    (k) => k.exporter !== undefined && (args.kinds.length === 0 || args.kinds.includes(k.resource.kind)),
  );
  const exporters = new Map(kinds.map((k) => [k.name, k.exporter?.(session.deps, aws)]));
  // Everything is listed first: a reference to a resource the export holds is then written as one.
  const found: Found[] = [];
  for (const kind of kinds) {
    const exporter = exporters.get(kind.name);
    if (exporter === undefined) continue;
    for (const region of args.regions) {
      for await (const listed of exporter.list(region, signal)) {
        if (args.prefix === undefined || listed.awsName.startsWith(args.prefix)) found.push({ kind, listed });
      }
    }
  }
  found.sort(
    (a, b) => compare(a.kind.resource.kind, b.kind.resource.kind) || compare(a.listed.id, b.listed.id),
  );
  const names = new Map<string, Map<string, string>>();
  for (const kind of kinds) {
    names.set(kind.resource.kind, objectNames(found.filter((f) => f.kind === kind).map((f) => f.listed)));
  }
  const byArn = new Map<string, ExportedRef>();
  for (const f of found) {
    const kind = f.kind.resource.kind;
    if (kind !== "S3Bucket" && kind !== "SqsQueue") continue;
    const name = names.get(kind)?.get(f.listed.id);
    if (name !== undefined) byArn.set(f.listed.arn, { kind, name });
  }
  const outcomes: Outcome[] = new Array(found.length);
  // The ARNs each resource's spec names by reference: a reference to a resource that is then
  // skipped (another object's, gone, failed) would name an object the export never writes.
  const referenced: Set<string>[] = found.map(() => new Set());
  const progress = progressLine(io, found.length);
  let done = 0;
  await inPool(found.length, CONCURRENCY, async (i) => {
    const f = found[i] as Found;
    const refOf = (arn: string): ExportedRef | undefined => {
      const ref = byArn.get(arn);
      if (ref !== undefined) referenced[i]?.add(arn);
      return ref;
    };
    outcomes[i] = await exportOne(f, exporters.get(f.kind.name), names, refOf, args, signal);
    progress(++done);
  });
  // Read again, naming by ARN what is not written, each resource that referenced such a one.
  const writtenArns = new Set(
    found.filter((_, i) => "written" in (outcomes[i] as Outcome)).map((f) => f.listed.arn),
  );
  const rewrite = found.flatMap((_, i) =>
    "written" in (outcomes[i] as Outcome) && [...(referenced[i] ?? [])].some((arn) => !writtenArns.has(arn))
      ? [i]
      : [],
  );
  const refOfWritten = (arn: string): ExportedRef | undefined =>
    writtenArns.has(arn) ? byArn.get(arn) : undefined;
  await inPool(rewrite.length, CONCURRENCY, async (j) => {
    const i = rewrite[j] as number;
    const f = found[i] as Found;
    outcomes[i] = await exportOne(f, exporters.get(f.kind.name), names, refOfWritten, args, signal);
  });
  await write(outcomes, args, session, io);
  return { outcomes };
}

/** The clients the export reads with: the AwsAccount's role, or the operator's own credentials. */
function clientsOf(session: Session, account: string | undefined): AwsClientSource {
  if (account === undefined) return session.deps.aws;
  const found = session.client.resource<AwsAccount>(AwsAccountResource).get({ name: account });
  if (found === undefined) throw new ConfigError(`there is no AwsAccount ${account}`);
  return session.accounts.clientsOf(found);
}

/** Reads one resource and judges whether it may be exported. */
async function exportOne(
  f: Found,
  exporter: ReturnType<NonNullable<KindModule["exporter"]>> | undefined,
  names: ReadonlyMap<string, ReadonlyMap<string, string>>,
  refOf: (arn: string) => ExportedRef | undefined,
  args: ExportArgs,
  signal: AbortSignal,
): Promise<Outcome> {
  const kind = f.kind.resource.kind;
  const awsName = f.listed.awsName;
  if (exporter === undefined) return { kind, awsName, failed: "the kind has no exporter" };
  let read: ExportedResource | undefined;
  try {
    read = await exporter.read(f.listed, { signal, refOf });
  } catch (err) {
    return { kind, awsName, failed: (err as Error).message };
  }
  if (read === undefined) return { kind, awsName, skipped: "it was deleted while the export ran" };
  for (const [k, v] of Object.entries(args.tags)) {
    if (read.tags[k] !== v) return { kind, awsName, skipped: `it does not carry the tag ${k}=${v}` };
  }
  const owner = taggedOwner(read.tags);
  if (owner !== undefined) {
    const who =
      owner.kind !== undefined && owner.namespace !== undefined && owner.name !== undefined
        ? `${owner.kind} ${owner.namespace}/${owner.name}`
        : "an object";
    return {
      kind,
      awsName,
      skipped: `its ownership tags name ${who} (uid ${owner.uid}), of this cluster or another: it is that object's`,
    };
  }
  return { kind, awsName, written: read, name: names.get(kind)?.get(f.listed.id) ?? awsName };
}

/** Writes the manifests of the written outcomes, in order: a folder or one stream. */
async function write(
  outcomes: readonly Outcome[],
  args: ExportArgs,
  session: Session,
  io: Pick<ExportIo, "stdout">,
): Promise<void> {
  const namespace = args.namespace ?? session.kubeconfig.namespace ?? "default";
  const docs: { kind: KindModule; name: string; text: string }[] = [];
  for (const o of outcomes) {
    if (!("written" in o)) continue;
    const kind = session.kinds.find((k) => k.resource.kind === o.kind);
    if (kind === undefined) continue;
    docs.push({ kind, name: o.name, text: manifestText(kind, o.name, namespace, args.name, o.written) });
  }
  if (args.output === "-") {
    io.stdout(docs.map((d) => d.text).join("---\n"));
    return;
  }
  for (const d of docs) {
    const dir = join(args.output, d.kind.resource.plural);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${d.name}.yaml`), d.text);
  }
}

/** One manifest: comments for what stays an ARN and what was left out, then the object. */
export function manifestText(
  kind: Pick<KindModule, "resource">,
  name: string,
  namespace: string,
  exportName: string,
  r: ExportedResource,
): string {
  const comments = [
    ...r.unresolved.map((u) => `# ${u.path} stays the ARN ${u.arn}: this export does not hold it`),
    ...r.omitted.map((o) => `# left out (the API cannot express it): ${o}`),
  ];
  const object = {
    apiVersion: apiVersionOf(kind.resource),
    kind: kind.resource.kind,
    metadata: { name, namespace, labels: { [EXPORT_LABEL]: exportName } },
    spec: sortedKeys({
      ...r.spec,
      managementPolicy: "ObserveOnly",
      deletionPolicy: "Retain",
      adoptExisting: true,
    }) as JsonValue,
  };
  return `${comments.map((c) => `${c}\n`).join("")}${toYaml(object)}`;
}

/** `v` with the keys of every object sorted. */
function sortedKeys(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, JsonValue> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortedKeys(v[k] as JsonValue);
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reports progress on a terminal (standard error), every 50 resources and at the end. */
function progressLine(io: Pick<ExportIo, "stderr">, total: number): (done: number) => void {
  if (process.stderr.isTTY !== true) return () => undefined;
  return (done) => {
    if (done % 50 === 0 || done === total) io.stderr(`\rread ${done}/${total}${done === total ? "\n" : ""}`);
  };
}
