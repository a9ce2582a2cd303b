/**
 * Go-style durations (`time.ParseDuration`): "300ms", "1.5h", "2h45m", "10s". The flags of the
 * kubebuilder scaffold and of controller-runtime take durations in this form, so ours do too.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

// Micro as Go spells it, U+00B5 and U+03BC, written as escapes: the bundle stays Latin-1 (hack/bundle.ts).
const PART = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;

/** Thrown by {@link parseDuration} for text that is not a Go duration. */
export class DurationSyntaxError extends Error {
  constructor(text: string) {
    super(`invalid duration "${text}"`);
    this.name = "DurationSyntaxError";
  }
}

/**
 * Parses a Go duration into milliseconds (possibly fractional for sub-millisecond units).
 * A bare "0" is accepted, as in Go; any other number needs a unit. A leading sign is accepted
 * ("-5s"), so callers that need a positive value must check it.
 * @throws DurationSyntaxError when the text is not a duration.
 */
export function parseDuration(text: string): number {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest.startsWith("-")) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") throw new DurationSyntaxError(text);
  let total = 0;
  while (rest !== "") {
    const m = PART.exec(rest);
    if (m === null) throw new DurationSyntaxError(text);
    const [whole, num = "", unit = ""] = m;
    const factor = UNIT_MS[unit];
    if (factor === undefined) throw new DurationSyntaxError(text);
    total += Number(num) * factor;
    rest = rest.slice(whole.length);
  }
  return sign * total;
}

/**
 * Formats milliseconds the way Go prints a `time.Duration` ("1h0m0s", "2.5s", "300ms"), for help
 * text and logs. Sub-millisecond precision is rounded to microseconds.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  const neg = ms < 0;
  let rest = Math.abs(ms);
  const sign = neg ? "-" : "";
  if (rest < 1_000) return `${sign}${trimNumber(rest)}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${trimNumber(rest / 1_000)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

function trimNumber(n: number): string {
  return String(Math.round(n * 1_000) / 1_000);
}
