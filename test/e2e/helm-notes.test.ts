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

  it("prints the check of the pod's variables, the endpoint overrides and the AWS samples", async () => {
    const text = await notes(["--set", "aws.endpoints.sqs=https://sqs.eu-west-1.amazonaws.com"]);
    assert.match(text, /docs\/eks.md#check-the-credentials-the-pod-received/);
    assert.match(text, /app.kubernetes.io\/instance=kp,app.kubernetes.io\/component=operator/);
    assert.match(text, /AWS_ENDPOINT_URL_SQS=https:\/\/sqs.eu-west-1.amazonaws.com/);
    assert.match(text, /kubectl apply -k config\/samples-aws/);
    assert.match(text, /kubectl get ec2,s3b,sqsq -w/);
  });
});
