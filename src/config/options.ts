/**
 * Flags and environment, parsed once into a frozen, validated {@link Options} object. Nothing
 * else in the program reads `process.argv` or `KUBEPROVISIONER_*` variables.
 */
import { parseArgs } from "node:util";
import { ConfigError } from "./config-error.ts";
import { S3_ADDRESSING_STYLES, type S3AddressingStyle } from "../aws/clients.ts";
import { parseQueueAddress, QueueAddressError, type QueueAddress } from "../aws/queue-address.ts";
import {
  BUDGET_NAMES,
  DEFAULT_POLL_BUDGET_SHARE,
  parseBudgetSpec,
  type BudgetName,
  type BudgetSize,
} from "../aws/budget-plan.ts";
import {
  DEFAULT_BULK_TAG_WINDOW_MS,
  DEFAULT_PENDING_INITIAL_MS,
  DEFAULT_PENDING_MAX_MS,
  DEFAULT_POLL_INTERVAL_MS,
} from "../reconcilers/common/defaults.ts";
import { ADOPTION_POLICIES, type AdoptionPolicy } from "../reconcilers/common/ownership.ts";
import { envNameOf, FLAGS, KIND_NAMES, type FlagSpec } from "./flags.ts";
import { parseKindSelection } from "./kind-selection.ts";
import {
  parseBindAddress,
  parseBool,
  parseChoice,
  parseInteger,
  parseNamespace,
  parseNamespaceList,
  parseNonEmpty,
  parseObjectName,
  parsePercentage,
  parsePositiveDuration,
  parseRegion,
  parseTagList,
  parseTagPrefixList,
  ValueError,
  type BindAddress,
} from "./values.ts";

/** Log levels accepted by `--log-level` (pino's names). */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
/** A pino log level. */
export type LogLevelName = (typeof LOG_LEVELS)[number];
/** Log line formats accepted by `--log-format`. */
export const LOG_FORMATS = ["json", "text"] as const;
/** `json` lines for machines, `text` for people. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Leader-election timing, in milliseconds. */
export interface LeaderElectionTiming {
  /** @default 15000 */
  readonly leaseDurationMs: number;
  /** @default 10000 */
  readonly renewDeadlineMs: number;
  /** @default 2000 */
  readonly retryPeriodMs: number;
}

