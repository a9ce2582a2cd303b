/**
 * What AwsAccounts need from IAM, for the generated IAM table of docs/aws.md and the policies of
 * config/iam (src/gen): the operator's own identity assumes each AwsAccount's role. Under EKS
 * Pod Identity the operator's session carries session tags that EKS marks transitive, so
 * AssumeRole passes them on and needs sts:TagSession as well, from the operator's policy and in
 * the role's trust policy (docs/accounts.md). GetCallerIdentity, the check with the assumed
 * credentials, needs no permission.
 */
import type { IamFeature } from "../reconcilers/common/kind.ts";

/** The IAM the AwsAccount controller and the objects of AwsAccounts need from the operator's own identity. */
export const AWS_ACCOUNTS_IAM: IamFeature = {
  name: "AwsAccount",
  sid: "AwsAccounts",
  iam: [
    { action: "sts:AssumeRole", when: "only for AwsAccounts: on their roles (spec.roleArn)" },
    {
      action: "sts:TagSession",
      calls: ["AssumeRole"],
      when: "only for AwsAccounts while the operator runs with EKS Pod Identity, whose transitive session tags AssumeRole passes on: on their roles",
    },
  ],
};
