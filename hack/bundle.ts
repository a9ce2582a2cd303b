// Bundles the operator with esbuild into dist/kubeprovisioner.mjs, the image's entry point, and
// the chunks it loads beside it (dist/chunks/): tree-shaken ES modules that need no node_modules,
// holding only the code the operator reaches: about half the resident memory of running
// dist/main.js (BENCHMARKS.md, "Idle footprint").
//
//   node hack/bundle.ts [--no-source-maps] [outfile]
//
// The image builds it with --no-source-maps: it ships the JavaScript files only.
//
// Code splitting: each `import()` in the sources (the AWS SDK client of each service,
// src/aws/service.ts; the X.509 code of a self-signed metrics certificate) becomes a chunk of
// its own, which Node parses only when the import runs. An operator with buckets alone never
// parses EC2's client.
//
// Node's built-in modules are loaded through require(), not `import`: building the ES module
// namespace of a built-in reads every export, and some exports load more on first read
// (`http.WebSocket` loads Node's fetch implementation, undici: 14 MiB of resident memory for an
// operator that never calls fetch). require() hands out the module object and leaves them lazy.
//
// The output is minified in whitespace and syntax, not in names (see the option below): V8 keeps
// each script's source, and the source is a third smaller so.
//
// The output is Latin-1 only: V8 keeps a script's source in memory, one byte per character when
// every character is Latin-1 and two otherwise, so a single "→" in a kept comment doubled the
// bundle's 3 MiB in the heap. esbuild escapes strings (charset "ascii") but not comments or
// regular expressions; the build fails naming the line instead.
//
// The AWS SDK's schema modules (one per service, every shape of the API) write their member
// traits as computed keys (`{ [_xN]: _bC }` with `const _xN = "xmlName"`). A computed key may run
// code, so esbuild has to keep every shape of the module, used or not: 1 MiB of EC2 shapes for
// the handful of EC2 operations the operator calls. The plugin below rewrites those keys to the
// string literals they name, which lets esbuild drop the unused shapes.
import { build, type Plugin } from "esbuild";
import { readFile, rm, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
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

/** `fs`, `node:fs`, `fs/promises`, ...: every name of a Node built-in module. */
const BUILTIN = new RegExp(`^(?:node:)?(?:${builtinModules.map((m) => m.replace(/\//g, "\\/")).join("|")})$`);

/** Turns every import of a Node built-in into `require()` of it (see the module comment). */
const builtinsByRequire: Plugin = {
  name: "builtins-by-require",
  setup(b) {
    b.onResolve({ filter: BUILTIN }, (args) =>
      args.namespace === "builtin"
        ? undefined
        : { path: args.path.replace(/^node:/, ""), namespace: "builtin" },
    );
    b.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: "js",
    }));
  },
};

/** The first character outside Latin-1 in `code`, with its line number, if any. */
export function firstNonLatin1(code: string): { line: number; char: string } | undefined {
  const at = code.search(/[\u0100-\uffff]/);
  if (at < 0) return undefined;
  return { line: code.slice(0, at).split("\n").length, char: code.charAt(at) };
}

/** The bundle's files: the entry point and its chunks. */
export interface BundleOutput {
  /** The entry point, as given. */
  readonly entry: string;
  /** Every JavaScript file written (the entry point first), with the input modules each holds. */
  readonly files: readonly {
    readonly path: string;
    readonly bytes: number;
    readonly inputs: readonly string[];
  }[];
}

/** The folder of the chunks, beside the entry point. */
export const CHUNK_DIR = "chunks";

/**
 * Builds the bundle: `outfile` and its chunks in `chunks/` beside it, each with a linked source
 * map unless `sourceMaps` is false. Fails when the output holds a character outside Latin-1 (see
 * the module comment).
 */
export async function bundle(
  outfile = join(root, "dist/kubeprovisioner.mjs"),
  { sourceMaps = true }: { sourceMaps?: boolean } = {},
): Promise<BundleOutput> {
  const outdir = dirname(outfile);
  // Chunks of an earlier build would stay beside the new ones.
  await rm(join(outdir, CHUNK_DIR), { recursive: true, force: true });
  const result = await build({
    entryPoints: { [basename(outfile).replace(/\.mjs$/, "")]: join(root, "src/main.ts") },
    outdir,
    absWorkingDir: root,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    chunkNames: `${CHUNK_DIR}/[name]-[hash]`,
    bundle: true,
    platform: "node",
    target: "node22.19",
    format: "esm",
    // The SDK ships ES modules under "module"; they tree-shake, its CommonJS builds do not.
    mainFields: ["module", "main"],
    // require() for Node built-ins, in every file: CommonJS dependencies call it, and so does
    // the plugin's code for every import of a built-in.
    banner: {
      js: "import { createRequire as __kpCreateRequire } from 'node:module'; const require = __kpCreateRequire(import.meta.url);",
    },
    sourcemap: sourceMaps ? "linked" : false,
    // Each file carries the license comments of the code in it, so none is left behind when
    // chunks are copied.
    legalComments: "eof",
    metafile: true,
    logLevel: "warning",
    charset: "ascii",
    // Whitespace and syntax only: a third off the source V8 keeps (about 1 MiB of heap at idle).
    // Identifiers are left alone, so functions and classes keep their names in stack traces and
    // in `.name`; lines and columns are the bundle's, which the source map (when built) maps back
    // to the sources (`node --enable-source-maps`).
    minifyWhitespace: true,
    minifySyntax: true,
    plugins: [schemaKeys, builtinsByRequire],
  });
  // What each input contributes, for a look at where the bytes go (e.g. esbuild's analyzer).
  await writeFile(outfile.replace(/\.mjs$/, ".meta.json"), JSON.stringify(result.metafile));
  const files = Object.entries(result.metafile.outputs)
    .filter(([f]) => f.endsWith(".mjs"))
    .map(([f, o]) => ({ path: join(root, f), bytes: o.bytes, inputs: Object.keys(o.inputs) }))
    .sort((a, b) => Number(b.path === outfile) - Number(a.path === outfile));
  for (const f of files) {
    const bad = firstNonLatin1(await readFile(f.path, "utf8"));
    if (bad !== undefined) {
      throw new Error(
        `${relative(root, f.path)}:${bad.line} holds ${JSON.stringify(bad.char)}, outside Latin-1: ` +
          "V8 would keep the whole file as two-byte text. Write it as an escape (\\u....) or in ASCII.",
      );
    }
  }
  return { entry: outfile, files };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: { "no-source-maps": { type: "boolean", default: false } },
    allowPositionals: true,
  });
  const outfile = positionals[0];
  const out = await bundle(outfile === undefined ? undefined : resolve(outfile), {
    sourceMaps: !values["no-source-maps"],
  });
  const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
  const [entry, ...chunks] = out.files;
  console.log(
    `bundle: ${relative(process.cwd(), out.entry)} (${kib(entry?.bytes ?? 0)}) and ${chunks.length} chunks ` +
      `(${kib(chunks.reduce((n, c) => n + c.bytes, 0))})`,
  );
}
