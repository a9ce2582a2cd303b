import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metadataOptionsChanges, profileAction, profileMatches } from "./instance-settings.ts";

const ARN = "arn:aws:iam::123456789012:instance-profile/apps/web";

describe("instance settings", () => {
  it("plans a change per metadata option the spec sets that the instance differs in", () => {
    const spec = { metadataOptions: { httpTokens: "required" as const, httpPutResponseHopLimit: 2 } };
    const ok = {
      MetadataOptions: {
        HttpTokens: "required" as const,
        HttpPutResponseHopLimit: 2,
        HttpEndpoint: "disabled" as const,
      },
    };
    assert.deepEqual(metadataOptionsChanges(spec, ok), [], "an unmanaged option does not count");
    assert.deepEqual(
      metadataOptionsChanges(spec, {
        MetadataOptions: { HttpTokens: "optional", HttpPutResponseHopLimit: 1 },
      }),
      [
        {
          path: "spec.metadataOptions.httpTokens",
          setting: "metadataOptions",
          observed: "optional",
          desired: "required",
          actions: ["ec2:ModifyInstanceMetadataOptions"],
          disruption: "none",
          description: "metadataOptions.httpTokens: required",
          group: "metadataOptions",
        },
        {
          path: "spec.metadataOptions.httpPutResponseHopLimit",
          setting: "metadataOptions",
          observed: 1,
          desired: 2,
          actions: ["ec2:ModifyInstanceMetadataOptions"],
          disruption: "none",
          description: "metadataOptions.httpPutResponseHopLimit: 2",
          group: "metadataOptions",
        },
      ],
    );
    assert.deepEqual(metadataOptionsChanges({}, {}), []);
  });

  it("matches a profile by ARN, or by name whatever its path", () => {
    assert.equal(profileMatches(ARN, ARN), true);
    assert.equal(profileMatches("web", ARN), true);
    assert.equal(profileMatches("apps", ARN), false);
    assert.equal(profileMatches("web", undefined), false);
  });

  it("associates a missing profile, replaces another, and leaves an unmanaged one", () => {
    assert.equal(profileAction({ iamInstanceProfile: "web" }, {}), "associate");
    assert.equal(
      profileAction({ iamInstanceProfile: "db" }, { IamInstanceProfile: { Arn: ARN } }),
      "replace",
    );
    assert.equal(
      profileAction({ iamInstanceProfile: "web" }, { IamInstanceProfile: { Arn: ARN } }),
      undefined,
    );
    assert.equal(profileAction({}, { IamInstanceProfile: { Arn: ARN } }), undefined);
  });
});
