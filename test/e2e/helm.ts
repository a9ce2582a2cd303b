/**
 * Running bin/helm from tests and reading what it renders.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/process.ts";
import { helmKubeVersionArgs, toolPath } from "../support/tools.ts";

/** The chart under test. */
export const CHART_DIR = path.join(repoRoot, "charts/kubeprovisioner");

/** Outcome of one helm invocation; never throws on a non-zero exit. */
export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `helm args...`. */
export function helm(args: readonly string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    execFile(
      toolPath("helm"),
      [...args],
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...opts.env } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") {
          reject(err);
          return;
        }
        resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
      },
    );
  });
}

/** A rendered Kubernetes object, loosely typed: tests navigate it with {@link at}. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}

/** `helm template` with `--set` pairs (and optional extra flags); throws with helm's stderr on failure. */
export async function renderChart(
  set: Record<string, string | number | boolean> = {},
  extra: readonly string[] = [],
): Promise<Manifest[]> {
  const res = await helm(templateArgs(set, extra));
  if (res.code !== 0) throw new Error(`helm template failed (${res.code}): ${res.stderr}`);
  return parseManifests(res.stdout);
}

/** Arguments of `helm template kp <chart> -n kp-system --set ...`. */
export function templateArgs(
  set: Record<string, string | number | boolean> = {},
  extra: readonly string[] = [],
): string[] {
  return [
    "template",
    "kp",
    CHART_DIR,
    "--namespace",
    "kp-system",
    ...Object.entries(set).flatMap(([k, v]) => ["--set", `${k}=${String(v)}`]),
    ...helmKubeVersionArgs(),
    ...extra,
  ];
}

/** Every non-empty document of a multi-document YAML stream. */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/** The one object of `kind` (and `name`, when given); throws listing what exists otherwise. */
export function find(manifests: readonly Manifest[], kind: string, name?: string): Manifest {
  const hits = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  const only = hits[0];
  if (hits.length !== 1 || only === undefined) {
    throw new Error(
      `expected one ${kind}${name ? ` ${name}` : ""}, found ${hits.length} among ${manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(", ")}`,
    );
  }
  return only;
}

/** Follows a path of keys and indices; `undefined` as soon as a step is missing. */
export function at(value: unknown, ...steps: (string | number)[]): unknown {
  let cur: unknown = value;
  for (const s of steps) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[s];
  }
  return cur;
}
