/**
 * The command-line flags of `kubeprovisioner`: one table that drives parsing, the environment
 * variable names and the help text, so the three never drift apart.
 */
import { BUDGET_NAMES, DEFAULT_RATE_BUDGETS } from "../aws/budget-plan.ts";
import { KINDS } from "../kinds.ts";

/** The names `--controllers` takes: the kinds' controller names, in registry order. */
export const KIND_NAMES: readonly string[] = Object.freeze(KINDS.map((k) => k.name));

/** The default budgets that are not EC2's documented buckets, as `name=rate/burst`. */
const OTHER_DEFAULT_BUDGETS = BUDGET_NAMES.filter((n) => !n.startsWith("ec2."))
  .map((n) => `${n}=${DEFAULT_RATE_BUDGETS[n].ratePerSecond}/${DEFAULT_RATE_BUDGETS[n].burst}`)
  .join(", ");

/** Whether a flag takes a value or is a switch. */
export type FlagKind = "boolean" | "string";

/** One flag. Its environment variable is {@link envNameOf}`(name)` plus any `extraEnv`. */
export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  /** Default as shown in help; `undefined` when there is none. */
  readonly defaultText: string | undefined;
  readonly help: string;
  /** Further variables read when the flag and its own variable are unset, in order. */
  readonly extraEnv?: readonly string[];
}

/** The prefix of every environment equivalent. */
export const ENV_PREFIX = "KUBEPROVISIONER_";

/** `--leader-election-id` -> `KUBEPROVISIONER_LEADER_ELECTION_ID`. */
export function envNameOf(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replaceAll("-", "_");
}

/**
 * Every flag the CLI accepts, besides `--help` and `--version`. Names match the kubebuilder
 * scaffold where they overlap so existing manifests keep working.
 */
