/** Driver contexts for the unit tests of the drivers. */
import { silentLogger } from "../../../runtime/logging.ts";
import type { DriverContext, FlowFacts, ManagedObject } from "../driver.ts";
import { flowFacts } from "../flow/facts.ts";

/** A context as the flow builds it for `obj` (whose driver records its ID in `status[idField]`). */
export function contextFor(obj: ManagedObject, idField: string, signal?: AbortSignal): DriverContext {
  return {
    logger: silentLogger,
    signal: signal ?? new AbortController().signal,
    flow: flowFacts(obj, idField),
  };
}

/** A context with the given flow facts (by default: not deleting, not settled, no create in flight). */
export function context(flow: Partial<FlowFacts> = {}): DriverContext {
  return {
    logger: silentLogger,
    signal: new AbortController().signal,
    flow: { deleting: false, settled: false, create: undefined, createStartedAt: undefined, ...flow },
  };
}
