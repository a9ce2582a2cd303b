/**
 * What every command of the program does around its own work: parse its arguments (a bad command
 * line is one line on standard error and exit status 1), print its help, log errors only to
 * standard error, open the read-only session (./session.ts) with the command's User-Agent, stop
 * on SIGINT and SIGTERM, close the session, and report a failure as one line, exit status 1.
 */
import pino from "pino";
import { ConfigError } from "../config/config-error.ts";
import { ValueError } from "../config/values.ts";
import { createLogger } from "../runtime/logging.ts";
import { openSession, type Session, type SessionOptions } from "./session.ts";

/** Where a command writes, and what it reads for `-f -`. */
export interface CommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdin: () => Promise<string>;
}

/** One command: its name, how it parses its arguments, and its work once the session is open. */
export interface CommandSpec<A extends { readonly help: boolean }> {
  readonly name: string;
  readonly help: string;
  parse(argv: readonly string[]): A;
  /** The session's options beside the environment, logger and User-Agent. */
  session(args: A): Omit<SessionOptions, "env" | "logger" | "userAgent">;
  /** Log at debug level (`-v`). @default false */
  verbose?(args: A): boolean;
  /** The command's work; resolves with the exit status. */
  run(session: Session, args: A, io: CommandIo, signal: AbortSignal): Promise<number>;
}

/** Runs `spec` with `argv` (the arguments after the command's name); resolves with the exit status. */
export async function runCommand<A extends { readonly help: boolean }>(
  spec: CommandSpec<A>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CommandIo,
): Promise<number> {
  const say = (message: string): void => io.stderr(`kubeprovisioner ${spec.name}: ${message}\n`);
  let args: A;
  try {
    args = spec.parse(argv);
  } catch (err) {
    if (
      err instanceof ConfigError ||
      err instanceof ValueError ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      say((err as Error).message);
      return 1;
    }
    throw err;
  }
  if (args.help) {
    io.stdout(spec.help);
    return 0;
  }
  const logger = createLogger({
    level: spec.verbose?.(args) === true ? "debug" : "error",
    destination: pino.destination({ dest: 2, sync: true }),
  });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let session: Session | undefined;
  try {
    session = await openSession(
      { ...spec.session(args), env, logger, userAgent: `kubeprovisioner-${spec.name}` },
      abort.signal,
    );
    return await spec.run(session, args, io, abort.signal);
  } catch (err) {
    say((err as Error).message);
    return 1;
  } finally {
    session?.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
