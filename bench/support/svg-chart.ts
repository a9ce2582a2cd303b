/**
 * A small line chart as standalone SVG, for the charts BENCHMARKS.md shows beside the JSON
 * results: one or more series of (x, y) points on linear axes starting at zero.
 */

/** One line of the chart. */
export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
}

/** What to draw. */
export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  width?: number;
  height?: number;
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"];

/** A "nice" upper bound and tick step for values up to `max`. */
function axis(max: number): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  return { top: Math.ceil(max / step) * step, step };
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(v < 1 ? 2 : 1));

/** Renders the chart. */
export function lineChart(spec: ChartSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 360;
  const m = { left: 64, right: 16, top: 36, bottom: 48 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const all = spec.series.flatMap((s) => s.points);
  const xa = axis(Math.max(...all.map((p) => p[0]), 0));
  const ya = axis(Math.max(...all.map((p) => p[1]), 0));
  const x = (v: number): number => m.left + (v / xa.top) * w;
  const y = (v: number): number => m.top + h - (v / ya.top) * h;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14">${esc(spec.title)}</text>`,
  ];
  for (let v = 0; v <= ya.top + 1e-9; v += ya.step) {
    out.push(
      `<line x1="${m.left}" x2="${m.left + w}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${m.left - 6}" y="${y(v) + 4}" text-anchor="end">${fmt(v)}</text>`,
    );
  }
  for (let v = 0; v <= xa.top + 1e-9; v += xa.step) {
    out.push(`<text x="${x(v)}" y="${m.top + h + 16}" text-anchor="middle">${fmt(v)}</text>`);
  }
  out.push(
    `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + h}" stroke="black"/>`,
    `<line x1="${m.left}" x2="${m.left + w}" y1="${m.top + h}" y2="${m.top + h}" stroke="black"/>`,
    `<text x="${m.left + w / 2}" y="${height - 10}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${m.top + h / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length] ?? "black";
    const d = s.points
      .map((p, j) => `${j === 0 ? "M" : "L"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`)
      .join(" ");
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of s.points.length <= 12 ? s.points : [])
      out.push(`<circle cx="${x(p[0]).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3" fill="${color}"/>`);
    out.push(
      `<rect x="${m.left + 10}" y="${m.top + 6 + i * 16}" width="10" height="10" fill="${color}"/>`,
      `<text x="${m.left + 26}" y="${m.top + 15 + i * 16}">${esc(s.name)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
