/**
 * A self-signed serving certificate for the metrics endpoint when no certificate files are
 * given (controller-runtime generates one too). ECDSA P-256 / SHA-256, built with node:crypto
 * and a minimal DER writer, so the image needs neither openssl nor an npm dependency.
 */
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";
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

/** Generates a fresh key and a self-signed serverAuth certificate for `hosts`. */
export function generateSelfSignedCertificate(opts: SelfSignedOptions): CertificatePair {
  if (opts.hosts.length === 0) throw new Error("a certificate needs at least one host");
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const notBefore = opts.notBefore ?? new Date(Date.now() - 3_600_000);
  const notAfter = new Date(notBefore.getTime() + (opts.validityDays ?? 365) * 86_400_000);
  const cn = opts.commonName ?? opts.hosts[0] ?? "localhost";
  const name = seq(set(seq(oid("2.5.4.3"), utf8(cn))));
  const ecdsaWithSha256 = seq(oid("1.2.840.10045.4.3.2"));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // positive
  if (serial[0] === 0) serial[0] = 1; // minimal encoding: no leading zero byte
  const altNames = opts.hosts.map((h) => {
    const ipVersion = isIP(h);
    if (ipVersion === 0) return tlv(0x82, Buffer.from(h, "ascii")); // [2] dNSName
    return tlv(0x87, ipBytes(h, ipVersion)); // [7] iPAddress
  });
  const extensions = seq(
    seq(oid("2.5.29.17"), octets(seq(...altNames))), // subjectAltName
    seq(oid("2.5.29.19"), bool(true), octets(seq())), // basicConstraints, critical, CA:false
    seq(oid("2.5.29.15"), bool(true), octets(bitString(Buffer.from([0x80]), 7))), // keyUsage: digitalSignature
    seq(oid("2.5.29.37"), octets(seq(oid("1.3.6.1.5.5.7.3.1")))), // extKeyUsage: serverAuth
  );
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // version v3
    integer(serial),
    ecdsaWithSha256,
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, extensions),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const der = seq(tbs, ecdsaWithSha256, bitString(signature, 0));
  const cert = new X509Certificate(der); // parses what we wrote: a malformed encoding throws here
  if (!cert.verify(publicKey)) throw new Error("self-signed certificate does not verify");
  return {
    cert: cert.toString(),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function tlv(tag: number, content: Buffer): Buffer {
  const len = content.length;
  let header: number[];
  if (len < 0x80) header = [tag, len];
  else {
    const bytes: number[] = [];
    for (let n = len; n > 0; n >>= 8) bytes.unshift(n & 0xff);
    header = [tag, 0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from(header), content]);
}

function seq(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

function integer(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function bool(v: boolean): Buffer {
  return tlv(0x01, Buffer.from([v ? 0xff : 0]));
}

function octets(content: Buffer): Buffer {
  return tlv(0x04, content);
}

function bitString(content: Buffer, unusedBits: number): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));
}

function utf8(s: string): Buffer {
  return tlv(0x0c, Buffer.from(s, "utf8"));
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const [a = 0, b = 0, ...rest] = arcs;
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift((n & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime after, as RFC 5280 requires. */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2024-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "") + "Z"; // 20240102030405Z
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), "ascii"))
    : tlv(0x18, Buffer.from(digits, "ascii"));
}

function ipBytes(ip: string, version: number): Buffer {
  if (version === 4) return Buffer.from(ip.split(".").map(Number));
  const [head = "", tail = ""] = ip.split("::");
  const parse = (s: string): number[] => (s === "" ? [] : s.split(":").map((h) => parseInt(h, 16)));
  const h = parse(head);
  const t = ip.includes("::") ? parse(tail) : [];
  const groups = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
