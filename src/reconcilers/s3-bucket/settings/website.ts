/** The static website of the bucket (spec.website): index and error documents, or a redirect. */
import { GetBucketWebsiteCommand, PutBucketWebsiteCommand, type Protocol } from "@aws-sdk/client-s3";
import { count, defineSetting, nonEmpty, settingSpec, specJson } from "./setting.ts";

/** The static website in normal form; `routingRules` counts rules (the spec never sets one). */
export interface Website {
  readonly indexDocument: string | undefined;
  readonly errorDocument: string | undefined;
  readonly redirectAllRequestsTo:
    { readonly hostName: string; readonly protocol: string | undefined } | undefined;
  readonly routingRules: number;
}

const WHEN = "only for buckets that set website";

export const website = defineSetting<"website", Website | null>({
  name: "website",
  path: "spec.website",
  iam: {
    read: { action: "s3:GetBucketWebsite", when: WHEN },
    write: { action: "s3:PutBucketWebsite", when: WHEN },
  },
  desired(spec) {
    const w = spec.website;
    if (w === undefined) return undefined;
    return {
      indexDocument: w.indexDocument,
      errorDocument: w.errorDocument,
      redirectAllRequestsTo:
        w.redirectAllRequestsTo !== undefined
          ? { hostName: w.redirectAllRequestsTo.hostName, protocol: w.redirectAllRequestsTo.protocol }
          : undefined,
      routingRules: 0,
    };
  },
  describe: (w) =>
    w.redirectAllRequestsTo !== undefined
      ? `website: redirect to ${w.redirectAllRequestsTo.hostName}`
      : `website: index ${w.indexDocument ?? ""}`,
  // Routing rules, which the spec cannot write, are shown by their count.
  toSpec: (w) =>
    w === null
      ? undefined
      : specJson({
          indexDocument: w.indexDocument,
          errorDocument: w.errorDocument,
          redirectAllRequestsTo:
            w.redirectAllRequestsTo !== undefined
              ? specJson({
                  hostName: w.redirectAllRequestsTo.hostName,
                  protocol: w.redirectAllRequestsTo.protocol,
                })
              : undefined,
          routingRules: w.routingRules > 0 ? w.routingRules : undefined,
        }),
  // A website with routing rules is left unset: a write would remove them.
  specOf(w) {
    if (w === null) return settingSpec("website", undefined);
    if (w.routingRules > 0)
      return settingSpec("website", undefined, {
        omitted: [
          `website: ${count(w.routingRules, "routing rule")} (spec.website left unset: it has no routing rules)`,
        ],
      });
    return settingSpec("website", this.toSpec(w));
  },
  notConfigured: ["NoSuchWebsiteConfiguration"],
  none: null,
  async read(s3) {
    const r = await s3.call("GetBucketWebsite", new GetBucketWebsiteCommand({ Bucket: s3.bucket }));
    const redirect = r.RedirectAllRequestsTo;
    return {
      indexDocument: nonEmpty(r.IndexDocument?.Suffix),
      errorDocument: nonEmpty(r.ErrorDocument?.Key),
      redirectAllRequestsTo:
        redirect?.HostName !== undefined
          ? { hostName: redirect.HostName, protocol: nonEmpty(redirect.Protocol) }
          : undefined,
      routingRules: r.RoutingRules?.length ?? 0,
    };
  },
  async write(s3, w) {
    // PutBucketWebsite replaces the whole configuration, routing rules included.
    await s3.call(
      "PutBucketWebsite",
      new PutBucketWebsiteCommand({
        Bucket: s3.bucket,
        WebsiteConfiguration:
          w.redirectAllRequestsTo !== undefined
            ? {
                RedirectAllRequestsTo: {
                  HostName: w.redirectAllRequestsTo.hostName,
                  ...(w.redirectAllRequestsTo.protocol !== undefined
                    ? { Protocol: w.redirectAllRequestsTo.protocol as Protocol }
                    : {}),
                },
              }
            : {
                ...(w.indexDocument !== undefined ? { IndexDocument: { Suffix: w.indexDocument } } : {}),
                ...(w.errorDocument !== undefined ? { ErrorDocument: { Key: w.errorDocument } } : {}),
              },
      }),
    );
  },
});
