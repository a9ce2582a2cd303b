/**
 * What the test runner (`node --test --test-global-setup=test/support/global-setup.ts`, as
 * `make test` runs it) prepares once for every test file:
 *
 * - the operator program under test: the bundle the image runs, built from the working tree
 *   (operator-program.ts);
 * - shared back ends: control planes with the project's CRDs, and bare ones with none, each with a
 *   test AWS emulator once a file asks for one, lent to one test file at a time
 *   (shared-backends.ts) and reset to their baseline between files (backends-reset.ts).
 *
 * They are started on demand, kept when a file is done and reused by the next, so a run of many
 * files starts about as many as files run at once (`--test-concurrency`), not one per file. A
 * back end whose reset fails is stopped and replaced by a new one. The runner's exit stops them
 * all (they also die with its process, test/support/process.ts).
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { bundle } from "../../hack/bundle.ts";
import { resetToBaseline, takeBaseline, type Baseline } from "./backends-reset.ts";
import { launchControlPlane, type LaunchedControlPlane } from "./envtest.ts";
import { startMoto, type Moto } from "./moto.ts";
import { OPERATOR_PROGRAM_ENV } from "./operator-program.ts";
import { removeTempDir, repoRoot, trackTempDir } from "./process.ts";
import { BACKENDS_ENV, type LeaseInfo, type SharedKind } from "./shared-backends.ts";

/** How long a file may wait for a control plane to start. */
const START_TIMEOUT_MS = 120_000;

interface Slot {
  id: number;
  kind: SharedKind;
  cp: LaunchedControlPlane;
  baseline: Baseline;
  moto?: Moto;
  /** Settles when the slot is free again: idle, or gone after a failed reset. */
  resetting?: Promise<void>;
  leased: boolean;
}

const slots: Slot[] = [];
let nextId = 1;
let server: Server | undefined;
/** Set by the teardown: a lease ending now needs no reset, its back ends are being stopped. */
let closing = false;
/** Counts for the end-of-run line: leases served, back ends started, resets and their failures. */
const counts = {
  leases: 0,
  controlPlanes: 0,
  conversions: 0,
  emulators: 0,
  resets: 0,
  resetFailures: 0,
  restoredKeys: 0,
};

async function newSlot(kind: SharedKind): Promise<Slot> {
  const cp = await launchControlPlane({ installCRDs: kind === "crds", startTimeoutMs: START_TIMEOUT_MS });
  counts.controlPlanes++;
  const slot: Slot = { id: nextId++, kind, cp, baseline: await takeBaseline(cp), leased: false };
  slots.push(slot);
  return slot;
}

async function dropSlot(slot: Slot): Promise<void> {
  slots.splice(slots.indexOf(slot), 1);
  await Promise.allSettled([slot.cp.stop(), slot.moto?.stop()]);
}

/**
 * A free slot of `kind`: an idle one, else the first to finish its reset, else (for the CRDs) a
 * bare one given the CRDs, else a new one. A bare control plane is asked for by few files: once
 * they are done, it serves the rest of the run instead of idling beside a new one.
 */
async function acquire(kind: SharedKind): Promise<Slot> {
  for (;;) {
    const free = (k: SharedKind): Slot | undefined =>
      slots.find((s) => s.kind === k && !s.leased && s.resetting === undefined);
    const idle = free(kind);
    if (idle !== undefined) {
      idle.leased = true;
      return idle;
    }
    // Waiting for a reset takes less than starting a control plane (about 6 s of a core).
    const resetting = slots
      .filter((s) => (s.kind === kind || (kind === "crds" && s.kind === "bare")) && s.resetting !== undefined)
      .map((s) => s.resetting);
    if (resetting.length > 0) {
      await Promise.race(resetting);
      continue;
    }
    const bare = kind === "crds" ? free("bare") : undefined;
    if (bare !== undefined) {
      bare.leased = true;
      try {
        await bare.cp.installCRDs();
        bare.baseline = await takeBaseline(bare.cp);
        bare.kind = "crds";
        counts.conversions++;
        return bare;
      } catch (err) {
        await dropSlot(bare);
        throw err;
      }
    }
    const slot = await newSlot(kind);
    slot.leased = true;
    return slot;
  }
}

function release(slot: Slot): void {
  slot.leased = false;
  if (closing) return;
  slot.resetting = (async () => {
    try {
      const [, result] = await Promise.all([slot.moto?.reset(), resetToBaseline(slot.cp, slot.baseline)]);
      counts.resets++;
      counts.restoredKeys += result.restored;
      slot.resetting = undefined;
    } catch (err) {
      counts.resetFailures++;
      process.stderr.write(
        `shared back end ${slot.id}: reset failed, replacing it: ${(err as Error).message}\n`,
      );
      await dropSlot(slot);
    }
  })();
}

async function serveLease(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname !== "/lease") {
    res.writeHead(404).end("not found\n");
    return;
  }
  let slot: Slot | undefined;
  try {
    slot = await acquire(url.searchParams.get("kind") === "bare" ? "bare" : "crds");
    if (url.searchParams.get("moto") === "1" && slot.moto === undefined) {
      slot.moto = await startMoto({ startTimeoutMs: START_TIMEOUT_MS });
      counts.emulators++;
    }
  } catch (err) {
    if (slot !== undefined) release(slot);
    res.writeHead(500).end(`${(err as Error).message.replaceAll("\n", " ")}\n`);
    return;
  }
  const leased = slot;
  counts.leases++;
  const info: LeaseInfo = {
    access: leased.cp.access,
    ...(leased.moto !== undefined ? { moto: leased.moto.endpoint } : {}),
  };
  // The file closing the connection, or its process ending, ends the lease.
  if (res.closed || req.destroyed) {
    release(leased);
    return;
  }
  res.on("close", () => release(leased));
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.write(`${JSON.stringify(info)}\n`);
}

/** The folder of the operator program built for this run. */
let programDir: string | undefined;

/**
 * Builds the operator program and tells the test files where it is (in {@link OPERATOR_PROGRAM_ENV});
 * then serves leases on a loopback port and tells the test files where (in {@link BACKENDS_ENV}).
 */
export async function globalSetup(): Promise<void> {
  programDir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-program-"));
  trackTempDir(programDir);
  // As the image lays it out (Dockerfile): no source maps, and package.json, which the program
  // reads its version from, one folder above it.
  const program = await bundle(path.join(programDir, "dist/kubeprovisioner.mjs"), { sourceMaps: false });
  copyFileSync(path.join(repoRoot, "package.json"), path.join(programDir, "package.json"));
  process.env[OPERATOR_PROGRAM_ENV] = program.entry;
  const srv = createServer((req, res) => void serveLease(req, res));
  // A lease lasts as long as its file: no idle timeout on its connection.
  srv.requestTimeout = 0;
  srv.headersTimeout = 0;
  srv.keepAliveTimeout = 0;
  srv.timeout = 0;
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  server = srv;
  process.env[BACKENDS_ENV] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Stops every shared back end, and reports what they served. */
export async function globalTeardown(): Promise<void> {
  closing = true;
  server?.close();
  await Promise.allSettled(slots.map((s) => s.resetting));
  await Promise.allSettled([...slots].map((s) => dropSlot(s)));
  if (programDir !== undefined) removeTempDir(programDir);
  process.stderr.write(
    `shared back ends: ${counts.leases} leases on ${counts.controlPlanes} control planes ` +
      `(bare ones given the CRDs: ${counts.conversions}) and ${counts.emulators} emulators; ` +
      `${counts.resets} resets (${counts.restoredKeys} keys written back), ` +
      `${counts.resetFailures} failed\n`,
  );
}
