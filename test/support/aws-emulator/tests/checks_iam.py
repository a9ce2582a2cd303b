"""IAM enforcement as AWS evaluates it (wraps/iam.py), one check per difference.

Each check makes an IAM user whose only policy it chooses, switches moto's enforcement on
(``POST /moto-api/reset-auth`` with body ``0``), calls as that user, and switches enforcement
off again. What it asserts is what the AWS references document: which action authorizes a call,
how a denial reads, which conditions a request meets. test_wraps.py runs them with the checks of
checks.py, against the emulator (they pass) and plain moto (they fail).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError

ACCOUNT = "123456789012"
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
USER = "kubeprovisioner"


def allow(*actions: str, resource: str | list[str] = "*", condition: dict[str, Any] | None = None) -> dict[str, Any]:
    """One Allow statement."""
    statement: dict[str, Any] = {"Effect": "Allow", "Action": sorted(actions), "Resource": resource}
    if condition is not None:
        statement["Condition"] = condition
    return statement


def policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def user_arn(name: str = USER) -> str:
    return f"arn:aws:iam::{ACCOUNT}:user/{name}"


def _user(aws: Any, name: str, document: dict[str, Any]) -> tuple[str, str]:
    """An IAM user whose only policy is ``document``: its access key."""
    aws.iam.create_user(UserName=name)
    aws.iam.put_user_policy(UserName=name, PolicyName="policy", PolicyDocument=json.dumps(document))
    key = aws.iam.create_access_key(UserName=name)["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


class Enforced:
    """The clients of an IAM user (``user``) and of an administrator (``admin``) while moto
    enforces IAM; :meth:`grant` replaces the user's policy."""

    def __init__(self, aws: Any, user: tuple[str, str], admin: tuple[str, str]) -> None:
        self.user = aws.as_identity(user)
        self.admin = aws.as_identity(admin)

    def grant(self, document: dict[str, Any]) -> None:
        self.admin.iam.put_user_policy(UserName=USER, PolicyName="policy", PolicyDocument=json.dumps(document))


@contextmanager
def enforced(aws: Any, document: dict[str, Any]) -> Iterator[Enforced]:
    """IAM enforced, with user ``kubeprovisioner`` limited to ``document``."""
    admin = _user(aws, "harness", ALLOW_ALL)
    user = _user(aws, USER, document)
    aws.enforce_iam(True)
    try:
        yield Enforced(aws, user, admin)
    finally:
        aws.enforce_iam(False)


def denial(call: Callable[..., Any], **kwargs: Any) -> ClientError | None:
    """The error of a call that IAM denied, or None when IAM let it through (whatever it answered
    then). A DeleteObjects whose every key AWS refused with AccessDenied counts as denied."""
    try:
        out = call(**kwargs)
    except ClientError as err:
        code = err.response["Error"].get("Code")
        status = err.response["ResponseMetadata"].get("HTTPStatusCode")
        # A HEAD has no body: S3 answers a denial with status 403 alone.
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation") or (
            status == 403 and code in ("403", "Forbidden")
        ):
            return err
        return None
    errors = out.get("Errors") if isinstance(out, dict) else None
    if errors and all(e.get("Code") == "AccessDenied" for e in errors):
        return ClientError({"Error": errors[0]}, "DeleteObjects")
    return None


# --- S3 -------------------------------------------------------------------------------------

BUCKET = "iam-bucket"
VERSIONED = "iam-versioned"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/replication"


