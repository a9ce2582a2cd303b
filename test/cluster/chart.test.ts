/**
 * `make test-cluster`: the chart on a single-node cluster of real parts, with the default values
 * except the AWS endpoint (moto on the host, behind a proxy that names and can hold back calls)
 * and a credentials Secret. What it shows, in order, on one cluster:
 *
 * - two replicas Running and Ready through the kubelet's probes, one holding the Lease;
 * - the samples Ready in moto with every status column filled;
 * - the process as the runtime runs it: uid and gid 65532, no capabilities, no new privileges, a
 *   read-only root, and no shell in the image (read from /proc and crictl, not from the manifest);
 * - /metrics scraped from another pod through the Service: 200 with a token bound to the
 *   metrics-reader ClusterRole, 401 without a token, 403 with a token lacking the role;
 * - the leader's container SIGKILLed inside a create (the launch happened, its answer never came
 *   back): it restarts, and the instance exists once;
 * - the leader pod deleted: the other takes over, one AWS resource per object;
 * - `helm upgrade` with a changed value: the pods roll, objects created meanwhile are created
 *   once, and the audit log shows no two pods writing the objects at once;
 * - bad values (a closed endpoint, no credentials): the clear error on the objects' conditions
 *   and in the log, no crash loop;
 * - IRSA-style credentials: aws.roleArn, and the pod mutation EKS's identity webhook makes (a
 *   projected token for sts.amazonaws.com, AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE): the
 *   operator's calls are signed with keys from AssumeRoleWithWebIdentity;
 * - `helm uninstall`: the CRDs and objects stay, everything else of the release goes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { waitFor } from "../support/process.ts";
import { samples } from "../e2e/flow-support.ts";
import {
  DEPLOYMENT,
  NS,
  RELEASE,
  startChartNode,
  waitForReadyPods,
  waitForSamplesReady,
  type ChartNode,
  type PodInfo,
} from "../e2e/node-support.ts";

const SA = DEPLOYMENT;
const kinds = ["ec2instances", "s3buckets", "sqsqueues"] as const;

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  status?: Record<string, unknown> & {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

function expectedCounts(extra: Partial<Record<"buckets" | "queues" | "instances", number>> = {}) {
  const all = samples();
  const n = (kind: string): number => all.filter((s) => s.kind === kind).length;
  return {
    buckets: n("S3Bucket") + (extra.buckets ?? 0),
    queues: n("SqsQueue") + (extra.queues ?? 0),
    instances: n("Ec2Instance") + (extra.instances ?? 0),
  };
}

function queue(name: string): string {
  return JSON.stringify({
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { name, namespace: "default" },
    spec: { queueName: `kubeprovisioner-${name}`, region: "us-east-1" },
  });
}

function instance(name: string): string {
  return JSON.stringify({
    apiVersion: "compute.cloud.com/v1",
    kind: "Ec2Instance",
    metadata: { name, namespace: "default" },
    spec: { amiId: "ami-1e749f67", instanceType: "t3.micro", region: "us-east-1" },
  });
}

describe("the chart on a real node (full pass)", () => {
  let node: ChartNode;
  let proxy: AwsProxy;
  let extra = { buckets: 0, queues: 0, instances: 0 };

  const get = async (resource: string, name: string): Promise<Obj> =>
    JSON.parse(await node.kubectl(["get", resource, name, "-o", "json"])) as Obj;
  const leader = async (): Promise<PodInfo> => {
    const holder = await node.leaseHolder();
    const pod = (await node.pods()).find((p) => holder.startsWith(`${p.name}_`));
    assert.ok(pod, `a pod of the release holds the Lease (${holder})`);
    return pod;
  };
  const podLog = (pod: string): Promise<string> => node.kubectl(["-n", NS, "logs", pod, "-c", "manager"]);

  before(async () => {
    node = await startChartNode();
    proxy = await startAwsProxy(node.moto.endpoint, { host: node.cluster.hostAddress });
    for (const s of samples()) {
      const profile = s.spec.iamInstanceProfile;
      if (typeof profile === "string") await node.moto.createInstanceProfile(profile);
    }
  });

  after(async () => {
    await proxy?.stop();
    const left = await node?.stop();
    assert.deepEqual(left ?? [], [], "the cluster left nothing behind");
  });

  const install = (set: string[] = [], verb: "install" | "upgrade" = "install"): Promise<void> =>
    node.install([`aws.endpoint=${proxy.endpoint}`, ...set], verb);

  it("runs two replicas Ready through the kubelet's probes, one holding the Lease", async () => {
    await install();
    const pods = await waitForReadyPods(node, 2);
    await waitFor("a Lease holder", async () => (await node.leaseHolder()) !== "", 60_000, 500);
    const l = await leader();
    assert.ok(pods.some((p) => p.name === l.name));
    // The probes are the kubelet's: the pod spec carries them and the pods are Ready.
    const dep = JSON.parse(await node.kubectl(["-n", NS, "get", "deployment", DEPLOYMENT, "-o", "json"])) as {
      spec: { template: { spec: { containers: { readinessProbe?: unknown; livenessProbe?: unknown }[] } } };
    };
    assert.ok(dep.spec.template.spec.containers[0]?.readinessProbe);
    assert.ok(dep.spec.template.spec.containers[0]?.livenessProbe);
  });

  it("makes every sample Ready in moto with every status column filled", async () => {
    await node.kubectl(["apply", "-k", path.dirname(samples()[0]?.file ?? "config/samples/x")]);
    await waitForSamplesReady(node);
    assert.deepEqual(await node.awsCounts(), expectedCounts());
    const crds = JSON.parse(await node.kubectl(["get", "crd", "-o", "json"])) as {
      items: {
        spec: {
          group: string;
          names: { plural: string };
          versions: { additionalPrinterColumns?: { name: string; jsonPath: string }[] }[];
        };
      }[];
    };
    for (const plural of kinds) {
      const crd = crds.items.find(
        (c) => c.spec.names.plural === plural && c.spec.group === "compute.cloud.com",
      );
      assert.ok(crd, `CRD ${plural}`);
      const cols = (crd.spec.versions[0]?.additionalPrinterColumns ?? []).filter((c) =>
        c.jsonPath.startsWith(".status."),
      );
      assert.ok(cols.length > 0, `${plural} has status columns`);
      const list = JSON.parse(await node.kubectl(["get", plural, "-o", "json"])) as { items: Obj[] };
      for (const o of list.items) {
        for (const c of cols) {
          const v = statusColumn(o, c.jsonPath);
          assert.ok(
            v !== undefined && v !== "",
            `${plural}/${o.metadata.name} column ${c.name} (${c.jsonPath}) is filled`,
          );
        }
      }
    }
  });

  it("runs as uid and gid 65532 with no capabilities, a read-only root and no shell (from the runtime)", async () => {
    for (const p of await node.pods()) {
      const pid = await node.containerPid(p.name);
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const field = (name: string): string[] =>
        (new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1] ?? "").trim().split(/\s+/);
      assert.deepEqual(field("Uid"), ["65532", "65532", "65532", "65532"], `${p.name} uids`);
      assert.deepEqual(field("Gid"), ["65532", "65532", "65532", "65532"], `${p.name} gids`);
      for (const cap of ["CapEff", "CapPrm", "CapBnd"])
        assert.match(field(cap)[0] ?? "", /^0+$/, `${p.name} ${cap}`);
      assert.deepEqual(field("NoNewPrivs"), ["1"], `${p.name} no new privileges`);
      // The root mount of the process is read-only.
      const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
        .split("\n")
        .find((l) => l.split(" ")[4] === "/");
      assert.ok(rootMount, `${p.name} has a root mount`);
      assert.ok(
        (rootMount.split(" ")[5] ?? "").split(",").includes("ro"),
        `${p.name} root is read-only: ${rootMount}`,
      );
      // No shell anywhere on the image's PATH, and the runtime cannot start one.
      for (const dir of ["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"]) {
        for (const sh of ["sh", "bash", "dash", "ash", "busybox"]) {
          assert.ok(!existsIn(pid, `${dir}/${sh}`), `${p.name}: ${dir}/${sh} is absent`);
        }
      }
      const inspect = JSON.parse(
        await node.cluster.crictl([
          "inspect",
          (await node.cluster.crictl(["ps", "-q", "--label", `io.kubernetes.pod.name=${p.name}`])).trim(),
        ]),
      ) as {
        info?: {
          runtimeSpec?: {
            process?: { user?: { uid?: number; gid?: number } };
            root?: { readonly?: boolean };
          };
        };
      };
      assert.equal(inspect.info?.runtimeSpec?.process?.user?.uid, 65532);
      assert.equal(inspect.info?.runtimeSpec?.process?.user?.gid, 65532);
      assert.equal(inspect.info?.runtimeSpec?.root?.readonly, true);
      // exec works (node answers from inside, as 65532), a shell does not exist to exec.
      const exec = (cmd: string[]): Promise<string> =>
        node.kubectl(["-n", NS, "exec", p.name, "-c", "manager", "--", ...cmd]);
      assert.equal(
        await exec(["/nodejs/bin/node", "-e", "process.stdout.write(String(process.getuid()))"]),
        "65532",
      );
      await assert.rejects(
        exec(["/bin/sh", "-c", "true"]),
        /no such file|not found/i,
        `${p.name}: no shell to exec`,
      );
    }
  });

  it("answers /metrics through the Service from another pod: 200 with the reader role, 401 without a token, 403 without the role", async () => {
    await node.kubectl(["-n", NS, "create", "serviceaccount", "scraper"]);
    await node.kubectl(["-n", NS, "create", "serviceaccount", "nobody"]);
    await node.kubectl([
      "create",
      "clusterrolebinding",
      "scraper-metrics",
      `--clusterrole=${DEPLOYMENT}-metrics-reader`,
      `--serviceaccount=${NS}:scraper`,
    ]);
    const svc = JSON.parse(
      await node.kubectl(["-n", NS, "get", "service", `${DEPLOYMENT}-metrics`, "-o", "json"]),
    ) as {
      spec: { clusterIP: string; ports: { port: number }[] };
    };
    const url = `https://${svc.spec.clusterIP}:${svc.spec.ports[0]?.port}/metrics`;
    const other = await node.cluster.cp.serviceAccountToken(NS, "nobody");
    const script = [
      "const fs = require('fs'), https = require('https');",
      "const own = fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');",
      "const get = (t) => new Promise((res) => { const r = https.get(process.env.URL, { rejectUnauthorized: false, timeout: 10000, headers: t ? { authorization: 'Bearer ' + t } : {} }, (x) => { let b = ''; x.on('data', (c) => b += c); x.on('end', () => res({ status: x.statusCode, gauge: b.includes('# TYPE') })); }); r.on('error', (e) => res({ error: String(e) })); });",
      "(async () => { console.log(JSON.stringify({ reader: await get(own), none: await get(''), other: await get(process.env.OTHER) })); })();",
    ].join("\n");
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "scrape", namespace: NS },
      spec: {
        serviceAccountName: "scraper",
        restartPolicy: "Never",
        containers: [
          {
            name: "scrape",
            image: node.image.ref,
            imagePullPolicy: "Never",
            command: ["/nodejs/bin/node", "-e", script],
            env: [
              { name: "URL", value: url },
              { name: "OTHER", value: other },
            ],
          },
        ],
      },
    };
    await node.kubectl(["apply", "-f", "-"], JSON.stringify(pod));
    await node.kubectl([
      "-n",
      NS,
      "wait",
      "--for=jsonpath={.status.phase}=Succeeded",
      "pod/scrape",
      "--timeout=120s",
    ]);
    const out = JSON.parse((await node.kubectl(["-n", NS, "logs", "scrape"])).trim()) as Record<
      string,
      { status?: number; gauge?: boolean; error?: string }
    >;
    assert.equal(out.reader?.status, 200, JSON.stringify(out));
    assert.equal(out.reader?.gauge, true, "the 200 carries metrics");
    assert.equal(out.none?.status, 401, JSON.stringify(out));
    assert.equal(out.other?.status, 403, JSON.stringify(out));
  });

  it("creates an instance once when the leader is SIGKILLed inside the create", async () => {
    const before = await leader();
    let killed = false;
    proxy.onResponse("RunInstances", async (): Promise<"drop"> => {
      // The launch happened in moto; the operator never hears of it.
      const pid = await node.containerPid(before.name);
      process.kill(pid, "SIGKILL");
      killed = true;
      return "drop";
    });
    await node.kubectl(["apply", "-f", "-"], instance("killed-in-create"));
    extra = { ...extra, instances: extra.instances + 1 };
    await node.kubectl(["wait", "--for=condition=Ready", "ec2instance/killed-in-create", "--timeout=240s"]);
    assert.ok(killed, "the leader was killed while RunInstances was in flight");
    await waitFor(
      `${before.name} restarted`,
      async () => ((await node.pods()).find((p) => p.name === before.name)?.restarts ?? 0) > before.restarts,
      120_000,
      500,
    );
    await waitForReadyPods(node, 2);
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra));
    const o = await get("ec2instance", "killed-in-create");
    assert.ok(typeof o.status?.instanceId === "string");
  });

  it("hands over to the other pod when the leader pod is deleted, one AWS resource per object", async () => {
    const old = await leader();
    await node.kubectl(["-n", NS, "delete", "pod", old.name, "--wait=false"]);
    await waitFor(
      "another pod holds the Lease",
      async () => {
        const h = await node.leaseHolder();
        return h !== "" && !h.startsWith(`${old.name}_`);
      },
      120_000,
      500,
    );
    await node.kubectl(["apply", "-f", "-"], queue("after-handover"));
    extra = { ...extra, queues: extra.queues + 1 };
    await node.kubectl(["wait", "--for=condition=Ready", "sqsqueue/after-handover", "--timeout=180s"]);
    await waitForReadyPods(node, 2);
    await waitForSamplesReady(node);
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra));
  });

  it("rolls the pods on helm upgrade with no duplicate create and no two writers at once", async () => {
    const podsBefore = new Set((await node.pods()).map((p) => p.uid));
    const since = new Date().toISOString();
    const creates = proxy.count("CreateQueue");
    const upgrade = install(["controller.logLevel=debug"], "upgrade");
    const names = ["during-upgrade-1", "during-upgrade-2", "during-upgrade-3"];
    for (const n of names) await node.kubectl(["apply", "-f", "-"], queue(n));
    extra = { ...extra, queues: extra.queues + names.length };
    await upgrade;
    const after = await waitForReadyPods(node, 2);
    assert.ok(
      after.every((p) => !podsBefore.has(p.uid)),
      "every pod was replaced",
    );
    for (const n of names)
      await node.kubectl(["wait", "--for=condition=Ready", `sqsqueue/${n}`, "--timeout=180s"]);
    assert.equal(proxy.count("CreateQueue") - creates, names.length, "one CreateQueue per new object");
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra));
    // The audit log: writes to the objects by the operator, in order, by pod.
    const writers: string[] = [];
    for (const line of readFileSync(path.join(node.cluster.cp.dir, "audit.log"), "utf8").split("\n")) {
      if (line === "") continue;
      const e = JSON.parse(line) as {
        stage: string;
        verb: string;
        stageTimestamp: string;
        objectRef?: { apiGroup?: string };
        user: { username: string; extra?: Record<string, string[]> };
        responseStatus?: { code?: number };
      };
      if (e.stage !== "ResponseComplete" || e.stageTimestamp < since) continue;
      if (e.objectRef?.apiGroup !== "compute.cloud.com") continue;
      if (!["create", "update", "patch", "delete"].includes(e.verb)) continue;
      if (e.user.username !== `system:serviceaccount:${NS}:${SA}`) continue;
      if ((e.responseStatus?.code ?? 0) >= 300) continue;
      const pod = e.user.extra?.["authentication.kubernetes.io/pod-name"]?.[0] ?? "?";
      if (writers.at(-1) !== pod) writers.push(pod);
    }
    assert.ok(writers.length > 0, "the operator wrote during the upgrade");
    assert.equal(
      new Set(writers).size,
      writers.length,
      `writers took turns without overlap: ${writers.join(" -> ")}`,
    );
  });

  it("shows a closed endpoint as a clear condition and log line, without a crash loop", async () => {
    await install(["aws.endpoint=http://" + node.cluster.hostAddress + ":9"], "upgrade");
    await waitForReadyPods(node, 2);
    await node.kubectl(["apply", "-f", "-"], queue("bad-endpoint"));
    let message = "";
    // A transport failure is reported once it persists (3 failed reconciles over 30 s or more).
    await waitFor(
      "a condition explains the failure",
      async () => {
        const c = (await get("sqsqueue", "bad-endpoint")).status?.conditions?.find(
          (x) => x.status === "False" && (x.message ?? "") !== "",
        );
        message = c?.message ?? "";
        return message !== "";
      },
      180_000,
      1000,
    );
    assert.match(
      message,
      new RegExp(`ECONNREFUSED ${node.cluster.hostAddress.replace(/\./g, "\\.")}:9`),
      message,
    );
    assert.doesNotMatch(message, /\n\s+at /, "no stack trace");
    const l = await leader();
    assert.match(await podLog(l.name), /"name":"bad-endpoint".*ECONNREFUSED/);
    assert.ok(
      (await node.pods()).every((p) => p.ready && p.restarts === 0),
      "no pod restarted",
    );
  });

  it("shows missing credentials as the README's clear error, without a crash loop", async () => {
    await install(["aws.existingSecret="], "upgrade");
    await waitForReadyPods(node, 2);
    await node.kubectl(["apply", "-f", "-"], queue("no-credentials"));
    let message = "";
    await waitFor(
      "the Ready condition names the missing credentials",
      async () => {
        const c = (await get("sqsqueue", "no-credentials")).status?.conditions?.find(
          (x) => x.type === "Ready",
        );
        message = c?.message ?? "";
        return c?.status === "False" && /credentials/i.test(message);
      },
      120_000,
      500,
    );
    assert.match(message, /no AWS credentials found/, message);
    const l = await leader();
    assert.match(await podLog(l.name), /no AWS credentials found/);
    assert.ok(
      (await node.pods()).every((p) => p.ready && p.restarts === 0),
      "no pod restarted",
    );
    // Good values again: both objects converge.
    await install([], "upgrade");
    extra = { ...extra, queues: extra.queues + 2 };
    for (const n of ["bad-endpoint", "no-credentials"])
      await node.kubectl(["wait", "--for=condition=Ready", `sqsqueue/${n}`, "--timeout=180s"]);
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra));
  });

  it("takes IRSA-style credentials through AssumeRoleWithWebIdentity", async () => {
    const role = "arn:aws:iam::123456789012:role/kubeprovisioner";
    await install(["aws.existingSecret=", `aws.roleArn=${role}`], "upgrade");
    const sa = JSON.parse(await node.kubectl(["-n", NS, "get", "serviceaccount", SA, "-o", "json"])) as {
      metadata: { annotations?: Record<string, string> };
    };
    assert.equal(sa.metadata.annotations?.["eks.amazonaws.com/role-arn"], role);
    // What EKS's pod identity webhook adds to a pod of an annotated ServiceAccount.
    const dir = "/var/run/secrets/eks.amazonaws.com/serviceaccount";
    const patch = [
      {
        op: "add",
        path: "/spec/template/spec/volumes/-",
        value: {
          name: "aws-iam-token",
          projected: {
            sources: [
              {
                serviceAccountToken: {
                  audience: "sts.amazonaws.com",
                  expirationSeconds: 86400,
                  path: "token",
                },
              },
            ],
          },
        },
      },
      {
        op: "add",
        path: "/spec/template/spec/containers/0/volumeMounts/-",
        value: { name: "aws-iam-token", mountPath: dir, readOnly: true },
      },
      {
        op: "add",
        path: "/spec/template/spec/containers/0/env/-",
        value: { name: "AWS_ROLE_ARN", value: role },
      },
      {
        op: "add",
        path: "/spec/template/spec/containers/0/env/-",
        value: { name: "AWS_WEB_IDENTITY_TOKEN_FILE", value: `${dir}/token` },
      },
    ];
    const assumed = proxy.count("AssumeRoleWithWebIdentity");
    await node.kubectl([
      "-n",
      NS,
      "patch",
      "deployment",
      DEPLOYMENT,
      "--type=json",
      "-p",
      JSON.stringify(patch),
    ]);
    await node.kubectl(["-n", NS, "rollout", "status", `deployment/${DEPLOYMENT}`, "--timeout=180s"]);
    await waitForReadyPods(node, 2);
    const calls = proxy.calls.length;
    await node.kubectl(["apply", "-f", "-"], queue("irsa"));
    extra = { ...extra, queues: extra.queues + 1 };
    await node.kubectl(["wait", "--for=condition=Ready", "sqsqueue/irsa", "--timeout=180s"]);
    assert.ok(
      proxy.count("AssumeRoleWithWebIdentity") > assumed,
      "the operator assumed the role with its token",
    );
    const creates = proxy.calls.slice(calls).filter((c) => c.operation === "CreateQueue");
    assert.equal(creates.length, 1);
    assert.ok(
      creates[0]?.accessKeyId !== undefined && creates[0].accessKeyId !== "testing",
      `CreateQueue signed with the assumed role's key (${creates[0]?.accessKeyId})`,
    );
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra));
  });

  it("keeps the CRDs and objects on helm uninstall and removes everything else of the release", async () => {
    const objects = (kind: string): Promise<string> => node.kubectl(["get", kind, "-o", "name"]);
    const before = await Promise.all(kinds.map(objects));
    await node.helm(["uninstall", RELEASE, "--namespace", NS, "--wait", "--timeout", "120s"]);
    for (const c of ["ec2instances", "s3buckets", "sqsqueues"])
      assert.ok((await node.kubectl(["get", "crd", `${c}.compute.cloud.com`, "-o", "name"])).trim() !== "");
    assert.deepEqual(await Promise.all(kinds.map(objects)), before, "every object is still there");
    await waitFor("the release's pods gone", async () => (await node.pods()).length === 0, 120_000, 500);
    const left = await node.kubectl([
      "get",
      "deployments,replicasets,pods,services,serviceaccounts,configmaps,secrets,roles,rolebindings,clusterroles,clusterrolebindings,poddisruptionbudgets,networkpolicies",
      "--all-namespaces",
      "-l",
      `app.kubernetes.io/instance=${RELEASE}`,
      "-o",
      "name",
    ]);
    assert.equal(left.trim(), "", `the release left: ${left}`);
    assert.deepEqual(await node.awsCounts(), expectedCounts(extra), "no AWS resource was deleted");
  });
});

/** The value of a printer column's JSONPath: `.status.a.b` or `.status.conditions[?(@.type=="X")].f`. */
function statusColumn(o: Obj, jsonPath: string): unknown {
  const cond = /^\.status\.conditions\[\?\(@\.type=="(\w+)"\)\]\.(\w+)$/.exec(jsonPath);
  if (cond) {
    const c = o.status?.conditions?.find((x) => x.type === cond[1]) as Record<string, unknown> | undefined;
    return c?.[cond[2] ?? ""];
  }
  return jsonPath
    .slice(".status.".length)
    .split(".")
    .reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], o.status);
}

function existsIn(pid: number, file: string): boolean {
  try {
    readFileSync(`/proc/${pid}/root${file}`);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EISDIR";
  }
}
