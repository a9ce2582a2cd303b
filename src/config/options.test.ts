import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError } from "./config-error.ts";
import { parseOptions, type Options } from "./options.ts";
import { envNameOf, helpText } from "./flags.ts";

function run(argv: string[], env: Record<string, string> = {}): Options {
  const out = parseOptions(argv, env);
  assert.equal(out.kind, "run");
  return (out as { options: Options }).options;
}

function refuse(argv: string[], env: Record<string, string> = {}): string {
  try {
    parseOptions(argv, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.exitCode, 2);
    assert.doesNotMatch(err.message, /\n/);
    return err.message;
  }
  assert.fail(`accepted ${argv.join(" ")}`);
}

test("defaults match the kubebuilder scaffold and the documented values", () => {
  const o = run([]);
  assert.equal(o.leaderElect, false);
  assert.equal(o.leaderElectionId, "c56fc483.cloud.com");
  assert.equal(o.leaderElectionNamespace, undefined);
  assert.deepEqual(o.leaderElection, { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  assert.deepEqual(o.metricsBindAddress, { host: undefined, port: 8443 });
  assert.equal(o.metricsSecure, true);
  assert.deepEqual(o.healthProbeBindAddress, { host: undefined, port: 8081 });
  assert.equal(o.logLevel, "info");
  assert.equal(o.logFormat, "json");
  assert.deepEqual(o.watchNamespaces, []);
  assert.deepEqual(o.outputSecretNamespaces, [], "no namespace may hold outputs Secrets unless named");
  assert.equal(o.maxConcurrentReconciles, 16);
  assert.equal(o.syncPeriodMs, 36_000_000);
  assert.equal(o.pollIntervalMs, 300_000);
  assert.equal(o.gracefulShutdownTimeoutMs, 30_000);
  assert.equal(o.pendingPollInitialMs, 2_000);
  assert.equal(o.pendingPollMaxMs, 30_000);
  assert.ok(Object.isFrozen(o));
  assert.ok(Object.isFrozen(o.watchNamespaces));
});

test("insecure metrics default to :8080 and 0 disables a server", () => {
  const o = run(["--metrics-secure=false", "--health-probe-bind-address", "0"]);
  assert.deepEqual(o.metricsBindAddress, { host: undefined, port: 8080 });
  assert.equal(o.healthProbeBindAddress, null);
  assert.equal(run(["--metrics-bind-address=0"]).metricsBindAddress, null);
  assert.deepEqual(run(["--metrics-bind-address=[::1]:9443"]).metricsBindAddress, { host: "::1", port: 9443 });
  assert.deepEqual(run(["--metrics-bind-address=127.0.0.1:9443"]).metricsBindAddress, { host: "127.0.0.1", port: 9443 });
});

test("Go flag spellings are accepted and the last repetition wins", () => {
  const o = run(["-leader-elect", "--sync-period", "1h", "--sync-period=2h", "--no-metrics-secure", "--watch-namespace=a, b,a"]);
  assert.equal(o.leaderElect, true);
  assert.equal(o.syncPeriodMs, 7_200_000);
  assert.equal(o.metricsSecure, false);
  assert.deepEqual(o.watchNamespaces, ["a", "b"]);
  assert.equal(run(["--leader-elect=false"]).leaderElect, false);
  assert.equal(run(["--leader-elect=true"]).leaderElect, true);
});

test("environment variables fill in unset flags, and flags win", () => {
  const env = {
    KUBEPROVISIONER_LEADER_ELECT: "true",
    KUBEPROVISIONER_MAX_CONCURRENT_RECONCILES: "4",
    KUBEPROVISIONER_LOG_LEVEL: "",
    KUBECONFIG: "/tmp/kc",
    AWS_DEFAULT_REGION: "eu-west-1",
  };
  const o = run(["--max-concurrent-reconciles=8"], env);
  assert.equal(o.leaderElect, true);
  assert.equal(o.maxConcurrentReconciles, 8);
  assert.equal(o.logLevel, "info", "an empty variable counts as unset");
  assert.equal(o.kubeconfig, "/tmp/kc");
  assert.equal(o.awsRegion, "eu-west-1");
  assert.equal(run([], { ...env, AWS_REGION: "us-east-2" }).awsRegion, "us-east-2");
  assert.equal(envNameOf("leader-election-id"), "KUBEPROVISIONER_LEADER_ELECTION_ID");
});

test("a bad value names the flag and the accepted values on one line", () => {
  assert.match(refuse(["--sync-period=forever"]), /--sync-period.*expected a duration/);
  assert.match(refuse(["--log-level=loud"]), /"loud" for --log-level: expected one of trace, debug, info, warn, error, fatal, silent/);
  assert.match(refuse(["--max-concurrent-reconciles=0"]), /--max-concurrent-reconciles: expected an integer from 1 to 1000/);
  assert.match(refuse(["--metrics-secure=maybe"]), /--metrics-secure: expected true or false/);
  assert.match(refuse(["--metrics-bind-address=8443"]), /--metrics-bind-address: expected host:port/);
  assert.match(refuse(["--watch-namespace=Bad_NS"]), /--watch-namespace/);
  assert.deepEqual(run(["--output-secret-namespaces=apps, jobs,apps"]).outputSecretNamespaces, ["apps", "jobs"]);
  assert.match(refuse(["--output-secret-namespaces=Bad_NS"]), /--output-secret-namespaces/);
  assert.match(refuse([], { KUBEPROVISIONER_POLL_INTERVAL: "5" }), /--poll-interval \(from \$KUBEPROVISIONER_POLL_INTERVAL\)/);
  assert.match(refuse(["--aws-region=mars"]), /--aws-region: expected an AWS region/);
});

test("AWS rate budgets and timeouts", () => {
  const d = run([]);
  assert.deepEqual(d.awsRateBudgets, {}, "the defaults of src/aws/budget-plan.ts apply");
  assert.equal(d.awsRequestTimeoutMs, 10_000);
  assert.equal(d.awsConnectTimeoutMs, 3_000);
  assert.equal(d.awsMaxAttempts, 3);
  const o = run(
    ["--aws-rate-budgets=ec2.runInstances=1/2,s3=200/400", "--aws-request-timeout=30s", "--aws-max-attempts=5"],
    { KUBEPROVISIONER_AWS_CONNECT_TIMEOUT: "500ms" },
  );
  assert.deepEqual(o.awsRateBudgets, {
    "ec2.runInstances": { ratePerSecond: 1, burst: 2 },
    s3: { ratePerSecond: 200, burst: 400 },
  });
  assert.equal(o.awsRequestTimeoutMs, 30_000);
  assert.equal(o.awsConnectTimeoutMs, 500);
  assert.equal(o.awsMaxAttempts, 5);
  assert.equal(run(["--aws-rate-budgets=off"]).awsRateBudgets, false);
  assert.match(refuse(["--aws-rate-budgets=ec2=20/40"]), /--aws-rate-budgets: expected off, or comma-separated name=rate\/burst pairs/);
  assert.match(refuse(["--aws-max-attempts=0"]), /--aws-max-attempts: expected an integer from 1 to 10/);
});

test("the polls' share of the AWS rate budgets", () => {
  assert.equal(run([]).pollBudgetShare, 0.5);
  assert.equal(run(["--poll-budget-share=20%"]).pollBudgetShare, 0.2);
  assert.equal(run(["--poll-budget-share=12.5"]).pollBudgetShare, 0.125, "the % sign is optional");
  assert.equal(run([], { KUBEPROVISIONER_POLL_BUDGET_SHARE: "100%" }).pollBudgetShare, 1);
  for (const bad of ["0%", "0.5%", "101%", "half", "-10%", "50%%"])
    assert.match(
      refuse([`--poll-budget-share=${bad}`]),
      /--poll-budget-share: expected a percentage from 1% to 100%, like 50%/,
      bad,
    );
});

test("unknown flags, stray arguments and missing values are refused", () => {
  assert.match(refuse(["--bogus"]), /unknown flag --bogus/);
  assert.match(refuse(["--leader-elect", "false"]), /unexpected argument "false"/);
  assert.match(refuse(["--kubeconfig"]), /--kubeconfig needs a value/);
  assert.match(refuse(["--no-kubeconfig"]), /unknown flag --no-kubeconfig/);
});

test("leader-election timings must leave the leader time to step down", () => {
  assert.match(refuse(["--leader-election-lease-duration=10s"]), /lease-duration: expected a duration longer than --leader-election-renew-deadline/);
  assert.match(refuse(["--leader-election-retry-period=9s"]), /renew-deadline: expected a duration longer than 1.2 x/);
  const o = run(["--leader-election-lease-duration=3s", "--leader-election-renew-deadline=2s", "--leader-election-retry-period=500ms"]);
  assert.deepEqual(o.leaderElection, { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 });
});

test("--adoption is disabled by default and accepts only enabled or disabled", () => {
  assert.equal(run([]).adoption, "disabled");
  assert.deepEqual(run([]).adoptionNamespaces, []);
  assert.equal(run(["--adoption=enabled"]).adoption, "enabled");
  assert.equal(run([], { KUBEPROVISIONER_ADOPTION: "enabled" }).adoption, "enabled");
  assert.match(refuse(["--adoption=maybe"]), /--adoption/);
});

test("--adoption-namespaces grants namespaces while adoption is disabled, and never with enabled", () => {
  assert.deepEqual(run(["--adoption-namespaces=team-a, team-b,team-a"]).adoptionNamespaces, ["team-a", "team-b"]);
  assert.deepEqual(run([], { KUBEPROVISIONER_ADOPTION_NAMESPACES: "team-a" }).adoptionNamespaces, ["team-a"]);
  assert.match(refuse(["--adoption-namespaces=Team_A"]), /--adoption-namespaces/);
  assert.match(
    refuse(["--adoption=enabled", "--adoption-namespaces=team-a"]),
    /--adoption=enabled grants every namespace: set one of the two/,
  );
});

test("--help and --version short-circuit validation", () => {
  assert.equal(parseOptions(["--sync-period=bad", "--help"], {}).kind, "help");
  assert.equal(parseOptions(["-h"], {}).kind, "help");
  assert.equal(parseOptions(["--version"], {}).kind, "version");
  const help = helpText("kubeprovisioner");
  for (const flag of ["--leader-elect", "--metrics-bind-address", "--poll-interval", "KUBEPROVISIONER_SYNC_PERIOD"]) {
    assert.ok(help.includes(flag), flag);
  }
  // Every kind requires spec.region: the flag only serves the credential chain.
  assert.match(help, /--aws-region[\s\S]*credential chain \(STS[\s\S]*spec\.region/);
  assert.doesNotMatch(help, /whose spec names none/);
});

test("the transition poll curve is set by two flags and its cap may not be below its start", () => {
  const o = run(["--pending-poll-initial=500ms", "--pending-poll-max=1m"]);
  assert.equal(o.pendingPollInitialMs, 500);
  assert.equal(o.pendingPollMaxMs, 60_000);
  assert.equal(run([], { KUBEPROVISIONER_PENDING_POLL_MAX: "10s" }).pendingPollMaxMs, 10_000);
  assert.match(refuse(["--pending-poll-initial=10s", "--pending-poll-max=5s"]), /--pending-poll-max.*--pending-poll-initial/);
  assert.match(refuse(["--pending-poll-initial=10ms"]), /--pending-poll-initial: expected a duration of at least 100ms/);
});

test("--default-tags parses key=value pairs under spec.tags' rules", () => {
  assert.deepEqual(run([]).defaultTags, {});
  assert.deepEqual(run(["--default-tags=team=platform, cost-center=42,url=a=b"]).defaultTags, {
    team: "platform",
    "cost-center": "42",
    url: "a=b",
  });
  assert.deepEqual(run([], { KUBEPROVISIONER_DEFAULT_TAGS: "env=" }).defaultTags, { env: "" });
  assert.match(refuse(["--default-tags=team"]), /--default-tags.*has no '='/);
  assert.match(refuse(["--default-tags=aws:x=1"]), /reserved by AWS/);
  assert.match(refuse(["--default-tags=compute.cloud.com/uid=1"]), /ownership tags/);
  assert.match(refuse(["--default-tags=a=1,a=2"]), /repeats/);
  assert.match(refuse(["--default-tags=a=<b>"]), /tag values may contain only/);
  const many = Array.from({ length: 46 }, (_, i) => `k${i}=v`).join(",");
  assert.match(refuse([`--default-tags=${many}`]), /at most 45 tags/);
});

test("--ignore-tag-prefixes lists prefixes, and a default tag under one is refused", () => {
  assert.deepEqual(run([]).ignoreTagPrefixes, []);
  assert.deepEqual(run(["--ignore-tag-prefixes=backup:, CostCenter,backup:"]).ignoreTagPrefixes, ["backup:", "CostCenter"]);
  assert.match(
    refuse(["--ignore-tag-prefixes=backup:", "--default-tags=Backup:plan=daily"]),
    /--default-tags: tag "Backup:plan" lies under "backup:" of --ignore-tag-prefixes/,
  );
});

test("--controllers selects kinds as kube-controller-manager's flag does; every kind by default", () => {
  assert.deepEqual(run([]).controllers, ["ec2instance", "s3bucket", "sqsqueue"]);
  assert.deepEqual(run(["--controllers=*,-ec2instance"]).controllers, ["s3bucket", "sqsqueue"]);
  assert.deepEqual(run([], { KUBEPROVISIONER_CONTROLLERS: "sqsqueue" }).controllers, ["sqsqueue"]);
  assert.match(refuse(["--controllers=ec2"]), /invalid value "ec2" for --controllers: .*"ec2" is no kind/);
  assert.match(refuse(["--controllers=-ec2instance"]), /--controllers: .*at least one kind/);
});

test("--aws-s3-addressing-style takes auto, path or virtual", () => {
  assert.equal(run([]).awsS3AddressingStyle, "auto");
  assert.equal(run(["--aws-s3-addressing-style=path"]).awsS3AddressingStyle, "path");
  assert.equal(run([], { KUBEPROVISIONER_AWS_S3_ADDRESSING_STYLE: "virtual" }).awsS3AddressingStyle, "virtual");
  assert.match(refuse(["--aws-s3-addressing-style=dns"]), /--aws-s3-addressing-style: expected one of/);
});
