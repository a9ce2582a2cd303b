/**
 * Multi-account operation against a real API server and moto, which keeps the resources of each
 * account apart by the credentials of an assumed role: AwsAccounts assume their roles and report
 * the account ID, objects land in the account their accountRef or namespace names (checked from
 * outside with each account's own credentials), a namespace an account does not allow is
 * refused without a single AWS call in that account (the proxy records which identity signed
 * every call), a role that cannot be assumed holds its objects back until its trust policy
 * allows the operator (tried again on the access backoff, no edit needed), adoption is granted by
 * an AwsAccount's spec.adoption to its objects alone, an account in use is kept until its last
 * object is gone, and `--require-account` refuses an object without one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DescribeInstancesCommand, EC2Client } from "@aws-sdk/client-ec2";
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueUrlCommand, ListQueueTagsCommand, SQSClient } from "@aws-sdk/client-sqs";
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import type { AwsAccount } from "../../src/api/v1/index.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { SqsEnv, type QueueObj } from "./reconciler-sqs-fixture.ts";

const NS_A = "acct-a";
const NS_B = "acct-b";
const NS_C = "acct-c";
const ACCOUNT_A = "222222222222";
const ACCOUNT_B = "333333333333";
const ACCOUNT_C = "444444444444";
const DENIED_ROLE = "arn:aws:iam::555555555555:role/denied";
/** A role whose trust policy refuses the operator until `lock.open` (moto would let anyone assume it). */
const LOCKED_ROLE = "arn:aws:iam::777777777777:role/kubeprovisioner-locked";
const lock = { open: false, refusals: [] as number[] };

const env = new SqsEnv(NS_A, [], {
  proxy: {
    // The roles moto would let anyone assume that these tests want refused.
    gate: (operation, body) => {
      if (operation !== "AssumeRole") return "forward";
      const role = new URLSearchParams(body).get("RoleArn");
      if (role === DENIED_ROLE) return "deny";
      if (role !== LOCKED_ROLE || lock.open) return "forward";
      lock.refusals.push(Date.now());
      return "deny";
    },
  },
}).hooks();

const API = "/apis/compute.cloud.com/v1";

async function createNamespace(
  name: string,
  meta: { labels?: object; annotations?: object } = {},
): Promise<void> {
  const res = await env.cp.request("POST", "/api/v1/namespaces", { metadata: { name, ...meta } });
  assert.equal(res.status, 201, res.text);
}

async function createAccount(name: string, spec: Record<string, unknown>): Promise<void> {
  const res = await env.cp.request("POST", `${API}/awsaccounts`, {
    apiVersion: "compute.cloud.com/v1",
    kind: "AwsAccount",
    metadata: { name },
    spec,
  });
  assert.equal(res.status, 201, res.text);
}

async function account(name: string): Promise<AwsAccount | undefined> {
  const res = await env.cp.request("GET", `${API}/awsaccounts/${name}`);
  return res.status === 200 ? (res.body as AwsAccount) : undefined;
}

const condition = (
  o:
    | { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }
    | undefined,
  type: string,
) => o?.status?.conditions?.find((c) => c.type === type);

async function waitAccount(
  name: string,
  what: string,
  pred: (a: AwsAccount | undefined) => boolean,
): Promise<AwsAccount | undefined> {
  let last: AwsAccount | undefined;
  await waitFor(`AwsAccount ${name} ${what}`, async () => pred((last = await account(name))), WAIT_MS, 200);
  return last;
}

async function createQueue(ns: string, name: string, spec: Record<string, unknown> = {}): Promise<void> {
  const res = await env.cp.request("POST", `${API}/namespaces/${ns}/sqsqueues`, {
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { name },
    spec: { region: "us-east-1", queueName: name, ...spec },
  });
  assert.equal(res.status, 201, res.text);
}

async function queue(ns: string, name: string): Promise<QueueObj | undefined> {
  const res = await env.cp.request("GET", `${API}/namespaces/${ns}/sqsqueues/${name}`);
  return res.status === 200 ? (res.body as QueueObj) : undefined;
}

