/**
 * The API server's audit log as evidence of who wrote (or read) what, when: a policy that records
 * every write (the request body too for `compute.cloud.com` objects) and, when asked, every read,
 * and a parser.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseJsonLines } from "./json-log.ts";
import { trackTempDir } from "./process.ts";

/** One audit event (the fields the checks read). */
export interface AuditEvent {
  verb: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
  };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  requestObject?: { metadata?: { resourceVersion?: string } };
}

/** The audit policy: reads recorded (at Metadata level) or not. */
function policy(reads: boolean): string {
  return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
${
  reads
    ? ""
    : `  - level: None
    verbs: ["get", "list", "watch"]
`
}  - level: Request
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
    resources:
      - group: compute.cloud.com
  - level: Metadata
`;
}

/**
 * kube-apiserver flags that write the audit log into `dir` (a fresh folder by default), reads
 * included when `reads`; `file` is the log.
 */
export function auditFlags(opts: { reads?: boolean; dir?: string } = {}): { flags: string[]; file: string } {
  let dir = opts.dir;
  if (dir === undefined) {
    dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-audit-"));
    trackTempDir(dir);
  }
  const policyFile = path.join(dir, "audit-policy.yaml");
  writeFileSync(policyFile, policy(opts.reads === true));
  const file = path.join(dir, "audit.log");
  return {
    flags: [`--audit-policy-file=${policyFile}`, `--audit-log-path=${file}`, "--audit-log-format=json"],
    file,
  };
}

/** Every complete event in the log so far. */
export function readAudit(file: string): AuditEvent[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return parseJsonLines<AuditEvent>(text);
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** Whether `e` is a write. */
export function isWrite(e: AuditEvent): boolean {
  return WRITE_VERBS.has(e.verb);
}
