/**
 * What NOTES.txt tells a user after `helm install`, rendered by `helm install --dry-run=server`
 * against a real kube-apiserver (Helm renders NOTES only for an install): the credential path the
 * values set up, named truthfully (static keys, a mounted file, IRSA, EKS Pod Identity or the
 * default chain, a ServiceAccount the chart does not create), the check of what the pod received,
 * and the AWS samples. EKS's own webhooks, which inject IRSA's and Pod Identity's variables, do not
 * run here: docs/eks.md says how to check them on a cluster.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { CHART_DIR, helm } from "./helm.ts";

const ARN = "arn:aws:iam::111122223333:role/kubeprovisioner";

describe("helm chart: NOTES after an install", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  /** The NOTES section of `helm install --dry-run=server` with `args`. */
  const notes = async (args: readonly string[]): Promise<string> => {
    const res = await helm([
      "install",
      "kp",
      CHART_DIR,
      "--namespace",
      "kp-system",
      "--dry-run=server",
      "--kubeconfig",
      cp.kubeconfigPath,
      ...args,
    ]);
    assert.equal(res.code, 0, res.stderr);
    const at = res.stdout.indexOf("NOTES:");
    assert.ok(at >= 0, "helm printed NOTES");
    return res.stdout.slice(at);
  };
  /** The credentials section (2.) of the NOTES. */
  const credentials = (text: string): string =>
    text.slice(text.indexOf("2. AWS credentials"), text.indexOf("\n3. "));

  it("with no Secret and no role: EKS Pod Identity or the default chain, and never a call to set aws.roleArn", async () => {
    const text = credentials(await notes([]));
    assert.match(text, /EKS Pod Identity or the default chain/);
    assert.match(
      text,
      /aws eks list-pod-identity-associations --cluster-name <cluster> --namespace kp-system --service-account kp-kubeprovisioner/,
    );
    assert.doesNotMatch(text, /roleArn/);
    assert.doesNotMatch(text, /IRSA: /);
    assert.match(
      text,
      /aws:RequestTag\/kubernetes-namespace\s+kp-system, aws:RequestTag\/kubernetes-service-account kp-kubeprovisioner, and the cluster's\s+aws:RequestTag\/eks-cluster-arn/,
    );
  });

  it("with aws.roleArn: IRSA on the chart's ServiceAccount, with the role", async () => {
    const text = credentials(await notes(["--set", `aws.roleArn=${ARN}`]));
    assert.match(
      text,
      new RegExp(
        `IRSA: ServiceAccount kp-system/kp-kubeprovisioner carries eks.amazonaws.com/role-arn=${ARN}`,
      ),
    );
    assert.match(text, /AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE/);
  });

  it("with the IRSA annotation given through serviceAccount.annotations: IRSA too", async () => {
    const text = credentials(
      await notes(["--set-json", `serviceAccount.annotations={"eks.amazonaws.com/role-arn":"${ARN}"}`]),
    );
    assert.match(text, new RegExp(`carries eks.amazonaws.com/role-arn=${ARN}`));
  });

  it("with aws.existingSecret: the static keys of that Secret, not IRSA", async () => {
    const text = credentials(await notes(["--set", "aws.existingSecret=aws-keys"]));
    assert.match(
      text,
      /Static keys from Secret kp-system\/aws-keys \(keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
    assert.doesNotMatch(text, /IRSA: |Pod Identity or the default chain/);
  });

  it("with a mounted credentials file: that file, which the SDK reads before IRSA", async () => {
    const text = credentials(
      await notes([
        "--set",
        `aws.roleArn=${ARN}`,
        "--set-json",
        'extraVolumes=[{"name":"aws-file","secret":{"secretName":"aws-file"}}]',
        "--set-json",
        'extraVolumeMounts=[{"name":"aws-file","mountPath":"/etc/aws","readOnly":true}]',
        "--set-json",
        'extraEnv=[{"name":"AWS_SHARED_CREDENTIALS_FILE","value":"/etc/aws/credentials"}]',
      ]),
    );
    assert.match(
      text,
      /A file: extraEnv sets AWS_SHARED_CREDENTIALS_FILE, mounted through extraVolumeMounts/,
    );
    assert.doesNotMatch(text, /IRSA: /);
  });

  it("with a ServiceAccount the chart does not create: whatever that ServiceAccount is given", async () => {
    const text = credentials(
      await notes(["--set", "serviceAccount.create=false", "--set", "serviceAccount.name=prov"]),
    );
    assert.match(text, /ServiceAccount kp-system\/prov is not created by this chart/);
    assert.doesNotMatch(text, /IRSA: /);
  });

  it("says the operator watches every namespace, unless watchNamespaces limits it", async () => {
    assert.match(await notes([]), /It watches every namespace \(installScope=cluster\)\./);
    const limited = await notes(["--set", "controller.watchNamespaces={team-a,team-b}"]);
    assert.match(limited, /It watches only the namespaces team-a, team-b \(installScope=cluster\)/);
    assert.match(limited, /the namespace must be one this release watches \(team-a, team-b\)/);
  });

  it("names a metrics-reader ClusterRole only when the release creates it, and the ServiceMonitor's own token", async () => {
    /** The metrics section (4.) of the NOTES. */
    const metrics = (text: string): string => text.slice(text.indexOf("4. Metrics"), text.indexOf("\n5. "));
    assert.match(metrics(await notes([])), /token bound to ClusterRole kp-kubeprovisioner-metrics-reader/);
    const none = metrics(await notes(["--set", "rbac.metricsReader=false"]));
    assert.doesNotMatch(none, /metrics-reader/, "no such ClusterRole exists");
    assert.match(none, /created no ClusterRole for it/);
    // The ServiceMonitor's kind, as prometheus-operator's CRD serves it (its schema left open).
    await cp.kubectl(["apply", "-f", "-"], {
      input: JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "servicemonitors.monitoring.coreos.com" },
        spec: {
          group: "monitoring.coreos.com",
          scope: "Namespaced",
          names: {
            kind: "ServiceMonitor",
            plural: "servicemonitors",
            singular: "servicemonitor",
            listKind: "ServiceMonitorList",
          },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      }),
    });
    await cp.kubectl([
      "wait",
      "--for=condition=Established",
      "--timeout=60s",
      "crd/servicemonitors.monitoring.coreos.com",
    ]);
    const sm = metrics(await notes(["--set", "metrics.serviceMonitor.enabled=true"]));
    assert.match(
      sm,
      /The ServiceMonitor authenticates with the token Secret kp-system\/kp-kubeprovisioner-metrics-scraper of\s+ServiceAccount kp-kubeprovisioner-metrics-scraper, which the chart created and bound to that role\./,
    );
    assert.match(metrics(await notes(["--set", "metrics.secure=false"])), /Plain HTTP, no token needed/);
  });

  it("prints the check of the pod's variables, the endpoint overrides and the AWS samples", async () => {
    const text = await notes(["--set", "aws.endpoints.sqs=https://sqs.eu-west-1.amazonaws.com"]);
    assert.match(text, /docs\/eks.md#check-the-credentials-the-pod-received/);
    assert.match(text, /app.kubernetes.io\/instance=kp,app.kubernetes.io\/component=operator/);
    assert.match(text, /AWS_ENDPOINT_URL_SQS=https:\/\/sqs.eu-west-1.amazonaws.com/);
    assert.match(text, /kubectl apply -k config\/samples-aws/);
    assert.match(text, /kubectl get ec2,s3b,sqsq -w/);
  });
});
