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

/**
 * How long after the operator's own tag write bulk tag reads are not used for a resource, and how
 * often at least its tags are read directly (`--bulk-tag-window`; ./tag-snapshots.ts), in ms: 2
 * hours, well past the lag of AWS's tag index reported for GetResources (45 minutes and more).
 */
export const DEFAULT_BULK_TAG_WINDOW_MS = 7_200_000;
