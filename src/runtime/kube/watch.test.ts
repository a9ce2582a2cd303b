import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WatchDecodeError, WatchLineDecoder, parseWatchLine } from "./watch.ts";

const line = (type: string, name: string): string =>
  `${JSON.stringify({ type, object: { metadata: { name } } })}\n`;

describe("WatchLineDecoder", () => {
  it("decodes several events from one chunk", () => {
    const d = new WatchLineDecoder<{ metadata: { name: string } }>();
    const evs = d.push(line("ADDED", "a") + line("MODIFIED", "b") + line("DELETED", "c"));
    assert.deepEqual(
      evs.map((e) => `${e.type}:${e.object.metadata.name}`),
      ["ADDED:a", "MODIFIED:b", "DELETED:c"],
    );
    assert.equal(d.bufferedChars, 0);
  });

  it("holds a partial line until the chunk that completes it, at every split point", () => {
    const text = line("ADDED", "ünïcødé-name") + line("BOOKMARK", "b");
    const bytes = Buffer.from(text, "utf8");
    for (let cut = 1; cut < bytes.length; cut++) {
      const d = new WatchLineDecoder<{ metadata: { name: string } }>();
      const evs = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut)), ...d.end()];
      assert.deepEqual(
        evs.map((e) => `${e.type}:${e.object.metadata.name}`),
        ["ADDED:ünïcødé-name", "BOOKMARK:b"],
        `split at byte ${cut}`,
      );
    }
  });

  it("delivers a final line without a trailing newline at the end of the stream", () => {
    const d = new WatchLineDecoder();
    assert.deepEqual(d.push(line("ADDED", "a").trimEnd()), []);
    assert.equal(d.end().length, 1);
  });

  it("skips blank lines and rejects lines that are not watch events", () => {
    const d = new WatchLineDecoder();
    assert.deepEqual(d.push("\n\r\n"), []);
    assert.throws(() => d.push("not json\n"), WatchDecodeError);
    assert.throws(() => parseWatchLine('{"type":"SOMETHING","object":{}}'), /unknown watch event type/);
    assert.throws(() => parseWatchLine('{"type":"ADDED"}'), /without object/);
    assert.equal(d.push(line("ADDED", "after")).length, 1);
  });
});

describe("WatchLineDecoder with large objects", () => {
  it("reassembles a 1 MiB event delivered in 1 KiB chunks", () => {
    const big = "x".repeat(1 << 20);
    const bytes = Buffer.from(
      JSON.stringify({ type: "ADDED", object: { metadata: { name: "big" }, data: { big } } }) + "\n",
    );
    const d = new WatchLineDecoder<{ data: { big: string } }>();
    const evs = [];
    for (let i = 0; i < bytes.length; i += 1024) evs.push(...d.push(bytes.subarray(i, i + 1024)));
    assert.equal(evs.length, 1);
    assert.equal(evs[0]?.object.data.big.length, 1 << 20);
    assert.equal(d.bufferedChars, 0);
  });
});
