import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EC2_INSTANCE_OUTPUT_KEYS } from "../../api/v1/index.ts";
import { ec2InstanceOutputs } from "./outputs.ts";

describe("Ec2Instance outputs", () => {
  it("holds the ID, addresses and DNS names, under the documented keys", () => {
    const out = ec2InstanceOutputs({
      status: {
        instanceId: "i-0123456789abcdef0",
        privateIP: "10.0.0.5",
        publicIP: "54.1.2.3",
        privateDNS: "ip-10-0-0-5.ec2.internal",
        publicDNS: "ec2-54-1-2-3.compute-1.amazonaws.com",
      },
    });
    assert.deepEqual(out, {
      INSTANCE_ID: "i-0123456789abcdef0",
      PRIVATE_IP: "10.0.0.5",
      PUBLIC_IP: "54.1.2.3",
      PRIVATE_DNS: "ip-10-0-0-5.ec2.internal",
      PUBLIC_DNS: "ec2-54-1-2-3.compute-1.amazonaws.com",
    });
    assert.deepEqual(
      Object.keys(out),
      EC2_INSTANCE_OUTPUT_KEYS.map(([k]) => k),
    );
  });

  it("has no public address or name for an instance without one", () => {
    const out = ec2InstanceOutputs({ status: { instanceId: "i-1", privateIP: "10.0.0.6" } });
    assert.equal(out.PUBLIC_IP, undefined);
    assert.equal(out.PUBLIC_DNS, undefined);
    assert.equal(out.INSTANCE_ID, "i-1");
  });
});
