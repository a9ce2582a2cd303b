/**
 * Test PKI: a CA, the API server's serving certificate, client certificates for any user and
 * groups, and the ServiceAccount token signing key pair. Made with the openssl CLI (EC P-256
 * keys, one-day validity).
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
}

const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** Creates the CA, serving certificate (for 127.0.0.1, localhost and `extraIPs`) and SA keys in `dir`. */
export function createPki(dir: string, extraIPs: readonly string[] = []): Pki {
  openssl(
    [
      "req",
      "-x509",
      ...ecKey,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "1",
      "-subj",
      "/CN=kubeprovisioner-envtest-ca",
    ],
    dir,
  );
  issue(
    dir,
    "apiserver",
    "/CN=kube-apiserver",
    `subjectAltName=${["IP:127.0.0.1", "DNS:localhost", ...extraIPs.map((ip) => `IP:${ip}`)].join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "pkcs8", format: "pem" }));
  writeFileSync(path.join(dir, "sa.pub"), publicKey.export({ type: "spki", format: "pem" }));
  return {
    dir,
    caCert: path.join(dir, "ca.crt"),
    caKey: path.join(dir, "ca.key"),
    serverCert: path.join(dir, "apiserver.crt"),
    serverKey: path.join(dir, "apiserver.key"),
    saKey: path.join(dir, "sa.key"),
    saPub: path.join(dir, "sa.pub"),
  };
}

/**
 * `pki` with its CA copied into `dir`, so that certificates issued through the result are written
 * there; the serving and ServiceAccount keys stay where they are (read only).
 */
export function pkiIssuingIn(pki: Pki, dir: string): Pki {
  const caCert = path.join(dir, "ca.crt");
  const caKey = path.join(dir, "ca.key");
  copyFileSync(pki.caCert, caCert);
  copyFileSync(pki.caKey, caKey);
  return { ...pki, dir, caCert, caKey };
}

/** Issues `<name>.crt` and `<name>.key` in `dir`, signed by the CA there, with OpenSSL extensions `ext`. */
export function issue(dir: string, name: string, subject: string, ext: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(["req", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "1",
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
}

/**
 * A serving certificate signed by the CA for the given subject alternative names (`IP:…`,
 * `DNS:…`), returned as PEM strings.
 */
export function servingCert(pki: Pki, name: string, altNames: string[]): { cert: string; key: string } {
  issue(pki.dir, name, `/CN=${name}`, `subjectAltName=${altNames.join(",")}\nextendedKeyUsage=serverAuth\n`);
  return {
    cert: readFileSync(path.join(pki.dir, `${name}.crt`), "utf8"),
    key: readFileSync(path.join(pki.dir, `${name}.key`), "utf8"),
  };
}

/** A client certificate for `user` in `groups`, returned as PEM strings. */
export function clientCert(pki: Pki, user: string, groups: string[] = []): { cert: string; key: string } {
  const safe = user.replace(/[^a-zA-Z0-9_-]/g, "_");
  const subject = [...groups.map((g) => `/O=${g}`), `/CN=${user}`].join("");
  issue(pki.dir, `client-${safe}`, subject, "extendedKeyUsage=clientAuth\n");
  return {
    cert: readFileSync(path.join(pki.dir, `client-${safe}.crt`), "utf8"),
    key: readFileSync(path.join(pki.dir, `client-${safe}.key`), "utf8"),
  };
}