export const FLAGS: readonly FlagSpec[] = [
  { name: "leader-elect", kind: "boolean", defaultText: "false", help: "Elect one active replica through a coordination.k8s.io Lease." },
  { name: "leader-election-id", kind: "string", defaultText: "c56fc483.cloud.com", help: "Name of the Lease used for leader election." },
  {
    name: "leader-election-namespace",
    kind: "string",
    defaultText: "the pod's namespace",
    help: "Namespace of the Lease; required with --leader-elect outside a cluster.",
  },
  { name: "leader-election-lease-duration", kind: "string", defaultText: "15s", help: "How long followers wait after the last renewal they saw before taking over." },
  { name: "leader-election-renew-deadline", kind: "string", defaultText: "10s", help: "How long the leader keeps retrying a renewal before it gives up and exits." },
  { name: "leader-election-retry-period", kind: "string", defaultText: "2s", help: "Interval between acquire and renew attempts." },
  {
    name: "metrics-bind-address",
    kind: "string",
    defaultText: ":8443 (secure) or :8080",
    help: 'Address of the /metrics endpoint; "0" disables it.',
  },
  { name: "metrics-secure", kind: "boolean", defaultText: "true", help: "Serve /metrics over HTTPS with TokenReview authentication and SubjectAccessReview authorization." },
  {
    name: "metrics-cert-dir",
    kind: "string",
    defaultText: "a generated self-signed certificate",
    help: "Folder holding tls.crt and tls.key for the metrics server; reloaded when the files change.",
  },
  { name: "health-probe-bind-address", kind: "string", defaultText: ":8081", help: 'Address of /healthz and /readyz; "0" disables them.' },
  { name: "log-level", kind: "string", defaultText: "info", help: "trace, debug, info, warn, error, fatal or silent." },
  { name: "log-format", kind: "string", defaultText: "json", help: "json (one object per line) or text (human-readable, for development)." },
  { name: "watch-namespace", kind: "string", defaultText: "all namespaces", help: "Comma-separated namespaces to watch." },
  {
    name: "controllers",
    kind: "string",
    defaultText: "*",
    help:
      "The managed kinds to run, as kube-controller-manager spells its --controllers: comma-separated kind names " +
      `(${KIND_NAMES.join(", ")}), * for every kind, -<name> to leave one out (*,-ec2instance). A kind left out gets no ` +
      "informer, no controller and no API or AWS call; its objects are left alone. The AwsAccount controller always runs.",
  },
  {
    name: "output-secret-namespaces",
    kind: "string",
    defaultText: "none",
    help:
      "Comma-separated namespaces whose objects may write spec.writeOutputsTo.secretName (the operator " +
      "lists, watches and writes Secrets there only, under a Role in each); elsewhere it reports OutputNotAllowed.",
  },
  {
    name: "adoption",
    kind: "string",
    defaultText: "disabled",
    help:
      "Whether objects acting with the operator's own AWS identity may adopt (spec.adoptExisting) existing resources " +
      "they did not leave themselves: ones never created by the operator, or left by an object of another namespace. " +
      "enabled: in every namespace; disabled: only in --adoption-namespaces. An adopted resource is deleted with its " +
      "object. Objects using an AwsAccount follow its spec.adoption instead (docs/accounts.md, Adoption).",
  },
  {
    name: "adoption-namespaces",
    kind: "string",
    defaultText: "none",
    help: "Comma-separated namespaces whose objects acting with the operator's own AWS identity may adopt while --adoption=disabled.",
  },
  {
    name: "default-tags",
    kind: "string",
    defaultText: "none",
    help:
      "Tags every AWS resource carries, as comma-separated key=value pairs (a value may contain '=', not ','), " +
      "merged under each object's spec.tags (a key the object sets wins) and drift-repaired like them.",
  },
  {
    name: "ignore-tag-prefixes",
    kind: "string",
    defaultText: "aws: only",
    help:
      "Comma-separated tag key prefixes (case-insensitive) whose tags belong to other tools (AWS Backup, " +
      "cost allocation, other controllers): never removed or overwritten, besides aws: which always is.",
  },
  {
    name: "require-account",
    kind: "boolean",
    defaultText: "false",
    help: "Refuse objects that name no AwsAccount (spec.accountRef or their namespace's compute.cloud.com/account annotation) instead of acting with the operator's own AWS credentials.",
  },
  { name: "max-concurrent-reconciles", kind: "string", defaultText: "16", help: "Reconciles running at once per controller (1-1000)." },
  { name: "sync-period", kind: "string", defaultText: "10h", help: "Interval at which cached objects are re-delivered to the controllers." },
  { name: "poll-interval", kind: "string", defaultText: "5m", help: "Steady-state requeue of a converged object, to notice drift in AWS." },
  {
    name: "change-events",
    kind: "string",
    defaultText: "none",
    help:
      "The SQS queue, as a URL or ARN, that EventBridge rules feed with AWS change events of the operator's own account " +
      "(docs/aws.md, Change events): an event enqueues the object of the resource it names at once. AwsAccounts name theirs in spec.changeEvents.",
  },
  {
    name: "poll-interval-with-events",
    kind: "string",
    defaultText: "1h",
    help: "Steady-state requeue of a converged object while the change-event queue of its account is read; --poll-interval applies whenever it cannot be.",
  },
  {
    name: "bulk-tag-reads",
    kind: "boolean",
    defaultText: "false",
    help:
      "Steady polls of S3 buckets and SQS queues take the tags from one Resource Groups Tagging API read per account, " +
      "region and poll period (GetResources, 100 resources a call) instead of one read per resource; needs tag:GetResources (docs/aws.md, Bulk tag reads).",
  },
  {
    name: "bulk-tag-window",
    kind: "string",
    defaultText: "2h",
    help:
      "With --bulk-tag-reads: how long after the operator's own tag write a resource's tags are read directly, and how often at least " +
      "each resource's tags are read directly; keep it well above the lag of AWS's tag index.",
  },
  {
    name: "poll-budget-share",
    kind: "string",
    defaultText: "50%",
    help:
      "The most of each AWS rate budget that polls of converged objects may take (1%-100%); real work (creates, spec changes, deletions, change events) " +
      "may use the whole budget and goes first. When the polls need more, the poll interval stretches (kubeprovisioner_poll_interval_effective_seconds).",
  },
  {
    name: "pending-poll-initial",
    kind: "string",
    defaultText: "2s",
    help: "First poll interval of a resource in transition (EC2 pending, stopping, shutting-down); doubles per poll.",
  },
  { name: "pending-poll-max", kind: "string", defaultText: "30s", help: "Largest poll interval of a resource in transition." },
  { name: "graceful-shutdown-timeout", kind: "string", defaultText: "30s", help: "How long in-flight reconciles may run after SIGTERM before the process exits." },
  {
    name: "kubeconfig",
    kind: "string",
    defaultText: "the in-cluster ServiceAccount, then ~/.kube/config",
    help: "Path of a kubeconfig file (a list, as in KUBECONFIG, is merged as kubectl merges it); used before the in-cluster ServiceAccount.",
    extraEnv: ["KUBECONFIG"],
  },
  {
    name: "aws-region",
    kind: "string",
    defaultText: "$AWS_REGION, then $AWS_DEFAULT_REGION",
    help: "Region of the AWS SDK's credential chain (STS for IRSA and web identity tokens); every resource names its own region in spec.region.",
    extraEnv: ["AWS_REGION", "AWS_DEFAULT_REGION"],
  },
  {
    name: "aws-rate-budgets",
    kind: "string",
    defaultText: `EC2's documented request buckets per action class, ${OTHER_DEFAULT_BUDGETS}`,
    help:
      "Client-side AWS rate budgets that differ from the defaults, as name=rate/burst pairs (rate per second, bucket size), or off. " +
      `Names: ${BUDGET_NAMES.join(", ")}.`,
  },
  { name: "aws-request-timeout", kind: "string", defaultText: "10s", help: "Deadline of one AWS HTTP attempt, from sending to the full response." },
  { name: "aws-connect-timeout", kind: "string", defaultText: "3s", help: "Deadline of one AWS connection (TCP and TLS)." },
  { name: "aws-max-attempts", kind: "string", defaultText: "3", help: "SDK attempts per AWS call, the first included (1-10); the work queue does the long retries." },
  {
    name: "aws-s3-addressing-style",
    kind: "string",
    defaultText: "auto",
    help:
      "How S3 requests name the bucket, as the AWS CLI's s3 addressing_style: auto (path-style, https://host/bucket, exactly " +
      "when AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL is set, since emulators serve no bucket host names; else virtual-hosted, " +
      "https://bucket.host/), path (also for an S3 endpoint set in the shared config file), or virtual (for an S3 interface " +
      "VPC endpoint, which serves bucket host names).",
  },
];

