/**
 * The Node.js versions the program runs on, and the refusal it prints on any other. Pure: the
 * guard (./node-guard.ts) applies it to the running Node before anything else loads.
 */

/** The supported range: package.json's `engines.node` (./node-version.test.ts keeps them equal). */
export const REQUIRED_NODE = ">=22.19";

/** `[major, minor, patch]` of a version such as `20.20.2` or `v22.19`; missing parts are 0. */
function parts(version: string): [number, number, number] {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(version.trim());
  if (m === null) throw new Error(`not a Node.js version: ${JSON.stringify(version)}`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

/**
 * The lowest version of `range`, which must have the form `>=X[.Y[.Z]]` (the only form the
 * program's `engines` field uses).
 * @throws Error for any other form.
 */
export function minimumOf(range: string): [number, number, number] {
  const m = /^>=\s*(\S+)$/.exec(range.trim());
  if (m?.[1] === undefined)
    throw new Error(`unsupported engines range ${JSON.stringify(range)}: expected >=X.Y`);
  return parts(m[1]);
}

/** Whether Node.js `found` lies in `range`. */
export function satisfies(found: string, range: string = REQUIRED_NODE): boolean {
  const [a, b, c] = parts(found);
  const [x, y, z] = minimumOf(range);
  return a !== x ? a > x : b !== y ? b > y : c >= z;
}

/** The one-line refusal for Node.js `found`, or undefined when it lies in `range`. */
export function nodeVersionRefusal(
  program: string,
  found: string,
  range: string = REQUIRED_NODE,
): string | undefined {
  if (satisfies(found, range)) return undefined;
  return `${program} needs Node.js ${range}; this is Node.js ${found.replace(/^v?/, "v")}`;
}
