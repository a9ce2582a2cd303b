// Bundles the operator into one tree-shaken ES module, dist/kubeprovisioner.mjs, with esbuild:
// the image's entry point. It needs no node_modules beside it, and it loads only the code the
// operator reaches: about half the resident memory of running dist/main.js (BENCHMARKS.md,
// "Idle footprint").
//
//   node hack/bundle.ts [outfile]
//
// The AWS SDK's schema modules (one per service, every shape of the API) write their member
// traits as computed keys (`{ [_xN]: _bC }` with `const _xN = "xmlName"`). A computed key may run
// code, so esbuild has to keep every shape of the module, used or not: 1 MiB of EC2 shapes for
// the handful of EC2 operations the operator calls. The plugin below rewrites those keys to the
// string literals they name, which lets esbuild drop the unused shapes.
import { build, type Plugin } from "esbuild";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The SDK's generated schema modules, e.g. `@aws-sdk/client-ec2/dist-es/schemas/schemas_0.js`. */
const SCHEMA_MODULE = /[\\/]@aws-sdk[\\/]client-[a-z0-9-]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/;

/** Rewrites `[_name]:` to `"value":` wherever `const _name = "value";` is declared in the module. */
export function inlineComputedKeys(source: string): string {
  const strings = new Map<string, string>();
  for (const m of source.matchAll(/^const (_[A-Za-z0-9_]+) = ("[^"\\]*");$/gm)) {
    if (m[1] !== undefined && m[2] !== undefined) strings.set(m[1], m[2]);
  }
  return source.replace(/\[(_[A-Za-z0-9_]+)\]:/g, (all, name: string) => {
    const literal = strings.get(name);
    return literal === undefined ? all : `${literal}:`;
  });
}

const schemaKeys: Plugin = {
  name: "aws-sdk-schema-keys",
  setup(b) {
    b.onLoad({ filter: SCHEMA_MODULE }, async (args) => ({
      contents: inlineComputedKeys(await readFile(args.path, "utf8")),
      loader: "js",
    }));
  },
};

/** Builds the bundle into `outfile`; resolves with its size in bytes. */
export async function bundle(outfile = join(root, "dist/kubeprovisioner.mjs")): Promise<number> {
  const result = await build({
    entryPoints: [join(root, "src/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node22.19",
    format: "esm",
    // The SDK ships ES modules under "module"; they tree-shake, its CommonJS builds do not.
    mainFields: ["module", "main"],
    // CommonJS dependencies inside an ES module bundle still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __kpCreateRequire } from 'node:module'; const require = __kpCreateRequire(import.meta.url);",
    },
    sourcemap: "linked",
    legalComments: "linked",
    metafile: true,
    logLevel: "warning",
    plugins: [schemaKeys],
  });
  // What each input contributes, for a look at where the bytes go (e.g. esbuild's analyzer).
  await writeFile(outfile.replace(/\.mjs$/, ".meta.json"), JSON.stringify(result.metafile));
  const out = Object.entries(result.metafile.outputs).find(([f]) => f.endsWith(".mjs"));
  return out?.[1].bytes ?? 0;
}

if (import.meta.main) {
  const outfile = process.argv[2];
  const bytes = await bundle(outfile === undefined ? undefined : join(process.cwd(), outfile));
  console.log(`bundle: ${outfile ?? "dist/kubeprovisioner.mjs"} (${(bytes / 1024).toFixed(0)} KiB)`);
}