def _s3_rows() -> list[tuple[str, Callable[[Any, int], Any], list[str]]]:
    """The bucket calls the operator makes: (name, call(s3, n), the actions AWS authorizes it by)."""
    rule = {"ID": "r", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1}}
    cors = {"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]}
    replication = {
        "Role": ROLE,
        "Rules": [{"Status": "Enabled", "Priority": 1, "Filter": {}, "DeleteMarkerReplication": {"Status": "Disabled"},
                   "Destination": {"Bucket": "arn:aws:s3:::elsewhere"}}],
    }
    encryption = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}
    block = {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True}
    ownership = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    bucket_policy = json.dumps(policy({"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
                                       "Resource": f"arn:aws:s3:::{BUCKET}/*"}))
    b = {"Bucket": BUCKET}
    return [
        ("HeadBucket", lambda s3, n: s3.head_bucket(**b), ["s3:ListBucket"]),
        ("ListBuckets", lambda s3, n: s3.list_buckets(), ["s3:ListAllMyBuckets"]),
        ("ListObjectVersions", lambda s3, n: s3.list_object_versions(**b), ["s3:ListBucketVersions"]),
        ("GetBucketTagging", lambda s3, n: s3.get_bucket_tagging(**b), ["s3:GetBucketTagging"]),
        ("PutBucketTagging", lambda s3, n: s3.put_bucket_tagging(**b, Tagging={"TagSet": [{"Key": "k", "Value": "v"}]}),
         ["s3:PutBucketTagging"]),
        ("GetBucketVersioning", lambda s3, n: s3.get_bucket_versioning(**b), ["s3:GetBucketVersioning"]),
        ("PutBucketVersioning", lambda s3, n: s3.put_bucket_versioning(**b, VersioningConfiguration={"Status": "Enabled"}),
         ["s3:PutBucketVersioning"]),
        ("GetBucketEncryption", lambda s3, n: s3.get_bucket_encryption(**b), ["s3:GetEncryptionConfiguration"]),
        ("PutBucketEncryption", lambda s3, n: s3.put_bucket_encryption(**b, ServerSideEncryptionConfiguration=encryption),
         ["s3:PutEncryptionConfiguration"]),
        ("GetPublicAccessBlock", lambda s3, n: s3.get_public_access_block(**b), ["s3:GetBucketPublicAccessBlock"]),
        ("PutPublicAccessBlock", lambda s3, n: s3.put_public_access_block(**b, PublicAccessBlockConfiguration=block),
         ["s3:PutBucketPublicAccessBlock"]),
        ("GetBucketPolicy", lambda s3, n: s3.get_bucket_policy(**b), ["s3:GetBucketPolicy"]),
        ("PutBucketPolicy", lambda s3, n: s3.put_bucket_policy(**b, Policy=bucket_policy), ["s3:PutBucketPolicy"]),
        ("GetBucketLifecycleConfiguration", lambda s3, n: s3.get_bucket_lifecycle_configuration(**b),
         ["s3:GetLifecycleConfiguration"]),
        ("PutBucketLifecycleConfiguration",
         lambda s3, n: s3.put_bucket_lifecycle_configuration(**b, LifecycleConfiguration={"Rules": [rule]}),
         ["s3:PutLifecycleConfiguration"]),
        ("DeleteBucketLifecycle", lambda s3, n: s3.delete_bucket_lifecycle(**b), ["s3:PutLifecycleConfiguration"]),
        ("GetBucketOwnershipControls", lambda s3, n: s3.get_bucket_ownership_controls(**b),
         ["s3:GetBucketOwnershipControls"]),
        ("PutBucketOwnershipControls", lambda s3, n: s3.put_bucket_ownership_controls(**b, OwnershipControls=ownership),
         ["s3:PutBucketOwnershipControls"]),
        ("GetBucketNotificationConfiguration", lambda s3, n: s3.get_bucket_notification_configuration(**b),
         ["s3:GetBucketNotification"]),
        ("PutBucketNotificationConfiguration",
         lambda s3, n: s3.put_bucket_notification_configuration(**b, NotificationConfiguration={}),
         ["s3:PutBucketNotification"]),
        ("GetBucketLogging", lambda s3, n: s3.get_bucket_logging(**b), ["s3:GetBucketLogging"]),
        ("PutBucketLogging", lambda s3, n: s3.put_bucket_logging(**b, BucketLoggingStatus={}), ["s3:PutBucketLogging"]),
        ("GetBucketReplication", lambda s3, n: s3.get_bucket_replication(**b), ["s3:GetReplicationConfiguration"]),
        ("PutBucketReplication",
         lambda s3, n: s3.put_bucket_replication(**b, ReplicationConfiguration=replication),
         ["s3:PutReplicationConfiguration"]),
        ("GetObjectLockConfiguration", lambda s3, n: s3.get_object_lock_configuration(**b),
         ["s3:GetBucketObjectLockConfiguration"]),
        ("PutObjectLockConfiguration",
         lambda s3, n: s3.put_object_lock_configuration(**b, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"}),
         ["s3:PutBucketObjectLockConfiguration"]),
        ("GetBucketCors", lambda s3, n: s3.get_bucket_cors(**b), ["s3:GetBucketCORS"]),
        ("PutBucketCors", lambda s3, n: s3.put_bucket_cors(**b, CORSConfiguration=cors), ["s3:PutBucketCORS"]),
        ("DeleteBucketCors", lambda s3, n: s3.delete_bucket_cors(**b), ["s3:PutBucketCORS"]),
        ("GetBucketWebsite", lambda s3, n: s3.get_bucket_website(**b), ["s3:GetBucketWebsite"]),
        ("PutBucketWebsite",
         lambda s3, n: s3.put_bucket_website(**b, WebsiteConfiguration={"IndexDocument": {"Suffix": "index.html"}}),
         ["s3:PutBucketWebsite"]),
        ("DeleteObjects by version",
         lambda s3, n: s3.delete_objects(Bucket=VERSIONED,
                                         Delete={"Objects": [{"Key": "k", "VersionId": "null"}], "Quiet": True}),
         ["s3:DeleteObjectVersion"]),
        ("CreateBucket", lambda s3, n: s3.create_bucket(Bucket=f"iam-created-{n}"), ["s3:CreateBucket"]),
        ("CreateBucket with ObjectOwnership",
         lambda s3, n: s3.create_bucket(Bucket=f"iam-owned-{n}", ObjectOwnership="BucketOwnerEnforced"),
         ["s3:CreateBucket", "s3:PutBucketOwnershipControls"]),
        ("CreateBucket with Object Lock",
         lambda s3, n: s3.create_bucket(Bucket=f"iam-locked-{n}", ObjectLockEnabledForBucket=True),
         ["s3:CreateBucket", "s3:PutBucketObjectLockConfiguration", "s3:PutBucketVersioning"]),
        ("DeleteBucket", lambda s3, n: s3.delete_bucket(Bucket=f"iam-doomed-{n}"), ["s3:DeleteBucket"]),
    ]


def s3_bucket_calls_are_authorized_by_aws_action_names(aws: Any) -> None:
    """Every bucket call the operator makes is allowed by the actions AWS's Service Authorization
    Reference names for it, and denied without any one of them (HeadBucket by s3:ListBucket,
    PutBucketEncryption by s3:PutEncryptionConfiguration, CreateBucket with Object Lock by three)."""
    rows = _s3_rows()
    every = sorted({a for _, _, actions in rows for a in actions})
    aws.s3.create_bucket(Bucket=BUCKET)
    aws.s3.create_bucket(Bucket=VERSIONED)
    aws.s3.put_bucket_versioning(Bucket=VERSIONED, VersioningConfiguration={"Status": "Enabled"})
    aws.s3.put_object(Bucket=VERSIONED, Key="k", Body=b"x")
    for n in range(len(every) + 2):
        aws.s3.create_bucket(Bucket=f"iam-doomed-{n}")
    with enforced(aws, policy(allow(*every))) as iam:
        n = 0
        for name, call, _ in rows:
            n += 1
            denied = denial(call, s3=iam.user.s3, n=n)
            assert denied is None, f"{name} was denied with {every} allowed: {denied}"
        for name, call, actions in rows:
            for action in actions:
                iam.grant(policy(allow(*(a for a in every if a != action))))
                n += 1
                assert denial(call, s3=iam.user.s3, n=n) is not None, f"{name} was allowed without {action}"


# --- EC2 ------------------------------------------------------------------------------------


def ec2_denial_is_unauthorized_operation(aws: Any) -> None:
    """EC2 answers a denied call UnauthorizedOperation (HTTP 403) naming the action; a call that
    acts on resources carries an encoded authorization failure message."""
    with enforced(aws, policy(allow("ec2:DescribeInstances"))) as iam:
        assert denial(iam.user.ec2.describe_instances) is None
        denied = denial(iam.user.ec2.run_instances, ImageId="ami-12345678", MinCount=1, MaxCount=1)
        assert denied is not None, "RunInstances was allowed without ec2:RunInstances"
        error = denied.response["Error"]
        assert error.get("Code") == "UnauthorizedOperation", error
        assert denied.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        message = error.get("Message", "")
        assert message.startswith("You are not authorized to perform this operation."), message
        assert f"User: {user_arn()} is not authorized to perform: ec2:RunInstances" in message, message
        assert "Encoded authorization failure message: " in message, message
        denied = denial(iam.user.ec2.describe_images)
        assert denied is not None and denied.response["Error"].get("Code") == "UnauthorizedOperation", denied
        assert "ec2:DescribeImages" in denied.response["Error"].get("Message", "")


def ec2_tagging_at_launch_needs_create_tags(aws: Any) -> None:
    """RunInstances with TagSpecifications also needs ec2:CreateTags."""
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "team", "Value": "a"}]}]
    launch = {"ImageId": "ami-12345678", "MinCount": 1, "MaxCount": 1}
    with enforced(aws, policy(allow("ec2:RunInstances"))) as iam:
        assert denial(iam.user.ec2.run_instances, **launch) is None
        denied = denial(iam.user.ec2.run_instances, **launch, TagSpecifications=tags)
        assert denied is not None, "RunInstances with tags was allowed without ec2:CreateTags"
        assert "ec2:CreateTags" in denied.response["Error"].get("Message", ""), denied.response["Error"]
        iam.grant(policy(allow("ec2:RunInstances", "ec2:CreateTags")))
        assert denial(iam.user.ec2.run_instances, **launch, TagSpecifications=tags) is None


