/**
 * Every file generated from the sources: the CRDs (config/crd) and the API reference
 * (docs/api-reference.md) from the kinds' schemas, the
 * chart's manager rules, its helpers naming the kinds and their switches, the IAM table of
 * docs/aws.md and the IAM policies of config/iam from the kind registry. Pure apart
 * from reading the page the IAM table is spliced into; hack/gen-crds.ts writes the files and
 * ./files.test.ts fails when a committed one is stale. config/rbac is rendered from the chart by
 * hack/gen-config.ts afterwards.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { awsAccountModule } from "../accounts/index.ts";
import { generatedManifests } from "../api/gen/manifests.ts";
import { API_REFERENCE, renderApiReference } from "./api-reference.ts";
import { KINDS } from "../kinds.ts";
import { AWS_DOC, IAM_FEATURES, withIamTable } from "./iam.ts";
import { IAM_POLICY, IAM_POLICY_TAG_SCOPED, renderIamPolicy } from "./iam-policy.ts";
import {
  KINDS_HELPERS,
  MANAGER_RULES,
  OUTPUT_SECRETS_ROLE,
  renderKindsHelpers,
  renderManagerRules,
  renderOutputSecretsRole,
} from "./rbac.ts";

/** Generated files keyed by path relative to `root`, the repository root. */
export function generatedFiles(root: string): Map<string, string> {
  const crds = [...KINDS.map((k) => k.crd()), awsAccountModule.crd()];
  const files = generatedManifests(crds);
  files.set(API_REFERENCE, renderApiReference(crds));
  files.set(MANAGER_RULES, renderManagerRules(KINDS, awsAccountModule.kubernetes));
  files.set(KINDS_HELPERS, renderKindsHelpers(KINDS));
  files.set(OUTPUT_SECRETS_ROLE, renderOutputSecretsRole());
  files.set(AWS_DOC, withIamTable(readFileSync(join(root, AWS_DOC), "utf8"), KINDS, IAM_FEATURES));
  files.set(IAM_POLICY, renderIamPolicy(KINDS, false, IAM_FEATURES));
  files.set(IAM_POLICY_TAG_SCOPED, renderIamPolicy(KINDS, true, IAM_FEATURES));
  return files;
}
