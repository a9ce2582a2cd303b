/**
 * Poll intervals for resources in transition (EC2 `pending`, `stopping`, `shutting-down`): short
 * at first, doubling per consecutive pending observation up to a cap, per object key. Kept in
 * memory only: after a restart polling starts short again, which is what one wants.
 */
import { KeyedBackoff } from "../../runtime/backoff.ts";

/** Options of {@link PendingBackoff}. */
export interface PendingBackoffOptions {
  /** First interval in ms. @default 2000 */
  initialMs?: number;
  /** Largest interval in ms. @default 30000 */
  maxMs?: number;
}

/** Per-key doubling intervals for polling transitions: the runtime's keyed backoff with the poll's defaults. */
export class PendingBackoff extends KeyedBackoff<string> {
  constructor(opts: PendingBackoffOptions = {}) {
    const initialMs = opts.initialMs ?? 2000;
    const maxMs = opts.maxMs ?? 30_000;
    if (!(initialMs > 0) || !(maxMs >= initialMs)) {
      throw new RangeError(`PendingBackoff: need 0 < initialMs <= maxMs, got ${initialMs} and ${maxMs}`);
    }
    super({ initialMs, maxMs });
  }
}
