import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { generateSelfSignedCertificate } from "./self-signed.ts";

test("the certificate parses, verifies, and names every host", async () => {
  const { cert, key } = await generateSelfSignedCertificate({
    hosts: ["localhost", "metrics.system.svc", "127.0.0.1", "::1", "fd00::10:2"],
    validityDays: 30,
  });
  const x = new X509Certificate(cert);
  assert.ok(x.verify(x.publicKey));
  assert.equal(x.checkHost("metrics.system.svc"), "metrics.system.svc");
  assert.equal(x.checkHost("other.example"), undefined);
  assert.equal(x.checkIP("127.0.0.1"), "127.0.0.1");
  assert.equal(x.checkIP("fd00::10:2"), "fd00::10:2");
  assert.equal(x.ca, false);
  assert.deepEqual(x.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
  const days = (Date.parse(x.validTo) - Date.parse(x.validFrom)) / 86_400_000;
  assert.equal(days, 30);
  assert.match(key, /BEGIN PRIVATE KEY/);
  assert.notEqual(
    (await generateSelfSignedCertificate({ hosts: ["a"] })).cert,
    (await generateSelfSignedCertificate({ hosts: ["a"] })).cert,
  );
});

test("validity past 2049 is written as GeneralizedTime and still parses", async () => {
  const { cert } = await generateSelfSignedCertificate({
    hosts: ["localhost"],
    notBefore: new Date("2049-12-31T00:00:00Z"),
    validityDays: 2,
  });
  assert.equal(new X509Certificate(cert).validTo, "Jan  2 00:00:00 2050 GMT");
});

test("a TLS client that trusts the certificate completes a handshake", async () => {
  const pair = await generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"] });
  const server = createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end("hello"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  try {
    const body = await new Promise<string>((resolve, reject) => {
      request({ host: "127.0.0.1", port, ca: pair.cert, path: "/" }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve(text));
      })
        .on("error", reject)
        .end();
    });
    assert.equal(body, "hello");
  } finally {
    server.close();
  }
});

test("the common name is one value, never parsed as more name components", async () => {
  const { cert } = await generateSelfSignedCertificate({ hosts: ["localhost"], commonName: "ops, O=Evil" });
  const x = new X509Certificate(cert);
  assert.equal(x.subject, "CN=ops\\, O=Evil");
  assert.equal(x.issuer, x.subject, "self-signed: issuer is the subject");
  assert.match(x.serialNumber, /^[0-7][0-9A-F]{31}$/, "a positive 128-bit serial");
});