# --- SQS and the JSON protocol --------------------------------------------------------------


def sqs_denial_reads_as_access_denied(aws: Any) -> None:
    """SQS answers a denied JSON-protocol call as JSON: AccessDenied in x-amzn-query-error, the
    action (in SQS's lower case) in the message."""
    url = aws.sqs.create_queue(QueueName="iam-denied")["QueueUrl"]
    with enforced(aws, policy(allow("sqs:GetQueueUrl"))) as iam:
        assert denial(iam.user.sqs.get_queue_url, QueueName="iam-denied") is None
        denied = denial(iam.user.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["All"])
        assert denied is not None, "GetQueueAttributes was allowed without sqs:GetQueueAttributes"
        error = denied.response["Error"]
        assert error.get("Code") == "AccessDenied", f"the SDK read the denial as {error}"
        headers = denied.response["ResponseMetadata"].get("HTTPHeaders", {})
        assert headers.get("x-amzn-query-error") == "AccessDenied;Sender", headers
        assert headers.get("content-type", "").startswith("application/x-amz-json-1.0"), headers
        assert denied.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert "is not authorized to perform: sqs:getqueueattributes" in error.get("Message", ""), error


def sqs_calls_are_authorized_by_aws_action_names(aws: Any) -> None:
    """DeleteMessageBatch is authorized by sqs:DeleteMessage; CreateQueue with tags also needs
    sqs:TagQueue."""
    url = aws.sqs.create_queue(QueueName="iam-batch")["QueueUrl"]
    aws.sqs.send_message(QueueUrl=url, MessageBody="m")
    with enforced(aws, policy(allow("sqs:CreateQueue", "sqs:ReceiveMessage", "sqs:DeleteMessage"))) as iam:
        [message] = iam.user.sqs.receive_message(QueueUrl=url)["Messages"]
        entries = [{"Id": "1", "ReceiptHandle": message["ReceiptHandle"]}]
        denied = denial(iam.user.sqs.delete_message_batch, QueueUrl=url, Entries=entries)
        assert denied is None, f"DeleteMessageBatch was denied with sqs:DeleteMessage allowed: {denied}"
        assert denial(iam.user.sqs.create_queue, QueueName="iam-plain") is None
        denied = denial(iam.user.sqs.create_queue, QueueName="iam-tagged", tags={"team": "a"})
        assert denied is not None, "CreateQueue with tags was allowed without sqs:TagQueue"
        iam.grant(policy(allow("sqs:CreateQueue", "sqs:TagQueue")))
        assert denial(iam.user.sqs.create_queue, QueueName="iam-tagged", tags={"team": "a"}) is None


