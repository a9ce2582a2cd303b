/**
 * Forces the operator down its 409-Conflict path, deterministically, so the RBAC audit sees the
 * permission only that path needs (`get` on the custom kinds: after a conflict the finalizer
 * helpers re-read the object from the API server, not the cache).
 *
 * A validating admission webhook, served from the test process and matched (by a CEL
 * matchCondition) only to the operator's ServiceAccount, watches for the first request per kind
 * that changes `metadata.finalizers`. While that request is inside the API server's optimistic
 * update loop, the webhook writes an annotation to the same object as the admin and then allows
 * the request. The API server's compare-and-swap then fails, its retry finds the patch's
 * `metadata.resourceVersion` stale, and the operator receives 409 Conflict, exactly as when
 * another client writes between its cache read and its write.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import os from "node:os";
import path from "node:path";
import type { ControlPlane } from "../support/envtest.ts";
import { createPki } from "../support/certs.ts";
import { removeTempDir, trackTempDir } from "../support/process.ts";

/** The annotation the webhook writes to cause the conflict. */
export const CONFLICT_ANNOTATION = "e2e.kubeprovisioner.test/conflict";

/** A running injector. */
export interface ConflictInjector {
  /** Plurals (e.g. `s3buckets`) whose finalizer write has been made to conflict once. */
  readonly injected: ReadonlySet<string>;
  /** Removes the webhook configuration and stops the server. */
  stop(): Promise<void>;
}

/** Options of {@link startConflictInjector}. */
export interface ConflictInjectorOptions {
  /** Only this user's requests are intercepted. */
  readonly username: string;
  readonly group: string;
  readonly plurals: readonly string[];
}

type Meta = { name?: string; namespace?: string; finalizers?: string[] };
type AdmissionReview = {
  request?: {
    uid: string;
    operation: string;
    subResource?: string;
    dryRun?: boolean;
    resource: { group: string; version: string; resource: string };
    namespace?: string;
    object?: { metadata?: Meta };
    oldObject?: { metadata?: Meta };
  };
};

function sameList(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Starts the webhook server and registers it with the API server. */
export async function startConflictInjector(
  cp: ControlPlane,
  opts: ConflictInjectorOptions,
): Promise<ConflictInjector> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kp-conflict-webhook-"));
  trackTempDir(dir);
  const pki = createPki(dir);
  const injected = new Set<string>();

  const review = async (body: AdmissionReview): Promise<{ uid: string; allowed: boolean }> => {
    const req = body.request;
    if (req === undefined) throw new Error("AdmissionReview without request");
    const plural = req.resource.resource;
    const meta = req.object?.metadata;
    const finalizersChange = !sameList(req.oldObject?.metadata?.finalizers, meta?.finalizers);
    if (
      req.operation === "UPDATE" &&
      !req.subResource &&
      !req.dryRun &&
      finalizersChange &&
      !injected.has(plural) &&
      meta?.name
    ) {
      injected.add(plural);
      const where = req.namespace ? `/namespaces/${req.namespace}` : "";
      const res = await cp.request(
        "PATCH",
        `/apis/${req.resource.group}/${req.resource.version}${where}/${plural}/${meta.name}`,
        { metadata: { annotations: { [CONFLICT_ANNOTATION]: new Date().toISOString() } } },
        "application/merge-patch+json",
      );
      if (res.status !== 200) throw new Error(`conflicting write to ${plural}/${meta.name}: ${res.text}`);
    }
    return { uid: req.uid, allowed: true };
  };

  const server: Server = createServer(
    { cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        review(JSON.parse(Buffer.concat(chunks).toString("utf8")) as AdmissionReview).then(
          (verdict) => {
            response.setHeader("Content-Type", "application/json");
            response.end(
              JSON.stringify({
                apiVersion: "admission.k8s.io/v1",
                kind: "AdmissionReview",
                response: verdict,
              }),
            );
          },
          (err: unknown) => {
            response.statusCode = 500;
            response.end(String(err));
          },
        );
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("webhook server has no port");

  const name = "conflict-injector.e2e.kubeprovisioner.test";
  const config = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name,
        admissionReviewVersions: ["v1"],
        sideEffects: "NoneOnDryRun",
        // A broken test webhook must not look like an operator bug.
        failurePolicy: "Ignore",
        timeoutSeconds: 10,
        clientConfig: {
          url: `https://127.0.0.1:${address.port}/validate`,
          caBundle: readFileSync(pki.caCert).toString("base64"),
        },
        rules: [
          {
            apiGroups: [opts.group],
            apiVersions: ["*"],
            operations: ["UPDATE"],
            resources: [...opts.plurals],
            scope: "*",
          },
        ],
        matchConditions: [
          { name: "operator-only", expression: `request.userInfo.username == '${opts.username}'` },
        ],
      },
    ],
  };
  const created = await cp.request(
    "POST",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    config,
  );
  if (created.status !== 201) throw new Error(`registering the conflict webhook: ${created.text}`);

  return {
    injected,
    async stop() {
      await cp.request(
        "DELETE",
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
      );
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeTempDir(dir);
    },
  };
}
