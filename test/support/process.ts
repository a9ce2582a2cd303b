/**
 * Child processes for tests: started under hack/watchdog.sh (so they die with the test process
 * even when it is SIGKILLed), tracked, and killed on exit, SIGINT and SIGTERM.
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
  /** Sends `sig` to the command (and its watchdog) at once. */
  signal(sig: NodeJS.Signals): void;
}

/**
 * Starts `cmd args` under the watchdog with stdout and stderr appended to `logFile`.
 */
export function startProcess(
  cmd: string,
  args: string[],
  opts: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Supervised {
  installHooks();
  const out = createWriteStream(opts.logFile, { flags: "a" });
  const proc = spawn(path.join(repoRoot, "hack/watchdog.sh"), [String(process.pid), cmd, ...args], {
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so a signal reaches the command and not only the watchdog.
    detached: true,
  });
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
  live.add(proc);
  const exited = new Promise<number | null>((resolve) => {
    proc.once("exit", (code) => {
      live.delete(proc);
      resolve(code);
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
