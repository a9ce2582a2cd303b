/**
 * The chart's values for an install on AWS, offline: where the credentials come from (IRSA's
 * role only on a ServiceAccount the chart creates), where each AWS service is reached
 * (`aws.endpoint`, `aws.endpoints.<service>`, `aws.s3AddressingStyle`), a credentials file from
 * `extraVolumes`/`extraVolumeMounts`, the Linux node selector, and the Kubernetes versions
 * Chart.yaml admits.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AWS_SERVICE_TABLE } from "../../src/aws/service.ts";
import { at, CHART_DIR, find, helm, renderChart, templateArgs, type Manifest } from "./helm.ts";
import { container, envOf } from "./chart-expect.ts";

const ARN = "arn:aws:iam::111122223333:role/kubeprovisioner";
const podSpec = (m: readonly Manifest[]): Record<string, unknown> =>
  at(find(m, "Deployment"), "spec", "template", "spec") as Record<string, unknown>;

describe("helm chart: AWS credentials", () => {
  it("refuses aws.roleArn with serviceAccount.create=false, naming the ServiceAccount to annotate", async () => {
    const res = await helm(
      templateArgs({ "aws.roleArn": ARN, "serviceAccount.create": false, "serviceAccount.name": "prov" }),
    );
    assert.notEqual(res.code, 0);
    assert.match(
      res.stderr,
      /aws\.roleArn annotates the ServiceAccount the chart creates, and serviceAccount\.create=false creates none: annotate ServiceAccount prov yourself \(eks\.amazonaws\.com\/role-arn\)/,
    );
  });

  it("refuses serviceAccount.create=false without a name, never falling back to the namespace's default ServiceAccount", async () => {
    const res = await helm(templateArgs({ "serviceAccount.create": false }));
    assert.notEqual(res.code, 0, "helm rendered a release bound to the default ServiceAccount");
    assert.equal(res.stdout, "");
    assert.match(
      res.stderr,
      /serviceAccount\.create=false requires serviceAccount\.name: create a ServiceAccount for the operator in the release namespace/,
    );
    assert.doesNotMatch(res.stderr, /annotate ServiceAccount default/);
    // With the role too, the name is what is missing, not an annotation on `default`.
    const irsa = await helm(templateArgs({ "serviceAccount.create": false, "aws.roleArn": ARN }));
    assert.match(irsa.stderr, /serviceAccount\.create=false requires serviceAccount\.name/);
    assert.doesNotMatch(irsa.stderr, /annotate ServiceAccount default/);
  });

  it("refuses serviceAccount.annotations with serviceAccount.create=false, naming them and the ServiceAccount to put them on", async () => {
    const res = await helm(
      templateArgs({ "serviceAccount.create": false, "serviceAccount.name": "prov" }, [
        "--set-json",
        `serviceAccount.annotations={"eks.amazonaws.com/role-arn":"${ARN}"}`,
      ]),
    );
    assert.notEqual(res.code, 0, "helm dropped the IRSA annotation silently");
    assert.match(
      res.stderr,
      /serviceAccount\.annotations annotate the ServiceAccount the chart creates, and serviceAccount\.create=false creates none: put eks\.amazonaws\.com\/role-arn on ServiceAccount prov yourself/,
    );
  });

  it("binds its roles to the ServiceAccount named with serviceAccount.create=false, and creates none", async () => {
    const m = await renderChart({ "serviceAccount.create": false, "serviceAccount.name": "prov" });
    assert.equal(m.filter((x) => x.kind === "ServiceAccount").length, 0);
    assert.equal(at(find(m, "Deployment"), "spec", "template", "spec", "serviceAccountName"), "prov");
    for (const b of m.filter((x) => x.kind === "ClusterRoleBinding" || x.kind === "RoleBinding"))
      assert.deepEqual(at(b, "subjects"), [{ kind: "ServiceAccount", name: "prov", namespace: "kp-system" }]);
  });

  it("refuses two different roles in aws.roleArn and the ServiceAccount's IRSA annotation", async () => {
    const res = await helm(
      templateArgs({ "aws.roleArn": ARN }, [
        "--set-json",
        'serviceAccount.annotations={"eks.amazonaws.com/role-arn":"arn:aws:iam::111122223333:role/other"}',
      ]),
    );
    assert.notEqual(res.code, 0);
    assert.match(
      res.stderr,
      /aws\.roleArn and serviceAccount\.annotations\.eks\.amazonaws\.com\/role-arn name different roles/,
    );
  });
});

describe("helm chart: AWS endpoints", () => {
  it("knows exactly the services of src/aws/service.ts, under the SDK's variable suffixes", async () => {
    const set = Object.fromEntries(
      Object.keys(AWS_SERVICE_TABLE).map((s) => [`aws.endpoints.${s}`, `http://${s}.endpoints.test:4566`]),
    );
    const m = await renderChart(set);
    for (const [service, spec] of Object.entries(AWS_SERVICE_TABLE))
      assert.equal(
        envOf(m, `AWS_ENDPOINT_URL_${spec.endpointEnvSuffix}`)?.value,
        `http://${service}.endpoints.test:4566`,
        service,
      );
    const unknown = await helm(templateArgs({ "aws.endpoints.rds": "http://rds.test" }));
    assert.match(unknown.stderr, /at '\/aws\/endpoints': additional properties 'rds' not allowed/);
  });

  it("sets AWS_ENDPOINT_URL for aws.endpoint and one variable per service set, and nothing by default", async () => {
    const none = await renderChart();
    assert.deepEqual(
      (container(none).env ?? []).filter((e) => e.name.startsWith("AWS_ENDPOINT_URL")),
      [],
    );
    const m = await renderChart({
      "aws.endpoint": "http://emulator:5000",
      "aws.endpoints.sqs": "https://sqs.eu-west-1.amazonaws.com",
    });
    assert.deepEqual(
      (container(m).env ?? []).filter((e) => e.name.startsWith("AWS_ENDPOINT_URL")),
      [
        { name: "AWS_ENDPOINT_URL", value: "http://emulator:5000" },
        { name: "AWS_ENDPOINT_URL_SQS", value: "https://sqs.eu-west-1.amazonaws.com" },
      ],
    );
    const bad = await helm(templateArgs({ "aws.endpoints.s3": "s3.amazonaws.com" }));
    assert.match(bad.stderr, /at '\/aws\/endpoints\/s3'/);
  });

  it("passes --aws-s3-addressing-style only when it is not auto, and refuses other styles", async () => {
    const auto = await renderChart();
    assert.ok(!container(auto).args.some((a) => a.startsWith("--aws-s3-addressing-style")));
    const path = await renderChart({ "aws.s3AddressingStyle": "path" });
    assert.ok(container(path).args.includes("--aws-s3-addressing-style=path"));
    const bad = await helm(templateArgs({ "aws.s3AddressingStyle": "dns" }));
    assert.match(bad.stderr, /at '\/aws\/s3AddressingStyle': value must be one of 'auto', 'path', 'virtual'/);
  });
});

describe("helm chart: the pod", () => {
  it("mounts extraVolumes through extraVolumeMounts beside the chart's own volumes", async () => {
    const m = await renderChart({}, [
      "--set-json",
      'extraVolumes=[{"name":"aws-credentials","secret":{"secretName":"aws-credentials-file"}}]',
      "--set-json",
      'extraVolumeMounts=[{"name":"aws-credentials","mountPath":"/etc/aws","readOnly":true}]',
      "--set-json",
      'extraEnv=[{"name":"AWS_SHARED_CREDENTIALS_FILE","value":"/etc/aws/credentials"}]',
    ]);
    const volumes = podSpec(m).volumes as { name: string; secret?: { secretName: string } }[];
    assert.deepEqual(
      volumes.map((v) => v.name),
      ["tmp", "aws-credentials"],
    );
    assert.equal(volumes[1]?.secret?.secretName, "aws-credentials-file");
    const mounts = (container(m) as unknown as { volumeMounts: { name: string; mountPath: string }[] })
      .volumeMounts;
    assert.deepEqual(mounts.at(-1), { name: "aws-credentials", mountPath: "/etc/aws", readOnly: true });
    assert.equal(envOf(m, "AWS_SHARED_CREDENTIALS_FILE")?.value, "/etc/aws/credentials");
  });

  it("refuses an extra volume named like one of the chart's, and a mount without an absolute path", async () => {
    const clash = await helm(templateArgs({}, ["--set-json", 'extraVolumes=[{"name":"tmp","emptyDir":{}}]']));
    assert.notEqual(clash.code, 0);
    assert.match(clash.stderr, /at '\/extraVolumes\/0\/name'/);
    const relative = await helm(
      templateArgs({}, ["--set-json", 'extraVolumeMounts=[{"name":"x","mountPath":"etc/aws"}]']),
    );
    assert.match(relative.stderr, /at '\/extraVolumeMounts\/0\/mountPath'/);
  });

  it("schedules on Linux nodes by default, and on any node once that label is set to null", async () => {
    assert.deepEqual(podSpec(await renderChart()).nodeSelector, { "kubernetes.io/os": "linux" });
    const any = await renderChart({}, ["--set-json", 'nodeSelector={"kubernetes.io/os":null}']);
    assert.equal(podSpec(any).nodeSelector, undefined);
    const more = await renderChart({ "nodeSelector.karpenter\\.sh/capacity-type": "on-demand" });
    assert.deepEqual(podSpec(more).nodeSelector, {
      "kubernetes.io/os": "linux",
      "karpenter.sh/capacity-type": "on-demand",
    });
  });
});

describe("helm chart: kubeVersion", () => {
  it("renders with helm's own default Kubernetes version, without --kube-version", async () => {
    const res = await helm(["template", "kp", CHART_DIR]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /kind: Deployment/);
  });

  it("installs on 1.31 and newer, EKS's builds included, and refuses 1.30", async () => {
    for (const v of ["v1.31.0", "v1.31.4-eks-2d5f260", "v1.36.3"])
      assert.ok((await renderChart({}, ["--kube-version", v])).length > 0, v);
    const old = await helm(["template", "kp", CHART_DIR, "--kube-version", "v1.30.9"]);
    assert.notEqual(old.code, 0);
    assert.match(
      old.stderr,
      /chart requires kubeVersion: >=1\.31\.0-0 which is incompatible with Kubernetes v1\.30\.9/,
    );
  });
});