/** Everything the process was told, validated. Frozen: read it, never change it. */
export interface Options {
  /** @default false */
  readonly leaderElect: boolean;
  /** @default "c56fc483.cloud.com" */
  readonly leaderElectionId: string;
  /** `undefined`: the pod's own namespace, resolved at start. */
  readonly leaderElectionNamespace: string | undefined;
  readonly leaderElection: LeaderElectionTiming;
  /** `null` when disabled with "0". @default :8443 when secure, :8080 otherwise */
  readonly metricsBindAddress: BindAddress | null;
  /** @default true */
  readonly metricsSecure: boolean;
  /** `undefined`: a self-signed certificate is generated at start. */
  readonly metricsCertDir: string | undefined;
  /** `null` when disabled with "0". @default :8081 */
  readonly healthProbeBindAddress: BindAddress | null;
  /** @default "info" */
  readonly logLevel: LogLevelName;
  /** @default "json" */
  readonly logFormat: LogFormat;
  /** Empty: every namespace. Deduplicated. */
  readonly watchNamespaces: readonly string[];
  /**
   * The controller names of the kinds to run (`--controllers`), in registry order; never empty.
   * A kind not listed gets no informer, controller, API call or AWS call. @default every kind
   */
  readonly controllers: readonly string[];
  /** Namespaces where spec.writeOutputsTo.secretName may be written; empty: none. Deduplicated. */
  readonly outputSecretNamespaces: readonly string[];
  /**
   * Whether objects acting with the operator's own AWS identity may adopt resources they did not
   * leave themselves: `enabled` in every namespace, `disabled` only in {@link adoptionNamespaces}.
   * @default "disabled"
   */
  readonly adoption: AdoptionPolicy;
  /** Namespaces granted adoption while `adoption` is disabled (`--adoption-namespaces`). @default [] */
  readonly adoptionNamespaces: readonly string[];
  /** Tags every AWS resource carries, under each object's own (`--default-tags`). @default {} */
  readonly defaultTags: Readonly<Record<string, string>>;
  /** Tag key prefixes whose tags are never removed or overwritten, besides `aws:`. @default [] */
  readonly ignoreTagPrefixes: readonly string[];
  /** Refuse objects without an AwsAccount instead of using the operator's own credentials. @default false */
  readonly requireAccount: boolean;
  /**
   * Reconciles at once per controller. The process waits on AWS, not on its CPU; the rate
   * budgets, not a single worker, protect AWS (BENCHMARKS.md, "Concurrency"). @default 16
   */
  readonly maxConcurrentReconciles: number;
  /** @default 36000000 (10h) */
  readonly syncPeriodMs: number;
  /** @default 300000 (5m) */
  readonly pollIntervalMs: number;
  /** The change-event queue of the operator's own account (`--change-events`). @default none */
  readonly changeEvents: QueueAddress | undefined;
  /** The steady poll while the object's change-event queue is read. @default 3600000 (1h) */
  readonly pollIntervalWithEventsMs: number;
  /** Steady polls of S3 buckets and SQS queues read tags in bulk (`--bulk-tag-reads`). @default false */
  readonly bulkTagReads: boolean;
  /** See `--bulk-tag-window` (src/reconcilers/common/tag-snapshots.ts). @default 7200000 (2h) */
  readonly bulkTagWindowMs: number;
  /**
   * The share of every AWS rate budget polls may take, as a fraction; real work may use the
   * whole budget and goes first. @default 0.5
   */
  readonly pollBudgetShare: number;
  /** First poll interval of a resource in transition, doubling per poll. @default 2000 */
  readonly pendingPollInitialMs: number;
  /** Cap of the transition poll interval. @default 30000 */
  readonly pendingPollMaxMs: number;
  /** @default 30000 */
  readonly gracefulShutdownTimeoutMs: number;
  /** `undefined`: in-cluster configuration, then the default kubeconfig loading rules. */
  readonly kubeconfig: string | undefined;
  /** `undefined`: the AWS SDK's own region resolution. */
  readonly awsRegion: string | undefined;
  /** Rate budgets that differ from the defaults (src/aws/budget-plan.ts); `false`: none at all. */
  readonly awsRateBudgets: Readonly<Partial<Record<BudgetName, BudgetSize>>> | false;
  /** Deadline of one AWS HTTP attempt. @default 10000 */
  readonly awsRequestTimeoutMs: number;
  /** Deadline of one AWS connect (TCP and TLS). @default 3000 */
  readonly awsConnectTimeoutMs: number;
  /** SDK attempts per AWS call, the first included. @default 3 */
  readonly awsMaxAttempts: number;
  /** How S3 requests name the bucket (`--aws-s3-addressing-style`). @default "auto" */
  readonly awsS3AddressingStyle: S3AddressingStyle;
}

/** What the command line asked for. */
export type ParseOutcome = { readonly kind: "run"; readonly options: Options } | { readonly kind: "help" } | { readonly kind: "version" };

const BOOLEAN_FLAGS = new Set(FLAGS.filter((f) => f.kind === "boolean").map((f) => f.name));
const KNOWN_FLAGS = new Set([...FLAGS.map((f) => f.name), "help", "version"]);

/**
 * Parses `argv` (without the node and script paths) and `env` into options.
 * Go spellings are accepted: `-flag`, `--flag=value`, `--flag value`, `--bool=false`; a repeated
 * flag keeps its last value. An empty environment variable counts as unset.
 * @throws ConfigError on an unknown flag, a stray argument, a bad value or inconsistent values.
 */
