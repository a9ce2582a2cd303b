/**
 * Finalizer add/remove that survive concurrent writers. Each attempt is a JSON merge patch of the
 * whole `metadata.finalizers` list carrying the `metadata.resourceVersion` it was computed from,
 * so the API server rejects it with 409 if anyone wrote in between (a merge patch replaces lists
 * whole; without the precondition it would silently drop a finalizer another controller just
 * added). On 409 the object is re-read from the API server, not the cache (which may lag), and the
 * change is recomputed.
 */
import { ApiError, isConflict, isNotFound } from "../kube/errors.ts";
import type { KubeObject, ObjectMeta, ObjectRef } from "../kube/object.ts";
import { FinalizerConflictError } from "./errors.ts";
import type { Patch } from "./patch.ts";

/** Options of the finalizer helpers. */
export interface FinalizerOptions {
  signal?: AbortSignal;
  /**
   * Write attempts before giving up with {@link FinalizerConflictError}.
   * @default 5
   */
  attempts?: number;
}

/** The operations the helpers need; a `ResourceClient` provides them. */
export interface FinalizerTarget<T extends KubeObject> {
  readonly kind: string;
  getLive(ref: ObjectRef, signal: AbortSignal | undefined): Promise<T | undefined>;
  patch(ref: ObjectRef, patch: Patch, signal: AbortSignal | undefined): Promise<T>;
}

/** Whether `obj` lists `finalizer`. */
export function hasFinalizer(obj: { readonly metadata: Readonly<ObjectMeta> }, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * Ensures `finalizer` is on the object. Resolves to the object carrying it (the given object,
 * unchanged and without any request, when it already does).
 * @throws ApiError 404 when the object does not exist; {@link FinalizerConflictError} after
 *   `attempts` conflicts in a row; any other ApiError/TransportError as is.
 */
export async function addFinalizer<T extends KubeObject>(
  target: FinalizerTarget<T>,
  start: Readonly<T> | ObjectRef,
  finalizer: string,
  opts: FinalizerOptions = {},
): Promise<T> {
  const result = await retryOnConflict(target, start, opts, `add finalizer ${finalizer}`, (obj) => {
    if (obj === undefined) throw notFound(target.kind, start);
    const list = obj.metadata.finalizers ?? [];
    return list.includes(finalizer) ? undefined : [...list, finalizer];
  });
  if (result === undefined) throw notFound(target.kind, start);
  return result;
}

/**
 * Ensures `finalizer` is not on the object (every occurrence removed). Resolves to the object as
 * the server left it, or `undefined` when the object does not exist (any more).
 * @throws {@link FinalizerConflictError} after `attempts` conflicts in a row; any other
 *   ApiError/TransportError as is.
 */
export function removeFinalizer<T extends KubeObject>(
  target: FinalizerTarget<T>,
  start: Readonly<T> | ObjectRef,
  finalizer: string,
  opts: FinalizerOptions = {},
): Promise<T | undefined> {
  return retryOnConflict(target, start, opts, `remove finalizer ${finalizer}`, (obj) => {
    const list = obj?.metadata.finalizers ?? [];
    return list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined;
  });
}

/**
 * The shared loop. `next` computes the new finalizer list from the current object, or
 * `undefined` when nothing needs writing (then the current object is the result).
 */
async function retryOnConflict<T extends KubeObject>(
  target: FinalizerTarget<T>,
  start: Readonly<T> | ObjectRef,
  opts: FinalizerOptions,
  what: string,
  next: (obj: Readonly<T> | undefined) => string[] | undefined,
): Promise<T | undefined> {
  const attempts = Math.max(1, opts.attempts ?? 5);
  const signal = opts.signal;
  let current: Readonly<T> | undefined = isFullObject<T>(start) ? start : await target.getLive(start, signal);
  let lastConflict: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const list = next(current);
    if (list === undefined || current === undefined) return current as T | undefined;
    const patch: Patch = {
      type: "merge",
      patch: { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: list } },
    };
    try {
      return await target.patch(current, patch, signal);
    } catch (err) {
      if (isNotFound(err)) {
        current = undefined;
        continue;
      }
      if (!isConflict(err)) throw err;
      lastConflict = err;
      current = await target.getLive(current, signal);
    }
  }
  // The last re-read may already satisfy the request, or show the object gone.
  if (next(current) === undefined) return current as T | undefined;
  throw new FinalizerConflictError(
    `${what} on ${target.kind}: ${attempts} conflicting writes in a row`,
    attempts,
    lastConflict,
  );
}

/** A cached or fetched object with a resourceVersion, as opposed to a bare reference. */
function isFullObject<T extends KubeObject>(v: Readonly<T> | ObjectRef): v is Readonly<T> {
  return (
    typeof v === "object" &&
    "metadata" in v &&
    typeof v.metadata.resourceVersion === "string" &&
    v.metadata.resourceVersion !== ""
  );
}

function notFound(kind: string, ref: Readonly<KubeObject> | ObjectRef): ApiError {
  const name = typeof ref === "string" ? ref : "metadata" in ref ? (ref.metadata.name ?? "") : ref.name;
  return new ApiError({ status: 404, reason: "NotFound", message: `${kind} ${name} not found` });
}
