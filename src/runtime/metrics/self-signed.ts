/**
 * A self-signed serving certificate for the metrics endpoint when no certificate files are
 * given (controller-runtime generates one too): ECDSA P-256 / SHA-256, a random positive serial,
 * subjectAltName entries for every host, CA:false, digitalSignature and serverAuth. The key comes
 * from Node's WebCrypto; the certificate is assembled and signed by `@peculiar/x509`, so no
 * X.509 encoding is written here. That library resolves its ASN.1 schemas through tsyringe,
 * which needs the `reflect-metadata` polyfill loaded first.
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { KeyObject, randomBytes, X509Certificate } from "node:crypto";
import { isIP } from "node:net";

/** Options of {@link generateSelfSignedCertificate}. */
export interface SelfSignedOptions {
  /** Subject common name. @default the first host */
  commonName?: string;
  /** DNS names and IP addresses for the subjectAltName extension. */
  hosts: readonly string[];
  /** @default 365 */
  validityDays?: number;
  /** Start of validity. @default now minus one hour (tolerates small clock skew) */
  notBefore?: Date;
}

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** Generates a fresh key and a self-signed serverAuth certificate for `hosts`. */
export async function generateSelfSignedCertificate(opts: SelfSignedOptions): Promise<CertificatePair> {
  if (opts.hosts.length === 0) throw new Error("a certificate needs at least one host");
  const notBefore = opts.notBefore ?? new Date(Date.now() - 3_600_000);
  const notAfter = new Date(notBefore.getTime() + (opts.validityDays ?? 365) * 86_400_000);
  const cn = opts.commonName ?? opts.hosts[0] ?? "localhost";
  const keys = await globalThis.crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01; // positive, and no leading zero byte to strip
  const generated = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial.toString("hex"),
      // The JSON form of the name: the common name is a value, never parsed as DN syntax.
      name: [{ CN: [cn] }],
      notBefore,
      notAfter,
      signingAlgorithm: ALGORITHM,
      keys,
      extensions: [
        new SubjectAlternativeNameExtension(
          opts.hosts.map((h) => (isIP(h) === 0 ? { type: "dns", value: h } : { type: "ip", value: h })),
        ),
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
      ],
    },
    globalThis.crypto,
  );
  // Node parses what the library wrote: a malformed encoding or a bad signature throws here.
  const cert = new X509Certificate(generated.toString("pem"));
  const publicKey = KeyObject.from(keys.publicKey);
  if (!cert.verify(publicKey)) throw new Error("self-signed certificate does not verify");
  return {
    cert: cert.toString(),
    key: KeyObject.from(keys.privateKey).export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
