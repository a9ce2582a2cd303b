import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { processKind } from "./cpu.ts";

describe("the kinds of process a make test spends CPU in", () => {
  it("tells each kind by its command line", () => {
    const cases: [string[], string][] = [
      [
        ["/root/.cache/kubeprovisioner/k8s-v1.36.3/kube-apiserver", "--etcd-servers=http://127.0.0.1:1"],
        "kube-apiserver",
      ],
      [["/work/bin/etcd", "--data-dir=/tmp/x"], "etcd"],
      [["/work/bin/kube-controller-manager", "--controllers=garbagecollector"], "kube-controller-manager"],
      [
        ["/work/.venv/bin/python", "/work/test/support/aws-emulator/server.py", "-H", "127.0.0.1", "-p", "0"],
        "test AWS",
      ],
      [
        ["/work/bin/node", "/tmp/kubeprovisioner-program-x/dist/kubeprovisioner.mjs", "--kubeconfig=k"],
        "operators under test",
      ],
      [["/work/bin/node", "/work/src/main.ts", "--log-level=debug"], "operators under test"],
      [["/work/bin/node", "--test-reporter=spec", "/work/test/integration/smoke.test.ts"], "test files"],
      [
        ["/work/bin/node", "--import", "/work/test/support/file-end.ts", "/work/test/support/file-group.ts"],
        "test files",
      ],
      [["/work/bin/node", "/work/node_modules/.bin/tsc", "-p", "tsconfig.json"], "lint"],
      [["/work/bin/node", "/work/node_modules/.bin/eslint", "."], "lint"],
      [["/work/.venv/bin/python", "-m", "pytest", "-q"], "test files"],
      [["/work/.venv/bin/pytest", "-q"], "test files"],
      [["/work/bin/helm", "install", "x"], "helm and kubectl"],
      [["/usr/bin/containerd", "--config", "c.toml"], "node of the chart test"],
      [["/work/bin/node", "test/support/runner.ts", "--concurrency=6"], "test runner"],
      [["/usr/bin/bash", "hack/tools.sh", "moto"], "other"],
    ];
    for (const [argv, kind] of cases) assert.equal(processKind(argv), kind, argv.join(" "));
  });
});
