import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EC2ServiceException } from "@aws-sdk/client-ec2";
import {
  AccessDenied,
  BucketAlreadyExists,
  BucketAlreadyOwnedByYou,
  NoSuchBucket,
  NotFound,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import {
  InvalidAttributeValue,
  QueueDeletedRecently,
  QueueDoesNotExist,
  QueueNameExists,
  RequestThrottled,
  SQSServiceException,
} from "@aws-sdk/client-sqs";
import {
  AwsError,
  MAX_MESSAGE_LENGTH,
  classifyAwsError,
  isAwsErrorKind,
  type AwsErrorKind,
} from "./errors.ts";

// Shapes below mirror what the SDK's deserializers produce (captured from moto and AWS):
// S3 adds Code, RequestId and HostId; EC2's query protocol adds Code and Error; SQS's JSON
// protocol in query-compatible mode adds the legacy code as Code and Error.Code.

let seq = 0;
function meta(status: number) {
  seq++;
  return { httpStatusCode: status, requestId: `REQ${seq}${"X".repeat(20)}`, attempts: 1, totalRetryDelay: 0 };
}

function s3Extras(code: string) {
  return {
    Code: code,
    RequestId: `R${seq}QYZAB`,
    HostId: `9Gjjt1m+cjU4OPvX9O9/8RuvnG41MRb/18Oux2o5H5MY7ISNTlXN+Dz9IG62/ILVx${seq}hAGI0qyPfg=`,
  };
}

function s3Generic(code: string, status: number, message: string): S3ServiceException {
  return Object.assign(
    new S3ServiceException({
      name: code,
      $fault: status >= 500 ? "server" : "client",
      $metadata: meta(status),
      message,
    }),
    s3Extras(code),
  );
}

function ec2(code: string, message: string, status = 400): EC2ServiceException {
  return Object.assign(
    new EC2ServiceException({
      name: code,
      $fault: status >= 500 ? "server" : "client",
      $metadata: meta(status),
      message,
    }),
    { Code: code, Error: { Code: code, Message: message } },
  );
}

function sqsCompat<E extends SQSServiceException>(err: E, legacyCode: string): E {
  return Object.assign(err, {
    Code: legacyCode,
    Type: "Sender",
    Error: { Code: legacyCode, Type: "Sender", Message: err.message },
    RequestId: `sqs-${seq}`,
  });
}

function sqsGeneric(code: string, status: number, message: string): SQSServiceException {
  return new SQSServiceException({
    name: code,
    $fault: status >= 500 ? "server" : "client",
    $metadata: meta(status),
    message,
  });
}

function nodeError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, errno: -111, syscall: "connect" });
}

interface Row {
  label: string;
  make: () => unknown;
  kind: AwsErrorKind;
  code: string;
  status?: number;
}