def sqs_conditions_see_request_and_resource_tags(aws: Any) -> None:
    """A queue-scoped statement matches the queue's ARN, a queue not created yet included, and its
    aws:RequestTag and aws:ResourceTag conditions see the call's tags and the queue's."""
    foreign = aws.sqs.create_queue(QueueName="iam-foreign")["QueueUrl"]
    owned_only = {"StringEquals": {"aws:ResourceTag/owner": "me"}}
    document = policy(
        allow("sqs:CreateQueue", "sqs:TagQueue", resource="arn:aws:sqs:*:*:*",
              condition={"StringEquals": {"aws:RequestTag/owner": "me"}}),
        allow("sqs:SetQueueAttributes", "sqs:TagQueue", resource="arn:aws:sqs:*:*:*", condition=owned_only),
    )
    with enforced(aws, document) as iam:
        denied = denial(iam.user.sqs.create_queue, QueueName="iam-mine", tags={"owner": "me"})
        assert denied is None, f"CreateQueue with the tag the policy requires was denied: {denied}"
        mine = iam.admin.sqs.get_queue_url(QueueName="iam-mine")["QueueUrl"]
        assert denial(iam.user.sqs.create_queue, QueueName="iam-theirs", tags={"owner": "you"}) is not None
        assert denial(iam.user.sqs.create_queue, QueueName="iam-untagged") is not None
        timeout = {"VisibilityTimeout": "40"}
        assert denial(iam.user.sqs.set_queue_attributes, QueueUrl=mine, Attributes=timeout) is None
        assert denial(iam.user.sqs.set_queue_attributes, QueueUrl=foreign, Attributes=timeout) is not None
        # TagQueue of another tag on an owned queue: the create statement does not apply (no
        # aws:RequestTag/owner), the owned one does.
        assert denial(iam.user.sqs.tag_queue, QueueUrl=mine, Tags={"team": "a"}) is None


