/**
 * A command of the program (`plan`, `export`) run as a user runs it, for the benchmarks that
 * measure one: the bundle on a Node process of its own, in an environment that names the
 * kubeconfig and the AWS endpoint and nothing of an operator's install, under GNU time for the
 * process's peak RSS.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/** GNU time, which reports a process's peak RSS (`%M`). */
export const GNU_TIME = "/usr/bin/time";

/** Throws unless GNU time is installed. */
export function requireGnuTime(): void {
  if (!existsSync(GNU_TIME))
    throw new Error(`the benchmark needs GNU time at ${GNU_TIME} (apt-get install time)`);
}

/**
 * The environment of a command run as a user: `base` with the test AWS's variables, `awsEndpoint`
 * as the endpoint and `kubeconfig` as KUBECONFIG, without the operator's `KUBEPROVISIONER_`
 * settings and the in-cluster service host.
 */
export function userCommandEnv(
  opts: { awsEnv: Readonly<Record<string, string>>; awsEndpoint: string; kubeconfig: string },
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    ...opts.awsEnv,
    AWS_ENDPOINT_URL: opts.awsEndpoint,
    AWS_EC2_METADATA_DISABLED: "true",
    KUBECONFIG: opts.kubeconfig,
  };
  for (const k of Object.keys(env)) if (k.startsWith("KUBEPROVISIONER_")) delete env[k];
  delete env.KUBERNETES_SERVICE_HOST;
  return env;
}

/**
 * The peak RSS in MiB from what `time -f %M -o FILE` wrote: the line of digits (KiB), which
 * follows a line on the exit status when the command failed.
 */
export function peakRssMiBOf(timeOutput: string): number {
  const kib = Number(/^(\d+)$/m.exec(timeOutput)?.[1]);
  if (!Number.isFinite(kib)) throw new Error(`no peak RSS from GNU time: ${timeOutput}`);
  return kib / 1024;
}

/** How one command ran. */
export interface UserCommandRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** When it was started and when it ended, ms since the epoch. */
  readonly start: number;
  readonly end: number;
  readonly peakRssMiB: number;
}

/**
 * Runs `node [nodeArgs] program args` under GNU time (its report in `timeFile`) with `env`, to
 * its end: exit status, output, start and end, peak RSS.
 */
export async function runUserCommand(
  program: string,
  nodeArgs: readonly string[],
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeFile: string,
): Promise<UserCommandRun> {
  const start = Date.now();
  const child = spawn(
    GNU_TIME,
    ["-f", "%M", "-o", timeFile, process.execPath, ...nodeArgs, program, ...args],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (b: Buffer) => out.push(b));
  child.stderr.on("data", (b: Buffer) => err.push(b));
  const code = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => resolve(c ?? -1));
  });
  const end = Date.now();
  return {
    code,
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(err).toString("utf8"),
    start,
    end,
    peakRssMiB: peakRssMiBOf(readFileSync(timeFile, "utf8")),
  };
}
