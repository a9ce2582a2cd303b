/**
 * Child processes for tests: started under hack/watchdog.sh (so they die with the test process
 * even when it is SIGKILLed), each in a process group of its own, tracked, and killed with their
 * whole group on exit, SIGINT and SIGTERM. A test file that times out therefore ends with its
 * children stopped: the test runner ends its process once its tests have ended (runner.ts), and
 * the exit kills what it still had running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * How long a test waits, by default, for something the operator is expected to do. It bounds a
 * hung test, not the operator's speed: `make test` runs three files at once on two cores, each
 * with its own etcd, kube-apiserver, moto and operator, and a step that takes a second alone can
 * take tens of seconds there. Latency is measured by the benchmarks, never by these waits.
 */
export const WAIT_MS = 60_000;

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanup = (): void => {
    for (const c of live) signalGroup(c, "SIGKILL");
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  };
  process.on("exit", cleanup);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      cleanup();
      process.exit(130);
    });
  }
}

/** Registers a folder to delete when the process exits (if not removed before). */
export function trackTempDir(dir: string): void {
  installHooks();
  tempDirs.add(dir);
}

/** Deletes a tracked folder now. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Signals the process group of `c` (the watchdog and the command it runs). */
function signalGroup(c: ChildProcess, sig: NodeJS.Signals): void {
  if (c.pid === undefined) return;
  try {
    process.kill(-c.pid, sig);
  } catch {
    try {
      c.kill(sig);
    } catch {
      // already gone
    }
  }
}

/** A supervised child process. */
export interface Supervised {
  readonly proc: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (or null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** Sends `sig` to the command's process group at once (the watchdog ignores SIGTERM, SIGINT and SIGHUP). */
  signal(sig: NodeJS.Signals): void;
}

/**
 * `cmd args` under the watchdog, in a process group of its own, with no standard input; tracked
 * until it exits.
 */
function spawnWatched(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string },
): ChildProcess {
  installHooks();
  const proc = spawn(path.join(repoRoot, "hack/watchdog.sh"), [cmd, ...args], {
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? repoRoot,
    // Descriptor 3: the pipe whose end, closed when this process ends, tells the watchdog so.
    stdio: ["ignore", "pipe", "pipe", "pipe"],
    // Its own process group, so a signal reaches the command and not only the watchdog.
    detached: true,
  });
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
  return proc;
}

/**
 * How long a process's exit waits for its output pipes to close: a daemon the command started
 * (containerd's shims) may hold them open after the command itself has ended.
 */
const OUTPUT_DRAIN_LIMIT_MS = 2000;

/**
 * Starts `cmd args` under the watchdog with stdout and stderr appended to `logFile`. Its `exited`
 * resolves once the process has exited and what it wrote has reached `logFile`, so a test reads
 * its last lines there: the exit comes before the pipes have delivered them, and a loaded
 * machine can write the file later still.
 */
export function startProcess(
  cmd: string,
  args: string[],
  opts: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Supervised {
  const out = createWriteStream(opts.logFile, { flags: "a" });
  const proc = spawnWatched(cmd, args, opts);
  // The log stays open until both pipes are done; two pipes ending one stream would close it at
  // the first one's end.
  proc.stdout?.pipe(out, { end: false });
  proc.stderr?.pipe(out, { end: false });
  // Both pipes closed: the log ends, and its end callback runs once every line is in the file.
  const written = new Promise<void>((resolve) => proc.once("close", () => out.end(resolve)));
  const exited = new Promise<number | null>((resolve) => {
    proc.once("exit", (code) => {
      let limit: NodeJS.Timeout | undefined;
      const held = new Promise<void>((r) => (limit = setTimeout(r, OUTPUT_DRAIN_LIMIT_MS)));
      void Promise.race([written, held]).then(() => {
        clearTimeout(limit);
        resolve(code);
      });
    });
  });
  return {
    proc,
    logFile: opts.logFile,
    exited,
    async stop(graceMs = 5000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      signalGroup(proc, "SIGTERM");
      const timer = setTimeout(() => signalGroup(proc, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    signal(sig) {
      signalGroup(proc, sig);
    },
  };
}

/** A command of {@link runCommand} that failed: its exit code (null when a signal ended it) and output. */
export class CommandError extends Error {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;

  constructor(message: string, code: number | null, stdout: string, stderr: string) {
    super(message);
    this.code = code;
    this.stdout = stdout;
    this.stderr = stderr;
  }
}

/**
 * Runs `cmd args` to its end under the watchdog, like {@link startProcess} (a process group of
 * its own, killed with the test process), and resolves with its output; a non-zero exit rejects
 * with a {@link CommandError}. For the commands a test runs for minutes (an image build, a
 * release): one cut off by a timeout stops with the test file instead of running on. No standard
 * input.
 */
export function runCommand(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; maxBuffer?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  const max = opts.maxBuffer ?? 64 * 1024 * 1024;
  const proc = spawnWatched(cmd, args, opts);
  const collect = (stream: NodeJS.ReadableStream | null): (() => string) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream?.on("data", (chunk: Buffer) => {
      if (size >= max) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    return () => Buffer.concat(chunks).toString("utf8");
  };
  const stdout = collect(proc.stdout);
  const stderr = collect(proc.stderr);
  return new Promise((resolve, reject) => {
    proc.once("error", reject);
    proc.once("close", (code, signal) => {
      if (code === 0) resolve({ stdout: stdout(), stderr: stderr() });
      else
        reject(
          new CommandError(
            `${path.basename(cmd)} failed (${code === null ? `signal ${signal}` : `exit ${code}`})`,
            code,
            stdout(),
            stderr(),
          ),
        );
    });
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === "object") resolve(addr.port);
        else reject(new Error("no port"));
      });
    });
  });
}

/** Polls `check` until it returns true, failing with the last error after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `promise`, or a rejection naming `what` once `timeoutMs` has passed first: every wait in a test
 * has a deadline, so a regression fails the test instead of hanging it.
 */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
