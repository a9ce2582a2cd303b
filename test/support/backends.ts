/**
 * The two back ends of every environment, started side by side: a control plane and moto. When
 * one of them fails to start, the other is stopped before the error is rethrown, so no process
 * outlives its test file (a live child would keep the file, and the whole run, from ending).
 * Under the test runner, what can be shared is leased (shared-backends.ts): both when the control
 * plane needs the project's CRDs or nothing, else the emulator alone.
 */
import { launchControlPlane, type ControlPlane, type ControlPlaneOptions } from "./envtest.ts";
import { startMoto, type Moto } from "./moto.ts";
import { BACKENDS_ENV, leaseBackends, leaseEmulator, sharedKind } from "./shared-backends.ts";

/** A started control plane and moto. */
export interface Backends {
  cp: ControlPlane;
  moto: Moto;
}

/**
 * Starts a control plane with `cpOptions` and moto at once; see the module comment. Where the
 * control plane can be a shared one (envtest.ts's startControlPlane), both are leased together.
 */
export async function startBackends(cpOptions: ControlPlaneOptions = {}): Promise<Backends> {
  const kind = sharedKind(cpOptions);
  if (kind !== undefined) {
    const { cp, moto } = await leaseBackends({ moto: true, kind });
    if (moto === undefined) throw new Error("shared back ends: the lease came without an emulator");
    return { cp, moto };
  }
  const [cp, moto] = await Promise.allSettled([launchControlPlane(cpOptions), startEmulator()]);
  if (cp.status === "fulfilled" && moto.status === "fulfilled") return { cp: cp.value, moto: moto.value };
  await Promise.all([
    cp.status === "fulfilled" ? cp.value.stop() : undefined,
    moto.status === "fulfilled" ? moto.value.stop() : undefined,
  ]);
  throw cp.status === "rejected" ? cp.reason : (moto as PromiseRejectedResult).reason;
}

/** A test AWS emulator for a file: leased from the test runner when it serves shared back ends, else its own. */
export function startEmulator(): Promise<Moto> {
  return process.env[BACKENDS_ENV] !== undefined ? leaseEmulator() : startMoto();
}
