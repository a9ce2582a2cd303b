/**
 * The defaults of the reconcile timing, in one place: the command-line options
 * (src/config/options.ts), the shared flow and the drivers that derive their own timing from the
 * poll period (the EC2 snapshot ages) all take them from here.
 */

/** Steady-state poll period that catches drift (`--poll-interval`), in ms: 5 minutes. */
export const DEFAULT_POLL_INTERVAL_MS = 300_000;

/** First poll interval of a resource in transition (`--pending-poll-initial`), in ms. */
export const DEFAULT_PENDING_INITIAL_MS = 2000;

/** Largest poll interval of a resource in transition (`--pending-poll-max`), in ms. */
export const DEFAULT_PENDING_MAX_MS = 30_000;
