/**
 * The tables behind {@link classifyAwsError}: which AWS error code means what. Kept apart from
 * the classifier's logic so adding a code is a one-line change here.
 *
 * Codes are the names the SDK v3 gives errors (`err.name`). For SQS, which answers in JSON with a
 * query-compatible legacy code, both the SDK name (`QueueDoesNotExist`) and the legacy code
 * (`AWS.SimpleQueueService.NonExistentQueue`) are listed, so either spelling classifies the same.
 */

/**
 * What the caller should do about a failure.
 * - `throttled`: AWS asked us to slow down; retry later with backoff (the rate budget already slowed).
 * - `retryable`: transient (network, timeout, 5xx, capacity, state in flux); retry with backoff.
 * - `terminal`: the request cannot succeed as it is (bad parameter, unknown AMI, access denied,
 *   missing credentials); do not retry until the spec changes, unless the error's `access`
 *   says the caller's access failed: that heals once IAM or the credentials are fixed.
 * - `not-found`: the addressed resource does not exist; a delete may treat this as done.
 * - `conflict`: the request collides with existing state (already exists, not empty, idempotency
 *   token reused); the caller decides, often by reading the current state.
 */
export type AwsErrorKind = "throttled" | "retryable" | "terminal" | "not-found" | "conflict";

/** AWS asked the caller to slow down. */
const THROTTLED = [
  // EC2
  "RequestLimitExceeded",
  "RequestResourceCountExceeded",
  "EC2ThrottledException",
  // S3
  "SlowDown",
  // SQS
  "RequestThrottled",
  "KmsThrottled",
  "KmsThrottledException",
  // shared spellings across AWS protocols
  "Throttling",
  "ThrottlingException",
  "ThrottledException",
  "TooManyRequestsException",
  "RequestThrottledException",
  "BandwidthLimitExceeded",
  "PriorRequestNotComplete",
] as const;

/** The resource the call addressed does not exist (a deletion may treat it as done). */
const NOT_FOUND = [
  // EC2: the addressed instance or volume, not a resource the request merely refers to
  "InvalidInstanceID.NotFound",
  "InvalidVolume.NotFound",
  "InvalidNetworkInterfaceID.NotFound",
  // S3 (HeadBucket has no body, so the SDK names its 404 "NotFound")
  "NoSuchBucket",
  "NotFound",
  "NoSuchTagSet",
  "NoSuchTagSetError",
  "NoSuchKey",
  "NoSuchBucketPolicy",
  "NoSuchLifecycleConfiguration",
  "NoSuchPublicAccessBlockConfiguration",
  "NoSuchOwnershipControls",
  "OwnershipControlsNotFoundError",
  "NoSuchCORSConfiguration",
  "ServerSideEncryptionConfigurationNotFoundError",
  // SQS
  "QueueDoesNotExist",
  "AWS.SimpleQueueService.NonExistentQueue",
  "ResourceNotFoundException",
] as const;

/** The request collides with existing state the caller must interpret. */
const CONFLICT = [
  // EC2: the ClientToken was used before with different parameters
  "IdempotentParameterMismatch",
  // S3: a re-create of our own bucket (success for a create), and a delete of a non-empty bucket
  "BucketAlreadyOwnedByYou",
  "BucketNotEmpty",
  // SQS: same name, different attributes (the SDK name and the legacy code)
  "QueueNameExists",
  "QueueAlreadyExists",
] as const;

/** Transient failures: the same request may succeed later without any change. */
const RETRYABLE = [
  // capacity and quotas can free up without a spec change
  "InsufficientInstanceCapacity",
  "InsufficientCapacity",
  "InsufficientHostCapacity",
  "InsufficientReservedInstanceCapacity",
  "InsufficientAddressCapacity",
  "InsufficientFreeAddressesInSubnet",
  "InstanceLimitExceeded",
  "VcpuLimitExceeded",
  "TooManyBuckets",
  "PendingVerification",
  // state that will change on its own
  "IncorrectState",
  "IncorrectInstanceState",
  "ConcurrentTagAccess",
  "OperationAborted",
  "QueueDeletedRecently",
  "AWS.SimpleQueueService.QueueDeletedRecently",
  // service side
  "InternalError",
  "InternalFailure",
  "InternalServerError",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "Unavailable",
  "RequestTimeout",
  "RequestTimeoutException",
  "TemporaryRedirect",
  // credentials that the SDK refreshes, and clock skew it corrects
  "ExpiredToken",
  "ExpiredTokenException",
  "RequestExpired",
  "RequestTimeTooSkewed",
  "IDPCommunicationError",
  // transport: Node socket errors and the SDK's own timeout and abort errors
  "TimeoutError",
  "AbortError",
  "RequestAbortedError",
  "NetworkingError",
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ERR_STREAM_PREMATURE_CLOSE",
] as const;

