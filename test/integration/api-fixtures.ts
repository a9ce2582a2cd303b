/**
 * Shared fixtures of the API integration tests (api-crds, api-admission): a control plane with
 * the CRDs installed, valid specs of each kind, and request helpers.
 */
import assert from "node:assert/strict";
import { request as httpsRequest, type RequestOptions } from "node:https";
import {
  API_VERSION,
  Ec2InstanceResource,
  S3BucketResource,
  SqsQueueResource,
  type Ec2InstanceSpecInput,
  type S3BucketSpecInput,
  type SqsQueueSpecInput,
} from "../../src/api/v1/index.ts";
import { KubeConfigConnection } from "../../src/runtime/kube/connection.ts";
import { resourcePath, type ResourceType } from "../../src/runtime/kube/object.ts";
import { startControlPlane, type ControlPlane, type RawResponse } from "../support/envtest.ts";

export const NS = "api-test";
export const resources = {
  Ec2Instance: Ec2InstanceResource,
  S3Bucket: S3BucketResource,
  SqsQueue: SqsQueueResource,
};
export type Kind = keyof typeof resources;

export const validEc2: Ec2InstanceSpecInput = {
  instanceType: "t3.micro",
  amiId: "ami-12c6146b",
  region: "us-east-1",
  availabilityZone: "us-east-1a",
  keyPair: "ops",
  securityGroups: ["sg-0123456789abcdef0"],
  subnet: "subnet-01234567",
  userData: "#!/bin/sh\necho hi\n",
  tags: { Name: "web", "team/owner": "platform" },
  storage: {
    rootVolume: { size: 10, type: "gp3", deviceName: "/dev/sda1", encrypted: true, kmsKeyId: "alias/ebs" },
    additionalVolumes: [
      { deviceName: "/dev/sdf", size: 20, type: "gp3", deleteOnTermination: false },
      {
        deviceName: "/dev/sdg",
        snapshotId: "snap-0123456789abcdef0",
        kmsKeyId: "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
      },
    ],
  },
  volumeTags: { team: "data" },
  associatePublicIP: true,
  writeOutputsTo: { configMapName: "web.outputs-1" },
};
export const validS3: S3BucketSpecInput = {
  bucketName: "my-bucket.example-1",
  region: "eu-west-1",
  tags: { env: "dev" },
  writeOutputsTo: { secretName: "my-bucket-outputs" },
};
export const validSqs: SqsQueueSpecInput = { queueName: "orders", region: "us-east-1" };
export const valid: Record<Kind, object> = { Ec2Instance: validEc2, S3Bucket: validS3, SqsQueue: validSqs };

let seq = 0;
export function manifest(kind: Kind, spec: unknown, name = `${kind.toLowerCase()}-${++seq}`): object {
  return { apiVersion: API_VERSION, kind, metadata: { name, namespace: NS }, spec };
}

/** `valid[kind]` with `patch` merged in at the top level of spec; `undefined` removes a field. */
export function specWith(kind: Kind, patch: Record<string, unknown>): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...structuredClone(valid[kind]), ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete spec[k];
  return spec;
}

export function longString(n: number): string {
  return "a".repeat(n);
}

/** A request with arbitrary headers, authenticated as the admin of the control plane. */
export async function rawRequest(
  cp: ControlPlane,
  urlPath: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const connection = new KubeConfigConnection(cp.kubeConfig());
  const settings = await connection.settings();
  const opts: RequestOptions = {
    method: "GET",
    headers: { ...settings.headers, ...headers },
    agent: settings.agent,
  };
  return await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const req = httpsRequest(new URL(urlPath, cp.server), opts, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
      });
    });
    req.on("error", reject);
    req.end();
  }).finally(() => connection.destroy());
}

export function collection(r: ResourceType): string {
  return resourcePath(r, { namespace: NS });
}

export function errorMessage(res: RawResponse): string {
  return (res.body as { message?: string }).message ?? res.text;
}

export async function create(
  cp: ControlPlane,
  kind: Kind,
  spec: unknown,
  name?: string,
): Promise<RawResponse> {
  return await cp.request("POST", collection(resources[kind]), manifest(kind, spec, name));
}

export async function mergePatch(
  cp: ControlPlane,
  kind: Kind,
  name: string,
  patch: unknown,
  sub?: string,
): Promise<RawResponse> {
  const p = resourcePath(resources[kind], { namespace: NS, name, subresource: sub });
  return await cp.request("PATCH", p, patch, "application/merge-patch+json");
}

/** Starts a control plane, installs config/crd and creates the test namespace. */
export async function startApiControlPlane(): Promise<ControlPlane> {
  const cp = await startControlPlane({ installCRDs: true });
  try {
    const ns = await cp.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    assert.equal(ns.status, 201, ns.text);
    return cp;
  } catch (err) {
    await cp.stop();
    throw err;
  }
}
