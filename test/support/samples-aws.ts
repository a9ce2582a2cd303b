/**
 * config/samples-aws as a user builds it: the folder with a settings.env of their own beside its
 * kustomization.yaml. The committed folder holds no settings.env (git ignores it), so tests build
 * from a temporary copy and never write into the checkout.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot, trackTempDir } from "./process.ts";

/** The folder, relative to the repository root. */
export const SAMPLES_AWS = "config/samples-aws";

/** The file kustomization.yaml reads the settings from, and the committed file showing its format. */
export const SETTINGS_FILE = "settings.env";
export const SETTINGS_EXAMPLE = "settings.example.env";

/** The settings of a samples-aws build: the keys of settings.env. */
export interface SamplesAwsSettings {
  readonly namespace: string;
  readonly region: string;
  readonly amiId: string;
  readonly suffix: string;
}

/** `key=value` lines as kustomize's env-file reader takes them (`#` comments, blank lines). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const l = line.trim();
    if (l === "" || l.startsWith("#")) continue;
    const eq = l.indexOf("=");
    if (eq < 0) throw new Error(`not key=value: ${l}`);
    out[l.slice(0, eq)] = l.slice(eq + 1);
  }
  return out;
}

/** The committed settings.example.env, parsed. */
export function exampleSettings(): Record<string, string> {
  return parseEnvFile(readFileSync(path.join(repoRoot, SAMPLES_AWS, SETTINGS_EXAMPLE), "utf8"));
}

/**
 * A temporary copy of config/samples-aws (removed when the test process ends), with `settings`
 * written as its settings.env; with `settings` undefined, the copy has none, as a fresh checkout.
 * Returns the copy's path, `<root>/config/samples-aws`, so that commands written for the
 * repository's root run unchanged in `<root>` ({@link checkoutOf}).
 */
export function samplesAwsCopy(settings?: Readonly<Record<string, string>> | string): string {
  const parent = mkdtempSync(path.join(os.tmpdir(), "kp-samples-aws-"));
  trackTempDir(parent);
  const dir = path.join(parent, SAMPLES_AWS);
  cpSync(path.join(repoRoot, SAMPLES_AWS), dir, { recursive: true });
  // A user's own settings.env in this checkout must not leak into the test.
  rmSync(path.join(dir, SETTINGS_FILE), { force: true });
  if (settings !== undefined)
    writeFileSync(
      path.join(dir, SETTINGS_FILE),
      typeof settings === "string"
        ? settings
        : Object.entries(settings)
            .map(([k, v]) => `${k}=${v}\n`)
            .join(""),
    );
  return dir;
}

/** The folder standing for the repository root of a {@link samplesAwsCopy}. */
export function checkoutOf(copy: string): string {
  return path.dirname(path.dirname(copy));
}

/**
 * The folder kustomize builds for `dir` (relative to the repository root): `dir` itself, or for
 * config/samples-aws a copy with the example settings, whose values are the placeholders the
 * sample files hold, so the build yields the files' own text.
 */
export function buildableConfigDir(dir: string): string {
  if (dir === SAMPLES_AWS) return samplesAwsCopy(exampleSettings());
  return path.join(repoRoot, dir);
}
