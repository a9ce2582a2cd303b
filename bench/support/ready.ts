/** Which listed objects are Ready, for the benchmarks that wait for an estate to converge. */
import type { ControlPlane } from "../../test/support/envtest.ts";
import { ready, type KubeObj } from "../../test/support/reconciler-env.ts";

/** Whether `o`'s Ready condition is True. */
export const isReady = (o: KubeObj | undefined): boolean => ready(o)?.status === "True";

/** The names of the objects listed at `path` (a collection, with any query) whose Ready is True. */
export async function readyNames(cp: Pick<ControlPlane, "request">, path: string): Promise<string[]> {
  const res = await cp.request("GET", path);
  const items = (res.body as { items?: KubeObj[] }).items ?? [];
  return items.filter(isReady).map((o) => o.metadata.name ?? "");
}
