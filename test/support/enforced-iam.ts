/**
 * A test AWS that enforces IAM: an emulator of the file's own (never a shared one: enforcement is
 * a setting of the whole emulator process) with a harness administrator, IAM users and roles made
 * through moto's IAM API, and then moto's enforcement switched on (`POST /moto-api/reset-auth`
 * with body `0`): from then on every request's SigV4 signature is checked and the caller's
 * identity policies are evaluated, as the emulator's IAM wraps make them evaluate (test/README.md,
 * "IAM").
 *
 * IAM and KMS are called through their query and JSON APIs, signed with the harness's key (the
 * project has no IAM or KMS SDK client): before enforcement moto checks no signature, after it
 * every one.
 */
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { startMoto, type Moto } from "./moto.ts";
import { repoRoot } from "./process.ts";

/** An IAM user's access key. */
export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** An IAM policy document. */
export interface PolicyDocument {
  readonly Version: string;
  readonly Statement: readonly {
    readonly Sid?: string;
    readonly Effect: string;
    readonly Action: string | readonly string[];
    readonly Resource?: string | readonly string[];
    readonly Principal?: unknown;
    readonly Condition?: unknown;
  }[];
}

/** The account of every emulator identity. */
export const ACCOUNT = "123456789012";
const REGION = "us-east-1";

/** Everything, for the harness's own calls. */
export const ALLOW_ALL: PolicyDocument = {
  Version: "2012-10-17",
  Statement: [{ Effect: "Allow", Action: "*", Resource: "*" }],
};

/** A generated policy of config/iam, as the file holds it. */
export function generatedPolicy(file: "policy.json" | "policy-tag-scoped.json"): PolicyDocument {
  return JSON.parse(readFileSync(path.join(repoRoot, "config/iam", file), "utf8")) as PolicyDocument;
}

/** `policy` without `action`, in every statement that names it (a statement left with none goes). */
export function withoutAction(policy: PolicyDocument, action: string): PolicyDocument {
  const Statement = policy.Statement.flatMap((s) => {
    const actions = (typeof s.Action === "string" ? [s.Action] : s.Action).filter((a) => a !== action);
    return actions.length === 0 ? [] : [{ ...s, Action: actions }];
  });
  return { ...policy, Statement };
}

const sha256 = (data: string): string => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string): Buffer => createHmac("sha256", key).update(data).digest();

