/**
 * The pages users read, as the documentation checks see them: the README and docs/*.md, their
 * text, their paragraphs and code blocks, and the repository files they may name. Reads files
 * only.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { headingAnchor } from "../../src/gen/markdown.ts";
import { repoRoot } from "../support/process.ts";

/** A file of the repository, relative to its root. */
export const read = (file: string): string => readFileSync(path.join(repoRoot, file), "utf8");

/** The pages users read: the README and docs/*.md. */
export const PAGES: readonly string[] = [
  "README.md",
  ...readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

/** One fenced code block of a page: its language and its lines. */
export interface CodeBlock {
  readonly lang: string;
  readonly text: string;
}

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(text: string): CodeBlock[] {
  return [...text.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] ?? "",
    text: m[2] ?? "",
  }));
}

/** The text of a page outside its code blocks. */
export function prose(text: string): string {
  return text.replace(/^```[a-z]*\n[\s\S]*?^```$/gm, "");
}

/** The paragraphs (and list items, and table rows) of a page's prose, each on one line. */
export function paragraphs(text: string): string[] {
  return prose(text)
    .split(/\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |\|))/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter((p) => p !== "");
}

/** The anchors GitHub gives a page's headings, repeats numbered. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = headingAnchor(m[1] ?? "");
    const n = seen.get(base);
    seen.set(base, (n ?? -1) + 1);
    out.add(n === undefined ? base : `${base}-${n + 1}`);
  }
  return out;
}

/** Every file and folder of the repository (git-tracked or not, build output and caches left out). */
export function repoEntries(): Set<string> {
  const skip = new Set(["node_modules", ".git", "bin", "dist", ".venv", "tmp", ".tmp"]);
  const out = new Set<string>();
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(repoRoot, rel), { withFileTypes: true })) {
      if (skip.has(e.name) && rel === "") continue;
      if (e.name === "node_modules") continue;
      const child = rel === "" ? e.name : `${rel}/${e.name}`;
      out.add(child);
      if (e.isDirectory()) walk(child);
    }
  };
  walk("");
  return out;
}

/** English number words the pages use, and their values. */
export const NUMBER_WORDS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};

/** `three` or `3` as a number, or undefined when `word` is neither. */
export function numberOf(word: string): number | undefined {
  const w = word.toLowerCase();
  if (/^\d+$/.test(w)) return Number(w);
  return NUMBER_WORDS[w];
}
