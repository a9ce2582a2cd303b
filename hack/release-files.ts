// What the steps of `make release` share (hack/release.ts, hack/sea.ts): the error that stops a
// release, and the digest each artifact is listed with.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** A release that cannot be made; the message says why and what to do. */
export class ReleaseError extends Error {}

/** sha256 of a file, in hex. */
export async function sha256File(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest("hex");
}
