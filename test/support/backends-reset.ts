/**
 * Puts a shared control plane back as it was before a test file used it, envtest-style: a
 * baseline of every key under etcd's `/registry/` is taken once the control plane and the
 * project's CRDs are up, and a reset deletes each key created since, writes back each baseline key
 * changed or deleted since, and waits until kube-apiserver's caches have seen it. Finalizers,
 * namespaces that no controller would empty, and objects of CRDs the file created all go the same
 * way, at etcd's speed.
 *
 * kube-apiserver's own bookkeeping (its identity and endpoint leases) is left alone: it renews it
 * whatever tests do.
 */
import type { ControlPlane } from "./control-plane-api.ts";
import { applyOps, rangePrefix, type KeyValue, type KvOp } from "./etcd-kv.ts";
import { waitFor } from "./process.ts";

/** Where kube-apiserver keeps what it writes on its own schedule (never written back). */
const APISERVER_OWNED = [
  "/registry/leases/kube-system/apiserver-",
  "/registry/masterleases/",
  "/registry/peerserverleases/",
];

const ROOT = "/registry/";

/** A control plane's keys at rest, taken by {@link takeBaseline}. */
export interface Baseline {
  /** By key (latin1): the value and the revision it was last written at. */
  readonly keys: Map<string, KeyValue>;
  /** The namespaces that exist at rest. */
  readonly namespaces: ReadonlySet<string>;
}

const owned = (key: string): boolean => APISERVER_OWNED.some((p) => key.startsWith(p));

async function namespaceNames(cp: ControlPlane): Promise<Set<string>> {
  // resourceVersion=0: what kube-apiserver's watch cache holds, the view a new informer lists.
  const res = await cp.request("GET", "/api/v1/namespaces?resourceVersion=0");
  if (res.status !== 200) throw new Error(`listing namespaces: HTTP ${res.status} ${res.text}`);
  const items = (res.body as { items?: { metadata: { name: string } }[] }).items ?? [];
  return new Set(items.map((i) => i.metadata.name));
}

/** Takes the baseline of `cp` as it is now. */
export async function takeBaseline(cp: ControlPlane): Promise<Baseline> {
  const keys = new Map(
    (await rangePrefix(cp.etcdEndpoint, ROOT)).map((kv) => [kv.key.toString("latin1"), kv]),
  );
  return { keys, namespaces: await namespaceNames(cp) };
}

/**
 * Resets `cp` to `baseline` (see the module comment) and resolves once its namespace cache shows
 * no namespace the baseline does not have. Returns how many keys it deleted and wrote back.
 */
export async function resetToBaseline(
  cp: ControlPlane,
  baseline: Baseline,
): Promise<{ deleted: number; restored: number }> {
  const now = await rangePrefix(cp.etcdEndpoint, ROOT, true);
  const seen = new Set<string>();
  const ops: KvOp[] = [];
  const restored: string[] = [];
  for (const kv of now) {
    const key = kv.key.toString("latin1");
    seen.add(key);
    const base = baseline.keys.get(key);
    if (base === undefined) ops.push({ delete: kv.key });
    else if (base.modRevision !== kv.modRevision && !owned(key)) {
      ops.push({ put: { key: base.key, value: base.value } });
      restored.push(key);
    }
  }
  for (const [key, base] of baseline.keys) {
    if (!seen.has(key) && !owned(key)) {
      ops.push({ put: { key: base.key, value: base.value } });
      restored.push(key);
    }
  }
  const deleted = ops.length - restored.length;
  if (ops.length === 0) return { deleted, restored: 0 };
  await applyOps(cp.etcdEndpoint, ops);
  if (restored.length > 0) {
    // What was written back is at rest again at its new revision.
    const revisions = new Map(
      (await rangePrefix(cp.etcdEndpoint, ROOT, true)).map((kv) => [
        kv.key.toString("latin1"),
        kv.modRevision,
      ]),
    );
    for (const key of restored) {
      const base = baseline.keys.get(key);
      const rev = revisions.get(key);
      if (base !== undefined && rev !== undefined) base.modRevision = rev;
    }
  }
  await waitFor(
    "the API server's caches to drop the last file's namespaces",
    async () => [...(await namespaceNames(cp))].every((n) => baseline.namespaces.has(n)),
    30_000,
    20,
  );
  return { deleted, restored: restored.length };
}
