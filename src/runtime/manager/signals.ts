/**
 * Process signals -> a stop signal. The first SIGTERM or SIGINT starts a graceful stop; a second
 * one means the operator is impatient and the process should exit at once (controller-runtime's
 * `SetupSignalHandler` does the same).
 */
import type { Logger } from "../logging.ts";

/** Options of {@link handleShutdownSignals}. */
export interface ShutdownSignalOptions {
  /** Called on the second signal; should exit the process non-zero. */
  onForce: (signal: NodeJS.Signals) => void;
  logger?: Logger;
  /** @default ["SIGTERM", "SIGINT"] */
  signals?: readonly NodeJS.Signals[];
  /** Where to listen. @default process */
  target?: Pick<NodeJS.Process, "on" | "off">;
}

/** The stop signal and a way to remove the handlers again. */
export interface ShutdownSignals {
  readonly signal: AbortSignal;
  dispose(): void;
}

/** Installs the handlers; `signal` aborts on the first delivery. */
export function handleShutdownSignals(opts: ShutdownSignalOptions): ShutdownSignals {
  const ctrl = new AbortController();
  const target = opts.target ?? process;
  const names = opts.signals ?? ["SIGTERM", "SIGINT"];
  const handler = (sig: NodeJS.Signals): void => {
    if (!ctrl.signal.aborted) {
      opts.logger?.info(
        { signal: sig },
        "shutdown signal received; stopping gracefully (send it again to exit at once)",
      );
      ctrl.abort(new Error(`received ${sig}`));
      return;
    }
    opts.logger?.warn({ signal: sig }, "second shutdown signal received; exiting at once");
    opts.onForce(sig);
  };
  for (const n of names) target.on(n, handler);
  return {
    signal: ctrl.signal,
    dispose() {
      for (const n of names) target.off(n, handler);
    },
  };
}
