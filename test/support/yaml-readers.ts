/**
 * Reading YAML as the tools on both sides read it: kubectl's file reader (the resource builder
 * of `kubectl create -f` and `apply -f`, a YAML 1.1 reader), kustomize's (`kubectl apply -k`),
 * and the YAML 1.2 reading the project writes for; and the differences between two readings.
 */
import { execFile } from "node:child_process";
import { parseAllDocuments } from "yaml";
import { toolPath } from "./tools.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function run(
  cmd: string,
  args: readonly string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      [...args],
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: "/dev/null" } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") reject(err);
        else resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
      },
    );
    child.stdin?.end(input ?? "");
  });
}

/**
 * The objects kubectl's file reader makes of YAML `text`, as JSON, without a server: `kubectl
 * annotate --local` runs the reader `create -f` and `apply -f` use and prints the objects;
 * removing an annotation nobody set changes nothing, except that kubectl adds an empty
 * `metadata.annotations` to an object that had none ({@link differences} ignores it).
 */
export async function kubectlReads(text: string): Promise<Json[]> {
  const res = await run(
    toolPath("kubectl"),
    ["annotate", "--local", "-o", "json", "-f", "-", "roundtrip.invalid/none-"],
    text,
  );
  if (res.code !== 0) throw new Error(`kubectl cannot read it: ${res.stderr.trim()}`);
  return jsonObjects(res.stdout);
}

/** The objects kubectl prints with `-o json`: one pretty-printed object each, "{" in column 0. */
export function jsonObjects(stdout: string): Json[] {
  return stdout
    .split(/^(?=\{)/m)
    .filter((chunk) => chunk.trim() !== "")
    .map((chunk) => JSON.parse(chunk) as Json);
}

/** What `kubectl apply -k dir` reads: kustomize's build of `dir`, then the file reader. */
export async function kustomizeReads(dir: string): Promise<Json[]> {
  const res = await run(toolPath("kubectl"), ["kustomize", dir]);
  if (res.code !== 0) throw new Error(`kubectl kustomize ${dir}: ${res.stderr.trim()}`);
  return kubectlReads(res.stdout);
}

/** The documents of `text` as a YAML 1.2 reader (the project's) reads them. */
export function meant(text: string): Json[] {
  return parseAllDocuments(text, { version: "1.2" })
    .map((d) => {
      if (d.errors.length > 0) throw new Error(d.errors.map((e) => e.message).join("; "));
      return JSON.parse(JSON.stringify(d.toJS())) as Json;
    })
    .filter((d) => d !== null);
}

/** Differences between `want` and `got`, one line each: path, what was meant, what kubectl read. */
export function differences(want: Json | undefined, got: Json | undefined, at = ""): string[] {
  const isObj = (v: unknown): v is Record<string, Json> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (Array.isArray(want) && Array.isArray(got)) {
    const out: string[] = [];
    for (let i = 0; i < Math.max(want.length, got.length); i++)
      out.push(...differences(want[i], got[i], `${at}[${i}]`));
    return out;
  }
  if (isObj(want) && isObj(got)) {
    const out: string[] = [];
    for (const k of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (
        at === ".metadata" &&
        k === "annotations" &&
        want[k] === undefined &&
        isObj(got[k]) &&
        Object.keys(got[k]).length === 0
      )
        continue;
      out.push(...differences(want[k], got[k], `${at}.${k}`));
    }
    return out;
  }
  if (JSON.stringify(want) === JSON.stringify(got)) return [];
  return [`${at || "."}: meant ${JSON.stringify(want)}, kubectl read ${JSON.stringify(got)}`];
}

/** Identity of an object, for matching kustomize's output (in its own order) with the files. */
export const identity = (o: Json): string => {
  const m = o as { apiVersion?: string; kind?: string; metadata?: { namespace?: string; name?: string } };
  return `${m.apiVersion}/${m.kind}/${m.metadata?.namespace ?? ""}/${m.metadata?.name}`;
};
