/**
 * The watch wire format: the API server streams one JSON object per line
 * (`{"type":"ADDED","object":{...}}`) in a chunked response, and a chunk boundary may fall
 * anywhere, including inside a multi-byte UTF-8 character.
 */

/** The event types of a Kubernetes watch. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * One watch event. For `ERROR` the object is a `metav1.Status` (see `ApiError.fromStatus`), not a
 * `T`; for `BOOKMARK` only `metadata.resourceVersion` is meaningful.
 */
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** A line of the stream that is not a watch event. */
export class WatchDecodeError extends Error {
  override readonly name = "WatchDecodeError";
}

/**
 * Splits a byte stream into watch events. Feed it chunks as they arrive; it keeps the incomplete
 * tail (bytes and partial line) until the next chunk completes it. Blank lines are skipped.
 * Not thread-safe in any sense that matters in JS: one decoder per stream.
 */
export class WatchLineDecoder<T> {
  readonly #utf8 = new TextDecoder("utf-8", { fatal: false });
  /** Text received since the last newline, in pieces (joined once the line completes). */
  #parts: string[] = [];
  #partialLength = 0;

  /**
   * Decodes every complete line in `chunk` (plus what was buffered before it). Linear in the
   * input size even when one large object arrives in many small chunks.
   * @throws WatchDecodeError on a line that is not a JSON watch event (the other lines of the
   *   chunk are dropped with it; a watcher resumes from its last resourceVersion); the decoder
   *   stays usable.
   */
  push(chunk: Uint8Array | string): WatchEvent<T>[] {
    const piece = typeof chunk === "string" ? chunk : this.#utf8.decode(chunk, { stream: true });
    if (!piece.includes("\n")) {
      this.#parts.push(piece);
      this.#partialLength += piece.length;
      return [];
    }
    this.#parts.push(piece);
    const lines = this.#parts.join("").split("\n");
    const rest = lines.pop() ?? "";
    this.#parts = rest.length > 0 ? [rest] : [];
    this.#partialLength = rest.length;
    const out: WatchEvent<T>[] = [];
    for (const line of lines) {
      const ev = parseWatchLine<T>(line);
      if (ev !== undefined) out.push(ev);
    }
    return out;
  }

  /**
   * Decodes what is left once the stream has ended; a final line without a trailing newline is
   * still an event.
   * @throws WatchDecodeError when the remainder is not a complete event.
   */
  end(): WatchEvent<T>[] {
    const rest = this.#parts.join("") + this.#utf8.decode();
    this.#parts = [];
    this.#partialLength = 0;
    const ev = parseWatchLine<T>(rest);
    return ev === undefined ? [] : [ev];
  }

  /** Characters buffered while waiting for the end of a line. */
  get bufferedChars(): number {
    return this.#partialLength;
  }
}

/** Parses one line; `undefined` for a blank line. */
export function parseWatchLine<T>(line: string): WatchEvent<T> | undefined {
  const trimmed = line.trim();
  if (trimmed.length === 0) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(trimmed);
  } catch (e) {
    throw new WatchDecodeError(`watch line is not JSON: ${trimmed.slice(0, 120)}`, { cause: e });
  }
  if (typeof v !== "object" || v === null) throw new WatchDecodeError("watch line is not an object");
  const { type, object } = v as { type?: unknown; object?: unknown };
  if (typeof type !== "string" || !EVENT_TYPES.has(type)) {
    throw new WatchDecodeError(`unknown watch event type ${JSON.stringify(type)}`);
  }
  if (typeof object !== "object" || object === null)
    throw new WatchDecodeError(`${type} event without object`);
  return { type: type as WatchEventType, object: object as T };
}
