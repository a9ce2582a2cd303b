/**
 * The IAM table of docs/aws.md, rendered from the kind registry: every action a kind's driver
 * calls, and when. The table sits between two marker comments in the hand-written page; only
 * that section is generated. Pure: returns text.
 */
import { AWS_ACCOUNTS_IAM } from "../accounts/iam.ts";
import { CHANGE_EVENTS_IAM } from "../change-events/iam.ts";
import { callsOf, type IamFeature, type KindModule } from "../reconcilers/common/kind.ts";
import { BULK_TAG_READS_IAM } from "../reconcilers/common/tag-snapshots.ts";

/** Path of the page, relative to the repository root. */
export const AWS_DOC = "docs/aws.md";

/** The IAM of the parts of the operator other than the kinds, in the order the table and policies list them. */
export const IAM_FEATURES: readonly IamFeature[] = Object.freeze([
  CHANGE_EVENTS_IAM,
  BULK_TAG_READS_IAM,
  AWS_ACCOUNTS_IAM,
]);

const BEGIN = "<!-- BEGIN generated IAM table: `make manifests` writes it from src/kinds.ts -->";
const END = "<!-- END generated IAM table -->";

/** The IAM table: one row per kind and action, in registry order, then the features' rows. */
export function renderIamTable(kinds: readonly KindModule[], features: readonly IamFeature[] = []): string {
  const parts = [...kinds.map((k) => ({ name: k.resource.kind, iam: k.iam })), ...features];
  const rows = parts.flatMap((k) =>
    k.iam.map((a) => `| ${k.name} | \`${a.action}\` | ${callsOf(a).join(", ")} | ${a.when ?? "always"} |`),
  );
  return ["| Kind | Action | Calls | Needed |", "| --- | --- | --- | --- |", ...rows].join("\n") + "\n";
}

/**
 * `doc` with the text between the markers replaced by the table of `kinds`.
 * @throws Error when the markers are missing or out of order.
 */
export function withIamTable(
  doc: string,
  kinds: readonly KindModule[],
  features: readonly IamFeature[] = [],
): string {
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${AWS_DOC} lacks the markers ${BEGIN} ... ${END}`);
  return doc.slice(0, from + BEGIN.length) + "\n\n" + renderIamTable(kinds, features) + "\n" + doc.slice(to);
}
