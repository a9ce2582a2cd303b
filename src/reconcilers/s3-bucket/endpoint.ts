/**
 * The endpoint URL a bucket is reached at, as the S3 client addressing it would resolve it:
 * virtual-hosted (`https://name.s3.region.amazonaws.com/`) on AWS, path-style
 * (`http://host:port/name`) when an endpoint override is in effect (see docs/aws.md), FIPS and
 * dual-stack hosts when the client is configured for them. Computed from configuration only, so
 * the same client always yields the same string (status does not churn) and no request is sent.
 */
import type { S3Client } from "@aws-sdk/client-s3";

/** Turns the SDK's parsed endpoint (`{protocol, hostname, port, path}`) back into a URL string. */
function endpointUrl(ep: {
  protocol: string;
  hostname: string;
  port?: number | undefined;
  path: string;
}): string {
  const protocol = ep.protocol.endsWith(":") ? ep.protocol : `${ep.protocol}:`;
  const port = ep.port !== undefined ? `:${ep.port}` : "";
  return `${protocol}//${ep.hostname}${port}${ep.path}`;
}

/**
 * The endpoint override the client uses, if any: one given in the client's configuration wins
 * over one from the environment or the shared config file (`AWS_ENDPOINT_URL_S3`,
 * `AWS_ENDPOINT_URL`, `endpoint_url`), which is how the SDK itself decides.
 */
async function overriddenEndpoint(client: S3Client): Promise<string | undefined> {
  const config = client.config;
  if (config.isCustomEndpoint === true && config.endpoint !== undefined) {
    return endpointUrl(await config.endpoint());
  }
  return (await config.serviceConfiguredEndpoint?.()) ?? undefined;
}

/**
 * The URL of bucket `bucket` in `region` through `client`, without a trailing slash.
 *
 * Guarantees: deterministic for a given client configuration and environment; never contacts
 * AWS. Caveat: the override from the shared config file is re-read by the SDK's own provider,
 * which caches it per client.
 */
export async function bucketEndpoint(client: S3Client, bucket: string, region: string): Promise<string> {
  const config = client.config;
  const endpoint = await overriddenEndpoint(client);
  const resolved = config.endpointProvider({
    Bucket: bucket,
    Region: region,
    UseFIPS: await config.useFipsEndpoint(),
    UseDualStack: await config.useDualstackEndpoint(),
    ForcePathStyle: config.forcePathStyle ?? false,
    Accelerate: false,
    ...(endpoint !== undefined ? { Endpoint: endpoint } : {}),
  });
  return resolved.url.href.replace(/\/+$/, "");
}