// prettier-ignore
const rows: Row[] = [
  // EC2 (query protocol: every error is an EC2ServiceException named by its code)
  { label: "EC2 malformed AMI", make: () => ec2("InvalidAMIID.Malformed", 'Invalid id: "bogus" (expecting "ami-...")'), kind: "terminal", code: "InvalidAMIID.Malformed", status: 400 },
  { label: "EC2 unknown AMI", make: () => ec2("InvalidAMIID.NotFound", "The image id '[ami-12345678]' does not exist"), kind: "terminal", code: "InvalidAMIID.NotFound" },
  { label: "EC2 unavailable AMI", make: () => ec2("InvalidAMIID.Unavailable", "The image id is no longer available"), kind: "terminal", code: "InvalidAMIID.Unavailable" },
  { label: "EC2 invalid parameter value", make: () => ec2("InvalidParameterValue", "Invalid value 't9.bogus' for InstanceType."), kind: "terminal", code: "InvalidParameterValue" },
  { label: "EC2 invalid parameter combination", make: () => ec2( "InvalidParameterCombination", "Network interfaces and an instance-level subnet ID may not be specified on the same request", ), kind: "terminal", code: "InvalidParameterCombination" },
  { label: "EC2 unlisted InvalidParameter*", make: () => ec2("InvalidParameterDependency", "x"), kind: "terminal", code: "InvalidParameterDependency" },
  { label: "EC2 instance gone", make: () => ec2("InvalidInstanceID.NotFound", "The instance ID 'i-0123456789abcdef0' does not exist"), kind: "not-found", code: "InvalidInstanceID.NotFound" },
  { label: "EC2 malformed instance id", make: () => ec2("InvalidInstanceID.Malformed", 'Invalid id: "i-zz"'), kind: "terminal", code: "InvalidInstanceID.Malformed" },
  { label: "EC2 unsupported", make: () => ec2("Unsupported", "The requested configuration is currently not supported."), kind: "terminal", code: "Unsupported" },
  { label: "EC2 no capacity", make: () => ec2( "InsufficientInstanceCapacity", "We currently do not have sufficient t3.micro capacity in the Availability Zone you requested (us-east-1a).", ), kind: "retryable", code: "InsufficientInstanceCapacity" },
  { label: "EC2 throttled", make: () => ec2("RequestLimitExceeded", "Request limit exceeded."), kind: "throttled", code: "RequestLimitExceeded" },
  { label: "EC2 unauthorized", make: () => ec2( "UnauthorizedOperation", "You are not authorized to perform this operation. Encoded authorization failure message: 4dc2k3jaQx_AbC-123", ), kind: "terminal", code: "UnauthorizedOperation" },
  { label: "EC2 unknown key pair", make: () => ec2("InvalidKeyPair.NotFound", "The key pair 'nokey' does not exist"), kind: "terminal", code: "InvalidKeyPair.NotFound" },
  { label: "EC2 unknown subnet", make: () => ec2("InvalidSubnetID.NotFound", "The subnet ID 'subnet-12345678' does not exist"), kind: "terminal", code: "InvalidSubnetID.NotFound" },
  { label: "EC2 unknown security group", make: () => ec2("InvalidGroup.NotFound", "The security group 'sg-12345678' does not exist"), kind: "terminal", code: "InvalidGroup.NotFound" },
  { label: "EC2 client token reused", make: () => ec2( "IdempotentParameterMismatch", "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).", ), kind: "conflict", code: "IdempotentParameterMismatch" },
  { label: "EC2 incorrect state", make: () => ec2("IncorrectInstanceState", "The instance 'i-1' is not in a state from which it can be stopped."), kind: "retryable", code: "IncorrectInstanceState" },
  { label: "EC2 auth failure", make: () => ec2("AuthFailure", "AWS was not able to validate the provided access credentials", 401), kind: "terminal", code: "AuthFailure" },
  { label: "EC2 internal error", make: () => ec2("InternalError", "An internal error has occurred", 500), kind: "retryable", code: "InternalError", status: 500 },
  { label: "EC2 unknown 4xx code", make: () => ec2("SomethingNew", "new failure"), kind: "terminal", code: "SomethingNew" },
  { label: "EC2 unknown 5xx code", make: () => ec2("SomethingBroke", "oops", 503), kind: "retryable", code: "SomethingBroke" },
  // S3 (REST-XML: modeled exceptions where the model has them, else S3ServiceException)
  { label: "S3 NoSuchBucket", make: () => Object.assign( new NoSuchBucket({ $metadata: meta(404), message: "The specified bucket does not exist" }), s3Extras("NoSuchBucket"), { BucketName: "b" }, ), kind: "not-found", code: "NoSuchBucket", status: 404 },
  { label: "S3 HeadBucket 404", make: () => new NotFound({ $metadata: meta(404), message: "UnknownError" }), kind: "not-found", code: "NotFound", status: 404 },
  { label: "S3 BucketAlreadyExists", make: () => Object.assign( new BucketAlreadyExists({ $metadata: meta(409), message: "The requested bucket name is not available.", }), s3Extras("BucketAlreadyExists"), ), kind: "terminal", code: "BucketAlreadyExists", status: 409 },
  { label: "S3 BucketAlreadyOwnedByYou", make: () => Object.assign( new BucketAlreadyOwnedByYou({ $metadata: meta(409), message: "Your previous request to create the named bucket succeeded and you already own it.", }), s3Extras("BucketAlreadyOwnedByYou"), ), kind: "conflict", code: "BucketAlreadyOwnedByYou" },
  { label: "S3 BucketNotEmpty", make: () => s3Generic("BucketNotEmpty", 409, "The bucket you tried to delete is not empty"), kind: "conflict", code: "BucketNotEmpty", status: 409 },
  { label: "S3 AccessDenied (modeled)", make: () => new AccessDenied({ $metadata: meta(403), message: "Access Denied" }), kind: "terminal", code: "AccessDenied", status: 403 },
  { label: "S3 AccessDenied (generic)", make: () => s3Generic("AccessDenied", 403, "Access Denied"), kind: "terminal", code: "AccessDenied" },
  { label: "S3 SlowDown", make: () => s3Generic("SlowDown", 503, "Please reduce your request rate."), kind: "throttled", code: "SlowDown", status: 503 },
  { label: "S3 InvalidBucketName", make: () => s3Generic("InvalidBucketName", 400, "The specified bucket is not valid."), kind: "terminal", code: "InvalidBucketName" },
  { label: "S3 IllegalLocationConstraint", make: () => s3Generic( "IllegalLocationConstraintException", 400, "The eu-west-1 location constraint is incompatible for the region specific endpoint this request was sent to.", ), kind: "terminal", code: "IllegalLocationConstraintException" },
  { label: "S3 NoSuchTagSet", make: () => s3Generic("NoSuchTagSet", 404, "The TagSet does not exist"), kind: "not-found", code: "NoSuchTagSet" },
  { label: "S3 InternalError", make: () => s3Generic("InternalError", 500, "We encountered an internal error. Please try again."), kind: "retryable", code: "InternalError" },
  { label: "S3 OperationAborted", make: () => s3Generic( "OperationAborted", 409, "A conflicting conditional operation is currently in progress against this resource.", ), kind: "retryable", code: "OperationAborted" },
  { label: "S3 body-less 403 with generic name", make: () => new S3ServiceException({ name: "Unknown", $fault: "client", $metadata: meta(403), message: "UnknownError", }), kind: "terminal", code: "HTTP403", status: 403 },
  // SQS (JSON protocol, query-compatible: modeled name plus legacy Code)
  { label: "SQS QueueDoesNotExist", make: () => sqsCompat( new QueueDoesNotExist({ $metadata: meta(400), message: "The specified queue does not exist." }), "AWS.SimpleQueueService.NonExistentQueue", ), kind: "not-found", code: "QueueDoesNotExist", status: 400 },
  { label: "SQS legacy NonExistentQueue only", make: () => sqsGeneric( "AWS.SimpleQueueService.NonExistentQueue", 400, "The specified queue does not exist for this wsdl version.", ), kind: "not-found", code: "AWS.SimpleQueueService.NonExistentQueue" },
  { label: "SQS QueueNameExists", make: () => sqsCompat( new QueueNameExists({ $metadata: meta(400), message: "The specified queue already exists." }), "QueueAlreadyExists", ), kind: "conflict", code: "QueueNameExists" },
  { label: "SQS legacy QueueAlreadyExists", make: () => sqsGeneric( "QueueAlreadyExists", 400, "A queue already exists with the same name and a different value for attribute VisibilityTimeout", ), kind: "conflict", code: "QueueAlreadyExists" },
  { label: "SQS QueueDeletedRecently", make: () => sqsCompat( new QueueDeletedRecently({ $metadata: meta(400), message: "You must wait 60 seconds after deleting a queue before you can create another with the same name.", }), "AWS.SimpleQueueService.QueueDeletedRecently", ), kind: "retryable", code: "QueueDeletedRecently" },
  { label: "SQS InvalidAttributeValue", make: () => sqsCompat( new InvalidAttributeValue({ $metadata: meta(400), message: "Invalid value for the parameter VisibilityTimeout.", }), "InvalidAttributeValue", ), kind: "terminal", code: "InvalidAttributeValue" },
  { label: "SQS RequestThrottled", make: () => sqsCompat(new RequestThrottled({ $metadata: meta(400), message: "Rate exceeded" }), "RequestThrottled"), kind: "throttled", code: "RequestThrottled" },
  { label: "SQS ThrottlingException", make: () => sqsGeneric("ThrottlingException", 400, "Rate exceeded"), kind: "throttled", code: "ThrottlingException" },
  { label: "SQS HTTP 429 unknown code", make: () => sqsGeneric("Whatever", 429, "slow down"), kind: "throttled", code: "Whatever", status: 429 },
  // Transport, timeouts, credentials (shapes as Node and the SDK's HTTP handler produce them)
  { label: "connection refused", make: () => nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), kind: "retryable", code: "ECONNREFUSED" },
  { label: "connection reset (SDK renames to TimeoutError)", make: () => Object.assign(nodeError("ECONNRESET", "socket hang up"), { name: "TimeoutError" }), kind: "retryable", code: "TimeoutError" },
  { label: "refused after the SDK's retries (carries $metadata)", make: () => Object.assign(nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:40121"), { $metadata: { attempts: 3, totalRetryDelay: 150 } }), kind: "retryable", code: "ECONNREFUSED" },
  { label: "DNS failure", make: () => nodeError("ENOTFOUND", "getaddrinfo ENOTFOUND ec2.nowhere.example"), kind: "retryable", code: "ENOTFOUND" },
  { label: "refused on every address", make: () => new AggregateError( [ nodeError("ECONNREFUSED", "connect ECONNREFUSED ::1:1"), nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), ], "", ), kind: "retryable", code: "ECONNREFUSED" },
  { label: "request timeout", make: () => Object.assign( new Error( "@smithy/node-http-handler - [ERROR] a request has exceeded the configured 500 ms requestTimeout.", ), { name: "TimeoutError", code: "ETIMEDOUT", $metadata: { attempts: 3, totalRetryDelay: 120 } }, ), kind: "retryable", code: "TimeoutError" },
  { label: "connect timeout", make: () => Object.assign( new Error( "@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 300 ms.", ), { name: "TimeoutError" }, ), kind: "retryable", code: "TimeoutError" },
  { label: "credentials missing", make: () => Object.assign(new Error("Could not load credentials from any providers"), { name: "CredentialsProviderError", tryNextLink: false, }), kind: "terminal", code: "CredentialsProviderError" },
  { label: "a bug in our code", make: () => new TypeError("Cannot read properties of undefined (reading 'x')"), kind: "retryable", code: "TypeError" },
  { label: "a thrown string", make: () => "boom", kind: "retryable", code: "UnknownError" },
];

