/**
 * Idempotency tokens for AWS creates. A token is derived from the object's UID and its create
 * attempt, so a reconcile that is retried after a crash, on this replica or another, computes
 * the same token and AWS (where it honours tokens, EC2 ClientToken) returns the resource it made
 * the first time instead of a second one. A recreate after an out-of-band deletion uses the next
 * attempt, hence a new token (EC2 would otherwise answer with the deleted instance).
 */

/** EC2 accepts ClientToken values of at most 64 ASCII characters. */
export const MAX_TOKEN_LENGTH = 64;

/** The token of create attempt `attempt` (1-based) of the object with UID `uid`. */
export function createToken(uid: string, attempt: number): string {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`create attempt must be >= 1, got ${attempt}`);
  const token = `${uid}-${attempt}`;
  if (token.length > MAX_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
    throw new RangeError(
      `idempotency token ${JSON.stringify(token)} is not 1-${MAX_TOKEN_LENGTH} printable ASCII characters`,
    );
  }
  return token;
}

/**
 * A create retried this long after its token was recorded records `status.createRequestedAt`
 * anew first, so the recorded time stays within {@link CREATE_WINDOW_MS} of the create call it
 * stands for.
 */
export const CREATE_REQUEST_RENEW_MS = 5 * 60_000;

/**
 * How long after `status.createRequestedAt` a resource may have been made by that create: the
 * renewal period plus ample time for a create call and its SDK retries.
 */
export const CREATE_WINDOW_MS = 15 * 60_000;

/** Whether `recorded` (RFC 3339) lies in the `maxAgeMs` before `now` (and not after it). */
export function requestedWithin(recorded: string | undefined, now: number, maxAgeMs: number): boolean {
  const t = Date.parse(recorded ?? "");
  return Number.isFinite(t) && t <= now && now - t < maxAgeMs;
}
