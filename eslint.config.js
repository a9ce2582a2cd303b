// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The dependency rules between the folders of src/ (docs/architecture.md). Imports are relative,
 * so each rule becomes one `no-restricted-imports` override per folder depth: from a file `d`
 * folders below src/, a specifier reaches src/<name> with exactly `d` leading `../`.
 */
const BOUNDARIES = [
  {
    from: "runtime",
    forbidden: ["api", "aws", "reconcilers", "accounts", "config", "controllers.ts", "main.ts"],
    why: "src/runtime is the generic controller runtime: it imports nothing that knows a kind, AWS or the program",
  },
  {
    from: "aws",
    forbidden: ["reconcilers", "accounts"],
    why: "src/aws is shared by every kind: it never imports src/reconcilers or src/accounts",
  },
  {
    from: "api",
    forbidden: ["aws", "reconcilers", "accounts"],
    why: "src/api holds the schemas only: it imports neither src/aws nor src/reconcilers",
  },
  {
    from: "reconcilers",
    forbidden: ["accounts"],
    why: "the managed kinds know accounts only through the flow's AccountResolver hook (src/reconcilers/common/account.ts); src/accounts implements it",
  },
];
const MAX_DEPTH = 6;
const escape = (/** @type {string} */ text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** @returns {import("eslint").Linter.Config[]} */
function boundaryConfigs() {
  return BOUNDARIES.flatMap(({ from, forbidden, why }) =>
    Array.from({ length: MAX_DEPTH }, (_, i) => {
      const depth = i + 1;
      const names = forbidden.map(escape).join("|");
      return {
        files: [`src/${from}/${"*/".repeat(depth - 1)}*.ts`],
        rules: {
          "no-restricted-imports": [
            "error",
            { patterns: [{ regex: `^(?:\\./)?(?:\\.\\./){${depth}}(?:${names})(?:/|$)`, message: why }] },
          ],
        },
      };
    }),
  );
}

/**
 * What a kind (src/reconcilers/<kind>/) may import of the shared code: the driver contract, the
 * kind definition, tags, ownership and the test helpers, never the flow's internals
 * (src/reconcilers/common/flow/). The rule for src/reconcilers is repeated here: an override
 * replaces a rule's options, it does not add to them.
 */
function kindSurfaceConfigs() {
  const reconcilers = BOUNDARIES.find((b) => b.from === "reconcilers");
  if (reconcilers === undefined) throw new Error("no boundary for src/reconcilers");
  return [2, 3].map((depth) => ({
    files: [`src/reconcilers/*/${"*/".repeat(depth - 2)}*.ts`],
    ignores: ["src/reconcilers/common/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: `^(?:\\./)?(?:\\.\\./){${depth}}(?:${reconcilers.forbidden.map(escape).join("|")})(?:/|$)`,
              message: reconcilers.why,
            },
            {
              regex: `^(?:\\.\\./){${depth - 1}}common/flow/`,
              message:
                "a kind imports the driver contract, the kind definition, tags and ownership from src/reconcilers/common, never the flow's internals (common/flow/)",
            },
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ["dist/", "bin/", "node_modules/", ".venv/", "charts/", "tmp/", "bench/results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": ["error", { allow: ["error"] }],
    },
  },
  {
    files: ["test/**", "bench/**", "hack/**", "**/*.test.ts"],
    rules: { "no-console": "off" },
  },
  ...boundaryConfigs(),
  ...kindSurfaceConfigs(),
);
