import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pages } from "./pages.ts";

/** Collects every page `fetch` yields, recording the tokens it was asked for. */
async function collect(answers: Record<string, { items: number[]; next?: string }>): Promise<{
  items: number[];
  asked: (string | undefined)[];
}> {
  const asked: (string | undefined)[] = [];
  const items: number[] = [];
  for await (const page of pages(
    async (token) => {
      asked.push(token);
      const a = answers[token ?? ""];
      assert.ok(a !== undefined, `no page for ${String(token)}`);
      return a;
    },
    (p) => p.next,
  )) {
    items.push(...page.items);
  }
  return { items, asked };
}

describe("pages", () => {
  it("follows the continuation token until a page has none (or an empty one)", async () => {
    const out = await collect({
      "": { items: [1], next: "a" },
      a: { items: [2], next: "b" },
      b: { items: [3], next: "" },
    });
    assert.deepEqual(out, { items: [1, 2, 3], asked: [undefined, "a", "b"] });
  });

  it("ends at a token seen before instead of looping", async () => {
    const out = await collect({
      "": { items: [1], next: "a" },
      a: { items: [2], next: "b" },
      b: { items: [3], next: "a" },
    });
    assert.deepEqual(out, { items: [1, 2, 3], asked: [undefined, "a", "b"] });
  });

  it("reads no further page once the caller stops", async () => {
    const asked: (string | undefined)[] = [];
    for await (const page of pages(
      async (token) => {
        asked.push(token);
        return { next: `${token ?? ""}x` };
      },
      (p) => p.next,
    )) {
      if (page.next === "xx") break;
    }
    assert.deepEqual(asked, [undefined, "x"]);
  });
});
