/**
 * What the README and docs/ say about the operator's interface is what the code has: every flag
 * they name is a flag of the program, with the environment variables and the default they state
 * (a stated default passed explicitly must parse to the options the program runs with when the
 * flag is left out); every metric name they use is one the code declares; every Event reason
 * they name is one the code emits. Reads sources and pages only: no process, no network.
 * docs-repo.test.ts checks what they say about the repository: paths, targets, names, counts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { BUDGET_NAMES, DEFAULT_RATE_BUDGETS } from "../../src/aws/budget-plan.ts";
import { envNameOf, FLAGS, type FlagSpec } from "../../src/config/flags.ts";
import { parseOptions } from "../../src/config/options.ts";
import { ADOPT_HELP } from "../../src/cli/adopt.ts";
import { EXPORT_HELP } from "../../src/cli/export.ts";
import { PLAN_HELP } from "../../src/cli/plan.ts";
import { repoRoot } from "../support/process.ts";
import { PAGES, read } from "./pages.ts";

/** Source files of the program (src/, no tests and no test helpers). */
function sources(dir = path.join(repoRoot, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "testing" ? [] : sources(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [full] : [];
  });
}
const SOURCE = sources().map((f) => readFileSync(f, "utf8"));

/** Flags named in the pages that belong to other tools, with whose they are. */
const FOREIGN_FLAGS: Readonly<Record<string, string>> = {
  set: "helm",
  "set-json": "helm",
  "reuse-values": "helm",
  "kube-version": "helm",
  "skip-crds": "helm",
  "include-crds": "helm",
  "force-conflicts": "kubectl",
  manifest: "kubectl krew",
  "manifest-url": "kubectl krew",
  network: "docker run",
  "role-only": "eksctl",
  "field-selector": "kubectl",
  "watch-cache": "kube-apiserver",
  "test-timeout": "node --test",
  "test-concurrency": "node --test",
  "test-force-exit": "node --test",
  "test-isolation": "node --test",
  "max-old-space-size": "node (V8)",
  queue: "the work-queue benchmark",
  flag: "the boolean syntax, spelled generically",
  "no-flag": "the boolean syntax, spelled generically",
  "x-s3": "a bucket name suffix",
  "table-s3": "a bucket name suffix",
  "ol-s3": "a bucket name suffix",
};

const flagNamed = (name: string): FlagSpec | undefined => FLAGS.find((f) => f.name === name);

/** The rows of the Markdown tables in `text` whose first cell starts with a backticked flag. */
function flagRows(text: string): string[][] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("| `--"))
    .map((l) =>
      l
        .slice(1, l.endsWith("|") ? -1 : undefined)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

/** `a`, `b` in a cell: the backticked literals, or undefined when the cell is prose. */
function literals(cell: string): string[] | undefined {
  const bare = cell.replace(/\s*\([^)]*\)\s*$/, "");
  const parts = bare.split(/,\s*/);
  if (!parts.every((p) => /^`[^`]+`$/.test(p))) return undefined;
  return parts.map((p) => p.slice(1, -1));
}

/** What the program runs with for `argv` and no environment. */
function optionsOf(argv: string[]): unknown {
  const outcome = parseOptions(argv, {});
  assert.equal(outcome.kind, "run");
  return outcome.options;
}

/** Checks one documented default of `flag`; returns what is wrong, if anything. */
function defaultProblem(where: string, flag: FlagSpec, value: string): string | undefined {
  // A default naming an environment variable: it must be one the flag reads.
  if (/^[A-Z][A-Z0-9_]+$/.test(value))
    return [envNameOf(flag.name), ...(flag.extraEnv ?? [])].includes(value)
      ? undefined
      : `${where}: --${flag.name} defaults to $${value}, a variable it does not read`;
  let explicit: unknown;
  try {
    explicit = optionsOf([`--${flag.name}=${value}`]);
  } catch (err) {
    return `${where}: --${flag.name}'s stated default ${JSON.stringify(value)} is refused: ${(err as Error).message}`;
  }
  try {
    assert.deepEqual(explicit, optionsOf([]));
  } catch {
    return `${where}: --${flag.name}'s stated default ${JSON.stringify(value)} is not what the program uses without the flag`;
  }
  return undefined;
}