describe("classifyAwsError", () => {
  for (const row of rows) {
    it(`${row.label} -> ${row.kind} ${row.code}`, () => {
      const info = classifyAwsError(row.make(), { service: "ec2", operation: "Op" });
      assert.equal(info.kind, row.kind);
      assert.equal(info.code, row.code);
      if (row.status !== undefined) assert.equal(info.httpStatus, row.status);
      assert.ok(info.message.startsWith(`EC2 Op failed with ${row.code}: `), info.message);
      assert.ok(info.message.length <= MAX_MESSAGE_LENGTH);
    });
  }

  it("gives the same message for repeats of one failure that differ in request IDs and host IDs", () => {
    for (const row of rows) {
      const a = classifyAwsError(row.make(), { service: "s3", operation: "X" });
      const b = classifyAwsError(row.make(), { service: "s3", operation: "X" });
      assert.equal(a.message, b.message, row.label);
      assert.ok(!/REQ\d|R\d+QYZAB|9Gjjt1m/.test(a.message), `${row.label}: ${a.message}`);
    }
  });

  it("drops IAM's encoded authorization failure message, which differs on every call", () => {
    const info = classifyAwsError(
      ec2(
        "UnauthorizedOperation",
        "You are not authorized to perform this operation. Encoded authorization failure message: AbCdEf0123",
      ),
    );
    assert.equal(
      info.message,
      "AWS call failed with UnauthorizedOperation: You are not authorized to perform this operation; the IAM identity lacks a permission for this call",
    );
  });

  it("hides assumed-role session names, which change whenever credentials are refreshed", () => {
    const text = (session: string) =>
      `User: arn:aws:sts::123456789012:assumed-role/operator/${session} is not authorized to perform: ec2:RunInstances`;
    const a = classifyAwsError(ec2("UnauthorizedOperation", text("aws-sdk-js-session-1700000000000")));
    const b = classifyAwsError(ec2("UnauthorizedOperation", text("aws-sdk-js-session-1700000360000")));
    assert.equal(a.message, b.message);
    assert.match(a.message, /assumed-role\/operator\/<session> is not authorized/);
  });

  it("removes timestamps, UUIDs and access key IDs from messages", () => {
    const err = s3Generic(
      "RequestTimeTooSkewed",
      403,
      "The difference between 2024-05-01T10:00:00Z and 20240501T100512Z is too large for AKIAIOSFODNN7EXAMPLE, request 6f1c2e7a-1b2c-4d3e-8f90-123456789abc",
    );
    const info = classifyAwsError(err, { service: "s3", operation: "HeadBucket" });
    assert.equal(info.kind, "retryable");
    assert.ok(!info.message.includes("2024"), info.message);
    assert.ok(!info.message.includes("AKIA"), info.message);
    assert.ok(!info.message.includes("6f1c2e7a"), info.message);
    assert.match(info.message, /<time> and <time>/);
  });

  it("keeps resource IDs and lower-case bucket names, which are stable and useful", () => {
    const long = "a".repeat(45);
    const info = classifyAwsError(s3Generic("BucketAlreadyExists", 409, `The bucket ${long} exists`));
    assert.ok(info.message.includes(long));
    const ami = classifyAwsError(
      ec2("InvalidAMIID.NotFound", "The image id '[ami-0abcdef1234567890]' does not exist"),
    );
    assert.ok(ami.message.includes("ami-0abcdef1234567890"));
  });

  it("replaces the SDK's timeout text, which names the configured milliseconds", () => {
    const info = classifyAwsError(
      Object.assign(
        new Error(
          "@smithy/node-http-handler - [ERROR] a request has exceeded the configured 500 ms requestTimeout.",
        ),
        { name: "TimeoutError" },
      ),
      { service: "sqs", operation: "ListQueues" },
    );
    assert.equal(
      info.message,
      "SQS ListQueues failed with TimeoutError: no response within the request timeout",
    );
  });

  it("says clearly that credentials are missing and where they were looked for", () => {
    const info = classifyAwsError(
      Object.assign(new Error("Could not load credentials from any providers"), {
        name: "CredentialsProviderError",
      }),
    );
    assert.equal(info.kind, "terminal");
    assert.match(info.message, /no AWS credentials found/);
    assert.match(info.message, /web identity token \(IRSA\)/);
  });

  it("marks the failures of the caller's access, which heal once IAM or the credentials are fixed", () => {
    const access = (err: unknown) =>
      classifyAwsError(err, { service: "ec2", operation: "RunInstances" }).access;
    assert.equal(access(ec2("UnauthorizedOperation", "no")), "denied");
    assert.equal(access(new AccessDenied({ $metadata: meta(403), message: "Access Denied" })), "denied");
    assert.equal(access(s3Generic("AccessDenied", 403, "Access Denied")), "denied");
    assert.equal(
      access(ec2("AuthFailure.ServiceLinkedRoleCreationNotPermitted", "no role", 403)),
      "prerequisite",
    );
    assert.equal(access(ec2("AuthFailure", "not validated", 401)), "credentials");
    assert.equal(
      access(Object.assign(new Error("Could not load credentials"), { name: "CredentialsProviderError" })),
      "credentials",
    );
    // SQS in query-compatible JSON: the legacy code in the header counts too.
    const kms = sqsCompat(
      new SQSServiceException({
        name: "KmsAccessDeniedNew",
        $fault: "client",
        $metadata: meta(400),
        message: "not authorized to use the key",
      }),
      "KMS.AccessDeniedException",
    );
    assert.equal(access(kms), "prerequisite");
    for (const other of [
      ec2("InvalidParameterValue", "bad"),
      ec2("RequestLimitExceeded", "slow down", 503),
      s3Generic("BucketAlreadyExists", 409, "taken"),
    ])
      assert.equal(access(other), undefined);
    const slr = classifyAwsError(
      ec2(
        "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
        "The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.",
        403,
      ),
    );
    assert.equal(slr.kind, "terminal");
    assert.match(slr.message, /aws iam create-service-linked-role --aws-service-name spot\.amazonaws\.com/);
  });

  it("caps very long messages", () => {
    const info = classifyAwsError(ec2("InvalidParameterValue", "word ".repeat(500)));
    assert.equal(info.message.length, MAX_MESSAGE_LENGTH);
    assert.ok(info.message.endsWith("..."));
  });

  it("gives a message for errors whose body was empty", () => {
    const info = classifyAwsError(new NotFound({ $metadata: meta(404), message: "UnknownError" }), {
      service: "s3",
      operation: "HeadBucket",
    });
    assert.equal(info.message, "S3 HeadBucket failed with NotFound: not found");
  });
});

