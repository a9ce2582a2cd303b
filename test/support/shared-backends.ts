/**
 * A test file's side of the shared back ends: under `make test`, the test runner's process keeps a
 * few control planes (etcd, kube-apiserver, with the project's CRDs or with none) and test AWS
 * emulators running (global-setup.ts), and a file that needs nothing more leases one instead of
 * starting its own.
 *
 * A lease is one open HTTP connection to the runner: the first line of the response says where the
 * back ends are, and the lease lasts until the connection closes, when the file stops its control
 * plane or its process ends, however it ends. The runner then puts the back ends back as they were
 * before the file (backends-reset.ts) and only then lends them again, so each file sees the API
 * server and AWS as if it had started them: its own namespaces, no other file's objects.
 */
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import os from "node:os";
import path from "node:path";
import { pkiIssuingIn } from "./certs.ts";
import { controlPlaneApi, type ControlPlane, type ControlPlaneAccess } from "./control-plane-api.ts";
import type { ControlPlaneOptions } from "./envtest.ts";
import { motoAt, type Moto } from "./moto.ts";
import { removeTempDir, trackTempDir } from "./process.ts";

/** The environment variable holding the runner's lease URL while shared back ends are served. */
export const BACKENDS_ENV = "KUBEPROVISIONER_TEST_BACKENDS";

/** What the runner answers a lease with: where its back ends are. */
export interface LeaseInfo {
  /** The control plane; its working folder and PKI are the runner's, read only. */
  access: ControlPlaneAccess;
  /** The emulator's endpoint, when the lease asked for one. */
  moto?: string;
}

/**
 * Which shared control plane a file asking for one with `opts` can lease: one with the project's
 * CRDs (`crds`) or one with none (`bare`), when the runner serves shared back ends and the file
 * asks for nothing else (no flags, controllers or address of its own, and not `private`);
 * undefined when it must start its own.
 */
export function sharedKind(opts: ControlPlaneOptions): SharedKind | undefined {
  if (process.env[BACKENDS_ENV] === undefined) return undefined;
  const { installCRDs, startTimeoutMs: _timeout, ...rest } = opts;
  if (!Object.values(rest).every((v) => v === undefined || v === false)) return undefined;
  return installCRDs === true ? "crds" : "bare";
}

/** A shared control plane with the project's CRDs, or one with none. */
export type SharedKind = "crds" | "bare";

/** Opens a lease and resolves with its first line, keeping the connection open. */
function openLease(url: string): Promise<{ info: LeaseInfo; release: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let buffered = "";
      const onData = (chunk: Buffer): void => {
        buffered += chunk.toString("utf8");
        const nl = buffered.indexOf("\n");
        if (nl < 0) return;
        res.off("data", onData);
        if (res.statusCode !== 200) {
          req.destroy();
          reject(new Error(`shared back ends: ${buffered.trim()}`));
          return;
        }
        // The lease must not keep a finished file's process alive; it ends with the process.
        res.socket.unref();
        resolve({ info: JSON.parse(buffered.slice(0, nl)) as LeaseInfo, release: () => req.destroy() });
      };
      res.on("data", onData);
      res.on("error", () => {});
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * Leases a shared test AWS emulator alone, for a file whose control plane is its own or that needs
 * none. The slot's control plane stays idle until the lease ends, when the emulator stops (the
 * runner resets it and lends it again).
 */
export async function leaseEmulator(): Promise<Moto> {
  const base = process.env[BACKENDS_ENV];
  if (base === undefined) throw new Error(`${BACKENDS_ENV} is not set: no shared back ends to lease`);
  const { info, release } = await openLease(`${base}/lease?moto=1`);
  if (info.moto === undefined) {
    release();
    throw new Error("shared back ends: the lease came without an emulator");
  }
  return motoAt(info.moto, async () => release());
}

/**
 * Leases a shared control plane of `kind` (the project's CRDs unless `bare`), and an emulator when
 * `moto` is set.
 * Stopping the control plane ends the lease (the emulator's stop does nothing: it goes with it).
 * Its `dir` is a working folder of the file's own; restarting its kube-apiserver is refused.
 */
export async function leaseBackends(opts: {
  moto: boolean;
  kind?: SharedKind;
}): Promise<{ cp: ControlPlane; moto?: Moto }> {
  const base = process.env[BACKENDS_ENV];
  if (base === undefined) throw new Error(`${BACKENDS_ENV} is not set: no shared back ends to lease`);
  const { info, release } = await openLease(
    `${base}/lease?moto=${opts.moto ? 1 : 0}&kind=${opts.kind ?? "crds"}`,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-lease-"));
  trackTempDir(dir);
  const refuse = async (): Promise<void> => {
    throw new Error(
      "this control plane is shared by the test runner: start one with { private: true } to restart kube-apiserver",
    );
  };
  let stopped = false;
  const cp = controlPlaneApi(
    // Kubeconfigs and client certificates are written to the lease's own folder.
    { ...info.access, dir, pki: pkiIssuingIn(info.access.pki, dir) },
    {
      stopApiServer: refuse,
      startApiServer: refuse,
      async stop() {
        if (stopped) return;
        stopped = true;
        release();
        removeTempDir(dir);
      },
    },
  );
  return { cp, ...(info.moto !== undefined ? { moto: motoAt(info.moto, async () => {}) } : {}) };
}