/** The default rate budgets a cell states (`name=rate/burst`), checked against the code's. */
function budgetProblems(where: string, cell: string): string[] {
  const stated = new Map(
    [...cell.matchAll(/`([a-z0-9.]+)=(\d+(?:\.\d+)?)\/(\d+)`/gi)].map((m) => [m[1], [m[2], m[3]]]),
  );
  const out: string[] = [];
  for (const name of BUDGET_NAMES.filter((n) => !n.startsWith("ec2."))) {
    const want = [String(DEFAULT_RATE_BUDGETS[name].ratePerSecond), String(DEFAULT_RATE_BUDGETS[name].burst)];
    const got = stated.get(name);
    if (got === undefined)
      out.push(`${where}: the --aws-rate-budgets default does not name the ${name} budget`);
    else if (got.join("/") !== want.join("/"))
      out.push(`${where}: the ${name} budget is stated as ${got.join("/")}, the code has ${want.join("/")}`);
  }
  return out;
}

describe("the docs name what the code has", () => {
  it("every flag the pages name is the program's or one of its commands' (or another tool's, named as such)", () => {
    const unknown: string[] = [];
    const commandFlag = (name: string): boolean =>
      [PLAN_HELP, EXPORT_HELP, ADOPT_HELP].some((help) => new RegExp(`--${name}\\b`).test(help));
    for (const page of PAGES)
      for (const m of read(page).matchAll(/`--([a-z][a-z0-9-]*)/g)) {
        const name = m[1] ?? "";
        if (
          flagNamed(name) === undefined &&
          !commandFlag(name) &&
          !["help", "version"].includes(name) &&
          !(name in FOREIGN_FLAGS)
        )
          unknown.push(`${page}: --${name}`);
      }
    assert.deepEqual(unknown, []);
  });

  it("the flag tables (README, manager.md) state each flag's variables and default as the program has them", () => {
    const problems: string[] = [];
    const manager = flagRows(read("docs/manager.md"));
    const documented = new Set(
      manager.flatMap((r) => [...(r[0] ?? "").matchAll(/`--([a-z][a-z0-9-]*)`/g)].map((m) => m[1])),
    );
    for (const f of FLAGS)
      if (!documented.has(f.name)) problems.push(`docs/manager.md: --${f.name} is missing`);

    for (const [page, rows, defaultColumn] of [
      ["README.md", flagRows(read("README.md")), 1],
      ["docs/manager.md", manager, 2],
    ] as const) {
      for (const row of rows) {
        const flags = [...(row[0] ?? "").matchAll(/`--([a-z][a-z0-9-]*)`/g)]
          .map((m) => flagNamed(m[1] ?? ""))
          .filter((f): f is FlagSpec => f !== undefined);
        if (flags.length === 0) continue;
        const where = `${page} (${flags.map((f) => `--${f.name}`).join(", ")})`;
        if (page === "docs/manager.md") {
          const env = [...(row[1] ?? "").matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]);
          const want = [envNameOf(flags[0]?.name ?? ""), ...(flags[0]?.extraEnv ?? [])];
          if (JSON.stringify(env) !== JSON.stringify(want))
            problems.push(`${where}: variables ${env.join(", ")}, the program reads ${want.join(", ")}`);
        }
        const cell = row[defaultColumn] ?? "";
        if (flags.some((f) => f.name === "aws-rate-budgets")) problems.push(...budgetProblems(where, cell));
        // One default per flag, in order, when the cell lists them; else one for a single flag.
        const segments = flags.length > 1 ? cell.split(/,\s*(?![^(]*\))/) : [cell];
        if (segments.length !== flags.length) continue;
        flags.forEach((flag, i) => {
          const values = literals(segments[i] ?? "");
          const value = values?.length === 1 ? values[0] : undefined;
          if (value === undefined) return; // prose ("all namespaces", "the pod's namespace")
          const problem = defaultProblem(where, flag, value);
          if (problem !== undefined) problems.push(problem);
        });
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every metric name the pages use is declared in the code", () => {
    const declared = new Set(
      SOURCE.flatMap((s) => [...s.matchAll(/"([a-z]+(?:_[a-z0-9]+){2,})"/g)].map((m) => m[1])),
    );
    assert.ok(declared.has("kubeprovisioner_drift_repairs_total"));
    const known = (name: string): boolean =>
      declared.has(name) ||
      // a histogram's series, or a name shortened to its tail (`reconcile_errors_total`)
      [...declared].some(
        (d) => d === name.replace(/_(bucket|count|sum)$/, "") || (d ?? "").endsWith(`_${name}`),
      );
    const missing: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"])
      for (const m of read(page).matchAll(/`([a-z]+(?:_[a-z0-9]+){2,})(?:\{[^}`]*\})?`/g)) {
        const name = m[1] ?? "";
        if (!/_(total|seconds|status|resources|reconciles|workers|second|bytes|count|depth|info)$/.test(name))
          continue;
        if (!known(name)) missing.push(`${page}: ${name}`);
      }
    assert.deepEqual([...new Set(missing)], []);
  });

  it("every Event reason the pages name is one the code emits", () => {
    // Reasons passed literally to recorder.event, and the values of the reason tables the
    // flows report Warning Events with.
    const emitted = new Set<string>();
    for (const s of SOURCE) {
      for (const m of s.matchAll(/recorder\.event\(\s*[^,]+,\s*"(?:Normal|Warning)",\s*"([A-Za-z]+)"/g))
        emitted.add(m[1] ?? "");
      for (const block of s.matchAll(/export const [A-Za-z0-9]*Reason = \{([\s\S]*?)\}/g))
        for (const v of (block[1] ?? "").matchAll(/:\s*"([A-Za-z]+)"/g)) emitted.add(v[1] ?? "");
    }
    for (const r of ["Created", "Updated", "Deleted", "Released", "Adopted", "Retained"])
      assert.ok(emitted.has(r), `the scan finds ${r}`);

    const named: { page: string; reason: string }[] = [];
    for (const page of PAGES) {
      const text = read(page).replace(/\s+/g, " ");
      for (const m of text.matchAll(/`([A-Z][A-Za-z]+)` (?:Warning |Normal )?Events?\b/g))
        named.push({ page, reason: m[1] ?? "" });
      for (const m of text.matchAll(/reason `([A-Z][A-Za-z]+)`[^.;]*?\bWarning Event/g))
        named.push({ page, reason: m[1] ?? "" });
      const events = /\*\*Events\*\*: (.*?)(?: - \*\*|$)/.exec(text)?.[1];
      if (events !== undefined)
        for (const m of events.matchAll(/`([A-Z][A-Za-z]+)`/g)) named.push({ page, reason: m[1] ?? "" });
    }
    assert.ok(named.length >= 15, `Event reasons found in the pages: ${named.length}`);
    const readme = named.filter((n) => n.page === "README.md").map((n) => n.reason);
    for (const r of ["Created", "Adopted", "Updated", "Deleted", "Released"])
      assert.ok(readme.includes(r), `README names ${r}`);
    assert.deepEqual(
      named.filter((n) => !emitted.has(n.reason)).map((n) => `${n.page}: ${n.reason}`),
      [],
    );
  });

  it("every test file the pages cite exists", () => {
    const files = (dir: string): string[] =>
      readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? e.name === "node_modules"
            ? []
            : files(path.join(dir, e.name))
          : [path.join(dir, e.name)],
      );
    const tests = [...files("src"), ...files("test"), ...files("bench")].filter((f) =>
      f.endsWith(".test.ts"),
    );
    const missing: string[] = [];
    for (const page of [...PAGES, "BENCHMARKS.md"])
      for (const m of read(page).matchAll(/`((?:[\w.-]+\/)*[\w.-]+\.test\.ts)`/g)) {
        const cited = m[1] ?? "";
        if (!tests.some((t) => t === cited || t.endsWith(`/${cited}`))) missing.push(`${page}: ${cited}`);
      }
    assert.deepEqual(missing, []);
  });
});
