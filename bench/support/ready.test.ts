import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readyNames } from "./ready.ts";

describe("readyNames", () => {
  it("names the listed objects whose Ready condition is True, from the path asked", async () => {
    const asked: string[] = [];
    const cp = {
      request: async (_method: string, path: string) => {
        asked.push(path);
        return {
          status: 200,
          text: "",
          body: {
            items: [
              { metadata: { name: "a" }, status: { conditions: [{ type: "Ready", status: "True" }] } },
              { metadata: { name: "b" }, status: { conditions: [{ type: "Ready", status: "False" }] } },
              { metadata: { name: "c" }, status: { conditions: [{ type: "Synced", status: "True" }] } },
              { metadata: { name: "d" } },
            ],
          },
        };
      },
    };
    assert.deepEqual(await readyNames(cp, "/apis/x?labelSelector=a%3Db"), ["a"]);
    assert.deepEqual(asked, ["/apis/x?labelSelector=a%3Db"]);
  });
});