export function parseOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseOutcome {
  const raw = readFlags(argv);
  if (raw.has("help")) return { kind: "help" };
  if (raw.has("version")) return { kind: "version" };

  const source = (spec: FlagSpec): { text: string; from: string } | undefined => {
    const flagValue = raw.get(spec.name);
    if (flagValue !== undefined) return { text: flagValue, from: `--${spec.name}` };
    for (const name of [envNameOf(spec.name), ...(spec.extraEnv ?? [])]) {
      const v = env[name];
      if (v !== undefined && v !== "") return { text: v, from: `--${spec.name} (from $${name})` };
    }
    return undefined;
  };
  const get = <T>(name: string, parse: (text: string) => T, fallback: T): T => {
    const spec = FLAGS.find((f) => f.name === name);
    if (spec === undefined) throw new Error(`flag table has no ${name}`);
    const s = source(spec);
    if (s === undefined) return fallback;
    try {
      return parse(s.text);
    } catch (err) {
      if (err instanceof ValueError) {
        throw new ConfigError(`invalid value ${JSON.stringify(s.text)} for ${s.from}: expected ${err.accepted}`, { cause: err });
      }
      throw err;
    }
  };

  const metricsSecure = get("metrics-secure", parseBool, true);
  const timing: LeaderElectionTiming = Object.freeze({
    leaseDurationMs: get("leader-election-lease-duration", (t) => parsePositiveDuration(t, 1_000), 15_000),
    renewDeadlineMs: get("leader-election-renew-deadline", (t) => parsePositiveDuration(t, 1_000), 10_000),
    retryPeriodMs: get("leader-election-retry-period", (t) => parsePositiveDuration(t, 100), 2_000),
  });
  const awsRegion = get("aws-region", parseRegion, undefined);
  const options: Options = {
    leaderElect: get("leader-elect", parseBool, false),
    leaderElectionId: get("leader-election-id", parseObjectName, "c56fc483.cloud.com"),
    leaderElectionNamespace: get("leader-election-namespace", parseNamespace, undefined),
    leaderElection: timing,
    metricsBindAddress: get("metrics-bind-address", parseBindAddress, parseBindAddress(metricsSecure ? ":8443" : ":8080")),
    metricsSecure,
    metricsCertDir: get("metrics-cert-dir", parseNonEmpty, undefined),
    healthProbeBindAddress: get("health-probe-bind-address", parseBindAddress, parseBindAddress(":8081")),
    logLevel: get("log-level", (t) => parseChoice(t, LOG_LEVELS), "info"),
    logFormat: get("log-format", (t) => parseChoice(t, LOG_FORMATS), "json"),
    watchNamespaces: Object.freeze(get("watch-namespace", parseNamespaceList, [])),
    controllers: Object.freeze(get("controllers", (t) => parseKindSelection(t, KIND_NAMES), [...KIND_NAMES])),
    outputSecretNamespaces: Object.freeze(get("output-secret-namespaces", parseNamespaceList, [])),
    adoption: get("adoption", (t) => parseChoice(t, ADOPTION_POLICIES), "disabled"),
    adoptionNamespaces: Object.freeze(get("adoption-namespaces", parseNamespaceList, [])),
    defaultTags: Object.freeze(get("default-tags", parseTagList, {})),
    ignoreTagPrefixes: Object.freeze(get("ignore-tag-prefixes", parseTagPrefixList, [])),
    requireAccount: get("require-account", parseBool, false),
    maxConcurrentReconciles: get("max-concurrent-reconciles", (t) => parseInteger(t, 1, 1000), 16),
    syncPeriodMs: get("sync-period", (t) => parsePositiveDuration(t, 1_000), 36_000_000),
    pollIntervalMs: get("poll-interval", (t) => parsePositiveDuration(t, 1_000), DEFAULT_POLL_INTERVAL_MS),
    bulkTagReads: get("bulk-tag-reads", parseBool, false),
    bulkTagWindowMs: get("bulk-tag-window", (t) => parsePositiveDuration(t, 1_000), DEFAULT_BULK_TAG_WINDOW_MS),
    pendingPollInitialMs: get(
      "pending-poll-initial",
      (t) => parsePositiveDuration(t, 100),
      DEFAULT_PENDING_INITIAL_MS,
    ),
    pendingPollMaxMs: get("pending-poll-max", (t) => parsePositiveDuration(t, 100), DEFAULT_PENDING_MAX_MS),
    gracefulShutdownTimeoutMs: get("graceful-shutdown-timeout", (t) => parsePositiveDuration(t, 0), 30_000),
    kubeconfig: get("kubeconfig", parseNonEmpty, undefined),
    awsRegion,
    changeEvents: get("change-events", (t) => parseQueue(t, awsRegion), undefined),
    pollIntervalWithEventsMs: get("poll-interval-with-events", (t) => parsePositiveDuration(t, 1_000), 3_600_000),
    pollBudgetShare: get("poll-budget-share", (t) => parsePercentage(t, 1), DEFAULT_POLL_BUDGET_SHARE),
    awsRateBudgets: get("aws-rate-budgets", parseRateBudgets, {}),
    awsRequestTimeoutMs: get("aws-request-timeout", (t) => parsePositiveDuration(t, 100), 10_000),
    awsConnectTimeoutMs: get("aws-connect-timeout", (t) => parsePositiveDuration(t, 100), 3_000),
    awsMaxAttempts: get("aws-max-attempts", (t) => parseInteger(t, 1, 10), 3),
    awsS3AddressingStyle: get("aws-s3-addressing-style", (t) => parseChoice(t, S3_ADDRESSING_STYLES), "auto"),
  };
  validateTiming(timing);
  validateTags(options.defaultTags, options.ignoreTagPrefixes);
  if (options.adoption === "enabled" && options.adoptionNamespaces.length > 0) {
    throw new ConfigError(
      "--adoption-namespaces lists the namespaces granted adoption while --adoption=disabled; " +
        "--adoption=enabled grants every namespace: set one of the two",
    );
  }
  if (options.pendingPollMaxMs < options.pendingPollInitialMs) {
    throw new ConfigError("invalid value for --pending-poll-max: expected a duration not shorter than --pending-poll-initial");
  }
  return { kind: "run", options: Object.freeze(options) };
}

