/**
 * Not-found helpers for the common "already gone is fine" cases.
 */
import { isNotFound } from "../kube/errors.ts";

export { isNotFound } from "../kube/errors.ts";

/**
 * Resolves to the promise's value, or to `undefined` when it rejects with a 404 `ApiError`; any
 * other rejection passes through. `await ignoreNotFound(objects.delete(req))`.
 */
export async function ignoreNotFound<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Rethrows `err` unless it is a 404 `ApiError`; for `catch` blocks. */
export function rethrowUnlessNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}
