/**
 * S3Bucket cors and website against moto: written at creation, never re-sent at rest, repaired
 * on drift with an Updated Event naming the setting (a routing rule added out of band counts),
 * changed in place (an empty cors list removes the rules), and neither read nor touched once
 * the spec drops them.
 *
 * moto stores a website configuration as the XML it was sent and returns it unchanged, and does
 * not check its content (S3 refuses, for example, an index suffix with a slash); admission checks
 * what S3 would.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GetBucketCorsCommand,
  GetBucketWebsiteCommand,
  PutBucketCorsCommand,
  PutBucketWebsiteCommand,
} from "@aws-sdk/client-s3";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const site = {
  bucketName: "site",
  publicAccessBlock: { blockPublicAcls: true, ignorePublicAcls: true },
  cors: [
    {
      id: "app",
      allowedMethods: ["PUT", "GET"],
      allowedOrigins: ["https://app.example.com", "https://*.example.org"],
      allowedHeaders: ["*"],
      exposeHeaders: ["ETag"],
      maxAgeSeconds: 3000,
    },
    { allowedMethods: ["GET"], allowedOrigins: ["*"] },
  ],
  website: { indexDocument: "index.html", errorDocument: "404.html" },
};

describe("S3Bucket cors and website", () => {
  const env = new S3Env("s3-cors-website").hooks();
  const cors = async (bucket: string) =>
    (await env.s3().send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules;
  const website = (bucket: string) => env.s3().send(new GetBucketWebsiteCommand({ Bucket: bucket }));

  it("creates the bucket with its CORS rules, in order, and its website", async () => {
    await env.create("site", site);
    await env.waitReady("site");
    const rules = await cors("site");
    assert.equal(rules?.length, 2);
    assert.equal(rules?.[0]?.ID, "app");
    assert.deepEqual([...(rules?.[0]?.AllowedMethods ?? [])].sort(), ["GET", "PUT"]);
    assert.deepEqual([...(rules?.[0]?.AllowedOrigins ?? [])].sort(), [
      "https://*.example.org",
      "https://app.example.com",
    ]);
    assert.deepEqual(rules?.[0]?.AllowedHeaders, ["*"]);
    assert.deepEqual(rules?.[0]?.ExposeHeaders, ["ETag"]);
    assert.equal(rules?.[0]?.MaxAgeSeconds, 3000);
    assert.deepEqual(rules?.[1]?.AllowedOrigins, ["*"]);
    const w = await website("site");
    assert.equal(w.IndexDocument?.Suffix, "index.html");
    assert.equal(w.ErrorDocument?.Key, "404.html");
    assert.equal(env.proxy.count("PutBucketCors"), 1);
    assert.equal(env.proxy.count("PutBucketWebsite"), 1);
  });

  it("makes no Kubernetes write and no mutating AWS call at rest", async () => {
    await env.waitEvent("site", "Normal", "Created");
    await env.waitReconciles(1);
    const writes = await env.kubeWrites();
    const mutations = env.mutations();
    const [corsReads, websiteReads] = [env.proxy.count("GetBucketCors"), env.proxy.count("GetBucketWebsite")];
    await env.patch("site", { metadata: { annotations: { "test/bump": "1" } } });
    await env.waitReconciles(2);
    assert.equal(await env.kubeWrites(), writes, "Kubernetes writes");
    assert.deepEqual(env.mutations(), mutations, "mutating AWS calls");
    assert.ok(env.proxy.count("GetBucketCors") > corsReads, "CORS read again");
    assert.ok(env.proxy.count("GetBucketWebsite") > websiteReads, "website read again");
  });

  it("repairs drift of the CORS rules and of the website with Updated Events naming them", async () => {
    const s3 = env.s3();
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: "site",
        CORSConfiguration: { CORSRules: [{ AllowedMethods: ["DELETE"], AllowedOrigins: ["*"] }] },
      }),
    );
    await s3.send(
      new PutBucketWebsiteCommand({
        Bucket: "site",
        WebsiteConfiguration: {
          IndexDocument: { Suffix: "index.html" },
          ErrorDocument: { Key: "404.html" },
          RoutingRules: [
            { Condition: { KeyPrefixEquals: "old/" }, Redirect: { ReplaceKeyPrefixWith: "new/" } },
          ],
        },
      }),
    );
    await waitFor(
      "drift repaired",
      async () => {
        const rules = await cors("site");
        const w = await website("site");
        return rules?.length === 2 && rules[0]?.ID === "app" && (w.RoutingRules ?? []).length === 0;
      },
      WAIT_MS,
      200,
    );
    await waitFor(
      "Updated Events naming cors and website",
      async () => {
        const text = (await env.events("site"))
          .filter((e) => e.reason === "Updated")
          .map((e) => e.message)
          .join(" ");
        return /cors: 2 rules/.test(text) && /website: index index\.html/.test(text);
      },
      15_000,
      150,
    );
  });

  it("turns the website into a redirect, and an empty cors list removes the rules", async () => {
    await env.patch("site", {
      spec: {
        cors: [],
        website: {
          indexDocument: null,
          errorDocument: null,
          redirectAllRequestsTo: { hostName: "example.com", protocol: "https" },
        },
      },
    });
    await waitFor(
      "a redirect",
      async () => (await website("site")).RedirectAllRequestsTo?.HostName === "example.com",
      WAIT_MS,
      200,
    );
    const w = await website("site");
    assert.equal(w.RedirectAllRequestsTo?.Protocol, "https");
    assert.equal(w.IndexDocument, undefined);
    await waitFor("no CORS rules", async () => env.proxy.count("DeleteBucketCors") === 1, WAIT_MS, 200);
    await assert.rejects(cors("site"), { name: "NoSuchCORSConfiguration" });
  });

  it("neither reads nor touches CORS or the website once the spec drops them", async () => {
    await env.patch("site", { spec: { cors: null, website: null } });
    await waitFor(
      "the spec without cors and website observed",
      async () => {
        const obj = await env.get("site");
        return obj?.status?.observedGeneration === obj?.metadata.generation;
      },
      WAIT_MS,
      200,
    );
    await env.waitReconciles(1);
    const s3 = env.s3();
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: "site",
        CORSConfiguration: { CORSRules: [{ AllowedMethods: ["HEAD"], AllowedOrigins: ["*"] }] },
      }),
    );
    await s3.send(
      new PutBucketWebsiteCommand({
        Bucket: "site",
        WebsiteConfiguration: { IndexDocument: { Suffix: "home.html" } },
      }),
    );
    const counts = () =>
      ["GetBucketCors", "PutBucketCors", "DeleteBucketCors", "GetBucketWebsite", "PutBucketWebsite"].map(
        (op) => env.proxy.count(op),
      );
    const before = counts();
    await env.waitReconciles(3, "requeue_after");
    assert.deepEqual(counts(), before);
    assert.deepEqual((await cors("site"))?.[0]?.AllowedMethods, ["HEAD"]);
    assert.equal((await website("site")).IndexDocument?.Suffix, "home.html");
  });
});
