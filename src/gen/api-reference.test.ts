import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { awsAccountModule } from "../accounts/index.ts";
import type { CustomResourceDefinition } from "../api/schema/crd.ts";
import type { JSONSchemaProps } from "../api/schema/openapi.ts";
import { KINDS } from "../kinds.ts";
import { API_REFERENCE, renderApiReference } from "./api-reference.ts";
import { generatedFiles } from "./files.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const CRDS = [...KINDS.map((k) => k.crd()), awsAccountModule.crd()];

/** The cells of the table rows of `page` (split at unescaped `|`), keyed by the first cell's path. */
function fieldRows(page: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of page.split("\n")) {
    const m = /^\| `((?:spec|status)[^`]*)` \|/.exec(line);
    if (m === null) continue;
    const cells = line
      .slice(2, -2)
      .split(/(?<!\\) \| /)
      .map((c) => c.trim());
    out.set(m[1] ?? "", cells);
  }
  return out;
}

/** Every field path under `node`, walked independently of the renderer. */
function paths(node: JSONSchemaProps, prefix: string): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    out.push(`${prefix}.${name}`, ...below(child, `${prefix}.${name}`));
  }
  return out;
}
function below(node: JSONSchemaProps, path: string): string[] {
  if (node.properties) return paths(node, path);
  if (node.items) return below(node.items, `${path}[]`);
  if (node.additionalProperties) return below(node.additionalProperties, `${path}.<key>`);
  return [];
}

const page = renderApiReference(CRDS);
const rows = fieldRows(page);

describe("the API reference", () => {
  it("has one row, of six cells, for every field of every kind's spec and status", () => {
    const want = CRDS.flatMap((crd) => {
      const schema = crd.spec.versions[0]?.schema.openAPIV3Schema;
      return ["spec", "status"].flatMap((p) => {
        const node = schema?.properties?.[p];
        return node ? paths(node, p).map((f) => `${crd.spec.names.kind} ${f}`) : [];
      });
    });
    // Paths repeat across kinds (spec.region); each kind's section must hold its own.
    const sections = page.split(/^## /m).slice(1);
    const got = sections.flatMap((s) => {
      const kind = s.split("\n")[0] ?? "";
      return [...fieldRows(s).keys()].map((f) => `${kind} ${f}`);
    });
    assert.ok(want.length > 250, `fields found: ${want.length}`);
    assert.deepEqual(got, want);
    for (const [path, cells] of rows) assert.equal(cells.length, 6, `${path}: ${cells.join(" | ")}`);
  });

  it("states required fields, defaults, bounds and immutability as the CRD declares them", () => {
    const bucket = rows.get("spec.bucketName") ?? [];
    assert.equal(bucket[2], "yes");
    assert.match(bucket[4] ?? "", /length 3-63/);
    assert.match(bucket[4] ?? "", /immutable/);
    assert.match(bucket[4] ?? "", /must not contain two adjacent periods/);
    const desired = rows.get("spec.desiredState") ?? [];
    assert.equal(desired[3], '`"running"`');
    assert.match(desired[4] ?? "", /one of `"running"`, `"stopped"`/);
  });

  it("puts a rule that names a field (fieldPath) on that field's row", () => {
    assert.match(rows.get("spec.storage")?.[4] ?? "", /storage is immutable/);
    assert.doesNotMatch(page, /^Rules on `spec`: .*storage is immutable/m);
  });

  it("escapes what would break a table cell or read as HTML", () => {
    const crd: CustomResourceDefinition = {
      ...(CRDS[0] as CustomResourceDefinition),
      spec: {
        ...(CRDS[0] as CustomResourceDefinition).spec,
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            additionalPrinterColumns: [],
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    properties: {
                      a: { type: "string", pattern: "^(x|y)$", description: "one | two <b>\nthree" },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    const row = fieldRows(renderApiReference([crd])).get("spec.a") ?? [];
    assert.deepEqual(row.slice(4), ["pattern `^(x\\|y)$`", "one \\| two &lt;b&gt; three"]);
  });

  it("is one of the files make manifests writes", () => {
    assert.equal(generatedFiles(root).get(API_REFERENCE), page);
  });
});