/**
 * The caller's IAM identity may not make the call: its policies (or the permissions boundary, a
 * service control policy, the resource's policy) do not allow the call's action.
 */
const DENIED = ["AccessDenied", "AccessDeniedException", "UnauthorizedOperation"] as const;

/**
 * The call needs something on the caller's behalf that the caller may not use or create: the
 * queue's KMS key, the service-linked role for Spot Instances. The code's hint says what.
 */
const PREREQUISITE = [
  "KmsAccessDenied",
  "KMS.AccessDeniedException",
  "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
] as const;

/** The caller has no credentials, or AWS does not accept them. */
const NO_CREDENTIALS = [
  "CredentialsProviderError",
  "AuthFailure",
  "InvalidClientTokenId",
  "UnrecognizedClientException",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "MissingAuthenticationToken",
  "InvalidIdentityToken",
  "InvalidIdentityTokenException",
] as const;

/** Retrying the same request cannot succeed; the spec or the account must change first. */
const TERMINAL = [
  // credentials and authorization (see also DENIED, PREREQUISITE and NO_CREDENTIALS)
  "Forbidden",
  "IncompleteSignature",
  "OptInRequired",
  "Blocked",
  "AllAccessDisabled",
  "AccountProblem",
  "KmsDisabled",
  "KmsNotFound",
  "KmsInvalidState",
  "KmsInvalidKeyUsage",
  "KmsOptInRequired",
  // EC2: malformed or unknown references in the request
  "InvalidParameter",
  "InvalidParameterValue",
  "InvalidParameterCombination",
  "MissingParameter",
  "UnknownParameter",
  "Unsupported",
  "UnsupportedOperation",
  "InvalidKeyPair.NotFound",
  "InvalidKeyPair.Format",
  "InvalidSubnetID.NotFound",
  "InvalidSubnetID.Malformed",
  "InvalidGroup.NotFound",
  "InvalidGroupId.Malformed",
  "InvalidSecurityGroupID.NotFound",
  "InvalidVpcID.NotFound",
  "InvalidSnapshot.NotFound",
  "InvalidZone.NotFound",
  "InvalidInstanceType",
  "InvalidBlockDeviceMapping",
  "InvalidUserData.Malformed",
  "InvalidTagKey.Malformed",
  "TagLimitExceeded",
  "VolumeTypeNotAvailableInZone",
  // S3
  "BucketAlreadyExists",
  "InvalidBucketName",
  "IllegalLocationConstraintException",
  "InvalidLocationConstraint",
  "InvalidArgument",
  "InvalidRequest",
  "MalformedPolicy",
  "KMS.NotFoundException",
  "KMS.DisabledException",
  "InvalidTag",
  "MalformedXML",
  "InvalidBucketState",
  "MethodNotAllowed",
  "NotImplemented",
  "AuthorizationHeaderMalformed",
  "PermanentRedirect",
  "MovedPermanently",
  // SQS (SDK names and legacy codes)
  "InvalidAttributeValue",
  "InvalidAttributeName",
  "InvalidAddress",
  "InvalidSecurity",
  "OverLimit",
  "UnsupportedOperation",
  "AWS.SimpleQueueService.UnsupportedOperation",
  // generic validation
  "ValidationError",
  "ValidationException",
  "InvalidAction",
  "InvalidQueryParameter",
  "MalformedQueryString",
] as const;

function table(
  entries: ReadonlyArray<readonly [readonly string[], AwsErrorKind]>,
): ReadonlyMap<string, AwsErrorKind> {
  const map = new Map<string, AwsErrorKind>();
  for (const [codes, kind] of entries) {
    for (const code of codes) {
      if (!map.has(code)) map.set(code, kind);
    }
  }
  return map;
}

/**
 * Known codes and their kind. Earlier rows win when a code appears twice, so the order of the
 * rows is the order of precedence: throttled, not-found, conflict, retryable, terminal.
 */
export const KNOWN_CODES: ReadonlyMap<string, AwsErrorKind> = table([
  [THROTTLED, "throttled"],
  [NOT_FOUND, "not-found"],
  [CONFLICT, "conflict"],
  [RETRYABLE, "retryable"],
  [DENIED, "terminal"],
  [PREREQUISITE, "terminal"],
  [NO_CREDENTIALS, "terminal"],
  [TERMINAL, "terminal"],
]);

