import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { IAM_POLICY } from "./iam-policy.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const PAGES = ["docs/accounts.md", "docs/eks.md"];

interface Statement {
  Sid?: string;
  Action?: string | string[];
  Principal?: unknown;
  [key: string]: unknown;
}

/**
 * The JSON policies of `page`: its JSON code blocks, and the documents its shell blocks write with
 * `cat > FILE.json <<EOF`, whose `$VARIABLES` stand in as they are.
 */
function policyTexts(page: string): string[] {
  const text = readFileSync(join(root, page), "utf8");
  const json = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  const heredocs = [...text.matchAll(/cat > \S+\.json <<EOF\n([\s\S]*?)\n\s*EOF\n/g)].map((m) => m[1] ?? "");
  return [...json, ...heredocs];
}

/** Every policy statement of `page` ({@link policyTexts}): whole documents and lone statements. */
function statementsOf(page: string): Statement[] {
  const out: Statement[] = [];
  for (const text of policyTexts(page)) {
    const block = JSON.parse(text) as { Statement?: Statement[] } & Statement;
    if (Array.isArray(block.Statement)) out.push(...block.Statement);
    else if (block.Action !== undefined) out.push(block);
  }
  return out;
}

const actions = (s: Statement): string[] =>
  s.Action === undefined ? [] : typeof s.Action === "string" ? [s.Action] : s.Action;

describe("the IAM the install pages show", () => {
  it("allows sts:TagSession wherever it allows sts:AssumeRole, as EKS Pod Identity's transitive session tags need", () => {
    let seen = 0;
    for (const page of PAGES) {
      for (const s of statementsOf(page)) {
        if (!actions(s).includes("sts:AssumeRole")) continue;
        seen += 1;
        assert.ok(
          actions(s).includes("sts:TagSession"),
          `${page}: ${JSON.stringify(s)} lacks sts:TagSession`,
        );
      }
    }
    // The operator's statement, the tenant role's trust policy and the Pod Identity trust policies.
    assert.ok(seen >= 4, `${seen} statements allow sts:AssumeRole`);
  });

  it("shows the operator's AssumeRole statement as config/iam/policy.json has it", () => {
    const policy = JSON.parse(readFileSync(join(root, IAM_POLICY), "utf8")) as { Statement: Statement[] };
    const generated = policy.Statement.find((s) => actions(s).includes("sts:AssumeRole"));
    assert.ok(generated !== undefined, `${IAM_POLICY} allows no sts:AssumeRole`);
    const shown = statementsOf("docs/accounts.md").find((s) => s.Sid === generated.Sid);
    assert.deepEqual(shown, generated);
  });

  it("has the tenant role trust the operator's role with the external ID", () => {
    const trust = statementsOf("docs/accounts.md").filter(
      (s) => actions(s).includes("sts:AssumeRole") && JSON.stringify(s.Principal ?? {}).includes(":role/"),
    );
    assert.equal(trust.length, 1);
    assert.deepEqual(trust[0]?.["Condition"], { StringEquals: { "sts:ExternalId": "team-a-7f3c" } });
  });
});
