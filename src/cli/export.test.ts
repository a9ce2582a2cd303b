import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { ConfigError } from "../config/config-error.ts";
import { EXPORT_LABEL, manifestText, parseExportArgs } from "./export.ts";
import { objectNames } from "./export-names.ts";

describe("objectNames", () => {
  const byName = (names: string[]) => names.map((n) => ({ id: `id-${n}`, awsName: n }));
  const of = (names: string[]) => {
    const got = objectNames(byName(names));
    return new Map(names.map((n) => [n, got.get(`id-${n}`)]));
  };

  it("keeps a name that is a label, and gives every other a hashed one, the same whatever the order", () => {
    const names = ["orders", "Orders", "logs.example.com", "a_b", "x".repeat(80), "orders.fifo"];
    const got = of(names);
    assert.equal(got.get("orders"), "orders");
    for (const n of names.slice(1)) {
      const name = got.get(n) ?? "";
      assert.match(name, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, `${n} -> ${name}`);
      assert.match(name, /-[0-9a-f]{8}$/);
    }
    assert.match(got.get("logs.example.com") ?? "", /^logs-example-com-[0-9a-f]{8}$/);
    assert.equal(new Set(got.values()).size, names.length, "no two resources share a name");
    assert.deepEqual(of([...names].reverse()), got);
  });

  it("never lets a hashed name take one a resource keeps", () => {
    const a = "Web";
    const hashedA = of([a]).get(a) ?? "";
    const got = of([a, hashedA]);
    assert.equal(got.get(hashedA), hashedA);
    assert.notEqual(got.get(a), hashedA);
  });

  it("gives resources that share an AWS name (two instances named web) a name each, by their IDs", () => {
    const got = objectNames([
      { id: "i-2", awsName: "web" },
      { id: "i-1", awsName: "web" },
    ]);
    assert.match(got.get("i-1") ?? "", /^web-[0-9a-f]{8}$/);
    assert.match(got.get("i-2") ?? "", /^web-[0-9a-f]{8}$/);
    assert.notEqual(got.get("i-1"), got.get("i-2"));
  });
});

describe("parseExportArgs", () => {
  it("takes regions, kinds, tags and a prefix, sorted and deduplicated", () => {
    const a = parseExportArgs([
      "--region=us-west-2",
      "--region",
      "eu-west-1",
      "--region=us-west-2",
      "--kind=SqsQueue",
      "--tag",
      "team=a",
      "--tag=env=prod",
      "--prefix",
      "app-",
      "-o",
      "out",
    ]);
    assert.deepEqual(
      [a.regions, a.kinds, a.tags, a.prefix, a.output, a.name],
      [["eu-west-1", "us-west-2"], ["SqsQueue"], { team: "a", env: "prod" }, "app-", "out", "export"],
    );
  });

  it("refuses a missing region and values it cannot take", () => {
    assert.throws(() => parseExportArgs([]), /at least one --region/);
    assert.throws(() => parseExportArgs(["--region=us-east-1", "--kind=Widget"]), ConfigError);
    assert.throws(() => parseExportArgs(["--region=nowhere!"]), ConfigError);
    assert.throws(() => parseExportArgs(["--region=us-east-1", "--name=Not_A_Name"]), ConfigError);
  });
});

describe("manifestText", () => {
  it("writes the object observe-only and retained, with its export label, keys sorted, and says what stays an ARN", () => {
    const text = manifestText(
      {
        resource: {
          group: "compute.cloud.com",
          version: "v1",
          plural: "sqsqueues",
          kind: "SqsQueue",
          namespaced: true,
        },
      },
      "orders",
      "shop",
      "estate",
      {
        awsName: "orders",
        tags: {},
        spec: {
          region: "us-east-1",
          queueName: "orders",
          deadLetterQueue: { targetArn: "arn:aws:sqs:us-east-1:1:dlq", maxReceiveCount: 3 },
        },
        unresolved: [{ path: "spec.deadLetterQueue.targetArn", arn: "arn:aws:sqs:us-east-1:1:dlq" }],
        omitted: ["a thing"],
      },
    );
    const lines = text.split("\n");
    assert.equal(
      lines[0],
      "# spec.deadLetterQueue.targetArn stays the ARN arn:aws:sqs:us-east-1:1:dlq: this export does not hold it",
    );
    assert.equal(lines[1], "# left out (the API cannot express it): a thing");
    const obj = parse(text) as {
      metadata: { labels: Record<string, string> };
      spec: Record<string, unknown>;
    };
    assert.deepEqual(obj.metadata.labels, { [EXPORT_LABEL]: "estate" });
    assert.deepEqual(Object.keys(obj.spec), [
      "adoptExisting",
      "deadLetterQueue",
      "deletionPolicy",
      "managementPolicy",
      "queueName",
      "region",
    ]);
    assert.deepEqual(
      [obj.spec.managementPolicy, obj.spec.deletionPolicy, obj.spec.adoptExisting],
      ["ObserveOnly", "Retain", true],
    );
  });
});
