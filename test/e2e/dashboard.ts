/**
 * Reading the chart's Grafana dashboard: every PromQL query it runs (panel targets and template
 * variables) and the metric names those queries select.
 */

interface Panel {
  targets?: { expr?: string }[];
  panels?: Panel[];
}

interface Dashboard {
  panels?: Panel[];
  templating?: { list?: { type?: string; query?: string | { query?: string } }[] };
}

/** Every PromQL expression of the dashboard (including `label_values(...)` variable queries). */
export function dashboardQueries(json: string): string[] {
  const d = JSON.parse(json) as Dashboard;
  const out: string[] = [];
  const walk = (ps: Panel[] | undefined): void => {
    for (const p of ps ?? []) {
      for (const t of p.targets ?? []) if (t.expr) out.push(t.expr);
      walk(p.panels);
    }
  };
  walk(d.panels);
  for (const v of d.templating?.list ?? []) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : v.query?.query;
    if (q) out.push(q);
  }
  return out;
}

/** Words that are PromQL operators or modifiers, not metric names. */
const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "group_left",
  "group_right",
  "inf",
  "nan",
]);

/**
 * The metric names a PromQL expression selects: identifiers that are not functions (followed by
 * `(`), keywords, label names (inside `{}` or a `by`/`without`/`on`/`ignoring`/`group_left`
 * list), strings, ranges, offsets and `@` times.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\boffset\s+-?[0-9a-zA-Z]+/g, " ")
    .replace(/@\s*[^\s)]+/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    // label_values(metric, label): the second argument is a label.
    .replace(/\blabel_values\s*\(([^,)]*),[^)]*\)/g, "label_values($1)");
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const rest = stripped.slice((m.index ?? 0) + word.length);
    if (/^\s*\(/.test(rest)) continue; // a function
    if (KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}
