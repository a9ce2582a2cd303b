#!/usr/bin/env node
/**
 * `kubeprovisioner`: flags and environment -> options -> logger -> Kubernetes client -> shared
 * informer cache -> manager (servers, leader election, controllers) -> run until SIGTERM.
 *
 * Exit codes: 0 after a graceful stop, 1 on a runtime failure (including a lost lease, which
 * exits at once), 2 for a bad command line or a Node.js older than package.json's `engines`.
 */
// First: refuses an unsupported Node.js before any other module loads.
import "./node-guard.ts";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { getAsset, isSea } from "node:sea";
import { getHeapStatistics } from "node:v8";
import { collectDefaultMetrics } from "prom-client";
import { helpText } from "./config/flags.ts";
import { isEntryPoint } from "./entry-point.ts";
import { ConfigError } from "./config/config-error.ts";
import { parseOptions, type Options } from "./config/options.ts";
import { AwsClients, s3ForcePathStyleOf } from "./aws/clients.ts";
import { cacheOptions, registerControllers } from "./controllers.ts";
import { heapSizing, sizeHeapFromMemoryLimit } from "./heap/ceiling.ts";
import { HeapFitCheck, HeapTooSmallError } from "./heap/fit-check.ts";
import { InformerFactory } from "./runtime/cache/factory.ts";
import { systemClock } from "./runtime/clock.ts";
import { EventBroadcaster } from "./runtime/events/recorder.ts";
import { apiClient, loadKubeConfig } from "./kubeconfig-source.ts";
import { SERVICE_ACCOUNT_DIR } from "./runtime/kube/kubeconfig.ts";
import { createLogger, type Logger } from "./runtime/logging.ts";
import { LeaderElector } from "./runtime/manager/leader-election.ts";
import { LeaseLock } from "./runtime/manager/lease-lock.ts";
import { LeaderElectionLostError, Manager, RunnableError } from "./runtime/manager/manager.ts";
import { handleShutdownSignals } from "./runtime/manager/signals.ts";
import { DelegatingAuth } from "./runtime/metrics/auth.ts";
import { defaultRegistry } from "./runtime/metrics/registry.ts";
import { MetricsServer, ProbeServer } from "./runtime/metrics/server.ts";
import { drained } from "./stdio-drain.ts";

const PROGRAM = "kubeprovisioner";

/**
 * The program's commands besides running the operator, each loaded only when it runs (an
 * esbuild chunk of its own in the bundle), so the operator's memory holds none of their code.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  plan: async () => (await import("./cli/plan.ts")).runPlan,
  export: async () => (await import("./cli/export.ts")).runExport,
  adopt: async () => (await import("./cli/adopt.ts")).runAdopt,
};

/** A command: its arguments (those after its name) -> exit status. */
type Command = (
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: { stdout: (t: string) => void; stderr: (t: string) => void; stdin: () => Promise<string> },
) => Promise<number>;

