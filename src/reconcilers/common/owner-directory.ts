/**
 * The {@link OwnerDirectory} over the shared informer cache: whether the object an AWS resource's
 * ownership tags name still exists, answered without a request to the API server.
 */
import type { Client } from "../../runtime/client/index.ts";
import type { ResourceType } from "../../runtime/kube/object.ts";
import type { OwnerDirectory, OwnerLiveness, TaggedOwner } from "./ownership.ts";

/** Options of {@link CacheOwnerDirectory}. */
export interface CacheOwnerDirectoryOptions {
  client: Pick<Client, "resource">;
  /** The managed kinds by kind name (the value of the kind ownership tag). */
  kinds: readonly ResourceType[];
  /** The namespaces the cache watches; empty or undefined: every namespace. */
  namespaces?: readonly string[] | undefined;
}

/** Reads owners from the cache; throws the cache's not-synced error before it has synced. */
export class CacheOwnerDirectory implements OwnerDirectory {
  readonly #client: Pick<Client, "resource">;
  readonly #kinds: ReadonlyMap<string, ResourceType>;
  readonly #namespaces: ReadonlySet<string> | undefined;

  constructor(opts: CacheOwnerDirectoryOptions) {
    this.#client = opts.client;
    this.#kinds = new Map(opts.kinds.map((k) => [k.kind, k]));
    this.#namespaces =
      opts.namespaces !== undefined && opts.namespaces.length > 0 ? new Set(opts.namespaces) : undefined;
  }

  liveness(owner: TaggedOwner): OwnerLiveness {
    const { kind, namespace, name } = owner;
    if (kind === undefined || namespace === undefined || name === undefined) return "unknown";
    const resource = this.#kinds.get(kind);
    if (resource === undefined) return "unknown";
    if (this.#namespaces !== undefined && !this.#namespaces.has(namespace)) return "unknown";
    const found = this.#client.resource(resource).get({ namespace, name });
    return found?.metadata.uid === owner.uid ? "live" : "gone";
  }
}
