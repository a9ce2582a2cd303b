/**
 * Where an SQS queue is, from the forms users copy from the console or CloudFormation: its URL
 * (`https://sqs.<region>.amazonaws.com/<account>/<name>`, the legacy
 * `https://<region>.queue.amazonaws.com/…` and `https://queue.amazonaws.com/…` of us-east-1, or any
 * endpoint's URL such as an emulator's, whose region is then the operator's own) or its ARN
 * (`arn:<partition>:sqs:<region>:<account>:<name>`), converted to the URL of the region's SQS
 * endpoint in the ARN's partition. A name alone is refused: it says neither account nor region.
 */
import { partitionOf } from "./partition.ts";
import { isRegionName } from "./service.ts";

/** An SQS queue, located. */
export interface QueueAddress {
  /** The queue URL that SQS calls name (`QueueUrl`). */
  readonly url: string;
  readonly region: string;
  readonly accountId: string;
  readonly name: string;
}

/** A queue reference that names no queue the operator could read. */
export class QueueAddressError extends Error {
  override readonly name = "QueueAddressError";
}

/** The DNS suffix of SQS endpoints in each partition. */
const DNS_SUFFIX: Readonly<Record<string, string>> = {
  aws: "amazonaws.com",
  "aws-cn": "amazonaws.com.cn",
  "aws-us-gov": "amazonaws.com",
  "aws-iso": "c2s.ic.gov",
  "aws-iso-b": "sc2s.sgov.gov",
};

const ACCOUNT = /^[0-9]{12}$/;
/** SQS queue names: 1–80 alphanumerics, hyphens and underscores, `.fifo` allowed at the end. */
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

const EXPECTED =
  "an SQS queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>) or ARN " +
  "(arn:aws:sqs:<region>:<account>:<name>)";

/**
 * Parses a queue URL or ARN. `defaultRegion` is the region of a URL whose host names none (an
 * emulator, a VPC endpoint alias).
 * @throws QueueAddressError saying what is wrong and what is expected
 */
export function parseQueueAddress(text: string, defaultRegion?: string): QueueAddress {
  const value = text.trim();
  if (value.startsWith("arn:")) return fromArn(value);
  if (/^https?:\/\//i.test(value)) return fromUrl(value, defaultRegion);
  if (QUEUE_NAME.test(value))
    throw new QueueAddressError(
      `${JSON.stringify(value)} is a queue name alone, which says neither its account nor its region: give ${EXPECTED}`,
    );
  throw new QueueAddressError(`${JSON.stringify(value)} is not ${EXPECTED}`);
}

/** The URL of queue `name` of `accountId` at the regional SQS endpoint of `region`. */
export function queueUrlOf(region: string, accountId: string, name: string): string {
  const suffix = DNS_SUFFIX[partitionOf(region)] ?? "amazonaws.com";
  return `https://sqs.${region}.${suffix}/${accountId}/${name}`;
}

function fromArn(arn: string): QueueAddress {
  const parts = arn.split(":");
  const [, partition, service, region, accountId, name] = parts;
  if (parts.length !== 6 || service !== "sqs" || partition === undefined || region === undefined)
    throw new QueueAddressError(`${JSON.stringify(arn)} is not an SQS queue ARN: expected ${EXPECTED}`);
  if (!isRegionName(region))
    throw new QueueAddressError(`the queue ARN ${JSON.stringify(arn)} names no region`);
  if (partitionOf(region) !== partition)
    throw new QueueAddressError(
      `the queue ARN ${JSON.stringify(arn)} puts region ${region} in partition ${partition}, but ${region} is in ${partitionOf(region)}`,
    );
  if (accountId === undefined || !ACCOUNT.test(accountId))
    throw new QueueAddressError(`the queue ARN ${JSON.stringify(arn)} names no 12-digit account`);
  if (name === undefined || !QUEUE_NAME.test(name))
    throw new QueueAddressError(`the queue ARN ${JSON.stringify(arn)} names no valid queue`);
  return { url: queueUrlOf(region, accountId, name), region, accountId, name };
}

function fromUrl(text: string, defaultRegion: string | undefined): QueueAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new QueueAddressError(`${JSON.stringify(text)} is not a URL: expected ${EXPECTED}`);
  }
  const segments = url.pathname.split("/").filter((s) => s !== "");
  const [accountId, name] = segments;
  if (
    segments.length !== 2 ||
    accountId === undefined ||
    !ACCOUNT.test(accountId) ||
    name === undefined ||
    !QUEUE_NAME.test(name)
  )
    throw new QueueAddressError(
      `the queue URL ${JSON.stringify(text)} has no /<12-digit account>/<queue name> path: expected ${EXPECTED}`,
    );
  const region = regionOfHost(url.hostname.toLowerCase()) ?? defaultRegion;
  if (region === undefined || !isRegionName(region))
    throw new QueueAddressError(
      `the queue URL ${JSON.stringify(text)} names no region in its host, and the operator has none (--aws-region)`,
    );
  return { url: `${url.protocol}//${url.host}/${accountId}/${name}`, region, accountId, name };
}

/** The region in an SQS endpoint's host name, if it names one. */
function regionOfHost(host: string): string | undefined {
  if (host === "queue.amazonaws.com") return "us-east-1";
  const regional =
    /^sqs(?:-fips)?\.([a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|api\.aws|c2s\.ic\.gov|sc2s\.sgov\.gov)$/.exec(
      host,
    );
  if (regional?.[1] !== undefined) return regional[1];
  const legacy = /^([a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?$/.exec(host);
  return legacy?.[1];
}
