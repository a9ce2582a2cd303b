/**
 * Imported first by the program (./main.ts), so it runs before any other module loads: on a
 * Node.js older than the supported range it prints one line naming both versions and exits 2.
 */
import { nodeVersionRefusal } from "./node-version.ts";

const refusal = nodeVersionRefusal("kubeprovisioner", process.versions.node);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exit(2);
}
