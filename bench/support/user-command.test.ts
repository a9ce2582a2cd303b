import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { peakRssMiBOf, userCommandEnv } from "./user-command.ts";

describe("peakRssMiBOf", () => {
  it("reads GNU time's %M in KiB, after the exit status line of a failed command", () => {
    assert.equal(peakRssMiBOf("204800\n"), 200);
    assert.equal(peakRssMiBOf("Command exited with non-zero status 2\n153600\n"), 150);
  });

  it("refuses a report without it", () => {
    assert.throws(() => peakRssMiBOf("Command terminated by signal 9\n"), /no peak RSS from GNU time/);
  });
});

describe("userCommandEnv", () => {
  it("names the kubeconfig and the AWS endpoint, and drops the operator's install settings", () => {
    const env = userCommandEnv(
      {
        awsEnv: { AWS_ENDPOINT_URL: "http://moto", AWS_REGION: "us-east-1" },
        awsEndpoint: "http://proxy",
        kubeconfig: "/k/config",
      },
      {
        PATH: "/bin",
        KUBECONFIG: "/other",
        KUBEPROVISIONER_POLL_INTERVAL: "1s",
        KUBERNETES_SERVICE_HOST: "10.0.0.1",
      },
    );
    assert.deepEqual(env, {
      PATH: "/bin",
      KUBECONFIG: "/k/config",
      AWS_ENDPOINT_URL: "http://proxy",
      AWS_REGION: "us-east-1",
      AWS_EC2_METADATA_DISABLED: "true",
    });
  });
});
