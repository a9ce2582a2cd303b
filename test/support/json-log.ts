/**
 * A JSON-lines log file that another process is appending to, read incrementally: each read
 * parses only the bytes written since the last one, up to the last complete line, so a test that
 * polls a long operator log (tens of thousands of lines) pays for the new lines alone instead of
 * reading and parsing the whole file on every poll.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";

/** One parsed JSON log line. */
export interface LogLine {
  msg?: string;
  level?: number;
  identity?: string;
  [key: string]: unknown;
}

const NEWLINE = 0x0a;

/**
 * Parses the JSON objects among `text`'s lines, as `T`; other lines (a stack trace, a banner, a
 * line still being written) are left out.
 */
export function parseJsonLines<T = LogLine>(text: string): T[] {
  const out: T[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // not a whole JSON object
    }
  }
  return out;
}

/** The parsed lines of a log file as it grows; see the module comment. */
export class JsonLogTail {
  readonly file: string;
  /** Bytes parsed so far: always the end of a complete line. */
  #offset = 0;
  readonly #lines: LogLine[] = [];

  constructor(file: string) {
    this.file = file;
  }

  /** Every JSON line written so far, in order (a line still being written is left for later). */
  lines(): readonly LogLine[] {
    this.#catchUp();
    return this.#lines;
  }

  /** How many JSON lines were written so far: an index to read {@link since}. */
  count(): number {
    return this.lines().length;
  }

  /** The JSON lines written after the first `index` ones. */
  since(index: number): readonly LogLine[] {
    return this.lines().slice(index);
  }

  #catchUp(): void {
    if (!existsSync(this.file)) return;
    const fd = openSync(this.file, "r");
    try {
      const size = fstatSync(fd).size;
      if (size <= this.#offset) return;
      const buf = Buffer.allocUnsafe(size - this.#offset);
      let read = 0;
      while (read < buf.length) {
        const n = readSync(fd, buf, read, buf.length - read, this.#offset + read);
        if (n === 0) break;
        read += n;
      }
      // Only complete lines: the rest is parsed once its newline is written. Cutting at a newline
      // byte never splits a UTF-8 character.
      const end = buf.subarray(0, read).lastIndexOf(NEWLINE);
      if (end < 0) return;
      for (const line of parseJsonLines(buf.subarray(0, end).toString("utf8"))) this.#lines.push(line);
      this.#offset += end + 1;
    } finally {
      closeSync(fd);
    }
  }
}
