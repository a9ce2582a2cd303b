"""IAM enforcement as AWS evaluates it, for the calls the operator makes.

moto evaluates identity policies once its enforcement is on (``POST /moto-api/reset-auth`` with
body ``0``): it checks each request's SigV4 signature and then the caller's policies for one
action, named ``<signing name>:<operation>``. For the calls the operator makes, moto 5.2.5 differs
from AWS in the action it checks, the resource, the conditions and the shape of the denial:

- **Action names.** AWS authorizes an S3 bucket request by the action of its subresource
  (Service Authorization Reference, "Actions, resources, and condition keys for Amazon S3"):
  HeadBucket is ``s3:ListBucket``, ``?encryption`` is ``s3:GetEncryptionConfiguration`` or
  ``s3:PutEncryptionConfiguration`` (DELETE included), ``?publicAccessBlock`` is
  ``s3:GetBucketPublicAccessBlock``/``s3:PutBucketPublicAccessBlock``, and so on
  (:data:`S3_BUCKET_ACTIONS`). moto checks HeadBucket as ``s3:HeadBucket``, the GET of
  ``?encryption``, ``?publicAccessBlock``, ``?ownershipControls``, ``?object-lock``,
  ``?replication``, ``?intelligent-tiering`` and ``?requestPayment`` as ``s3:ListBucket`` and
  their PUT as ``s3:CreateBucket``. AWS also asks for more than one action of some requests:
  CreateBucket with Object Lock needs ``s3:PutBucketObjectLockConfiguration`` and
  ``s3:PutBucketVersioning``, with ``x-amz-object-ownership`` ``s3:PutBucketOwnershipControls``,
  with an ACL ``s3:PutBucketAcl`` (S3 API reference, CreateBucket, Permissions); DeleteObjects
  needs ``s3:DeleteObjectVersion`` for the objects it names by version; SQS CreateQueue with tags
  needs ``sqs:TagQueue`` (SQS API reference, CreateQueue), and EC2 RunInstances with
  ``TagSpecification`` needs ``ec2:CreateTags`` (EC2 user guide, "Grant permission to tag Amazon
  EC2 resources during creation"). SQS authorizes its batch calls as the single call
  (``sqs:DeleteMessage`` for DeleteMessageBatch), and the Resource Groups Tagging API's actions
  start with ``tag:`` (its signing name is ``tagging``). :func:`aws_actions`
  answers each request's actions as AWS names them; every one must be allowed.
- **The resource of an SQS call.** moto authorizes a call on a queue that does not exist yet
  (CreateQueue, GetQueueUrl) against ``*``; AWS against the queue's ARN.
- **Conditions.** moto gives an identity policy's conditions no request context, treats a
  condition whose key the request lacks as met, evaluates ``StringEquals`` only and treats every
  other operator as met, and answers an Allow statement whose condition is not met as an explicit
  deny. AWS: a key missing from the request context does not match (but for the ``...IfExists``
  operators), and a statement whose condition does not match does not apply (IAM User Guide,
  "Condition element", "Policy evaluation logic"). So moto allows ``sts:AssumeRole`` without the
  ``sts:ExternalId`` a trust policy requires when the caller sends none, and any condition on an
  operator it does not evaluate. The emulator gives the SQS calls the keys AWS gives them
  (``aws:RequestTag/<key>`` of CreateQueue's and TagQueue's tags, ``aws:ResourceTag/<key>`` of the
  queue's tags) and fails closed on the rest: a condition whose key is missing does not match,
  and one on an operator moto cannot evaluate never grants.
- **Denials.** EC2 answers ``UnauthorizedOperation`` (HTTP 403, EC2's ``Response/Errors/Error``
  XML) with "You are not authorized to perform this operation." and, for calls that act on
  resources, an encoded authorization failure message; the JSON-protocol services answer
  ``AccessDeniedException`` as JSON, SQS with its query-era code in ``x-amzn-query-error``
  (``AccessDenied;Sender``, SQS Developer Guide, "Interpreting Amazon SQS JSON API responses").
  moto answers all of them with an ``AccessDenied`` XML document, which an SDK speaking JSON
  cannot parse. Every denial names the action, as AWS's messages do.

The wraps keep no state: the request context of one authorization lives only while moto
evaluates it.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.exceptions import AccessDeniedError
from moto.iam.access_control import IAMPolicy, IAMPolicyStatement, IAMRequestBase, PermissionResult
from moto.moto_api._internal import mock_random as random
from moto.sqs.models import sqs_backends
from moto.sqs.responses import SQSResponse
from moto.utilities.utils import get_partition
from werkzeug.exceptions import HTTPException

#: The S3 bucket subresources and the action AWS authorizes each by, per HTTP method; a request
#: with none of them is the method's own action (``None``).
S3_BUCKET_ACTIONS: dict[str, dict[str | None, str]] = {
    "HEAD": {None: "s3:ListBucket"},
    "GET": {
        "accelerate": "s3:GetAccelerateConfiguration",
        "acl": "s3:GetBucketAcl",
        "analytics": "s3:GetAnalyticsConfiguration",
        "cors": "s3:GetBucketCORS",
        "encryption": "s3:GetEncryptionConfiguration",
        "intelligent-tiering": "s3:GetIntelligentTieringConfiguration",
        "inventory": "s3:GetInventoryConfiguration",
        "lifecycle": "s3:GetLifecycleConfiguration",
        "location": "s3:GetBucketLocation",
        "logging": "s3:GetBucketLogging",
        "metrics": "s3:GetMetricsConfiguration",
        "notification": "s3:GetBucketNotification",
        "object-lock": "s3:GetBucketObjectLockConfiguration",
        "ownershipControls": "s3:GetBucketOwnershipControls",
        "policy": "s3:GetBucketPolicy",
        "policyStatus": "s3:GetBucketPolicyStatus",
        "publicAccessBlock": "s3:GetBucketPublicAccessBlock",
        "replication": "s3:GetReplicationConfiguration",
        "requestPayment": "s3:GetBucketRequestPayment",
        "tagging": "s3:GetBucketTagging",
        "uploads": "s3:ListBucketMultipartUploads",
        "versioning": "s3:GetBucketVersioning",
        "versions": "s3:ListBucketVersions",
        "website": "s3:GetBucketWebsite",
        None: "s3:ListBucket",
    },
    "PUT": {
        "accelerate": "s3:PutAccelerateConfiguration",
        "acl": "s3:PutBucketAcl",
        "analytics": "s3:PutAnalyticsConfiguration",
        "cors": "s3:PutBucketCORS",
        "encryption": "s3:PutEncryptionConfiguration",
        "intelligent-tiering": "s3:PutIntelligentTieringConfiguration",
        "inventory": "s3:PutInventoryConfiguration",
        "lifecycle": "s3:PutLifecycleConfiguration",
        "logging": "s3:PutBucketLogging",
        "metrics": "s3:PutMetricsConfiguration",
        "notification": "s3:PutBucketNotification",
        "object-lock": "s3:PutBucketObjectLockConfiguration",
        "ownershipControls": "s3:PutBucketOwnershipControls",
        "policy": "s3:PutBucketPolicy",
        "publicAccessBlock": "s3:PutBucketPublicAccessBlock",
        "replication": "s3:PutReplicationConfiguration",
        "requestPayment": "s3:PutBucketRequestPayment",
        "tagging": "s3:PutBucketTagging",
        "versioning": "s3:PutBucketVersioning",
        "website": "s3:PutBucketWebsite",
        None: "s3:CreateBucket",
    },
    "DELETE": {
        "analytics": "s3:PutAnalyticsConfiguration",
        "cors": "s3:PutBucketCORS",
        "encryption": "s3:PutEncryptionConfiguration",
        "intelligent-tiering": "s3:PutIntelligentTieringConfiguration",
        "inventory": "s3:PutInventoryConfiguration",
        "lifecycle": "s3:PutLifecycleConfiguration",
        "metrics": "s3:PutMetricsConfiguration",
        "ownershipControls": "s3:PutBucketOwnershipControls",
        "policy": "s3:DeleteBucketPolicy",
        "publicAccessBlock": "s3:PutBucketPublicAccessBlock",
        "replication": "s3:PutReplicationConfiguration",
        "tagging": "s3:PutBucketTagging",
        "website": "s3:DeleteBucketWebsite",
        None: "s3:DeleteBucket",
    },
}

#: The headers of a CreateBucket that each need one more action (S3 API reference, CreateBucket).
S3_CREATE_BUCKET_HEADERS = {
    "x-amz-object-ownership": ["s3:PutBucketOwnershipControls"],
    "x-amz-acl": ["s3:PutBucketAcl"],
    "x-amz-grant-full-control": ["s3:PutBucketAcl"],
    "x-amz-grant-read": ["s3:PutBucketAcl"],
    "x-amz-grant-read-acp": ["s3:PutBucketAcl"],
    "x-amz-grant-write": ["s3:PutBucketAcl"],
    "x-amz-grant-write-acp": ["s3:PutBucketAcl"],
}
S3_OBJECT_LOCK = ["s3:PutBucketObjectLockConfiguration", "s3:PutBucketVersioning"]

#: SQS batch calls, authorized as the single call (Service Authorization Reference for SQS).
SQS_BATCH_ACTIONS = {
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    "sqs:SendMessageBatch": "sqs:SendMessage",
    "sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
}

#: EC2 calls that tag what they create when given TagSpecification, which needs ec2:CreateTags
#: (EC2 user guide, "Grant permission to tag Amazon EC2 resources during creation").
EC2_TAG_ON_CREATE = {"ec2:RunInstances", "ec2:CreateVolume", "ec2:CreateLaunchTemplate"}

#: Services whose IAM prefix is not their signing name.
IAM_PREFIXES = {"tagging": "tag"}

#: The condition operators moto evaluates (moto.iam.policy_conditions).
EVALUATED_OPERATORS = {"StringEquals"}

#: The request context (condition keys and values) of the authorization moto is evaluating; None
#: outside one. moto also evaluates bucket policies with these classes, on every object request
#: whether IAM is enforced or not: the condition wraps leave that evaluation as moto has it.
_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("iam_request_context", default=None)


class IdentityDenied(AccessDeniedError):
    """moto's AccessDenied (HTTP 403, AccessDenied in the query protocol's XML), worded as AWS words
    an implicit deny, and naming what was denied."""

    def __init__(self, principal: str, action: str, resource: str, by_identity: bool = True) -> None:
        # AccessDeniedError's own constructor words the message; its base renders the XML.
        message = denial_message(principal, action, resource, by_identity)
        super(AccessDeniedError, self).__init__("AccessDenied", message)
        self.principal = principal
        self.action = action
        self.resource = resource


class _Answered(HTTPException):
    """A denial already shaped as the service answers it: moto serves ``description`` as the body."""

    def __init__(self, body: str, status: int) -> None:
        super().__init__(description=body)
        self.code = status


def denial_message(principal: str, action: str, resource: str, by_identity: bool = True) -> str:
    """AWS's wording of a denial: of an implicit deny by the caller's identity-based policies, or
    (``by_identity`` false: AssumeRole, which a role's trust policy may refuse too) without the
    reason."""
    on = f" on resource: {resource}" if resource != "*" else ""
    why = f" because no identity-based policy allows the {action} action" if by_identity else ""
    return f"User: {principal} is not authorized to perform: {action}{on}{why}"


def _subresources(path: str) -> set[str]:
    return set(parse_qs(urlparse(path).query, keep_blank_values=True))


def _deleted_object_actions(body: bytes) -> list[str]:
    """DeleteObjects: s3:DeleteObject for the objects named by key alone, s3:DeleteObjectVersion for
    those named by version."""
    try:
        root = ElementTree.fromstring(body or b"<Delete/>")
    except ElementTree.ParseError:
        return ["s3:DeleteObject"]
    versioned = [any(child.tag.endswith("VersionId") for child in obj) for obj in root if obj.tag.endswith("Object")]
    actions = []
    if not all(versioned) or not versioned:
        actions.append("s3:DeleteObject")
    if any(versioned):
        actions.append("s3:DeleteObjectVersion")
    return actions


def _s3_bucket_actions(request: Any) -> list[str] | None:
    """The actions AWS authorizes a bucket request by, or None for requests left to moto."""
    method = request._method
    subresources = _subresources(request._path)
    if method == "POST":
        return _deleted_object_actions(request._body) if "delete" in subresources else None
    table = S3_BUCKET_ACTIONS.get(method)
    if table is None:
        return None
    named = [action for sub, action in table.items() if sub is not None and sub in subresources]
    if named:
        return named[:1]
    actions = [table[None]]
    if method == "PUT":
        headers = {k.lower(): v for k, v in request._headers.items()}
        for header, extra in S3_CREATE_BUCKET_HEADERS.items():
            if header in headers:
                actions += [a for a in extra if a not in actions]
        if headers.get("x-amz-bucket-object-lock-enabled", "").lower() == "true":
            actions += [a for a in S3_OBJECT_LOCK if a not in actions]
    return actions


def _json_body(request: Any) -> dict[str, Any]:
    content_type = {k.lower(): v for k, v in request._headers.items()}.get("content-type", "")
    if not content_type.startswith("application/x-amz-json"):
        return {}
    try:
        body = json.loads(request._body or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def aws_actions(request: Any, resource: str) -> list[str]:
    """Every action AWS authorizes ``request`` (a moto IAMRequest) by, on ``resource``."""
    service = request._service
    action = request._action
    if service == "s3":
        bucket = resource.split(":::", 1)[-1]
        if bucket != "*" and "/" not in bucket:
            return _s3_bucket_actions(request) or [action]
        return [action]
    if service in IAM_PREFIXES:
        return [f"{IAM_PREFIXES[service]}:{action.split(':', 1)[1]}"]
    if service == "sqs":
        action = SQS_BATCH_ACTIONS.get(action, action)
        if action == "sqs:CreateQueue" and _json_body(request).get("tags"):
            return [action, "sqs:TagQueue"]
    if action in EC2_TAG_ON_CREATE and any(k.startswith("TagSpecification.") for k in request._data):
        return [action, "ec2:CreateTags"]
    return [action]


def _sqs_context(request: Any, resource: str) -> dict[str, str]:
    """The tag condition keys AWS gives an SQS call: the tags it puts, the tags the queue has."""
    context: dict[str, str] = {}
    body = _json_body(request)
    requested = body.get("tags") if request._action == "sqs:CreateQueue" else body.get("Tags")
    if isinstance(requested, dict):
        context.update({f"aws:RequestTag/{k}": str(v) for k, v in requested.items()})
    if resource.startswith("arn:"):
        _, _, _, region, account, name = resource.split(":", 5)
        queue = sqs_backends[account][region].queues.get(name)
        if queue is not None:
            context.update({f"aws:ResourceTag/{k}": str(v) for k, v in queue.tags.items()})
    return context


def _check_action_permitted(original: Any) -> Any:
    @functools.wraps(original)
    def check(self: IAMRequestBase, resource: str) -> None:
        context = _sqs_context(self, resource) if self._service == "sqs" else {}
        token = _context.set(context)
        try:
            for action in aws_actions(self, resource):
                self._action = action
                try:
                    original(self, resource)
                except AccessDeniedError as denied:
                    if isinstance(denied, IdentityDenied):
                        raise
                    by_identity = not self._is_assuming_role_operation(resource)
                    raise IdentityDenied(self._access_key.arn, action, resource, by_identity) from None
        finally:
            _context.reset(token)

    return check


def _with_request_context(original: Any) -> Any:
    @functools.wraps(original)
    def is_action_permitted(
        self: IAMPolicy,
        action: str,
        resource: str = "*",
        principal: str | None = None,
        incoming_condition_values: dict[str, str] | None = None,
    ) -> PermissionResult:
        if incoming_condition_values is None:
            incoming_condition_values = _context.get()
        return original(self, action, resource, principal, incoming_condition_values)

    return is_action_permitted


def _condition_keys(condition: Any) -> Iterable[tuple[str, str]]:
    for operator, keys in (condition or {}).items():
        for key in keys:
            yield operator, key


def _check_conditions(original: Any) -> Any:
    @functools.wraps(original)
    def check_conditions(self: IAMPolicyStatement, incoming: dict[str, str] | None) -> bool:
        if _context.get() is None:
            return bool(original(self, incoming))
        for operator, key in _condition_keys(self._statement.get("Condition")):
            present = incoming is not None and key in incoming
            if not present and not operator.endswith("IfExists"):
                return False
            if present and operator not in EVALUATED_OPERATORS:
                return False
        return bool(original(self, incoming))

    return check_conditions


def _allow_never_denies(original: Any) -> Any:
    @functools.wraps(original)
    def is_action_permitted(self: IAMPolicyStatement, *args: Any, **kwargs: Any) -> PermissionResult:
        result = original(self, *args, **kwargs)
        if _context.get() is None:
            return result
        if result == PermissionResult.DENIED and self._statement.get("Effect") == "Allow":
            return PermissionResult.NEUTRAL
        return result

    return is_action_permitted


def _request_header(response: Any, name: str) -> str:
    return str(response.headers.get(name) or "")


def _ec2_denial(denied: IdentityDenied) -> tuple[int, dict[str, str], str]:
    message = f"You are not authorized to perform this operation. {denied.message}"
    operation = denied.action.split(":", 1)[1]
    if not operation.startswith("Describe"):
        context = {
            "allowed": False,
            "explicitDeny": False,
            "matchedStatements": {"items": []},
            "failures": {"items": []},
            "context": {"principal": {"arn": denied.principal}, "action": denied.action, "resource": denied.resource},
        }
        encoded = base64.urlsafe_b64encode(json.dumps(context).encode()).decode().rstrip("=")
        message += f". Encoded authorization failure message: {encoded}"
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>UnauthorizedOperation</Code>'
        f"<Message>{escape(message)}</Message></Error></Errors><RequestID>{random.uuid4()}</RequestID></Response>"
    )
    return 403, {"Content-Type": "text/xml;charset=UTF-8"}, body


def _json_denial(response: Any, denied: IdentityDenied) -> tuple[int, dict[str, str], str]:
    content_type = _request_header(response, "Content-Type").split(";")[0]
    if response.service_name == "sqs":
        # SQS's messages spell the action in lower case: "sqs:createqueue".
        lower = denied.action.lower()
        message = denial_message(denied.principal, lower, denied.resource)
        body = {"__type": "com.amazon.coral.service#AccessDeniedException", "message": message}
        return 400, {"Content-Type": content_type, "x-amzn-query-error": "AccessDenied;Sender"}, json.dumps(body)
    body = {"__type": "AccessDeniedException", "Message": denied.message}
    return 400, {"Content-Type": content_type}, json.dumps(body)


def _shaped_denials(original: Any) -> Any:
    @functools.wraps(original)
    def authorize(self: Any, resource: str = "*") -> None:
        try:
            original(self, resource)
        except IdentityDenied as denied:
            if denied.action.startswith("ec2:"):
                status, headers, body = _ec2_denial(denied)
            elif _request_header(self, "Content-Type").startswith("application/x-amz-json"):
                status, headers, body = _json_denial(self, denied)
            else:
                raise
            self.response_headers.update(headers)
            raise _Answered(body, status) from None

    return authorize


def _queue_arn(original: Any) -> Any:
    @functools.wraps(original)
    def determine_resource(self: SQSResponse) -> str:
        name = self._get_param("QueueName") or (self._get_queue_name() if self._get_param("QueueUrl") else "")
        if not name:
            return str(original(self))
        return f"arn:{get_partition(self.region)}:sqs:{self.region}:{self.current_account}:{name}"

    return determine_resource


def install() -> None:
    """Wraps IAMRequestBase.check_action_permitted, IAMPolicy.is_action_permitted,
    IAMPolicyStatement._check_conditions and is_action_permitted,
    ActionAuthenticatorMixin._authenticate_and_authorize_normal_action and
    SQSResponse._determine_resource."""
    IAMRequestBase.check_action_permitted = _check_action_permitted(  # type: ignore[method-assign]
        IAMRequestBase.check_action_permitted
    )
    IAMPolicy.is_action_permitted = _with_request_context(IAMPolicy.is_action_permitted)  # type: ignore[method-assign]
    IAMPolicyStatement._check_conditions = _check_conditions(  # type: ignore[method-assign]
        IAMPolicyStatement._check_conditions
    )
    IAMPolicyStatement.is_action_permitted = _allow_never_denies(  # type: ignore[method-assign]
        IAMPolicyStatement.is_action_permitted
    )
    ActionAuthenticatorMixin._authenticate_and_authorize_normal_action = _shaped_denials(  # type: ignore[method-assign]
        ActionAuthenticatorMixin._authenticate_and_authorize_normal_action
    )
    SQSResponse._determine_resource = _queue_arn(SQSResponse._determine_resource)  # type: ignore[method-assign]