/**
 * client-go's constraints: the leader must give up (RenewDeadline) before followers may take over
 * (LeaseDuration), and must get more than one jittered retry inside its renew deadline.
 */
function validateTiming(t: LeaderElectionTiming): void {
  if (t.leaseDurationMs <= t.renewDeadlineMs) {
    throw new ConfigError(
      "invalid value for --leader-election-lease-duration: expected a duration longer than --leader-election-renew-deadline",
    );
  }
  if (t.renewDeadlineMs <= 1.2 * t.retryPeriodMs) {
    throw new ConfigError(
      "invalid value for --leader-election-renew-deadline: expected a duration longer than 1.2 x --leader-election-retry-period",
    );
  }
}

/** A default tag under an ignored prefix could never be repaired: refuse the pair. */
function validateTags(defaults: Readonly<Record<string, string>>, prefixes: readonly string[]): void {
  for (const key of Object.keys(defaults)) {
    const prefix = prefixes.find((p) => key.toLowerCase().startsWith(p.toLowerCase()));
    if (prefix !== undefined) {
      throw new ConfigError(
        `invalid value for --default-tags: tag ${JSON.stringify(key)} lies under ${JSON.stringify(prefix)} of --ignore-tag-prefixes, whose tags the operator never writes over`,
      );
    }
  }
}

function parseQueue(text: string, region: string | undefined): QueueAddress {
  try {
    return parseQueueAddress(text, region);
  } catch (err) {
    if (err instanceof QueueAddressError) throw new ValueError(`an SQS queue URL or ARN (${err.message})`);
    throw err;
  }
}

function parseRateBudgets(text: string): Partial<Record<BudgetName, BudgetSize>> | false {
  try {
    return parseBudgetSpec(text);
  } catch {
    throw new ValueError(`off, or comma-separated name=rate/burst pairs with names from ${BUDGET_NAMES.join(", ")}`);
  }
}

/** Flag name -> last text given; switches map to "true"/"false". */
function readFlags(argv: readonly string[]): Map<string, string> {
  const args = normalizeDashes(argv);
  const options = Object.fromEntries([
    ...FLAGS.map((f) => [f.name, { type: f.kind }] as const),
    ["help", { type: "boolean", short: "h" }] as const,
    ["version", { type: "boolean" }] as const,
  ]);
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, allowNegative: true, tokens: true });
  const out = new Map<string, string>();
  for (const tok of tokens) {
    if (tok.kind === "positional") {
      throw new ConfigError(`unexpected argument ${JSON.stringify(tok.value)}: switches take --flag=false, not --flag false`);
    }
    if (tok.kind === "option-terminator") continue;
    const name = tok.name;
    if (!KNOWN_FLAGS.has(name)) throw new ConfigError(`unknown flag ${tok.rawName} (run with --help for the list)`);
    const negated = tok.rawName.startsWith("--no-");
    if (BOOLEAN_FLAGS.has(name) || name === "help" || name === "version") {
      if (negated && tok.value !== undefined) throw new ConfigError(`flag ${tok.rawName} takes no value`);
      out.set(name, negated ? "false" : (tok.value ?? "true"));
      continue;
    }
    if (negated) throw new ConfigError(`unknown flag ${tok.rawName} (run with --help for the list)`);
    if (tok.value === undefined) throw new ConfigError(`flag --${name} needs a value`);
    out.set(name, tok.value);
  }
  return out;
}

/** Go accepts `-flag`; parseArgs reads that as a group of short options. */
function normalizeDashes(argv: readonly string[]): string[] {
  const out: string[] = [];
  let terminated = false;
  for (const a of argv) {
    if (a === "--") terminated = true;
    out.push(!terminated && /^-[a-z][a-z0-9-]+(=.*)?$/s.test(a) ? `-${a}` : a);
  }
  return out;
}