/**
 * What a failure of access is; see {@link AwsErrorInfo.access} in ./errors.ts.
 * - `denied`: the call's own action is not allowed to the caller;
 * - `prerequisite`: something the call needs on the caller's behalf is not (a KMS key, a
 *   service-linked role), as the code's hint says;
 * - `credentials`: the caller has no credentials, or AWS does not accept them.
 */
export type AwsAccess = "denied" | "prerequisite" | "credentials";

/** The codes that are a failure of access, each with what it is. All of them are terminal. */
export const ACCESS_CODES: ReadonlyMap<string, AwsAccess> = new Map<string, AwsAccess>([
  ...DENIED.map((c) => [c, "denied"] as const),
  ...PREREQUISITE.map((c) => [c, "prerequisite"] as const),
  ...NO_CREDENTIALS.map((c) => [c, "credentials"] as const),
]);

/**
 * Code families matched by prefix or suffix when the exact code is not in {@link KNOWN_CODES}.
 * Checked in order; the first match wins.
 */
export const CODE_PATTERNS: ReadonlyArray<readonly [RegExp, AwsErrorKind]> = [
  [/^InvalidAMIID\./, "terminal"],
  [/^InvalidParameter/, "terminal"],
  [/\.Malformed$/, "terminal"],
  [/^Insufficient.*Capacity$/, "retryable"],
  [/Throttl/, "throttled"],
  [/\.NotFound$/, "not-found"],
];

/**
 * Human hints appended to the AWS message for codes where the raw text does not say what to do.
 * Every hint is a fixed string, so the status message stays stable.
 */
export const CODE_HINTS: Readonly<Record<string, string>> = {
  CredentialsProviderError:
    "no AWS credentials found (looked in the environment, shared config and profiles, the web identity token (IRSA), container and instance metadata); see docs/aws.md#credentials",
  BucketAlreadyExists:
    "the bucket name is taken by another AWS account; S3 bucket names are global, choose another bucketName",
  BucketAlreadyOwnedByYou: "this account already owns the bucket",
  BucketNotEmpty: "the bucket still contains objects; it is not emptied automatically",
  UnauthorizedOperation: "the IAM identity lacks a permission for this call",
  AccessDenied: "the IAM identity lacks a permission for this call",
  AccessDeniedException: "the IAM identity lacks a permission for this call",
  KmsAccessDenied:
    "the IAM identity may not use the queue's KMS key (kms:Decrypt to read, kms:GenerateDataKey to send)",
  "KMS.AccessDeniedException": "the IAM identity may not use the KMS key",
  "AuthFailure.ServiceLinkedRoleCreationNotPermitted":
    "the account has no AWSServiceRoleForEC2Spot service-linked role and the IAM identity may not create it; create it once per account: aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
  AuthFailure: "AWS did not accept the credentials; see docs/aws.md#credentials",
  InvalidClientTokenId: "AWS does not know the credentials' access key; see docs/aws.md#credentials",
  UnrecognizedClientException: "AWS does not know the credentials' access key; see docs/aws.md#credentials",
  InvalidAccessKeyId: "AWS does not know the credentials' access key; see docs/aws.md#credentials",
  SignatureDoesNotMatch:
    "the request's signature does not match the credentials' secret key; see docs/aws.md#credentials",
  InvalidIdentityToken:
    "STS does not accept the web identity token (IRSA): check the cluster's IAM OIDC provider and the role's trust policy; see docs/eks.md#3a-irsa-iam-roles-for-service-accounts",
  InvalidIdentityTokenException:
    "STS does not accept the web identity token (IRSA): check the cluster's IAM OIDC provider and the role's trust policy; see docs/eks.md#3a-irsa-iam-roles-for-service-accounts",
  Forbidden: "access denied (the bucket may belong to another account)",
  NotFound: "not found",
  PermanentRedirect: "the bucket lives in another region than the one requested",
  MovedPermanently: "the bucket lives in another region than the one requested",
  AuthorizationHeaderMalformed: "the request was signed for another region than the bucket's",
  TimeoutError: "no response within the request timeout",
  AbortError: "the request was aborted",
  QueueDeletedRecently:
    "a queue of this name was deleted less than 60 seconds ago; AWS refuses to reuse the name until then",
  IdempotentParameterMismatch: "the idempotency token was used before with different parameters",
};