/** The help text printed by `--help`. */
export function helpText(program: string): string {
  const lines = [
    `Usage: ${program} [flags]`,
    `       ${program} plan ...    (what the operator would do, without doing it: ${program} plan --help)`,
    `       ${program} export ...  (an account's resources as manifests: ${program} export --help)`,
    `       ${program} adopt ...   (observe-only objects to full management: ${program} adopt --help)`,
    "",
    "Kubernetes operator for AWS EC2 instances, S3 buckets and SQS queues (compute.cloud.com/v1).",
    "Every flag may also be set through the environment variable shown; a flag wins over its variable.",
    "Durations are written as in Go: 300ms, 30s, 5m, 1h30m.",
    "",
    "Flags:",
  ];
  for (const f of FLAGS) {
    const head = f.kind === "boolean" ? `  --${f.name}[=true|false]` : `  --${f.name} <value>`;
    lines.push(head);
    lines.push(`      ${f.help}`);
    const env = [envNameOf(f.name), ...(f.extraEnv ?? [])].map((e) => `$${e}`).join(", ");
    lines.push(`      default: ${f.defaultText ?? "none"}; env: ${env}`);
  }
  lines.push("  -h, --help", "      Print this help and exit.", "  --version", "      Print the version and exit.");
  return lines.join("\n") + "\n";
}
