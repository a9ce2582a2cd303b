import type { KubeList, KubeObject, ResourceType } from "../kube/object.ts";
import { resourcePath } from "../kube/object.ts";
import type { RestClient } from "../kube/rest.ts";
import type { WatchEvent } from "../kube/watch.ts";

/** Parameters of one list page. */
export interface ListOptions {
  limit: number;
  continue?: string;
}

/** Parameters of one watch. */
export interface WatchOptions {
  resourceVersion: string;
  /** Server-side timeout; the server ends the stream normally after it. */
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
}

/**
 * The two calls a reflector makes. The production implementation is {@link restListerWatcher};
 * unit tests of the reflector's logic substitute their own.
 */
export interface ListerWatcher<T extends KubeObject> {
  /** One page; a 410 `Expired` on a stale continue token surfaces as ApiError. */
  list(opts: ListOptions, signal: AbortSignal): Promise<KubeList<T>>;
  /** A watch stream; ends normally on server timeout or abort. */
  watch(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
  /** For logs: the collection path. */
  readonly description: string;
}

/**
 * Lists and watches `resource` through `rest`, in one namespace or (namespace undefined)
 * across all namespaces, optionally only the objects matching `labelSelector` (the API server
 * filters both the list and the watch; an object that stops matching arrives as a deletion).
 * Lists ask for a consistent read (no resourceVersion), which the API server pages.
 */
export function restListerWatcher<T extends KubeObject>(
  rest: RestClient,
  resource: ResourceType,
  namespace: string | undefined,
  labelSelector?: string,
): ListerWatcher<T> {
  const path = resourcePath(resource, { namespace });
  const selector = labelSelector !== undefined && labelSelector !== "" ? { labelSelector } : {};
  return {
    description: labelSelector ? `${path}?labelSelector=${labelSelector}` : path,
    list(opts, signal) {
      return rest.request<KubeList<T>>({
        method: "GET",
        path,
        query: { limit: opts.limit, continue: opts.continue, ...selector },
        signal,
      });
    },
    watch(opts, signal) {
      return rest.watch<T>(
        path,
        {
          resourceVersion: opts.resourceVersion,
          timeoutSeconds: opts.timeoutSeconds,
          allowWatchBookmarks: opts.allowWatchBookmarks,
          ...selector,
        },
        signal,
      );
    },
  };
}