/** The headers of a POST of `body` to `endpoint` signed with SigV4 for `service`. */
function signedHeaders(
  endpoint: string,
  service: string,
  key: AccessKey,
  headers: Record<string, string>,
  body: string,
): Record<string, string> {
  const amzDate = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const day = amzDate.slice(0, 8);
  const all: Record<string, string> = { ...headers, host: new URL(endpoint).host, "x-amz-date": amzDate };
  const names = Object.keys(all)
    .map((n) => n.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(all).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  const canonical = [
    "POST",
    "/",
    "",
    ...names.map((n) => `${n}:${lower[n] ?? ""}`),
    "",
    names.join(";"),
    sha256(body),
  ].join("\n");
  const scope = `${day}/${REGION}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const signing = hmac(hmac(hmac(hmac(`AWS4${key.secretAccessKey}`, day), REGION), service), "aws4_request");
  const signature = createHmac("sha256", signing).update(toSign).digest("hex");
  const { host: _host, ...sent } = all;
  return {
    ...sent,
    authorization: `AWS4-HMAC-SHA256 Credential=${key.accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}`,
  };
}

/**
 * `value` encoded as a form field the way moto re-encodes the fields it parsed before it checks
 * the signature (Python's `quote_plus`): a space as `+`, and `!'()*` escaped too.
 */
const formEncode = (value: string): string =>
  encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");

/** One call of IAM's query API: the response's XML. */
async function iamCall(endpoint: string, key: AccessKey, params: Record<string, string>): Promise<string> {
  const body = Object.entries({ ...params, Version: "2010-05-08" })
    .map(([k, v]) => `${formEncode(k)}=${formEncode(v)}`)
    .join("&");
  const headers = signedHeaders(
    endpoint,
    "iam",
    key,
    { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
    body,
  );
  const res = await fetch(endpoint, { method: "POST", headers, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`IAM ${params.Action}: HTTP ${res.status} ${text}`);
  return text;
}

/** The text of the first `<name>` element of `xml`. */
function element(xml: string, name: string): string {
  const found = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
  if (found === undefined) throw new Error(`no <${name}> in the IAM answer`);
  return found;
}

/** The emulator that enforces IAM, and the IAM of its account. */
export interface EnforcedAws {
  /** The emulator, its environment carrying the harness administrator's key. */
  readonly moto: Moto;
  /** The harness administrator's key (every action allowed), for the test's own AWS calls. */
  readonly harness: AccessKey;
  /** Creates IAM user `name` whose only policy is `policy`: its access key. */
  createUser(name: string, policy: PolicyDocument): Promise<AccessKey>;
  /** Replaces the only policy of IAM user `name`. */
  putUserPolicy(name: string, policy: PolicyDocument): Promise<void>;
  /** Creates IAM role `name` with the trust policy `trust` and, when given, its only policy: its ARN. */
  createRole(name: string, trust: PolicyDocument, policy?: PolicyDocument): Promise<string>;
  /** Switches enforcement on. */
  enforce(): Promise<void>;
}

/**
 * Starts an emulator of this process's own, whatever AWS_ENDPOINT_URL says, and makes the harness
 * administrator in it; enforcement is off until {@link EnforcedAws.enforce}.
 */
export async function startEnforcedAws(): Promise<EnforcedAws> {
  const base = await startMoto({ own: true });
  const endpoint = base.endpoint;
  try {
    // Before enforcement moto checks no signature: the first user is made with any key.
    const bootstrap: AccessKey = { accessKeyId: "testing", secretAccessKey: "testing" };
    const createUser = async (
      signer: AccessKey,
      name: string,
      policy: PolicyDocument,
    ): Promise<AccessKey> => {
      await iamCall(endpoint, signer, { Action: "CreateUser", UserName: name });
      await iamCall(endpoint, signer, {
        Action: "PutUserPolicy",
        UserName: name,
        PolicyName: "policy",
        PolicyDocument: JSON.stringify(policy),
      });
      const xml = await iamCall(endpoint, signer, { Action: "CreateAccessKey", UserName: name });
      return { accessKeyId: element(xml, "AccessKeyId"), secretAccessKey: element(xml, "SecretAccessKey") };
    };
    const harness = await createUser(bootstrap, "harness", ALLOW_ALL);
    const moto: Moto = {
      endpoint,
      env: {
        ...base.env,
        AWS_ACCESS_KEY_ID: harness.accessKeyId,
        AWS_SECRET_ACCESS_KEY: harness.secretAccessKey,
      },
      async reset() {
        throw new Error("an emulator that enforces IAM is not reset: its IAM users would go with it");
      },
      async createInstanceProfile(name) {
        await iamCall(endpoint, harness, { Action: "CreateInstanceProfile", InstanceProfileName: name });
      },
      async createKmsKey() {
        const body = JSON.stringify({ Description: "test volumes" });
        const headers = signedHeaders(
          endpoint,
          "kms",
          harness,
          { "content-type": "application/x-amz-json-1.1", "x-amz-target": "TrentService.CreateKey" },
          body,
        );
        const res = await fetch(endpoint, { method: "POST", headers, body });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`KMS CreateKey: HTTP ${res.status} ${text}`);
        const meta = (JSON.parse(text) as { KeyMetadata?: { KeyId?: string; Arn?: string } }).KeyMetadata;
        if (meta?.KeyId === undefined || meta.Arn === undefined) throw new Error(`KMS CreateKey: ${text}`);
        return { keyId: meta.KeyId, arn: meta.Arn };
      },
      stop: () => base.stop(),
    };
    return {
      moto,
      harness,
      createUser: (name, policy) => createUser(harness, name, policy),
      async putUserPolicy(name, policy) {
        await iamCall(endpoint, harness, {
          Action: "PutUserPolicy",
          UserName: name,
          PolicyName: "policy",
          PolicyDocument: JSON.stringify(policy),
        });
      },
      async createRole(name, trust, policy) {
        const xml = await iamCall(endpoint, harness, {
          Action: "CreateRole",
          RoleName: name,
          AssumeRolePolicyDocument: JSON.stringify(trust),
        });
        if (policy !== undefined)
          await iamCall(endpoint, harness, {
            Action: "PutRolePolicy",
            RoleName: name,
            PolicyName: "policy",
            PolicyDocument: JSON.stringify(policy),
          });
        return element(xml, "Arn");
      },
      async enforce() {
        const res = await fetch(`${endpoint}/moto-api/reset-auth`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: "0",
        });
        if (!res.ok) throw new Error(`moto reset-auth: HTTP ${res.status} ${await res.text()}`);
      },
    };
  } catch (err) {
    await base.stop();
    throw err;
  }
}