describe("AwsError", () => {
  it("carries the info and the original error as cause", () => {
    const original = ec2("RequestLimitExceeded", "Request limit exceeded.");
    const err = AwsError.from(original, { service: "ec2", operation: "DescribeInstances" });
    assert.ok(err instanceof Error);
    assert.equal(err.name, "AwsError");
    assert.equal(err.cause, original);
    assert.equal(err.kind, "throttled");
    assert.equal(err.code, "RequestLimitExceeded");
    assert.equal(err.info.service, "ec2");
    assert.equal(err.info.operation, "DescribeInstances");
    assert.equal(err.message, err.info.message);
  });

  it("is returned unchanged by from() and classified by its own info", () => {
    const err = AwsError.from(nodeError("ECONNRESET", "read ECONNRESET"), {
      service: "sqs",
      operation: "GetQueueUrl",
    });
    assert.equal(AwsError.from(err), err);
    assert.deepEqual(classifyAwsError(err), err.info);
    assert.ok(isAwsErrorKind(err, "retryable", "throttled"));
    assert.ok(!isAwsErrorKind(err, "terminal"));
  });

  it("takes service and operation from a later context when it was built without them", () => {
    const err = AwsError.from(ec2("InvalidInstanceID.NotFound", "The instance ID 'i-1' does not exist"));
    const info = classifyAwsError(err, { service: "ec2", operation: "TerminateInstances" });
    assert.equal(info.service, "ec2");
    assert.equal(info.operation, "TerminateInstances");
    assert.equal(info.kind, "not-found");
  });
});