async function waitQueue(
  ns: string,
  name: string,
  what: string,
  pred: (q: QueueObj | undefined) => boolean,
): Promise<QueueObj | undefined> {
  let last: QueueObj | undefined;
  await waitFor(
    `SqsQueue ${ns}/${name} ${what}`,
    async () => pred((last = await queue(ns, name))),
    WAIT_MS,
    200,
  );
  return last;
}

const testing = () => ({ accessKeyId: "testing", secretAccessKey: "testing" });

/** An STS client talking to moto directly (not through the proxy), with the default credentials. */
function sts(credentials = testing()): STSClient {
  return new STSClient({ region: "us-east-1", endpoint: env.moto.endpoint, credentials });
}

type Creds = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** Credentials of the account of `roleArn` (undefined: the default account), assumed from outside. */
async function credentialsOf(roleArn: string | undefined): Promise<Creds> {
  if (roleArn === undefined) return testing();
  const client = sts();
  const out = await client.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: "test" }));
  client.destroy();
  const c = out.Credentials;
  assert.ok(c?.AccessKeyId && c.SecretAccessKey && c.SessionToken);
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken };
}

/** The live instance IDs and bucket names of the account of `roleArn`, asked from outside. */
async function ec2AndS3Of(roleArn: string | undefined): Promise<{ instances: string[]; buckets: string[] }> {
  const credentials = await credentialsOf(roleArn);
  const ec2 = new EC2Client({ region: "us-east-1", endpoint: env.moto.endpoint, credentials });
  const s3 = new S3Client({
    region: "us-east-1",
    endpoint: env.moto.endpoint,
    credentials,
    forcePathStyle: true,
  });
  try {
    const out = await ec2.send(new DescribeInstancesCommand({}));
    const instances = (out.Reservations ?? [])
      .flatMap((r) => r.Instances ?? [])
      .filter((i) => i.State?.Name !== "terminated")
      .map((i) => i.InstanceId ?? "");
    const buckets = ((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name ?? "");
    return { instances, buckets };
  } finally {
    ec2.destroy();
    s3.destroy();
  }
}

/** Whether `queueName` exists in the account of `roleArn` (undefined: the default account), asked from outside. */
async function queueIn(roleArn: string | undefined, queueName: string): Promise<boolean> {
  const credentials = await credentialsOf(roleArn);
  const sqs = new SQSClient({ region: "us-east-1", endpoint: env.moto.endpoint, credentials });
  try {
    await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
    return true;
  } catch (err) {
    if ((err as Error).name === "QueueDoesNotExist") return false;
    throw err;
  } finally {
    sqs.destroy();
  }
}

/** The account of an access key, as moto tells it (GetCallerIdentity signed with that key). */
async function accountOfKey(accessKeyId: string): Promise<string | undefined> {
  const client = sts({ accessKeyId, secretAccessKey: "unchecked" });
  try {
    return (await client.send(new GetCallerIdentityCommand({}))).Account;
  } finally {
    client.destroy();
  }
}

const roleOf = (id: string, name: string) => `arn:aws:iam::${id}:role/${name}`;

describe("AwsAccount", () => {
  it("assumes each account's role and puts each object's queue into its account", async () => {
    await createNamespace(NS_B, {
      labels: { tenant: "b" },
      annotations: { "compute.cloud.com/account": "team-b" },
    });
    const secret = await env.cp.request("POST", `/api/v1/namespaces/${NS_B}/secrets`, {
      metadata: { name: "team-b-external-id" },
      stringData: { id: "external-b" },
    });
    assert.equal(secret.status, 201, secret.text);
    await createAccount("team-a", {
      roleArn: roleOf(ACCOUNT_A, "tenant"),
      externalId: "external-a",
      allowedNamespaces: { names: [NS_A] },
    });
    await createAccount("team-b", {
      roleArn: roleOf(ACCOUNT_B, "tenant"),
      externalIdSecretRef: { namespace: NS_B, name: "team-b-external-id", key: "id" },
      sessionDurationSeconds: 900,
      allowedNamespaces: { selector: { matchLabels: { tenant: "b" } } },
    });
    const a = await waitAccount("team-a", "Ready", (x) => condition(x, "Ready")?.status === "True");
    const b = await waitAccount("team-b", "Ready", (x) => condition(x, "Ready")?.status === "True");
    assert.equal(a?.status?.accountId, ACCOUNT_A);
    assert.equal(b?.status?.accountId, ACCOUNT_B);
    assert.match(
      a?.status?.assumedArn ?? "",
      /^arn:aws:sts::222222222222:assumed-role\/tenant\/kubeprovisioner-team-a$/,
    );

    await createQueue(NS_A, "acct-qa", { accountRef: { name: "team-a" } });
    await createQueue(NS_B, "acct-qb"); // by the namespace's annotation
    const qa = await waitQueue(NS_A, "acct-qa", "Ready", (q) => condition(q, "Ready")?.status === "True");
    const qb = await waitQueue(NS_B, "acct-qb", "Ready", (q) => condition(q, "Ready")?.status === "True");
    assert.equal(qa?.status?.accountId, ACCOUNT_A);
    assert.equal(qb?.status?.accountId, ACCOUNT_B);
    assert.match(qa?.status?.queueUrl ?? "", /222222222222/);

    assert.equal(await queueIn(roleOf(ACCOUNT_A, "x"), "acct-qa"), true);
    assert.equal(await queueIn(roleOf(ACCOUNT_B, "x"), "acct-qa"), false);
    assert.equal(await queueIn(undefined, "acct-qa"), false);
    assert.equal(await queueIn(roleOf(ACCOUNT_B, "x"), "acct-qb"), true);
    assert.equal(await queueIn(roleOf(ACCOUNT_A, "x"), "acct-qb"), false);
    assert.equal(await queueIn(undefined, "acct-qb"), false);

    // An observe-only object reads the resource in its own account too.
    await createQueue(NS_A, "acct-observe-a", {
      queueName: "acct-qa",
      managementPolicy: "ObserveOnly",
      accountRef: { name: "team-a" },
    });
    await createQueue(NS_A, "acct-observe-own", { queueName: "acct-qa", managementPolicy: "ObserveOnly" });
    const seen = await waitQueue(
      NS_A,
      "acct-observe-a",
      "Ready",
      (q) => condition(q, "Ready")?.status === "True",
    );
    assert.equal(seen?.status?.accountId, ACCOUNT_A);
    assert.equal(seen?.status?.queueUrl, qa?.status?.queueUrl);
    const missing = await waitQueue(
      NS_A,
      "acct-observe-own",
      "NotFound",
      (q) => condition(q, "Ready")?.reason === "NotFound",
    );
    assert.equal(
      condition(missing, "Ready")?.status,
      "False",
      "the operator's own account has no such queue",
    );

    // The external IDs were sent with AssumeRole; admission keeps the account of an object.
    const moved = await env.cp.request(
      "PATCH",
      `${API}/namespaces/${NS_A}/sqsqueues/acct-qa`,
      { spec: { accountRef: { name: "team-b" } } },
      "application/merge-patch+json",
    );
    assert.equal(moved.status, 422, moved.text);
    assert.match(moved.text, /accountRef is immutable/);
    const both = await env.cp.request("POST", `${API}/awsaccounts`, {
      apiVersion: "compute.cloud.com/v1",
      kind: "AwsAccount",
      metadata: { name: "both" },
      spec: {
        roleArn: roleOf(ACCOUNT_A, "x"),
        externalId: "abc",
        externalIdSecretRef: { namespace: NS_B, name: "s", key: "k" },
      },
    });
    assert.equal(both.status, 422, both.text);
    assert.match(both.text, /at most one of externalId and externalIdSecretRef/);
  });

  it("keeps the EC2 instances and buckets of two accounts apart in one region", async () => {
    const post = async (plural: string, kind: string, name: string, spec: Record<string, unknown>) => {
      const res = await env.cp.request("POST", `${API}/namespaces/${NS_A}/${plural}`, {
        apiVersion: "compute.cloud.com/v1",
        kind,
        metadata: { name },
        spec: { region: "us-east-1", ...spec },
      });
      assert.equal(res.status, 201, res.text);
    };
    const instance = { instanceType: "t3.micro", amiId: "ami-1e749f67" };
    await post("ec2instances", "Ec2Instance", "vm-tenant", { ...instance, accountRef: { name: "team-a" } });
    await post("ec2instances", "Ec2Instance", "vm-own", instance);
    await post("s3buckets", "S3Bucket", "bucket-tenant", {
      bucketName: "acct-bucket-a",
      accountRef: { name: "team-a" },
    });
    const get = async (plural: string, name: string) =>
      (await env.cp.request("GET", `${API}/namespaces/${NS_A}/${plural}/${name}`)).body as {
        status?: {
          accountId?: string;
          instanceId?: string;
          conditions?: { type: string; status: string; reason: string; message: string }[];
        };
      };
    const ready = async (plural: string, name: string) => {
      let last: Awaited<ReturnType<typeof get>> | undefined;
      await waitFor(
        `${plural}/${name} Ready`,
        async () => condition((last = await get(plural, name)), "Ready")?.status === "True",
        60_000,
        200,
      );
      return last;
    };
    const tenantVm = await ready("ec2instances", "vm-tenant");
    const ownVm = await ready("ec2instances", "vm-own");
    const bucket = await ready("s3buckets", "bucket-tenant");
    assert.equal(tenantVm?.status?.accountId, ACCOUNT_A);
    assert.equal(bucket?.status?.accountId, ACCOUNT_A);
    assert.equal(ownVm?.status?.accountId, "123456789012", "the operator's own account (moto's default)");
    // Steady polls of both instances (one per account, same region) find each in its own account.
    const launches = env.proxy.count("RunInstances");
    await env.waitPolls(3);
    assert.equal(
      env.proxy.count("RunInstances"),
      launches,
      "no instance was taken for lost and launched again",
    );
    const ids = [tenantVm?.status?.instanceId, ownVm?.status?.instanceId];
    assert.ok(ids.every((id) => id !== undefined && id !== ""));
    assert.notEqual(ids[0], ids[1]);
    const tenant = await ec2AndS3Of(roleOf(ACCOUNT_A, "x"));
    const own = await ec2AndS3Of(undefined);
    assert.ok(tenant.instances.includes(ids[0] ?? ""), "the tenant's instance is in the tenant's account");
    assert.ok(!tenant.instances.includes(ids[1] ?? ""));
    assert.ok(own.instances.includes(ids[1] ?? ""), "the other instance is in the operator's own account");
    assert.ok(!own.instances.includes(ids[0] ?? ""));
    assert.ok(tenant.buckets.includes("acct-bucket-a"));
    assert.ok(!own.buckets.includes("acct-bucket-a"));
  });

  it("refuses an object in a namespace the account does not allow, with no AWS call in that account", async () => {
    await createNamespace(NS_C);
    await createAccount("team-c", { roleArn: roleOf(ACCOUNT_C, "tenant") }); // allows no namespace
    await waitAccount("team-c", "Ready", (x) => x?.status?.accountId === ACCOUNT_C);
    const mark = env.proxy.calls.length;
    await createQueue(NS_C, "acct-qc", { accountRef: { name: "team-c" } });
    await createQueue(NS_C, "acct-qc-a", { accountRef: { name: "team-a" } }); // team-a allows only NS_A
    for (const name of ["acct-qc", "acct-qc-a"]) {
      const q = await waitQueue(
        NS_C,
        name,
        "refused",
        (o) => condition(o, "Ready")?.reason === "AccountNotAllowed",
      );
      assert.equal(condition(q, "Ready")?.status, "False");
      assert.match(condition(q, "Ready")?.message ?? "", new RegExp(`does not allow namespace ${NS_C}`));
      assert.deepEqual(q?.metadata.finalizers ?? [], [], "a refused object gets no finalizer");
    }
    await waitFor(
      "the AccountNotAllowed Event",
      async () => {
        const res = await env.cp.request("GET", `/api/v1/namespaces/${NS_C}/events`);
        const items = (res.body as { items: { reason: string; type: string }[] }).items;
        return items.some((e) => e.reason === "AccountNotAllowed" && e.type === "Warning");
      },
      15_000,
    );
    await env.waitPolls(2);
    // Three accounts in use, each assumed once: the credentials are kept across the accounts'
    // periodic checks and the objects' reconciles (sessions last an hour, or 15 minutes for team-b).
    assert.equal(env.proxy.count("AssumeRole"), 3);
    // Every call since the objects appeared, by the account of the key that signed it.
    const keys = new Set(
      env.proxy.calls
        .slice(mark)
        .filter((c) => c.service !== "sts")
        .map((c) => c.accessKeyId ?? ""),
    );
    const accounts = new Set<string | undefined>();
    for (const key of keys) accounts.add(await accountOfKey(key));
    assert.ok(!accounts.has(ACCOUNT_C), `no call with team-c's credentials, saw ${[...accounts].join(", ")}`);
    assert.equal(await queueIn(roleOf(ACCOUNT_C, "x"), "acct-qc"), false);
    assert.equal(await queueIn(undefined, "acct-qc"), false);
    assert.equal(await queueIn(roleOf(ACCOUNT_A, "x"), "acct-qc-a"), false);
    // Nothing to release: deleting a refused object is immediate.
    await env.cp.request("DELETE", `${API}/namespaces/${NS_C}/sqsqueues/acct-qc-a`);
    await waitQueue(NS_C, "acct-qc-a", "gone", (o) => o === undefined);

    // The refusal is terminal, but allowing the namespace brings the object back at once.
    const allow = await env.cp.request(
      "PATCH",
      `${API}/awsaccounts/team-c`,
      { spec: { allowedNamespaces: { names: [NS_C] } } },
      "application/merge-patch+json",
    );
    assert.equal(allow.status, 200, allow.text);
    const admitted = await waitQueue(
      NS_C,
      "acct-qc",
      "Ready",
      (o) => condition(o, "Ready")?.status === "True",
    );
    assert.equal(admitted?.status?.accountId, ACCOUNT_C);
    assert.equal(await queueIn(roleOf(ACCOUNT_C, "x"), "acct-qc"), true);
  });

  it("reports AssumeRoleFailed with AWS's code and holds the account's objects back", async () => {
    await createAccount("denied", { roleArn: DENIED_ROLE, allowedNamespaces: { names: [NS_A] } });
    const d = await waitAccount(
      "denied",
      "AssumeRoleFailed",
      (x) => condition(x, "Ready")?.reason === "AssumeRoleFailed",
    );
    assert.equal(condition(d, "Ready")?.status, "False");
    assert.match(condition(d, "Ready")?.message ?? "", /^AccessDenied: /);
    assert.equal(d?.status?.accountId, undefined);
    await createQueue(NS_A, "acct-denied", { accountRef: { name: "denied" } });
    const q = await waitQueue(
      NS_A,
      "acct-denied",
      "AccountNotReady",
      (o) => condition(o, "Synced")?.reason === "AccountNotReady",
    );
    assert.equal(condition(q, "Synced")?.status, "False");
    assert.match(
      condition(q, "Synced")?.message ?? "",
      /AwsAccount denied is not ready: AssumeRoleFailed: AccessDenied/,
    );
    assert.equal(await queueIn(undefined, "acct-denied"), false);

    await createAccount("no-secret", {
      roleArn: roleOf("888888888888", "tenant"),
      externalIdSecretRef: { namespace: NS_A, name: "missing", key: "id" },
    });
    const n = await waitAccount(
      "no-secret",
      "ExternalIdUnavailable",
      (x) => condition(x, "Ready")?.reason === "ExternalIdUnavailable",
    );
    assert.match(condition(n, "Ready")?.message ?? "", new RegExp(`Secret ${NS_A}/missing does not exist`));
    assert.equal(env.proxy.calls.filter((c) => c.operation === "CreateQueue" && c.status === 403).length, 0);
  });

  it("assumes a role once its trust policy allows it, on the access backoff and without a change to the AwsAccount, and its objects follow", async () => {
    await createAccount("locked", { roleArn: LOCKED_ROLE, allowedNamespaces: { names: [NS_A] } });
    const refused = await waitAccount(
      "locked",
      "AssumeRoleFailed",
      (x) => condition(x, "Ready")?.reason === "AssumeRoleFailed",
    );
    const message = condition(refused, "Ready")?.message ?? "";
    assert.match(message, new RegExp(`^AccessDenied: could not assume ${LOCKED_ROLE}: AssumeRole: `));
    assert.match(message, /needs sts:AssumeRole and sts:TagSession on the AwsAccount's role/);
    assert.match(message, /tried again after 1s, then at doubling intervals up to 1h0m0s/);
    await createQueue(NS_A, "acct-locked", { accountRef: { name: "locked" } });
    await waitQueue(
      NS_A,
      "acct-locked",
      "AccountNotReady",
      (o) => condition(o, "Synced")?.reason === "AccountNotReady",
    );

    await waitFor("AssumeRole tried again", async () => lock.refusals.length >= 2, WAIT_MS, 100);
    const [first, second] = lock.refusals;
    assert.ok(first !== undefined && second !== undefined);
    assert.ok(second - first >= 750, `tried again after ${second - first} ms: not on the access backoff`);

    lock.open = true; // the tenant role's trust policy now allows the operator
    const assumed = await waitAccount("locked", "Ready", (x) => condition(x, "Ready")?.status === "True");
    assert.equal(assumed?.status?.accountId, "777777777777");
    assert.equal(
      assumed?.metadata.generation,
      refused?.metadata.generation,
      "the AwsAccount was not changed",
    );
    const q = await waitQueue(NS_A, "acct-locked", "Ready", (o) => condition(o, "Ready")?.status === "True");
    assert.equal(q?.status?.accountId, "777777777777");
    assert.equal(q?.metadata.generation, 1, "the queue was not changed");
    assert.equal(await queueIn(roleOf("777777777777", "x"), "acct-locked"), true);
  });

  it("refuses an object whose account now points at another AWS account than its resource's", async () => {
    await createAccount("movable", {
      roleArn: roleOf("666666666666", "tenant"),
      allowedNamespaces: { names: [NS_A] },
    });
    await waitAccount("movable", "Ready", (x) => x?.status?.accountId === "666666666666");
    await createQueue(NS_A, "acct-moved", { accountRef: { name: "movable" } });
    await waitQueue(NS_A, "acct-moved", "Ready", (o) => o?.status?.accountId === "666666666666");
    const repoint = await env.cp.request(
      "PATCH",
      `${API}/awsaccounts/movable`,
      { spec: { roleArn: roleOf("777777777777", "tenant") } },
      "application/merge-patch+json",
    );
    assert.equal(repoint.status, 200, repoint.text);
    const q = await waitQueue(
      NS_A,
      "acct-moved",
      "AccountChanged",
      (o) => condition(o, "Ready")?.reason === "AccountChanged",
    );
    assert.match(
      condition(q, "Ready")?.message ?? "",
      /lives in account 666666666666, but the object now resolves to account 777777777777/,
    );
    assert.equal(q?.status?.accountId, "666666666666");
    assert.equal(
      await queueIn(roleOf("777777777777", "x"), "acct-moved"),
      false,
      "nothing was created in the new account",
    );
    assert.equal(await queueIn(roleOf("666666666666", "x"), "acct-moved"), true);
  });

  it("grants adoption per AwsAccount: refused until its spec.adoption is Allowed, never to the operator's own identity", async () => {
    // Queues made outside the operator: one in account A, one in the operator's own account.
    const outside = async (roleArn: string | undefined, name: string): Promise<SQSClient> => {
      const sqs = new SQSClient({
        region: "us-east-1",
        endpoint: env.moto.endpoint,
        credentials: await credentialsOf(roleArn),
      });
      await sqs.send(new CreateQueueCommand({ QueueName: name, tags: { owner: "billing" } }));
      return sqs;
    };
    const tenantSqs = await outside(roleOf(ACCOUNT_A, "x"), "acct-legacy");
    const ownSqs = await outside(undefined, "acct-legacy-own");
    try {
      await createQueue(NS_A, "acct-legacy", { accountRef: { name: "team-a" }, adoptExisting: true });
      await createQueue(NS_A, "acct-legacy-own", { adoptExisting: true });
      const refused = await waitQueue(
        NS_A,
        "acct-legacy",
        "AdoptionNotAllowed",
        (o) => condition(o, "Ready")?.reason === "AdoptionNotAllowed",
      );
      assert.match(
        condition(refused, "Ready")?.message ?? "",
        /was never managed by this operator; .*AwsAccount team-a, which this object uses, does not allow adoption; the cluster admin grants it with spec\.adoption: Allowed/,
      );
      const own = await waitQueue(
        NS_A,
        "acct-legacy-own",
        "AdoptionNotAllowed",
        (o) => condition(o, "Ready")?.reason === "AdoptionNotAllowed",
      );
      assert.match(condition(own, "Ready")?.message ?? "", /--adoption-namespaces=acct-a/);
      const urlA = (await tenantSqs.send(new GetQueueUrlCommand({ QueueName: "acct-legacy" }))).QueueUrl;
      assert.deepEqual((await tenantSqs.send(new ListQueueTagsCommand({ QueueUrl: urlA }))).Tags, {
        owner: "billing",
      });

      // The cluster admin allows adoption on the AwsAccount: its object adopts with no edit of its own.
      const allow = await env.cp.request(
        "PATCH",
        `${API}/awsaccounts/team-a`,
        { spec: { adoption: "Allowed" } },
        "application/merge-patch+json",
      );
      assert.equal(allow.status, 200, allow.text);
      const adopted = await waitQueue(
        NS_A,
        "acct-legacy",
        "Ready",
        (o) => condition(o, "Ready")?.status === "True",
      );
      assert.equal(adopted?.metadata.generation, 1, "the object was not changed");
      assert.equal(adopted?.status?.accountId, ACCOUNT_A);
      const tags = (await tenantSqs.send(new ListQueueTagsCommand({ QueueUrl: urlA }))).Tags ?? {};
      assert.equal(tags["compute.cloud.com/uid"], adopted?.metadata.uid);

      // The AwsAccount's grant is not the install's: the own-identity object stays refused.
      assert.equal(condition(await queue(NS_A, "acct-legacy-own"), "Ready")?.reason, "AdoptionNotAllowed");
      const urlOwn = (await ownSqs.send(new GetQueueUrlCommand({ QueueName: "acct-legacy-own" }))).QueueUrl;
      assert.deepEqual((await ownSqs.send(new ListQueueTagsCommand({ QueueUrl: urlOwn }))).Tags, {
        owner: "billing",
      });
      for (const name of ["acct-legacy", "acct-legacy-own"]) {
        await env.cp.request("DELETE", `${API}/namespaces/${NS_A}/sqsqueues/${name}`);
        await waitQueue(NS_A, name, "gone", (o) => o === undefined);
      }
      assert.equal(await queueIn(roleOf(ACCOUNT_A, "x"), "acct-legacy"), false, "the adopter deleted it");
      assert.equal(await queueIn(undefined, "acct-legacy-own"), true, "the refused object touched nothing");
    } finally {
      tenantSqs.destroy();
      ownSqs.destroy();
    }
  });

  it("keeps an AwsAccount that objects still use until the last one is gone", async () => {
    const del = await env.cp.request("DELETE", `${API}/awsaccounts/team-b`);
    assert.ok(del.status === 200 || del.status === 202, del.text);
    const held = await waitAccount("team-b", "InUse", (x) => condition(x, "InUse")?.status === "True");
    assert.ok(held?.metadata.deletionTimestamp !== undefined);
    assert.match(condition(held, "InUse")?.message ?? "", new RegExp(`SqsQueue ${NS_B}/acct-qb`));
    await env.cp.request("DELETE", `${API}/namespaces/${NS_B}/sqsqueues/acct-qb`);
    await waitQueue(NS_B, "acct-qb", "gone", (o) => o === undefined);
    await waitAccount("team-b", "gone", (x) => x === undefined);
    // The queue was deleted in its account, with the account's credentials, before it went.
    assert.equal(await queueIn(roleOf(ACCOUNT_B, "x"), "acct-qb"), false);
  });

  it("with --require-account refuses an object that names no account", async () => {
    await env.op.stop();
    await env.startOperator(["--require-account"]);
    await createQueue(NS_A, "acct-none");
    const q = await waitQueue(
      NS_A,
      "acct-none",
      "AccountRequired",
      (o) => condition(o, "Ready")?.reason === "AccountRequired",
    );
    assert.equal(condition(q, "Ready")?.status, "False");
    assert.match(condition(q, "Ready")?.message ?? "", /--require-account/);
    assert.equal(await queueIn(undefined, "acct-none"), false);
    // An object with an account still works.
    await createQueue(NS_A, "acct-qa2", { accountRef: { name: "team-a" } });
    const ok = await waitQueue(NS_A, "acct-qa2", "Ready", (o) => condition(o, "Ready")?.status === "True");
    assert.equal(ok?.status?.accountId, ACCOUNT_A);
  });
});
