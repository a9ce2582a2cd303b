import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { memoryLimit, parseLimit, parseMountInfo, parseProcCgroup, type CgroupSources } from "./cgroup.ts";

const MiB = 1024 * 1024;

/** Reads /proc and /sys from the fixture directory `name` under testdata/. */
function fixture(name: string): CgroupSources {
  const root = path.join(import.meta.dirname, "testdata", name);
  return {
    read: (file) => {
      try {
        return readFileSync(path.join(root, file), "utf8");
      } catch {
        return undefined;
      }
    },
  };
}

describe("parseLimit", () => {
  it("reads bytes, and takes max, the cgroup v1 sentinel and junk for no limit", () => {
    assert.equal(parseLimit("536870912\n"), 512 * MiB);
    assert.equal(parseLimit("max\n"), undefined);
    assert.equal(parseLimit("9223372036854771712\n"), undefined);
    assert.equal(parseLimit(""), undefined);
    assert.equal(parseLimit("-1"), undefined);
    assert.equal(parseLimit("0"), undefined);
  });
});

describe("parseProcCgroup", () => {
  it("splits v1 controller lists and the v2 entry, keeping colons and spaces in paths", () => {
    assert.deepEqual(parseProcCgroup("4:memory:/a b\n3:cpu,cpuacct:/x:y\n0::/\n"), [
      { hierarchy: "4", controllers: ["memory"], path: "/a b" },
      { hierarchy: "3", controllers: ["cpu", "cpuacct"], path: "/x:y" },
      { hierarchy: "0", controllers: [], path: "/" },
    ]);
  });
});

describe("parseMountInfo", () => {
  it("finds cgroup v1 and v2 mounts past the optional fields, unescaping octal escapes", () => {
    const text =
      "35 31 0:32 /docker/x /sys/fs/cgroup/memory rw,relatime shared:16 master:2 - cgroup cgroup rw,memory\n" +
      "41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw - cgroup2 cgroup2 rw\n" +
      "50 23 0:5 / /proc rw - proc proc rw\n";
    assert.deepEqual(parseMountInfo(text), [
      { version: 1, root: "/docker/x", mountPoint: "/sys/fs/cgroup/memory", controllers: ["rw", "memory"] },
      { version: 2, root: "/", mountPoint: "/sys/fs/cgroup/uni fied", controllers: [] },
    ]);
  });
});

describe("memoryLimit", () => {
  it("cgroup v2 in a container (cgroup namespace): memory.max of the mount root", () => {
    assert.deepEqual(memoryLimit(fixture("v2-container")), {
      bytes: 512 * MiB,
      version: 2,
      file: "/sys/fs/cgroup/memory.max",
    });
  });

  it("cgroup v2, nested path: the tightest limit among the cgroup and its ancestors", () => {
    assert.deepEqual(memoryLimit(fixture("v2-nested")), {
      bytes: 1024 * MiB,
      version: 2,
      file: "/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/memory.max",
    });
  });

  it("cgroup v2 with memory.max = max: no limit", () => {
    assert.equal(memoryLimit(fixture("v2-max")), undefined);
  });

  it("cgroup v1, nested path below the hierarchy's root: the pod's limit", () => {
    assert.deepEqual(memoryLimit(fixture("v1-nested")), {
      bytes: 256 * MiB,
      version: 1,
      file: "/sys/fs/cgroup/memory/kubepods/burstable/pod1/memory.limit_in_bytes",
    });
  });

  it("cgroup v1 in a container whose own cgroup is the mount's root", () => {
    assert.deepEqual(memoryLimit(fixture("v1-container")), {
      bytes: 384 * MiB,
      version: 1,
      file: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    });
  });

  it("cgroup v1 unlimited (the page-aligned int64 maximum): no limit", () => {
    assert.equal(memoryLimit(fixture("v1-unlimited")), undefined);
  });

  it("hybrid hierarchy: the v1 memory controller's limit when the v2 mount sets none", () => {
    assert.deepEqual(memoryLimit(fixture("hybrid")), {
      bytes: 768 * MiB,
      version: 1,
      file: "/sys/fs/cgroup/memory/job 7/memory.limit_in_bytes",
    });
  });

  it("no /proc files at all: no limit", () => {
    assert.equal(memoryLimit({ read: () => undefined }), undefined);
  });
});
