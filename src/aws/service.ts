/**
 * The AWS services the operator talks to: one entry per service in {@link AWS_SERVICE_TABLE},
 * holding what the AWS layer needs to know about it (how labels, logs and messages name it, the
 * endpoint variable the SDK reads, and how its SDK client is built). A new service is one entry
 * here (and its rate budget in ./budget-plan.ts); the client factory, metrics and errors follow.
 *
 * Each service's SDK client module is imported when the factory builds the first client of that
 * service (`import()` of ./sdk/<service>.ts; in the bundle each is a chunk of its own,
 * hack/bundle.ts), so an operator that serves only buckets never loads EC2's client. Only types
 * are imported here statically.
 */
import type { EC2Client } from "@aws-sdk/client-ec2";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { STSClient } from "@aws-sdk/client-sts";
import type { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import type { sdkLogger } from "./sdk-logger.ts";

/** The configuration every client of the factory shares (see ./clients.ts). */
export interface BaseClientConfig {
  region: string;
  /** Credentials other than the default provider chain's (an assumed role's); see AwsClients.forAccount. */
  credentials?: AwsCredentialIdentityProvider;
  maxAttempts: number;
  retryMode: string;
  /** Added to the User-Agent header (see OPERATOR_USER_AGENT in ./clients.ts). */
  customUserAgent: string;
  logger: ReturnType<typeof sdkLogger>;
  requestHandler: {
    requestTimeout: number;
    connectionTimeout: number;
    throwOnRequestTimeout: boolean;
    httpAgent: { keepAlive: boolean; maxSockets: number };
    httpsAgent: { keepAlive: boolean; maxSockets: number };
    logger: ReturnType<typeof sdkLogger>;
  };
  endpoint?: string;
}

/** Factory settings a service's client may depend on. */
export interface ClientSettings {
  /** Path-style S3 addressing (see AwsClientsOptions.s3ForcePathStyle). */
  readonly s3ForcePathStyle: boolean;
}

/** What the AWS layer knows about one service. */
export interface AwsServiceEntry<C> {
  /** Display name at the start of stable error messages ("EC2 RunInstances failed ..."). */
  readonly displayName: string;
  /** The prefix of the service's IAM actions (`ec2` in `ec2:RunInstances`). */
  readonly iamPrefix: string;
  /**
   * The suffix the AWS SDK appends to `AWS_ENDPOINT_URL_` for the service (its service ID, upper
   * case, spaces turned into underscores). The SDK reads these variables itself; the factory only
   * tells from them whether an override is in effect.
   */
  readonly endpointEnvSuffix: string;
  /** Loads the service's SDK client module and builds the client from the shared configuration. */
  readonly build: (config: BaseClientConfig, settings: ClientSettings) => Promise<C>;
}

const entry = <C>(e: AwsServiceEntry<C>): AwsServiceEntry<C> => Object.freeze(e);

/** Every service, by the short lower-case name used in metric labels, error info and options. */
export const AWS_SERVICE_TABLE = Object.freeze({
  ec2: entry({
    displayName: "EC2",
    iamPrefix: "ec2",
    endpointEnvSuffix: "EC2",
    build: async (config): Promise<EC2Client> => new (await import("./sdk/ec2.ts")).EC2Client(config),
  }),
  s3: entry({
    displayName: "S3",
    iamPrefix: "s3",
    endpointEnvSuffix: "S3",
    build: async (config, settings): Promise<S3Client> =>
      new (await import("./sdk/s3.ts")).S3Client({
        ...config,
        forcePathStyle: settings.s3ForcePathStyle,
      }),
  }),
  sqs: entry({
    displayName: "SQS",
    iamPrefix: "sqs",
    endpointEnvSuffix: "SQS",
    // Calls that name a `QueueUrl` go to the resolved endpoint (the region's, or the override),
    // never to the host inside the URL: the client already serves the queue's region, and an
    // endpoint override (a VPC endpoint, an emulator behind a proxy) must not be bypassed by the
    // URLs SQS hands out.
    build: async (config): Promise<SQSClient> =>
      new (await import("./sdk/sqs.ts")).SQSClient({ ...config, useQueueUrlAsEndpoint: false }),
  }),
  sts: entry({
    displayName: "STS",
    iamPrefix: "sts",
    endpointEnvSuffix: "STS",
    // AssumeRole for AwsAccounts and GetCallerIdentity (src/accounts).
    build: async (config): Promise<STSClient> => new (await import("./sdk/sts.ts")).STSClient(config),
  }),
  tagging: entry({
    displayName: "Resource Groups Tagging",
    iamPrefix: "tag",
    endpointEnvSuffix: "RESOURCE_GROUPS_TAGGING_API",
    // GetResources for bulk tag reads (src/reconcilers/common/tag-snapshots.ts, ./tag-sweep.ts):
    // built, and its module loaded, only when that is in use.
    build: async (config): Promise<ResourceGroupsTaggingAPIClient> =>
      new (await import("./sdk/tagging.ts")).ResourceGroupsTaggingAPIClient(config),
  }),
});

/** Short, lower-case service names used in metric labels, error info and options. */
export type AwsService = keyof typeof AWS_SERVICE_TABLE;

/** The SDK client of service `S`. */
export type AwsClientOf<S extends AwsService> = Awaited<ReturnType<(typeof AWS_SERVICE_TABLE)[S]["build"]>>;

/** Every service in {@link AwsService}, in a fixed order. */
export const AWS_SERVICES: readonly AwsService[] = Object.freeze(
  Object.keys(AWS_SERVICE_TABLE) as AwsService[],
);

/** Display names used at the start of stable error messages ("EC2 RunInstances failed ..."). */
export const SERVICE_DISPLAY_NAME: Readonly<Record<AwsService, string>> = Object.freeze(
  Object.fromEntries(AWS_SERVICES.map((s) => [s, AWS_SERVICE_TABLE[s].displayName])) as Record<
    AwsService,
    string
  >,
);

/** The prefix of each service's IAM actions (`ec2`, `s3`, `sqs`, `sts`, `tag`). */
export const SERVICE_IAM_PREFIX: Readonly<Record<AwsService, string>> = Object.freeze(
  Object.fromEntries(AWS_SERVICES.map((s) => [s, AWS_SERVICE_TABLE[s].iamPrefix])) as Record<
    AwsService,
    string
  >,
);

const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/**
 * Whether `region` looks like an AWS region name (`us-east-1`, `eu-central-2`, `us-gov-west-1`).
 * Only the shape is checked; an unknown but well-formed region passes.
 */
export function isRegionName(region: string): boolean {
  return REGION_PATTERN.test(region);
}
