/**
 * The three patch kinds the API server accepts for custom resources, as one tagged union.
 */
import type { KubeObject } from "../kube/object.ts";

/** One RFC 6902 operation. */
export type JsonPatchOp =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/**
 * A patch:
 * - `merge`: RFC 7386 JSON merge patch. Lists are replaced whole; `null` deletes a field. Put
 *   `metadata.resourceVersion` in it to make it conditional (409 when the object moved on).
 * - `json`: RFC 6902 JSON patch; a `test` op makes the whole patch fail when it does not hold.
 * - `apply`: server-side apply of a partial object owned by the client's field manager. `force`
 *   (default `true`, the controller convention) takes fields over from other managers instead of
 *   failing with a conflict. `apiVersion`, `kind`, `name` and `namespace` are filled in.
 */
export type Patch =
  | { type: "merge"; patch: Record<string, unknown> }
  | { type: "json"; ops: readonly JsonPatchOp[] }
  | { type: "apply"; object: ApplyObject; force?: boolean };

/** The partial object of a server-side apply. */
export type ApplyObject = Partial<Omit<KubeObject, "metadata">> & {
  metadata?: KubeObject["metadata"];
} & Record<string, unknown>;

/** The request `Content-Type` of each patch kind. */
export const patchContentType: Readonly<Record<Patch["type"], string>> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};
