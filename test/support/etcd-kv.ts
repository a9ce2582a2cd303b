/**
 * etcd's key-value API through its JSON gateway (`/v3/kv/*` on the client URL), for the test
 * harness: read every key under a prefix with its revisions, put and delete keys, in batches no
 * larger than etcd's default `--max-txn-ops` (128).
 */

/** A key as etcd holds it: raw bytes, with the revisions of its creation and last change. */
export interface KeyValue {
  key: Buffer;
  value: Buffer;
  createRevision: number;
  modRevision: number;
}

/** One change of a transaction. */
export type KvOp = { put: { key: Buffer; value: Buffer } } | { delete: Buffer };

/** etcd's default limit on the operations of one transaction. */
const MAX_TXN_OPS = 128;

interface WireKv {
  key: string;
  value?: string;
  create_revision?: string;
  mod_revision?: string;
}

const b64 = (b: Buffer): string => b.toString("base64");

/** The smallest key greater than every key starting with `prefix` (etcd's prefix range end). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if ((end[i] ?? 0) < 0xff) {
      end[i] = (end[i] ?? 0) + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

async function call(endpoint: string, api: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${endpoint}/v3/${api}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${api}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/** Every key under `prefix`, with values unless `keysOnly`, in key order. */
export async function rangePrefix(endpoint: string, prefix: string, keysOnly = false): Promise<KeyValue[]> {
  const key = Buffer.from(prefix);
  const got = (await call(endpoint, "kv/range", {
    key: b64(key),
    range_end: b64(prefixEnd(key)),
    keys_only: keysOnly,
  })) as { kvs?: WireKv[] };
  return (got.kvs ?? []).map((kv) => ({
    key: Buffer.from(kv.key, "base64"),
    value: Buffer.from(kv.value ?? "", "base64"),
    createRevision: Number(kv.create_revision ?? 0),
    modRevision: Number(kv.mod_revision ?? 0),
  }));
}

/** Applies `ops`, in transactions of at most {@link MAX_TXN_OPS} operations each. */
export async function applyOps(endpoint: string, ops: readonly KvOp[]): Promise<void> {
  for (let i = 0; i < ops.length; i += MAX_TXN_OPS) {
    const success = ops
      .slice(i, i + MAX_TXN_OPS)
      .map((op) =>
        "put" in op
          ? { request_put: { key: b64(op.put.key), value: b64(op.put.value) } }
          : { request_delete_range: { key: b64(op.delete) } },
      );
    await call(endpoint, "kv/txn", { success });
  }
}
