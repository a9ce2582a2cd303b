/**
 * RSS of a process that loads a kubeconfig and sends 20 `GET /version` requests to a loopback
 * TLS server, built as the image builds the operator (one esbuild bundle): with the operator's
 * own loader and REST client, with a bare Node https request for reference, and, when
 * CLIENT_NODE_DIR names a folder where `@kubernetes/client-node` is installed (never a dependency
 * of this project), with client-node, bundled and from its node_modules. Prints the medians of
 * `--runs` runs (RSS and JS heap after a GC, MiB) as one JSON line.
 *
 *   node bench/footprint/kubeconfig-rss.ts [--runs 5]
 *   CLIENT_NODE_DIR=/tmp/cn node bench/footprint/kubeconfig-rss.ts
 */
import { build } from "esbuild";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { createFixture, removeFixture } from "../../test/support/kubeconfig-conformance.ts";
import { kubeconfig } from "../../test/support/kubeconfig-cases.ts";
import { repoRoot } from "../../test/support/process.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const fx = createFixture();
const dir = mkdtempSync(path.join(os.tmpdir(), "kubeconfig-rss-"));
const server = https.createServer({ cert: fx.serverCert, key: fx.serverKey }, (_req, res) => {
  res.writeHead(200, { "Content-Type": "application/json" }).end('{"major":"1","minor":"36"}');
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
const config = path.join(dir, "config");
writeFileSync(
  config,
  kubeconfig(
    { server: url, "certificate-authority-data": Buffer.from(fx.caPem).toString("base64") },
    { token: "t" },
  ),
);

const report =
  "globalThis.gc?.(); await new Promise((r) => setTimeout(r, 200)); const m = process.memoryUsage(); " +
  "console.log(JSON.stringify({ rss: m.rss, heap: m.heapUsed })); process.exit(0);";
const banner = {
  js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

async function bundle(entry: string, out: string, nodePaths: string[] = []): Promise<string> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: out,
    logLevel: "warning",
    banner,
    nodePaths,
  });
  return out;
}

const programs: Record<string, string> = {};
const projectSource = path.join(dir, "project.ts");
writeFileSync(
  projectSource,
  `import { Registry } from "prom-client";
import { apiClient, loadKubeConfig } from ${JSON.stringify(path.join(repoRoot, "src/kubeconfig-source.ts"))};
const rest = apiClient(await loadKubeConfig(process.argv[2], process.env), { registry: new Registry() });
for (let i = 0; i < 20; i++) await rest.request({ method: "GET", path: "/version" });
${report}`,
);
programs.project = await bundle(projectSource, path.join(dir, "project.mjs"), [
  path.join(repoRoot, "node_modules"),
]);
programs.bareNode = path.join(dir, "bare.mjs");
writeFileSync(
  programs.bareNode,
  `import https from "node:https";
await new Promise((r) => https.get(${JSON.stringify(`${url}/version`)}, { rejectUnauthorized: false }, (res) => { res.resume(); res.on("end", r); }));
${report}`,
);
const clientNodeDir = process.env.CLIENT_NODE_DIR;
if (clientNodeDir !== undefined) {
  const source = path.join(clientNodeDir, "kubeconfig-rss-client-node.mjs");
  writeFileSync(
    source,
    `import * as k8s from "@kubernetes/client-node";
const kc = new k8s.KubeConfig(); kc.loadFromFile(process.argv[2]);
const api = kc.makeApiClient(k8s.VersionApi);
for (let i = 0; i < 20; i++) await api.getCode();
${report}`,
  );
  programs.clientNodeBundled = await bundle(source, path.join(dir, "client-node.mjs"));
  programs.clientNode = source;
}

const MiB = 1024 * 1024;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const results: Record<string, { rssMiB: number; heapMiB: number }> = {};
try {
  for (const [name, program] of Object.entries(programs)) {
    const rss: number[] = [];
    const heap: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Asynchronously: the server answering the child runs in this process.
      const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", program, config], {
        encoding: "utf8",
      });
      const m = JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as { rss: number; heap: number };
      rss.push(m.rss);
      heap.push(m.heap);
    }
    results[name] = {
      rssMiB: Math.round((median(rss) / MiB) * 10) / 10,
      heapMiB: Math.round((median(heap) / MiB) * 10) / 10,
    };
  }
  process.stdout.write(`${JSON.stringify({ node: process.version, runs, ...results })}\n`);
} finally {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
  removeFixture(fx);
}
