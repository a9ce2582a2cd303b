/**
 * Reads manifests as `kubectl apply -f` does: `-f -` is standard input; a file is read whatever
 * its name; a folder contributes its files ending in `.json`, `.yaml` or `.yml`, in name order,
 * and with `recursive` those of its subfolders too. A file holds YAML documents separated by
 * `---` (JSON is YAML), read as YAML 1.1 as kubectl reads them; empty documents are skipped, and
 * a `kind: List` (or another `*List` kind with `items`) stands for its items.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { JsonValue } from "../api/schema/openapi.ts";

/** One object read from a manifest, with where it came from (`file` or `-`, and its document). */
export interface Manifest {
  readonly source: string;
  readonly object: Record<string, JsonValue>;
}

/** A manifest that cannot be read; the message names the file and document. */
export class ManifestError extends Error {
  override readonly name = "ManifestError";
}

/** The extensions kubectl reads from a folder. */
const MANIFEST_EXTENSIONS = [".json", ".yaml", ".yml"];

/** Every object of the sources `paths` (in order); `stdin` reads `-`. */
export async function readManifests(
  paths: readonly string[],
  opts: { recursive: boolean; stdin: () => Promise<string> },
): Promise<Manifest[]> {
  const out: Manifest[] = [];
  for (const p of paths) {
    if (p === "-") {
      out.push(...parseManifests(await opts.stdin(), "-"));
      continue;
    }
    for (const file of await filesOf(p, opts.recursive, true)) {
      out.push(...parseManifests(await readFile(file, "utf8"), file));
    }
  }
  return out;
}

/** The files `path` names: itself, or a folder's manifest files. */
async function filesOf(path: string, recursive: boolean, top: boolean): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw new ManifestError(`the path "${path}" does not exist`, { cause: err });
  }
  if (!info.isDirectory()) return [path];
  if (!top && !recursive) return [];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const files: string[] = [];
  for (const e of entries) {
    const full = join(path, e.name);
    if (e.isDirectory()) {
      if (recursive) files.push(...(await filesOf(full, recursive, false)));
    } else if (MANIFEST_EXTENSIONS.some((ext) => e.name.endsWith(ext))) {
      files.push(full);
    }
  }
  return files;
}

/** The objects of one file's text. */
export function parseManifests(text: string, source: string): Manifest[] {
  const out: Manifest[] = [];
  const docs = parseAllDocuments(text, { version: "1.1", uniqueKeys: false });
  if (!Array.isArray(docs)) return out;
  docs.forEach((doc, i) => {
    const where = `${source} (document ${i + 1})`;
    if (doc.errors.length > 0) throw new ManifestError(`${where}: ${doc.errors[0]?.message ?? "not YAML"}`);
    const value = doc.toJS({ maxAliasCount: 100 }) as JsonValue;
    if (value === null || value === undefined) return;
    if (typeof value !== "object" || Array.isArray(value)) throw new ManifestError(`${where}: not an object`);
    out.push(...expandList(value, where));
  });
  return out;
}

/** An object, or the items of a List. */
function expandList(value: Record<string, JsonValue>, where: string): Manifest[] {
  const kind = value.kind;
  const items = value.items;
  if (typeof kind === "string" && kind.endsWith("List") && Array.isArray(items)) {
    return items.flatMap((item, j) => {
      if (item === null || typeof item !== "object" || Array.isArray(item))
        throw new ManifestError(`${where}: item ${j + 1} is not an object`);
      return expandList(item, `${where} item ${j + 1}`);
    });
  }
  if (typeof value.apiVersion !== "string" || typeof kind !== "string")
    throw new ManifestError(`${where}: an object needs apiVersion and kind`);
  return [{ source: where, object: value }];
}
