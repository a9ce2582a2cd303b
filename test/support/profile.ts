/**
 * Full and reduced passes of a suite: a suite whose figures are stated at a size too slow for
 * `make test` runs at that size when its variable is `full` (its own make target sets it) and on
 * a reduced size, the same checks, otherwise.
 */

export type Profile = "full" | "reduced";

/** The pass that environment variable `variable` selects: `full` when it says so, else `reduced`. */
export function profileOf(variable: string): Profile {
  return process.env[variable] === "full" ? "full" : "reduced";
}

/** Picks, of each size given to it, the one of the pass `variable` selects. */
export function sizedBy(variable: string): <T>(sizes: Record<Profile, T>) => T {
  const profile = profileOf(variable);
  return (sizes) => sizes[profile];
}
