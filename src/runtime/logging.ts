import { pino, type Logger, type LevelWithSilent } from "pino";

export type { Logger } from "pino";

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** @default "info" */
  level?: LevelWithSilent;
  /** Base fields on every line. */
  base?: Record<string, unknown>;
}

/**
 * The process logger: JSON lines on stdout. Fields that may carry secrets are redacted by
 * path, so an AWS credential or a bearer token never reaches a log line.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino({
    level: opts.level ?? "info",
    base: opts.base ?? {},
    timestamp: pino.stdTimeFunctions.isoTime,
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
  });
}

/** A logger that drops everything; the default for components built without one. */
export const silentLogger: Logger = pino({ level: "silent" });
