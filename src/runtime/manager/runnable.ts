/**
 * Something the manager starts and stops: an HTTP server, an informer factory, a controller.
 */
export interface Runnable {
  /** Human-readable name for logs. */
  readonly name: string;
  /**
   * Whether the runnable may only run on the elected leader (controllers). Caches and servers
   * run on every replica.
   * @default false
   */
  readonly needLeaderElection?: boolean;
  /**
   * Starts the work and resolves once it has fully stopped after `signal` aborted (for a
   * controller: no new work taken, in-flight reconciles finished). Rejects on a fatal error.
   */
  start(signal: AbortSignal): Promise<void>;
}
