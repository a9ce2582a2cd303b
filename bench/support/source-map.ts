/**
 * Source maps (version 3, as esbuild writes them beside the bundle and each of its chunks): which
 * original file a position of a generated script comes from. Benchmarks use it to say which
 * package a CPU profile's function belongs to when the operator runs as the bundle.
 *
 * Only the source of a position is decoded (the generated column and the source index of each
 * segment); original lines, columns and names are skipped over.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/**
 * The Base64 VLQ numbers of one segment of a `mappings` string (`"AAgBC"` is `[0, 0, 16, 1]`):
 * each digit holds 5 bits, least significant first, with a continuation bit (32); the lowest
 * bit of the whole number is its sign.
 */
export function decodeVlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of segment) {
    const digit = DIGIT.get(c);
    if (digit === undefined) throw new Error(`source map: ${JSON.stringify(c)} is not a Base64 digit`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  if (shift !== 0) throw new Error(`source map: segment ${JSON.stringify(segment)} ends inside a number`);
  return out;
}

/** The fields of a source map this module reads. */
export interface SourceMapJson {
  readonly version: number;
  readonly sources: readonly (string | null)[];
  readonly sourceRoot?: string;
  readonly mappings: string;
}

/** A decoded source map: for each generated line, its segments' columns and sources. */
export class SourceMap {
  readonly #sources: readonly (string | null)[];
  /** Per generated line: generated column, source index (-1: no source), column, source, ... */
  readonly #lines: Int32Array[];

  constructor(json: SourceMapJson) {
    if (json.version !== 3) throw new Error(`source map: version ${json.version}, not 3`);
    if ("sections" in json) throw new Error("source map: index maps (sections) are not read");
    const root = json.sourceRoot ?? "";
    this.#sources = json.sources.map((s) =>
      s === null || root === "" ? s : `${root.replace(/\/?$/, "/")}${s}`,
    );
    this.#lines = [];
    let source = 0;
    for (const line of json.mappings.split(";")) {
      const cells: number[] = [];
      let column = 0;
      for (const segment of line.split(",")) {
        if (segment === "") continue;
        const f = decodeVlq(segment);
        column += f[0] ?? 0;
        if (f.length >= 4) {
          source += f[1] ?? 0;
          cells.push(column, source);
        } else cells.push(column, -1);
      }
      // Segments are sorted by column within a line (the specification's order, esbuild's too).
      this.#lines.push(Int32Array.from(cells));
    }
  }

  /**
   * The original file (as the map names it, `sourceRoot` applied) of the 0-based `line` and
   * `column` of the generated script: that of the closest segment at or before the position,
   * on its line or an earlier one. Undefined before the first segment, or where that segment
   * names no source (code the bundler generated itself).
   */
  sourceAt(line: number, column: number): string | undefined {
    const past = line >= this.#lines.length;
    for (
      let l = past ? this.#lines.length - 1 : line, col = past ? Infinity : column;
      l >= 0;
      l--, col = Infinity
    ) {
      const cells = this.#lines[l];
      if (cells === undefined || cells.length === 0) continue;
      // The last segment whose column is <= col.
      let lo = 0;
      let hi = cells.length / 2 - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if ((cells[2 * mid] ?? 0) <= col) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (found < 0) continue;
      const index = cells[2 * found + 1] ?? -1;
      return index < 0 ? undefined : (this.#sources[index] ?? undefined);
    }
    return undefined;
  }
}

/**
 * The source map a script links to with its `//# sourceMappingURL=` comment (a file beside it
 * or a `data:` URL), or undefined when it links none or the file is missing.
 */
export function linkedSourceMap(scriptFile: string): SourceMap | undefined {
  const code = readFileSync(scriptFile, "utf8");
  const url = /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(code.slice(-4096))?.[1];
  if (url === undefined) return undefined;
  const data = /^data:application\/json[^,]*?(;base64)?,(.*)$/.exec(url);
  if (data !== null) {
    const payload = data[2] ?? "";
    const text =
      data[1] !== undefined ? Buffer.from(payload, "base64").toString("utf8") : decodeURIComponent(payload);
    return new SourceMap(JSON.parse(text) as SourceMapJson);
  }
  const file = path.resolve(path.dirname(scriptFile), decodeURIComponent(url));
  if (!existsSync(file)) return undefined;
  return new SourceMap(JSON.parse(readFileSync(file, "utf8")) as SourceMapJson);
}
