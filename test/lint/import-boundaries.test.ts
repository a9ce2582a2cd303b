/**
 * The dependency rules between the folders of src/ are enforced by `make lint`: ESLint, with the
 * repository's own configuration, rejects an import that crosses a boundary and accepts the
 * imports that point the allowed way. Each case is linted as if it were a file at that path.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { ESLint } from "eslint";
import { repoRoot } from "../support/process.ts";

const eslint = new ESLint({ cwd: repoRoot });

/** The rule ids and messages ESLint reports for `code` placed at `file` (relative to the repository). */
async function lint(file: string, code: string): Promise<{ ruleId: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  assert.ok(result !== undefined, `no lint result for ${file}`);
  return result.messages.map((m) => ({ ruleId: m.ruleId, message: m.message }));
}

const FORBIDDEN: readonly [file: string, code: string, says: RegExp][] = [
  [
    "src/runtime/cache/probe.ts",
    'import type { S3Bucket } from "../../api/v1/s3-bucket.ts";\nexport type X = S3Bucket;\n',
    /src\/runtime/,
  ],
  [
    "src/runtime/probe.ts",
    'import { AwsClients } from "../aws/clients.ts";\nexport const x = AwsClients;\n',
    /src\/runtime/,
  ],
  [
    "src/runtime/workqueue/testing/probe.ts",
    'export { createToken } from "../../../reconcilers/common/token.ts";\n',
    /src\/runtime/,
  ],
  [
    "src/runtime/manager/probe.ts",
    'import { parseOptions } from "../../config/options.ts";\nexport const x = parseOptions;\n',
    /src\/runtime/,
  ],
  [
    "src/aws/probe.ts",
    'import { KeyStates } from "../reconcilers/common/flow/key-state.ts";\nexport const x = KeyStates;\n',
    /src\/aws/,
  ],
  [
    "src/api/v1/probe.ts",
    'import { classifyAwsError } from "../../aws/errors.ts";\nexport const x = classifyAwsError;\n',
    /src\/api/,
  ],
  [
    "src/api/schema/probe.ts",
    'import type { ResourceDriver } from "../../reconcilers/common/driver.ts";\nexport type X = ResourceDriver<never, never>;\n',
    /src\/api/,
  ],
  [
    "src/reconcilers/s3-bucket/probe.ts",
    'import { KeyStates } from "../common/flow/key-state.ts";\nexport const x = KeyStates;\n',
    /flow's internals/,
  ],
  [
    "src/reconcilers/ec2-instance/testing/probe.ts",
    'import { planFailure } from "../../common/flow/failure.ts";\nexport const x = planFailure;\n',
    /flow's internals/,
  ],
  [
    "src/reconcilers/sqs-queue/probe.ts",
    'import { AwsAccountReconciler } from "../../accounts/controller.ts";\nexport const x = AwsAccountReconciler;\n',
    /AccountResolver hook/,
  ],
];

const ALLOWED: readonly [file: string, code: string][] = [
  [
    "src/runtime/cache/probe.ts",
    'import type { KubeObject } from "../kube/object.ts";\nexport type X = KubeObject;\n',
  ],
  [
    "src/api/v1/probe.ts",
    'import type { KubeObject } from "../../runtime/kube/object.ts";\nexport type X = KubeObject;\n',
  ],
  ["src/aws/probe.ts", 'import { GROUP } from "../api/v1/group.ts";\nexport const x = GROUP;\n'],
  [
    "src/reconcilers/s3-bucket/probe.ts",
    'import { AwsClients } from "../../aws/clients.ts";\nexport const x = AwsClients;\n',
  ],
  [
    "src/reconcilers/s3-bucket/probe.ts",
    'import { InvalidSpecError } from "../common/driver.ts";\nexport const x = InvalidSpecError;\n',
  ],
  [
    "src/reconcilers/common/probe.ts",
    'import { KeyStates } from "./flow/key-state.ts";\nexport const x = KeyStates;\n',
  ],
];

describe("import boundaries", () => {
  for (const [file, code, says] of FORBIDDEN) {
    it(`rejects ${code.split("\n")[0]} in ${file}`, async () => {
      const messages = await lint(file, code);
      const hits = messages.filter((m) => m.ruleId === "no-restricted-imports");
      assert.equal(hits.length, 1, JSON.stringify(messages));
      assert.match(hits[0]?.message ?? "", says);
    });
  }

  for (const [file, code] of ALLOWED) {
    it(`accepts ${code.split("\n")[0]} in ${file}`, async () => {
      assert.deepEqual(await lint(file, code), []);
    });
  }
});
