/**
 * Errors of the controller, one class per failed step.
 */

/** The sources' caches did not sync within `cacheSyncTimeout`; the controller did not start. */
export class CacheSyncTimeoutError extends Error {
  override readonly name = "CacheSyncTimeoutError";
  readonly controller: string;
  readonly timeoutMs: number;

  constructor(controller: string, timeoutMs: number) {
    super(`controller ${controller}: caches did not sync within ${timeoutMs} ms`);
    this.controller = controller;
    this.timeoutMs = timeoutMs;
  }
}

/** A controller was started twice, or given a source after it started. */
export class ControllerStartedError extends Error {
  override readonly name = "ControllerStartedError";
  readonly controller: string;

  constructor(controller: string) {
    super(`controller ${controller}: already started`);
    this.controller = controller;
  }
}
