import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metadataOptionsDrift, profileAction, profileMatches } from "./instance-settings.ts";

const ARN = "arn:aws:iam::123456789012:instance-profile/apps/web";

describe("instance settings", () => {
  it("writes the metadata options the spec sets only when the instance differs", () => {
    const spec = { metadataOptions: { httpTokens: "required" as const, httpPutResponseHopLimit: 2 } };
    const ok = {
      MetadataOptions: {
        HttpTokens: "required" as const,
        HttpPutResponseHopLimit: 2,
        HttpEndpoint: "disabled" as const,
      },
    };
    assert.equal(metadataOptionsDrift(spec, ok), undefined, "an unmanaged option does not count");
    assert.deepEqual(
      metadataOptionsDrift(spec, { MetadataOptions: { HttpTokens: "optional", HttpPutResponseHopLimit: 2 } }),
      {
        HttpTokens: "required",
        HttpPutResponseHopLimit: 2,
      },
    );
    assert.equal(metadataOptionsDrift({}, {}), undefined);
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
