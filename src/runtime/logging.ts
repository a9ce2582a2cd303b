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
 * path, so an AWS credential or a bearer token never reaches a log line.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options: PinoOptions = {
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
  };
  return opts.destination !== undefined ? pino(options, opts.destination) : pino(options);
}

/** A logger that drops everything; the default for components built without one. */
export const silentLogger: Logger = pino({ level: "silent" });
