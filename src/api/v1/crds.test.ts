import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JSONSchemaProps } from "../schema/openapi.ts";
import type { CustomResourceDefinition } from "../schema/crd.ts";
import {
  API_VERSION,
  ec2InstanceCrd,
  Ec2InstanceResource,
  s3BucketCrd,
  sqsQueueCrd,
  S3BucketResource,
  SqsQueueResource,
  type Ec2Instance,
  type Ec2InstanceSpecInput,
  type S3Bucket,
  type SqsQueue,
} from "./index.ts";

const byKind = new Map([ec2InstanceCrd(), s3BucketCrd(), sqsQueueCrd()].map((c) => [c.spec.names.kind, c]));
function crd(kind: string): CustomResourceDefinition {
  const c = byKind.get(kind);
  assert.ok(c, `no CRD for ${kind}`);
  return c;
}
function schemaOf(kind: string): JSONSchemaProps {
  const v = crd(kind).spec.versions[0];
  assert.ok(v);
  return v.schema.openAPIV3Schema;
}
function specOf(kind: string): JSONSchemaProps {
  const spec = schemaOf(kind).properties?.["spec"];
  assert.ok(spec);
  return spec;
}

/** Calls `visit` on every node with its dotted path. */
function walk(node: JSONSchemaProps, path: string, visit: (n: JSONSchemaProps, p: string) => void): void {
  visit(node, path);
  for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`, visit);
  if (node.items) walk(node.items, `${path}[]`, visit);
  if (node.additionalProperties) walk(node.additionalProperties, `${path}{}`, visit);
}

/** Spec fields protected by a transition rule, on the field itself or on spec with a fieldPath. */
function immutableFields(kind: string): string[] {
  const spec = specOf(kind);
  const out = new Set<string>();
  for (const [name, prop] of Object.entries(spec.properties ?? {})) {
    if (prop["x-kubernetes-validations"]?.some((r) => r.rule === "self == oldSelf")) out.add(name);
  }
  for (const r of spec["x-kubernetes-validations"] ?? []) {
    if (r.rule.includes("oldSelf") && r.fieldPath) out.add(r.fieldPath.slice(1));
  }
  return [...out].sort();
}

const kinds = [
  {
    kind: "Ec2Instance",
    resource: Ec2InstanceResource,
    shortName: "ec2",
    columns: ["InstanceType", "State", "PublicIP", "InstanceID", "Ready", "Age"],
    immutable: [
      "accountRef",
      "amiId",
      "associatePublicIP",
      "availabilityZone",
      "hibernation",
      "instanceId",
      "keyPair",
      "marketOptions",
      "placement",
      "privateIpAddress",
      "region",
      "storage",
      "subnet",
    ],
    status: ["instanceId", "launchTime", "privateDNS", "privateIP", "publicDNS", "publicIP", "state"],
  },
  {
    kind: "S3Bucket",
    resource: S3BucketResource,
    shortName: "s3b",
    columns: ["BucketName", "State", "Endpoint", "Ready", "Age"],
    immutable: ["accountRef", "bucketName", "objectLock", "region"],
    status: ["bucketArn", "endpoint", "observedVersioning", "region", "state"],
  },
  {
    kind: "SqsQueue",
    resource: SqsQueueResource,
    shortName: "sqsq",
    columns: ["QueueName", "State", "QueueURL", "Ready", "Age"],
    immutable: ["accountRef", "fifo", "queueName", "region"],
    status: ["observedAttributes", "queueArn", "queueUrl", "state"],
  },
];

describe("CRDs of compute.cloud.com/v1", () => {
  it("has exactly the three kinds", () => {
    assert.deepEqual([...byKind.keys()], ["Ec2Instance", "S3Bucket", "SqsQueue"]);
  });

  for (const k of kinds) {
    describe(k.kind, () => {
      it("matches its ResourceType", () => {
        const c = crd(k.kind);
        assert.equal(c.metadata.name, `${k.resource.plural}.${k.resource.group}`);
        assert.equal(c.spec.group, k.resource.group);
        assert.equal(c.spec.names.plural, k.resource.plural);
        assert.equal(c.spec.scope, "Namespaced");
        assert.equal(`${k.resource.group}/${k.resource.version}`, API_VERSION);
        assert.ok(Object.isFrozen(k.resource));
      });

      it("has its short name, the group's categories and the status subresource", () => {
        const c = crd(k.kind);
        assert.deepEqual(c.spec.names.shortNames, [k.shortName]);
        assert.deepEqual(c.spec.names.categories, ["aws", "kubeprovisioner"]);
        assert.deepEqual(c.spec.versions[0]?.subresources, { status: {} });
      });

      it("shows the issue's printer columns, Ready from the Ready condition", () => {
        const cols = crd(k.kind).spec.versions[0]?.additionalPrinterColumns ?? [];
        assert.deepEqual(
          cols.filter((c) => (c.priority ?? 0) === 0).map((c) => c.name),
          k.columns,
        );
        const ready = cols.find((c) => c.name === "Ready");
        assert.equal(ready?.jsonPath, '.status.conditions[?(@.type=="Ready")].status');
      });

      it("describes every field, so kubectl explain documents the whole API", () => {
        walk(schemaOf(k.kind), "", (n, p) => {
          if (p === ".metadata") return;
          assert.ok(n.description && n.description.length > 3, `no description at ${p || "root"}`);
        });
      });

      it("bounds every string, list and map so CEL cost estimates stay small", () => {
        walk(schemaOf(k.kind), "", (n, p) => {
          if (p === ".apiVersion" || p === ".kind") return;
          if (n.type === "string" && !n.enum && n.format !== "date-time") {
            assert.ok(n.maxLength !== undefined, `unbounded string at ${p}`);
          }
          if (n.type === "array") assert.ok(n.maxItems !== undefined, `unbounded list at ${p}`);
          if (n.additionalProperties) assert.ok(n.maxProperties !== undefined, `unbounded map at ${p}`);
        });
      });

      it("protects exactly the intended fields with transition rules", () => {
        assert.deepEqual(immutableFields(k.kind), k.immutable);
      });

      it("has the lifecycle policies with their defaults", () => {
        const props = specOf(k.kind).properties ?? {};
        assert.equal(props["deletionPolicy"]?.default, "Delete");
        assert.deepEqual(props["deletionPolicy"]?.enum, ["Delete", "Retain"]);
        assert.equal(props["adoptExisting"]?.default, false);
        assert.equal(props["onDeletedOutOfBand"]?.default, "Recreate");
        assert.deepEqual(props["onDeletedOutOfBand"]?.enum, ["Recreate", "Report"]);
        assert.equal(props["managementPolicy"]?.default, "Full");
        assert.deepEqual(props["managementPolicy"]?.enum, ["Full", "ObserveOnly"]);
      });

      it("has the common and kind-specific status fields", () => {
        const status = schemaOf(k.kind).properties?.["status"]?.properties ?? {};
        const expected = [
          ...k.status,
          "accountId",
          "appliedChanges",
          "conditions",
          "createAttempt",
          "createRequestedAt",
          "createToken",
          "drift",
          "lastHandledReconcileAt",
          "observedGeneration",
          "observedTags",
          "pendingChanges",
        ].sort();
        assert.deepEqual(Object.keys(status), expected);
        const conditions = status["conditions"];
        assert.equal(conditions?.["x-kubernetes-list-type"], "map");
        assert.deepEqual(conditions?.["x-kubernetes-list-map-keys"], ["type"]);
      });
    });
  }

  it("offers forceDelete on S3Bucket only, off by default", () => {
    assert.equal(specOf("S3Bucket").properties?.["forceDelete"]?.default, false);
    assert.equal(specOf("Ec2Instance").properties?.["forceDelete"], undefined);
    assert.equal(specOf("SqsQueue").properties?.["forceDelete"], undefined);
  });

  it("defaults SQS attributes to the AWS defaults", () => {
    const props = specOf("SqsQueue").properties ?? {};
    assert.equal(props["visibilityTimeoutSeconds"]?.default, 30);
    assert.equal(props["messageRetentionSeconds"]?.default, 345600);
    assert.equal(props["fifo"]?.default, false);
  });
});

describe("TypeScript types of the kinds", () => {
  it("accept served objects with defaults present", () => {
    const ec2: Ec2Instance = {
      apiVersion: API_VERSION,
      kind: "Ec2Instance",
      metadata: { name: "web", namespace: "default" },
      spec: {
        instanceType: "t3.micro",
        desiredState: "running",
        amiId: "ami-12c6146b",
        region: "us-east-1",
        managementPolicy: "Full",
        driftPolicy: "Repair",
        changePolicy: "Auto",
        deletionPolicy: "Delete",
        adoptExisting: false,
        onDeletedOutOfBand: "Recreate",
        storage: { additionalVolumes: [{ size: 10, type: "gp3", deviceName: "/dev/sdf" }] },
      },
      status: { instanceId: "i-1", createAttempt: 1, conditions: [] },
    };
    const bucket: S3Bucket = {
      metadata: { name: "b" },
      spec: {
        bucketName: "b-1",
        region: "eu-west-1",
        versioning: false,
        forceDelete: false,
        managementPolicy: "Full",
        driftPolicy: "Repair",
        changePolicy: "Auto",
        deletionPolicy: "Retain",
        adoptExisting: false,
        onDeletedOutOfBand: "Report",
      },
    };
    const queue: SqsQueue = {
      metadata: { name: "q" },
      spec: {
        queueName: "q.fifo",
        region: "us-east-1",
        fifo: true,
        visibilityTimeoutSeconds: 30,
        messageRetentionSeconds: 60,
        managementPolicy: "Full",
        driftPolicy: "Repair",
        changePolicy: "Auto",
        deletionPolicy: "Delete",
        adoptExisting: false,
        onDeletedOutOfBand: "Recreate",
      },
    };
    // @ts-expect-error a served spec always has deletionPolicy (defaulted)
    const missingDefault: SqsQueue["spec"] = { queueName: "q", region: "us-east-1" };
    const input: Ec2InstanceSpecInput = {
      instanceType: "t3.micro",
      amiId: "ami-12c6146b",
      region: "us-east-1",
    };
    assert.ok(ec2 && bucket && queue && missingDefault && input);
  });
});