def tag_get_resources_is_authorized_as_tag(aws: Any) -> None:
    """The Resource Groups Tagging API is authorized by tag:GetResources (its signing name is
    tagging) and answers a denial as JSON AccessDeniedException."""
    with enforced(aws, policy(allow("tag:GetResources"))) as iam:
        denied = denial(iam.user.tagging.get_resources)
        assert denied is None, f"GetResources was denied with tag:GetResources allowed: {denied}"
        iam.grant(policy(allow("tag:GetTagKeys")))
        denied = denial(iam.user.tagging.get_resources)
        assert denied is not None, "GetResources was allowed without tag:GetResources"
        assert denied.response["Error"].get("Code") == "AccessDeniedException", denied.response["Error"]
        assert "tag:GetResources" in denied.response["Error"].get("Message", "")


# --- STS and conditions ---------------------------------------------------------------------

TENANT_ROLE = f"arn:aws:iam::{ACCOUNT}:role/kubeprovisioner-tenant"


def _tenant_role(aws: Any, *conditions: dict[str, Any]) -> None:
    """Role kubeprovisioner-tenant, which the user may assume under any one of ``conditions``."""
    statements = [
        {"Effect": "Allow", "Principal": {"AWS": user_arn()}, "Action": "sts:AssumeRole", "Condition": c}
        for c in conditions
    ]
    aws.iam.create_role(RoleName="kubeprovisioner-tenant", AssumeRolePolicyDocument=json.dumps(policy(*statements)))


def _assume(iam: Enforced, external_id: str | None) -> ClientError | None:
    extra = {"ExternalId": external_id} if external_id is not None else {}
    return denial(iam.user.sts.assume_role, RoleArn=TENANT_ROLE, RoleSessionName="check", **extra)


def sts_assume_role_needs_the_external_id(aws: Any) -> None:
    """A trust policy's sts:ExternalId condition is not met by a call that sends no external ID."""
    _tenant_role(aws, {"StringEquals": {"sts:ExternalId": "team-a"}})
    with enforced(aws, policy(allow("sts:AssumeRole", resource="arn:aws:iam::*:role/kubeprovisioner-*"))) as iam:
        assert _assume(iam, "team-a") is None, "AssumeRole with the right external ID was denied"
        assert _assume(iam, "team-b") is not None, "AssumeRole with another external ID was allowed"
        assert _assume(iam, None) is not None, "AssumeRole without an external ID was allowed"


def unmet_condition_of_an_allow_does_not_deny(aws: Any) -> None:
    """An Allow statement whose condition is not met does not apply: another statement still allows."""
    _tenant_role(aws, {"StringEquals": {"sts:ExternalId": "team-a"}}, {"StringEquals": {"sts:ExternalId": "team-b"}})
    with enforced(aws, policy(allow("sts:AssumeRole", resource=TENANT_ROLE))) as iam:
        assert _assume(iam, "team-b") is None, "the statement for team-b did not allow it"


def condition_moto_cannot_evaluate_does_not_grant(aws: Any) -> None:
    """A condition on an operator moto does not evaluate (StringLike) does not grant a call that
    does not meet it."""
    _tenant_role(aws, {"StringLike": {"sts:ExternalId": "team-*"}})
    with enforced(aws, policy(allow("sts:AssumeRole", resource=TENANT_ROLE))) as iam:
        assert _assume(iam, "other") is not None, "AssumeRole with an external ID outside team-* was allowed"


#: Every IAM check, in the order test/README.md lists them.
IAM_CHECKS: list[Callable[[Any], None]] = [
    s3_bucket_calls_are_authorized_by_aws_action_names,
    sqs_calls_are_authorized_by_aws_action_names,
    ec2_tagging_at_launch_needs_create_tags,
    tag_get_resources_is_authorized_as_tag,
    sqs_conditions_see_request_and_resource_tags,
    sts_assume_role_needs_the_external_id,
    unmet_condition_of_an_allow_does_not_deny,
    condition_moto_cannot_evaluate_does_not_grant,
    ec2_denial_is_unauthorized_operation,
    sqs_denial_reads_as_access_denied,
]
