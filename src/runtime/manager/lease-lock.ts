/**
 * The leader-election lock: one coordination.k8s.io/v1 Lease, read and written with optimistic
 * concurrency (every update carries the resourceVersion it was based on).
 */
import { httpStatusOf } from "../kube/errors.ts";
import type { KubeRequester } from "../kube/rest.ts";

/** What the lock records, in client-go's `LeaderElectionRecord` terms. Times are epoch ms. */
export interface LeaderElectionRecord {
  /** Empty when nobody holds the lease (never acquired, or released). */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: number | undefined;
  readonly renewTime: number | undefined;
  readonly leaseTransitions: number;
}

/** A record as stored, with the resourceVersion a later update must name. */
export interface ObservedRecord {
  readonly record: LeaderElectionRecord;
  readonly resourceVersion: string;
}

/**
 * Storage for the election record. `create` and `update` must fail (with an error whose `status`
 * is 409) when another writer got there first; that is what makes the election safe.
 */
export interface ResourceLock {
  /** `namespace/name`, for logs. */
  describe(): string;
  /** The current record, or `undefined` when the lock object does not exist. */
  get(signal: AbortSignal): Promise<ObservedRecord | undefined>;
  /** Creates the lock object; 409 when it already exists. Returns the new resourceVersion. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<string>;
  /** Replaces the record if `resourceVersion` is still current; 409 otherwise. */
  update(record: LeaderElectionRecord, resourceVersion: string, signal: AbortSignal): Promise<string>;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** A {@link ResourceLock} on `coordination.k8s.io/v1` Lease `namespace/name`. */
export class LeaseLock implements ResourceLock {
  readonly #client: KubeRequester;
  readonly #namespace: string;
  readonly #name: string;

  constructor(client: KubeRequester, namespace: string, name: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#name = name;
  }

  describe(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  async get(signal: AbortSignal): Promise<ObservedRecord | undefined> {
    let lease: Lease;
    try {
      lease = await this.#client.request<Lease>({ method: "GET", path: this.#objectPath(), signal });
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
    return { record: fromSpec(lease.spec ?? {}), resourceVersion: lease.metadata.resourceVersion ?? "" };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<string> {
    const lease = await this.#client.request<Lease>({
      method: "POST",
      path: this.#collectionPath(),
      body: this.#lease(record, undefined),
      signal,
    });
    return lease.metadata.resourceVersion ?? "";
  }

  async update(record: LeaderElectionRecord, resourceVersion: string, signal: AbortSignal): Promise<string> {
    const lease = await this.#client.request<Lease>({
      method: "PUT",
      path: this.#objectPath(),
      body: this.#lease(record, resourceVersion),
      signal,
    });
    return lease.metadata.resourceVersion ?? "";
  }

  #collectionPath(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#namespace)}/leases`;
  }

  #objectPath(): string {
    return `${this.#collectionPath()}/${encodeURIComponent(this.#name)}`;
  }

  #lease(record: LeaderElectionRecord, resourceVersion: string | undefined): Lease {
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: this.#name,
        namespace: this.#namespace,
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      },
      spec: toSpec(record),
    };
  }
}

/** Epoch ms -> a Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`). */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function parseTime(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || text === "") return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

function fromSpec(spec: LeaseSpec): LeaderElectionRecord {
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec.acquireTime),
    renewTime: parseTime(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function toSpec(r: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    ...(r.acquireTime !== undefined ? { acquireTime: formatMicroTime(r.acquireTime) } : {}),
    ...(r.renewTime !== undefined ? { renewTime: formatMicroTime(r.renewTime) } : {}),
    leaseTransitions: r.leaseTransitions,
  };
}

/** Whether two records are the same, field by field (client-go compares them to detect change). */
export function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}
