import {
  pino,
  type DestinationStream,
  type Logger,
  type LevelWithSilent,
  type LoggerOptions as PinoOptions,
} from "pino";

export type { Logger } from "pino";

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** @default "info" */
  level?: LevelWithSilent;
  /** Base fields on every line. */
  base?: Record<string, unknown>;
  /** Where lines go, e.g. a pino-pretty stream for human-readable output. @default stdout */
  destination?: DestinationStream;
}

/**
 * The process logger: JSON lines on stdout. Fields that may carry secrets are redacted by
 * path, so an AWS credential or a bearer token never reaches a log line. Errors are logged with
 * their own message and stack only (see {@link serializeError}): the messages of their causes,
 * which come from libraries and may quote what was sent or read, are left out.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options: PinoOptions = {
    level: opts.level ?? "info",
    base: opts.base ?? {},
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError, error: serializeError },
    redact: {
      paths: [
        "*.accessKeyId",
        "*.secretAccessKey",
        "*.sessionToken",
        "*.credentials",
        "*.authorization",
        "*.Authorization",
        "*.token",
        "*.bearerToken",
        "headers.authorization",
      ],
      censor: "[redacted]",
    },
  };
  return pino(options, opts.destination ?? stdoutDestination());
}

/**
 * Standard output, written synchronously, line by line. With pino's default (buffered, flushed
 * at exit) a process whose standard output is a pipe nobody reads any more (`kubeprovisioner |
 * head -1`, a log collector gone) retried the flush at exit every 100 ms forever: the flush
 * retries every failed write, not only the busy ones. A synchronous write fails at once instead,
 * and pino then drops the lines that follow (EPIPE), so the process exits with its own code.
 */
function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

/** A logger that drops everything; the default for components built without one. */
export const silentLogger: Logger = pino({ level: "silent" });

/**
 * An error as a log field: its type, message and stack (without the causes' messages and stacks
 * that pino's default adds), its own enumerable fields, and the chain of its causes by type and
 * code only. The project's errors build their messages without secrets; their causes are other
 * libraries' errors (the AWS SDK's, a child process's, a YAML parser's), whose text can quote a
 * request, a command line or a file.
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out: Record<string, unknown> = {
    type: err.constructor.name === "Error" ? err.name : err.constructor.name,
    message: err.message,
  };
  if (err.stack !== undefined) out.stack = err.stack;
  for (const [k, v] of Object.entries(err)) {
    if (k === "cause" || k in out) continue;
    out[k] = v instanceof Error ? describeCause(v) : v;
  }
  const causes: string[] = [];
  const seen = new Set<unknown>([err]);
  let cause: unknown = err.cause;
  while (cause !== undefined && cause !== null && !seen.has(cause) && causes.length < 8) {
    seen.add(cause);
    causes.push(describeCause(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  if (causes.length > 0) out.causes = causes;
  return out;
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return typeof cause;
  const code = (cause as { code?: unknown }).code;
  return typeof code === "string" || typeof code === "number" ? `${cause.name} (${code})` : cause.name;
}