/** Runs the program; resolves with the process exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const command = argv[0] === undefined ? undefined : COMMANDS[argv[0]];
  if (command !== undefined) {
    const code = await (
      await command()
    )(argv.slice(1), env, {
      stdout: (t) => void process.stdout.write(t),
      stderr: (t) => void process.stderr.write(t),
      stdin: readStdin,
    });
    return code;
  }
  let options: Options;
  try {
    const outcome = parseOptions(argv, env);
    if (outcome.kind === "help") {
      process.stdout.write(helpText(PROGRAM));
      return 0;
    }
    if (outcome.kind === "version") {
      process.stdout.write(`${PROGRAM} ${version()}\n`);
      return 0;
    }
    options = outcome.options;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${PROGRAM}: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }

  const logger = await buildLogger(options);
  try {
    return await run(options, env, logger);
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.fatal(err.message);
      process.stderr.write(`${PROGRAM}: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof RunnableError && err.cause instanceof HeapTooSmallError) {
      logger.fatal(err.cause.message);
      process.stderr.write(`${PROGRAM}: ${err.cause.message}\n`);
      return 1;
    }
    logger.fatal({ err }, "exiting after a fatal error");
    return 1;
  }
}

async function run(options: Options, env: NodeJS.ProcessEnv, logger: Logger): Promise<number> {
  logger.info(
    { version: version(), options, heap: heapSizing(getHeapStatistics().heap_size_limit, env) },
    "starting",
  );
  const registry = defaultRegistry;
  collectDefaultMetrics({ register: registry });
  const kc = await loadKubeConfig(options.kubeconfig, env);
  const rest = apiClient(kc, { registry, logger: logger.child({ component: "rest" }) });
  logger.info({ server: rest.host }, "using API server");

  let leaderElector: LeaderElector | undefined;
  if (options.leaderElect) {
    const namespace = options.leaderElectionNamespace ?? inClusterNamespace();
    if (namespace === undefined) {
      throw new ConfigError(
        "--leader-election-namespace is required with --leader-elect when not running in a cluster",
      );
    }
    leaderElector = new LeaderElector({
      lock: new LeaseLock(rest, namespace, options.leaderElectionId),
      identity: `${hostname()}_${randomUUID()}`,
      name: options.leaderElectionId,
      leaseDurationMs: options.leaderElection.leaseDurationMs,
      renewDeadlineMs: options.leaderElection.renewDeadlineMs,
      retryPeriodMs: options.leaderElection.retryPeriodMs,
      logger,
      registry,
    });
  }

  const manager = new Manager({
    leaderElector,
    gracefulShutdownTimeoutMs: options.gracefulShutdownTimeoutMs,
    logger,
    registry,
  });
  if (options.healthProbeBindAddress !== null) {
    manager.addServer(
      new ProbeServer({
        address: options.healthProbeBindAddress,
        healthz: manager.healthz,
        readyz: manager.readyz,
        logger,
      }),
    );
  }
  if (options.metricsBindAddress !== null) {
    manager.addServer(
      new MetricsServer({
        address: options.metricsBindAddress,
        registry,
        logger,
        secure: options.metricsSecure
          ? { auth: new DelegatingAuth({ client: rest, logger }), certDir: options.metricsCertDir }
          : undefined,
      }),
    );
  }

  const informers = new InformerFactory({
    rest,
    ...(options.watchNamespaces.length > 0 ? { namespaces: [...options.watchNamespaces] } : {}),
    resyncPeriodMs: options.syncPeriodMs,
    ...cacheOptions(options.outputSecretNamespaces),
    logger: logger.child({ component: "cache" }),
    registry,
  });
  const events = new EventBroadcaster({ client: rest, logger, registry });
  manager.add(informers);
  manager.add(events);
  manager.add(
    new HeapFitCheck({
      waitForCacheSync: (signal) => informers.waitForCacheSync(signal),
      cachedObjects: () => informers.informers().reduce((n, inf) => n + inf.store.keys().length, 0),
      logger: logger.child({ component: "heap" }),
    }),
  );
  // The SDK's credential chain (STS for IRSA/web identity) needs a region of its own; each
  // resource names the region it lives in.
  if (options.awsRegion !== undefined && !process.env.AWS_REGION) process.env.AWS_REGION = options.awsRegion;
  const aws = new AwsClients({
    logger: logger.child({ component: "aws" }),
    registry,
    rateBudget: options.awsRateBudgets,
    pollShare: options.pollBudgetShare,
    requestTimeoutMs: options.awsRequestTimeoutMs,
    connectionTimeoutMs: options.awsConnectTimeoutMs,
    maxAttempts: options.awsMaxAttempts,
    s3ForcePathStyle: s3ForcePathStyleOf(options.awsS3AddressingStyle),
  });
  registerControllers(manager, {
    options,
    rest,
    informers,
    events,
    aws,
    logger,
    registry,
    clock: systemClock,
    pod: env.POD_NAMESPACE && env.POD_NAME ? { namespace: env.POD_NAMESPACE, name: env.POD_NAME } : undefined,
  });

  const signals = handleShutdownSignals({
    logger,
    onForce: () => {
      logger.flush();
      process.exit(1);
    },
  });
  try {
    await manager.start(signals.signal);
    logger.info("stopped gracefully");
    return 0;
  } catch (err) {
    if (err instanceof LeaderElectionLostError) {
      logger.fatal("leader election lost; exiting at once");
      return 1;
    }
    throw err;
  } finally {
    signals.dispose();
  }
}

/** Everything on standard input, as text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function inClusterNamespace(): string | undefined {
  try {
    const ns = readFileSync(`${SERVICE_ACCOUNT_DIR}/namespace`, "utf8").trim();
    return ns === "" ? undefined : ns;
  } catch {
    return undefined;
  }
}

async function buildLogger(options: Options): Promise<Logger> {
  const level = options.logLevel;
  if (options.logFormat === "json") return createLogger({ level });
  try {
    const { default: pretty } = await import("pino-pretty");
    return createLogger({
      level,
      destination: pretty({ sync: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" }),
    });
  } catch {
    const logger = createLogger({ level });
    logger.warn("--log-format text needs the pino-pretty package; logging JSON");
    return logger;
  }
}

function version(): string {
  try {
    // A single executable carries package.json as an asset (hack/sea.ts); the sources and the
    // bundle read the file.
    const text = isSea()
      ? getAsset("package.json", "utf8")
      : readFileSync(new URL("../package.json", import.meta.url), "utf8");
    const pkg = JSON.parse(text) as {
      version?: string;
    };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

if (isEntryPoint(import.meta.url)) {
  // Replaces the process once, when the heap ceiling is to follow the container's memory limit.
  // Not a single executable: it takes no Node.js options on its command line (they would reach
  // the program as arguments), so its heap keeps V8's default.
  if (!isSea()) sizeHeapFromMemoryLimit();
  main(process.argv.slice(2), process.env)
    .catch((err: unknown) => {
      console.error(err);
      return 1;
    })
    // The process exits at once: what it wrote to a pipe must have left first.
    .then(async (code) => {
      await drained(process.stdout, process.stderr);
      process.exit(code);
    });
}
